// Coroutines for waypoint::app. Include this where a handler or a layer is a coroutine: it
// brings Asio's awaitable (typed routes whose function returns awaitable<Out> need it too,
// with waypoint/app/typed/json.hpp).
//
//   namespace asio = boost::asio;
//   app.get("/slow", [](waypoint::app::context& ctx) -> waypoint::app::awaitable<void> {
//     asio::steady_timer t(ctx.executor(), std::chrono::milliseconds(200));
//     co_await t.async_wait(asio::use_awaitable);
//     ctx.response().body("done\n");
//   });
//   app.use([](waypoint::app::context& ctx, waypoint::app::next next)
//               -> waypoint::app::awaitable<void> { co_await next(); });
//   app.post<order_request>("/orders", [](order_request in) -> waypoint::app::awaitable<order> {
//     co_return co_await inventory.reserve(in);
//   });
//
// A handler or layer that is a coroutine makes its route's chain run as one: on the
// connection's thread (ctx.executor()), suspended without blocking it, and cancelled
// (its pending co_await throws operation_aborted) when the client goes away or a
// deadline() layer answers.
#pragma once

#include "waypoint/app/application.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>

#include <type_traits>
#include <utility>

namespace waypoint::app {

template <class Body>
  requires(!std::is_same_v<Body, http::string_body>)
awaitable<void> application::async_handle(const http::request<Body>& req, response& res,
                                          const beast::connection_endpoints* ends) {
  request copy(req.base());
  copy.body() = boost::beast::buffers_to_string(req.body().data());
  co_await async_handle(copy, res, ends);
}

}  // namespace waypoint::app
