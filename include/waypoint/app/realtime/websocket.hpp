// WebSocket routes of waypoint::app: a GET route whose upgrade requests become WebSockets.
//
//   serve_websocket(app, "/v1/echo", [](websocket& ws) -> awaitable<void> {
//     while (auto message = co_await ws.read()) co_await ws.write(*message);
//   });
//   // or, reusing one buffer: websocket_message m; while (co_await ws.read(m)) ...
//
// The route sits in the router like any GET: same precedence, same conflicts, and the
// middleware of its scope runs on the upgrade request before anything is upgraded, so a
// layer that answers (a 401 from an auth layer) is the answer and no upgrade happens. A
// plain GET on the same pattern, registered in the same scope before or after, shares the
// endpoint: upgrade requests go to the WebSocket handler, the others to the GET handler.
// A GET that asks for a WebSocket (Upgrade: websocket, HTTP/1.1) but is no valid handshake
// gets 400 naming the defect (426 for the version), whatever GET shares the route. A
// WebSocket-only route answers other GET (and HEAD) requests 426 with Upgrade: websocket;
// other methods get the usual 405 with Allow.
//
// The handler is fn(context&, websocket&) or fn(websocket&), a coroutine. Its context is
// the one the layers saw (values they set, the request id), on the connection's thread;
// the response's fields the layers set (X-Request-Id) go out with the 101. When it
// returns, the connection closes with 1000; when it throws, with 1011 (the exception is
// logged). Served by waypoint::beast::server only: respond() and async_handle() answer an
// upgrade request 501. Limits and timeouts: websocket_options (waypoint/beast/websocket.hpp).
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/beast/websocket.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

namespace waypoint::app {

using close_code = beast::close_code;
using websocket_message = beast::websocket_message;
using websocket_options = beast::websocket_options;

// The upgraded connection, as a handler uses it. One read() at a time; writes may overlap
// (coroutines that write to the same peer) and go out in order, within
// websocket_options::max_queued_bytes. Writes from other coroutines end before the handler
// returns (the connection is closed then).
class websocket {
 public:
  explicit websocket(beast::websocket_channel& channel) noexcept : channel_(&channel) {}

  // The next complete message (fragments reassembled); nullopt once the connection is
  // closed: closed_with() says why (the peer's code, 1001 for the server's drain, 1009 for
  // a message past max_message_bytes, 1008 for one of more than max_message_frames frames,
  // 1002 for a broken frame, 1006 when cut).
  awaitable<std::optional<websocket_message>> read() { return channel_->read(); }
  // The same into `message`, reusing its payload's capacity (no allocation per message in
  // a loop); false once the connection is closed.
  awaitable<bool> read(websocket_message& message) { return channel_->read(message); }
  // Each throws boost::system::system_error when the connection is closed, when the write
  // makes no progress for write_timeout (boost::beast::error::timeout), or when it would
  // queue past max_queued_bytes behind other writes (boost::asio::error::no_buffer_space);
  // the last two cut the connection. The bytes must stay valid until the write completes.
  awaitable<void> write_text(std::string_view text) { return channel_->write(text, false); }
  awaitable<void> write_binary(std::string_view bytes) { return channel_->write(bytes, true); }
  awaitable<void> write(const websocket_message& message) {
    return channel_->write(message.payload, message.binary);
  }
  // The closing handshake; does nothing once the connection is closing.
  awaitable<void> close(close_code code = close_code::normal, std::string_view reason = {}) {
    return channel_->close(code, reason);
  }
  close_code closed_with() const noexcept { return channel_->closed_with(); }
  // Payload bytes of the writes accepted and not complete: a handler that would rather drop
  // a message than lose a slow peer compares it with max_queued_bytes before writing.
  std::size_t queued_bytes() const noexcept { return channel_->queued_bytes(); }
  bool is_open() const noexcept { return channel_->is_open(); }
  beast::websocket_channel& channel() noexcept { return *channel_; }

 private:
  beast::websocket_channel* channel_;
};

// A WebSocket route's handler: fn(context&, websocket&) or fn(websocket&), returning
// awaitable<void>.
class websocket_handler {
 public:
  using function = std::function<awaitable<void>(context&, websocket&)>;

  websocket_handler() noexcept = default;
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, websocket_handler>)
  websocket_handler(F fn) {
    if constexpr (std::is_invocable_v<F&, context&, websocket&>) {
      static_assert(detail::returns_awaitable<F, context&, websocket&>(),
                    "a WebSocket handler returns waypoint::app::awaitable<void>");
      fn_ = std::move(fn);
    } else {
      static_assert(std::is_invocable_v<F&, websocket&>,
                    "a WebSocket handler is fn(context&, websocket&) or fn(websocket&)");
      static_assert(detail::returns_awaitable<F, websocket&>(),
                    "a WebSocket handler returns waypoint::app::awaitable<void>");
      fn_ = [fn = std::move(fn)](context&, websocket& ws) mutable { return fn(ws); };
    }
  }

  explicit operator bool() const noexcept { return static_cast<bool>(fn_); }
  awaitable<void> operator()(context& ctx, websocket& ws) const { return fn_(ctx, ws); }

 private:
  function fn_;
};

// A WebSocket route in `scope`: GET `pattern`, whose upgrade requests run `fn` on the
// upgraded connection. A plain GET on the same pattern in the same scope, before or after,
// shares the route. Returns the scope, for describe() and the next registration. Throws
// std::invalid_argument for an empty handler or options out of range, std::logic_error
// after freeze(), and the core's conflict_error as any registration does.
route_scope& serve_websocket(route_scope& scope, std::string_view pattern, websocket_handler fn,
                             const websocket_options& options = {},
                             source_location where = source_location::current());
// The same with the default options, naming where it was called from.
inline route_scope& serve_websocket(route_scope& scope, std::string_view pattern,
                                    websocket_handler fn, source_location where) {
  return serve_websocket(scope, pattern, std::move(fn), websocket_options{}, where);
}

// Whether `req` is a WebSocket opening handshake (RFC 6455 §4.2.1): the server's rule.
using beast::is_websocket_upgrade;

}  // namespace waypoint::app
