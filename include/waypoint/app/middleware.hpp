// The kernel's built-in middleware layers, each a factory returning a layer for use() or
// group() (the access log is operations/access_log.hpp, CORS security/cors.hpp):
//
//   app.use(waypoint::app::request_id());   // X-Request-Id kept or generated, echoed
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
#include <exception>

namespace waypoint::app {

// Exceptions thrown by inner layers become responses: an http_error its problem document,
// anything else a 500 with a generic detail, its text logged with the request id.
middleware recover();

// Adopts the request's X-Request-Id when it is a valid id (context::request_id(id)), else
// generates one, and echoes it in the response's X-Request-Id, errors included.
middleware request_id();

// The status a request is answered with, seen from a layer's `after` hook: the response's,
// or the one the exception passing through (non-null `error`) will be answered with.
int answered_status(context& ctx, const std::exception_ptr& error) noexcept;

// A coroutine layer that answers 503 when the layers and handler inside it have not
// finished within `limit`, and cancels them (their pending co_await throws
// operation_aborted; a deferred response is dropped). Around a whole application
// (app.use) or a group's routes. Code that does not suspend cannot be cut short: a
// synchronous handler runs to its end. Throws std::invalid_argument for a limit <= 0.
middleware deadline(std::chrono::milliseconds limit);

}  // namespace waypoint::app
