// Serving an application with waypoint::beast::server: the application is the server's
// dispatch.
//
//   waypoint::app::application app;
//   ...routes...
//   waypoint::beast::server_options options;
//   options.listen = {{"0.0.0.0", 8080}};
//   waypoint::app::serve(app, options);            // until SIGINT/SIGTERM, then drains
//
// or, to own the server (tests, several apps, custom stop):
//   waypoint::beast::server s(waypoint::app::options_for(app, options),
//                             waypoint::app::dispatch_to(app));
//   s.start(); ... s.stop(); s.wait();
//
// Keep json_body_limit at or below server_options::max_body_bytes, so that the 413 a
// client gets is the app's problem document rather than the server's.
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/beast/server.hpp"

#include <type_traits>

namespace waypoint::app {

// One message type on both sides: the server hands the application (and render_problem)
// its own response object.
static_assert(std::is_same_v<response, beast::response>);
static_assert(std::is_same_v<request, beast::request>);

// The server dispatch that answers with `app` (frozen here), coroutine routes and deferred
// responses included; `app` must outlive the server.
beast::exchange_function dispatch_to(application& app);

// `options` with the server's own errors (400, 408, 413, 414, 417, 431, 501, 503) answered
// as the application answers its own, RFC 9457 problem documents (render_problem), unless
// options.render_error is already set.
beast::server_options with_problem_errors(beast::server_options options);

// with_problem_errors(options), and the body of each request planned by its route
// (route_scope::body) unless options.plan_body is already set.
beast::server_options options_for(application& app, beast::server_options options);

// Freezes `app`, runs a server with options_for(app, options) with `options` until it stops (SIGINT/SIGTERM unless
// options.handle_signals is false), and returns after the graceful drain.
void serve(application& app, const beast::server_options& options);

}  // namespace waypoint::app
