// Server-sent events (the HTML standard's text/event-stream) over a chunked response, from
// a coroutine handler:
//
//   app.get("/v1/events", [](waypoint::app::context& ctx) -> waypoint::app::awaitable<void> {
//     auto events = co_await waypoint::app::event_stream::open(ctx);
//     for (int i = 0;; ++i) {
//       if (!co_await events.send({.data = std::to_string(i), .event = "tick"})) co_return;
//       if (!co_await events.wait(std::chrono::seconds(1))) co_return;  // the client left
//     }
//   });
//
// wait() sends a comment line every heartbeat while it waits, so proxies that cut idle
// connections keep this one and a client that went away is noticed within a heartbeat at
// most. The server notices a close at once and cancels the handler's coroutine, as it does
// at a drain to end the stream: send() and wait() then return false, and the handler returns
// (at a drain the stream then ends with its last chunk). Once a handler has opened an event
// stream, that cancellation is not thrown from its co_awaits (Asio's throw_if_cancelled is
// off for its coroutine): an operation it starts afterwards runs to its end, so a handler
// that awaits other work between events checks connected() first. A client that stays
// connected but reads nothing is cut by the write timeout (send() returns false).
#pragma once

#include "waypoint/app/context.hpp"

#include <chrono>
#include <optional>
#include <string_view>

namespace waypoint::app {

// One event. `data` may hold several lines (each becomes a `data:` line, and the client
// joins them with "\n"); `event` and `id` may not hold a line break (std::invalid_argument).
struct server_event {
  std::string_view data = {};
  std::string_view event = {};  // empty: the client's default, "message"
  std::string_view id = {};     // empty: none (the client keeps its last event id)
  std::optional<std::chrono::milliseconds> retry = std::nullopt;  // the client's reconnection delay
};

struct event_stream_options {
  std::chrono::milliseconds heartbeat{15'000};
};

class event_stream {
 public:
  // Answers 200 with Content-Type text/event-stream, Cache-Control no-cache and
  // X-Accel-Buffering no (so nginx passes events on at once), and sends the head with a
  // first comment, so the client sees the stream open. Other fields the handler set on
  // ctx.response() are sent too.
  static awaitable<event_stream> open(context& ctx, event_stream_options options = {});

  // Each returns false, and sends nothing more, once the client has gone (the write failed,
  // or the connection's close cancelled the handler's coroutine) or the server drains. send() throws
  // std::invalid_argument for an event or id holding a line break.
  awaitable<bool> send(const server_event& e);
  awaitable<bool> comment(std::string_view text);
  // Waits for `duration`, sending heartbeats meanwhile. Returns false, early, once the
  // client has gone (and connected() is false from then on).
  awaitable<bool> wait(std::chrono::milliseconds duration);
  bool connected() const noexcept { return connected_; }

 private:
  event_stream(context& ctx, event_stream_options options) noexcept
      : ctx_(&ctx), options_(options) {}
  awaitable<bool> write(std::string_view text);

  context* ctx_;
  event_stream_options options_;
  bool connected_ = true;
};

}  // namespace waypoint::app
