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
#include <cstdint>
#include <exception>
#include <iterator>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

// Exceptions thrown by inner layers become responses: an http_error its problem document,
// anything else a 500 with a generic detail, its text logged with the request id.
middleware recover();

// Adopts the request's X-Request-Id when it is a valid id (context::request_id(id)), else
// generates one, and echoes it in the response's X-Request-Id, errors included.
middleware request_id();

// The fields of an access log line, in the order they are written.
enum class access_field : std::uint8_t {
  time,        // "time": RFC 3339 in UTC with microseconds, "2026-12-01T17:04:05.123456Z"
  remote,      // "remote": the socket's peer address (null under respond())
  method,      // "method"
  path,        // "path": the escaped target without the query (queries carry secrets)
  route,       // "route": the matched pattern, null when none matched
  status,      // "status"
  bytes,       // "bytes": body bytes of the response as the layers leave it (0 for HEAD
               // and for a redirect, whose short note is added later; null when an
               // exception passes through, answered outside the layer)
  duration,    // "duration_us": from this layer's entry to its exit
  user_agent,  // "user_agent": null when absent
  request_id,  // "request_id"
  trace_id,    // "trace_id": from tracing() (trace_context.hpp), null without it
};

// Every field, the default.
inline constexpr access_field all_access_fields[] = {
    access_field::time,     access_field::remote,     access_field::method,
    access_field::path,     access_field::route,      access_field::status,
    access_field::bytes,    access_field::duration,   access_field::user_agent,
    access_field::request_id, access_field::trace_id};

struct access_log_options {
  // Receives each line (without its newline), on the request's thread.
  std::function<void(std::string_view line)> sink{};
  // Without a sink: >= 0 writes each line and its newline to this descriptor, taking no
  // lock shared between threads. On a thread running an io_context (a server's worker) the
  // thread's lines wait for the handlers already ready in that pass of its loop, then go
  // out together: under load many lines a write(2), one request at a time one line a write.
  // A write holds whole lines, at most PIPE_BUF bytes of them (a longer line alone), so
  // lines up to PIPE_BUF bytes never interleave on a pipe, and never on a file opened with
  // O_APPEND. Elsewhere (respond() answering at once, async_handle() off an io_context) a
  // line is written at once. None is left behind: the queued write runs when the loop does,
  // or when its io_context is destroyed first, or when the thread ends; the descriptor must
  // stay open until then (until the server has stopped). -1 hands each line to the
  // application's logger.
  int fd = -1;
  // What a line holds, in this order.
  std::vector<access_field> fields{std::begin(all_access_fields), std::end(all_access_fields)};
};

// One JSON line per request once it is answered (access_field names the keys):
//   {"time":"2026-12-01T17:04:05.123456Z","remote":"10.0.0.7","method":"GET",
//    "path":"/v1/users/42","route":"GET /v1/users/{id}","status":200,"bytes":37,
//    "duration_us":41,"user_agent":"curl/7.88.1","request_id":"6f1c0e2a9b7d4c35",
//    "trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}
// Client text (method, path, user agent) is clipped to max_client_text_bytes and
// escaped, so it can neither forge a line nor make one long. The line is built in a
// per-thread buffer: no allocation per line once it has grown (the sink's own aside). An
// exception passing through is logged with the status it will be answered with, then
// rethrown.
middleware access_log(access_log_options options = {});

namespace detail {
// The status a request is answered with, seen from a layer's `after` hook: the response's,
// or the one the exception passing through (non-null `error`) will be answered with.
int answered_status(context& ctx, const std::exception_ptr& error) noexcept;
}  // namespace detail

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
  // Paths the policy never answers for, so no other origin's script reads them: the
  // operational endpoints (/metrics, /healthz) a browser has no business with. An entry
  // ending in '/' is a prefix ("/internal/"), any other the whole path; compared with the
  // escaped path routed on. Their preflights go on as plain OPTIONS and fail in the browser.
  std::vector<std::string> skip_paths{};
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
