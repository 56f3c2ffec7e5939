// The connection a request came on, as a handler sees it: the thread it runs on, the two
// ends of the socket, and a response answered later from any thread (deferred_response).
// A base of context.
#pragma once

#include "waypoint/app/response.hpp"
#include "waypoint/beast/exchange.hpp"

#include <memory>

namespace waypoint::app {

namespace detail {
struct deferred_state;  // src/app/deferred.cpp
}

// A response a handler finishes later, from any thread: ctx.defer() moves the response
// built so far in here; fill it through response(), then send(). Until then the context,
// the request and the layers around the handler wait on the connection's thread; touch
// none of them from another thread (copy what the work needs before it starts). Destroyed
// unsent, it answers 500. Move-only.
class deferred_response {
 public:
  deferred_response() noexcept = default;
  deferred_response(deferred_response&&) noexcept = default;
  deferred_response& operator=(deferred_response&& other) noexcept;
  ~deferred_response();

  response_builder& response();
  // Hands the response back to the connection's thread, which runs the layers still
  // waiting and sends it. The first call counts; later ones do nothing.
  void send() noexcept;
  // The response is no longer wanted (the client went away, or a deadline answered): the
  // work may stop early; send() then sends nothing.
  bool cancelled() const noexcept;
  explicit operator bool() const noexcept { return static_cast<bool>(state_); }

 private:
  friend class context;
  explicit deferred_response(std::shared_ptr<detail::deferred_state> state) noexcept
      : state_(std::move(state)) {}

  std::shared_ptr<detail::deferred_state> state_;
};

class connection {
 public:
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // The executor of the connection's thread: `co_await` clients and timers on it, and the
  // request's other work stays on one thread. Under respond(), an io_context made for the
  // request and run on the calling thread until it is answered.
  boost::asio::any_io_executor executor() const;
  // The socket's two ends (a proxy in front is the remote one: waypoint/app/operations/forwarded.hpp
  // reads past trusted proxies). Empty addresses under respond().
  const beast::connection_endpoints& endpoints() const;
  // A descriptor permit for a descriptor the request's work opens besides its connection's
  // (waypoint/beast/exchange.hpp, exchange_host::acquire_descriptor): false when the server's
  // budget is spent. Under respond() and async_handle(), always granted.
  // waypoint/app/operations/resource_limits.hpp's require_descriptor answers the refusal.
  beast::resource_permit acquire_descriptor() const { return host_->acquire_descriptor(); }

 protected:
  // `host` null: set before the request is answered (a context planned at the header).
  explicit connection(beast::exchange_host* host) noexcept : host_(host) {}
  ~connection() = default;

  // The contract with whatever serves the request (waypoint/beast/exchange.hpp): the server's
  // connection, respond()'s in memory, async_handle()'s caller, or a WebSocket's.
  beast::exchange_host* host_;
};

}  // namespace waypoint::app
