// The built-in middleware layers of waypoint::app, each a factory returning a layer for
// use() or group():
//
//   app.use(waypoint::app::access_log());   // outermost: sees the final status
//   app.use(waypoint::app::request_id());   // X-Request-Id kept or generated, echoed
//   app.use(waypoint::app::cors({.origins = {"https://app.example.com"}}));
//   app.use(waypoint::app::recover());      // exceptions of inner layers -> problem documents
//
// Order matters as in any onion: a layer sees what inner layers (and the handler) did
// after its next() returns, and the exceptions they threw. The application answers any
// exception that escapes every layer the same way recover() does, so recover() is only
// needed where an outer layer should see the error as a response rather than an exception.
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/app/context.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

// Exceptions thrown by inner layers become responses: an http_error its problem document,
// anything else a 500 with a generic detail, its text logged with the request id.
middleware recover();

// Adopts the request's X-Request-Id when it is a valid id (context::set_request_id), else
// generates one, and echoes it in the response's X-Request-Id, errors included.
middleware request_id();

struct access_log_options {
  // Receives each line; the application's logger when empty.
  std::function<void(std::string_view line)> sink{};
};

// One JSON line per request once it is answered:
//   {"method":"GET","path":"/v1/users/42","route":"GET /v1/users/{id}","status":200,
//    "duration_us":41,"request_id":"6f1c0e2a9b7d4c35"}
// "path" is the escaped path without the query (queries carry secrets); "route" is null
// when no route matched. An exception passing through is logged with the status it will
// be answered with, then rethrown.
middleware access_log(access_log_options options = {});

struct cors_options {
  // Origins allowed to read responses; "*" allows any. Compared byte for byte with the
  // Origin header ("https://app.example.com", no trailing slash).
  std::vector<std::string> origins{"*"};
  // Methods a preflight allows; empty: the methods the path serves, as the router's
  // methods_at() lists them (the asked method, when a method-less route serves the path).
  std::vector<std::string> methods{};
  // Request headers a preflight allows; empty: those the preflight asks for.
  std::vector<std::string> headers{};
  // Response headers the browser may expose to scripts.
  std::vector<std::string> expose_headers{};
  // Access-Control-Allow-Credentials: true. The allowed origin is then echoed, never "*".
  bool credentials = false;
  std::chrono::seconds max_age{600};
};

// CORS (the Fetch standard's protocol). A preflight (OPTIONS with Origin and
// Access-Control-Request-Method) to a path that has routes is answered 204 here, whether
// or not an OPTIONS route exists; a preflight to a path without routes, or from an origin
// not allowed, goes on unchanged (and fails in the browser). Other requests from an
// allowed origin get Access-Control-Allow-Origin and Vary: Origin, errors included.
// Register it with app.use(): requests that no route serves (preflights included) pass
// only through the application's layers.
middleware cors(cors_options options = {});

// A coroutine layer that answers 503 when the layers and handler inside it have not
// finished within `limit`, and cancels them (their pending co_await throws
// operation_aborted; a deferred response is dropped). Around a whole application
// (app.use) or a group's routes. Code that does not suspend cannot be cut short: a
// synchronous handler runs to its end. Throws std::invalid_argument for a limit <= 0.
middleware deadline(std::chrono::milliseconds limit);

}  // namespace waypoint::app
