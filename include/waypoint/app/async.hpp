// Coroutine handlers for waypoint::app. Include this where routes are coroutines: it brings
// Asio's awaitable, and typed JSON routes whose function returns awaitable<Out>.
//
//   namespace asio = boost::asio;
//   app.get("/slow", [](waypoint::app::context& ctx) -> waypoint::app::awaitable<void> {
//     asio::steady_timer t(ctx.executor(), std::chrono::milliseconds(200));
//     co_await t.async_wait(asio::use_awaitable);
//     ctx.response().body("done\n");
//   });
//   app.use([](waypoint::app::context& ctx, waypoint::app::async_next next)
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
#include "waypoint/app/json.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>

#include <type_traits>
#include <utility>

namespace waypoint::app {

namespace detail {

template <class T>
struct awaited;
template <class T, class Executor>
struct awaited<boost::asio::awaitable<T, Executor>> {
  using type = T;
};

// Awaits `work` (an awaitable<R>) and writes its result as write_result() does.
template <class Out, class Work>
awaitable<void> write_awaited(context& ctx, int default_status, Work work) {
  using value = typename awaited<Work>::type;
  if constexpr (std::is_void_v<value>) {
    co_await std::move(work);
    write_result<Out>(ctx, default_status, [] {});
  } else {
    value out = co_await std::move(work);
    write_result<Out>(ctx, default_status, [&]() -> value { return std::move(out); });
  }
}

template <class In, class Out, class F>
class json_async_route {
 public:
  json_async_route(F fn, int default_status) : fn_(std::move(fn)), default_status_(default_status) {}

  awaitable<void> operator()(context& ctx) {
    In input = read_json<In>(ctx);
    co_await write_awaited<Out>(ctx, default_status_, call_handler(fn_, ctx, std::move(input)));
  }

 private:
  F fn_;
  int default_status_;
};

template <class Out, class F>
class json_async_output_route {
 public:
  json_async_output_route(F fn, int default_status)
      : fn_(std::move(fn)), default_status_(default_status) {}

  awaitable<void> operator()(context& ctx) {
    co_await write_awaited<Out>(ctx, default_status_, call_handler(fn_, ctx));
  }

 private:
  F fn_;
  int default_status_;
};

}  // namespace detail

template <class Body>
  requires(!std::is_same_v<Body, http::string_body>)
awaitable<void> application::async_handle(const http::request<Body>& req, response& res,
                                          const beast::connection_endpoints* ends) {
  request copy(req.base());
  copy.body() = boost::beast::buffers_to_string(req.body().data());
  co_await async_handle(copy, res, ends);
}

}  // namespace waypoint::app
