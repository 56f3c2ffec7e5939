// A server connection without a socket, for measuring and pinning what a request costs on
// the server's path through waypoint::app (application::dispatch, the exchange, deferral,
// a coroutine spawned and finished) without the kernel's share. Header-only; used by the
// allocation test and bench/app_bench.cpp.
#pragma once

#include <waypoint/beast/server.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

namespace waypoint::testing {

class exchange_harness final : public waypoint::beast::exchange_host {
 public:
  // Answers `req` into `res` as the server's connection would: the dispatch, then, for a
  // deferred exchange, this thread's io_context until the response is sent. `planned`:
  // what the request's planner kept at its header (beast::body_plan::planned).
  template <class Dispatch>
  void answer(Dispatch& dispatch, const waypoint::beast::request& req,
              waypoint::beast::response& res, waypoint::beast::planned_request* planned = nullptr) {
    done_ = false;
    waypoint::beast::exchange x(*this, req, res, planned);
    dispatch(x);
    if (!x.deferred()) return;
    io_.restart();
    while (!done_ && io_.run_one() > 0) {
    }
  }

  boost::asio::any_io_executor executor() override { return io_.get_executor(); }
  const waypoint::beast::connection_endpoints& endpoints() override { return endpoints_; }
  boost::asio::cancellation_slot cancellation_slot() override { return cancel_.slot(); }
  void deferred_done() noexcept override { done_ = true; }

 private:
  boost::asio::io_context io_{1};
  boost::asio::cancellation_signal cancel_;
  waypoint::beast::connection_endpoints endpoints_{{"127.0.0.1", 8080}, {"127.0.0.1", 50000}};
  bool done_ = false;
};

}  // namespace waypoint::testing
