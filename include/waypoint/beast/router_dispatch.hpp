// The server's dispatch for a waypoint router: each route's handler receives the request,
// the response to fill and the match (wildcard values, the route's pattern).
//
//   waypoint::beast::router r;
//   r.add("GET /users/{id}", [](const request&, response& res, const route_match& m) {
//     res.body() = "user " + std::string(m.value("id"));
//   });
//   r.freeze();
//   waypoint::beast::server s(options, waypoint::beast::dispatch_to(r));
//
// Requests that reach no handler get the adapter's answers (adapter.hpp): 404, 405 with
// Allow, a redirect with Location, 400. The match result lives in thread-local storage of
// the server thread, so a dispatch allocates nothing of its own.
#pragma once

#include "waypoint/beast/server.hpp"
#include "waypoint/router.hpp"

#include <functional>

namespace waypoint::beast {

struct handler;
using route_match = basic_match_result<handler>;

// A route's handler. A struct rather than an alias because its signature names the match
// result of its own router.
struct handler : std::function<void(const request&, response&, const route_match&)> {
  using function::function;
};

using router = basic_router<handler>;

// The dispatch for `r`, which must be frozen and outlive the server.
dispatch_function dispatch_to(const router& r);

}  // namespace waypoint::beast
