// Cross-origin resource sharing (the Fetch standard's CORS protocol), as one layer:
//
//   app.use(waypoint::app::cors({.origins = {"https://app.example.com"}}));
#pragma once

#include "waypoint/app/handler.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace waypoint::app {

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

}  // namespace waypoint::app
