// The gateway's WebSocket route: GET /v1/echo upgrades and echoes every message, text or
// binary, until the client closes (or the gateway drains: 1001). The gateway's layers run
// on the upgrade request first, so the 101 carries its X-Request-Id.
//
//   waypoint::examples::add_websocket_route(app);
//   $ /usr/bin/python3 -m websockets ws://127.0.0.1:8080/v1/echo      # type a line, get it back
#pragma once

#include <waypoint/app/realtime/phoenix.hpp>
#include <waypoint/app/realtime/topics.hpp>
#include <waypoint/app/realtime/websocket.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace waypoint::examples {

inline constexpr std::string_view websocket_echo_path = "/v1/echo";

inline void add_websocket_route(app::application& app) {
  serve_websocket(app, websocket_echo_path, [](app::websocket& ws) -> app::awaitable<void> {
    app::websocket_message message;  // one buffer for every message
    while (co_await ws.read(message)) co_await ws.write(message);
  });
  app.describe({.summary = "WebSocket echo: every message comes back as it was sent"});
}

inline constexpr std::string_view rooms_path = "/v1/rooms/";

// A chat room per name: a text message from anyone in the room goes to everyone in it (its
// sender too), through a topic hub whose per-connection queue drops the oldest messages of a
// reader that falls behind rather than hold up the room. The room's name is the path value,
// literally (/v1/rooms/sec* is the room "sec*"). A member past the hub's publish rate is
// closed with 1008 naming it. Given a broker (the gateway's --redis), a room spans every
// gateway that shares it. Returns the hub, for its metrics.
inline constexpr std::size_t room_queue_bytes = 256 * 1024;

// A room's peer that stops reading holds one write in flight, which no close can overtake:
// it is cut when that write has made no progress for this long, rather than the default 30 s.
// No message is longer than a member's queue holds (a longer one could reach no member): the
// sender of one gets 1009.
inline app::websocket_options room_limits() {
  app::websocket_options o;
  o.write_timeout = std::chrono::seconds(5);
  o.max_message_bytes = room_queue_bytes;
  return o;
}

inline std::shared_ptr<const app::topic_hub> add_room_route(
    app::application& app, std::shared_ptr<app::topic_broker> broker = nullptr) {
  auto hub = std::make_shared<app::topic_hub>(app::topic_hub_options{
      .max_queued_bytes = room_queue_bytes, .max_queued_messages = 256,
      .on_overflow = app::overflow_policy::drop_oldest, .broker = std::move(broker)});
  serve_websocket(app, std::string(rooms_path) + "{room}",
                [hub](app::context& ctx, app::websocket& ws) -> app::awaitable<void> {
                  std::string room(ctx.path_value("room"));
                  app::topic_subscriber member(*hub, ws);
                  std::string refused;
                  try {
                    member.subscribe(room);
                  } catch (const std::exception& e) {  // a name past the hub's bound
                    refused = e.what();
                  }
                  if (!refused.empty()) {
                    co_await ws.close(app::close_code::policy_error, refused);
                    co_return;
                  }
                  co_await member.run([&](const app::websocket_message& m) {
                    if (m.binary) return;
                    try {
                      member.publish(room, m.payload);
                    } catch (const app::publish_rate_exceeded& e) {
                      member.close(app::close_code::policy_error, e.what());
                    }
                  });
                },
                room_limits());
  app.describe({.summary = "A room: every text message goes to everyone in the room"});
  return hub;
}

inline constexpr std::string_view phoenix_socket_path = "/v1/socket/websocket";

// The Phoenix Channels protocol (npm's phoenix client: new Socket("ws://HOST/v1/socket")):
// any "room:NAME" joins, and a "shout" pushed on it goes to everyone in the room. Its own
// hub: its topics carry Phoenix frames, which the raw rooms above must not get. Returns the
// hub, for its metrics.
inline std::shared_ptr<const app::topic_hub> add_phoenix_route(app::application& app) {
  auto hub = std::make_shared<app::topic_hub>(app::topic_hub_options{
      .max_queued_bytes = room_queue_bytes, .max_queued_messages = 256,
      .on_overflow = app::overflow_policy::drop_oldest});
  serve_websocket(app, 
      phoenix_socket_path,
      app::phoenix_socket(
          hub, {.join = [](app::context&, std::string_view topic, std::string_view) {
                  if (!topic.starts_with("room:")) return app::phoenix_reply::error("unmatched topic");
                  return app::phoenix_reply::ok();
                },
                .on_event = [](app::phoenix_channel& room, std::string_view event,
                               std::string_view payload) -> std::optional<app::phoenix_reply> {
                  if (event != "shout") return app::phoenix_reply::error("unknown event");
                  room.broadcast("shout", payload);
                  return app::phoenix_reply::ok();
                }}),
      room_limits());
  app.describe({.summary = "Phoenix Channels (V2 JSON): room:NAME topics, shout broadcasts"});
  return hub;
}

// `base` is the gateway's http:// URL.
inline void print_websocket_example(std::ostream& out, const std::string& base) {
  std::string ws = "ws" + base.substr(base.find(':'));
  out << "  /usr/bin/python3 -m websockets " << ws << websocket_echo_path
      << "   # WebSocket echo (Debian: python3-websockets)\n";
  out << "  /usr/bin/python3 -m websockets " << ws << rooms_path
      << "lobby   # a room: run it in two terminals, what one types the other sees\n";
  out << "  /usr/bin/python3 -m websockets '" << ws << phoenix_socket_path
      << "?vsn=2.0.0'   # Phoenix Channels: send [\"1\",\"1\",\"room:lobby\",\"phx_join\",{}] "
         "then [\"1\",\"2\",\"room:lobby\",\"shout\",{\"body\":\"hi\"}]\n";
}

}  // namespace waypoint::examples
