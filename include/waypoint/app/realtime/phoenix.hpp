// The Phoenix Channels protocol over a topic hub, so that the maintained JavaScript client
// (npm `phoenix`, or any client of Phoenix's V2 JSON serializer) talks to a waypoint
// WebSocket route unchanged:
//
//   auto hub = std::make_shared<waypoint::app::topic_hub>();
//   serve_websocket(app, "/socket/websocket", waypoint::app::phoenix_socket(hub, {
//     .join = [](context& ctx, std::string_view topic, std::string_view payload) {
//       if (!topic.starts_with("room:")) return phoenix_reply::error("unmatched topic");
//       return phoenix_reply::ok();
//     },
//     .on_event = [](phoenix_channel& ch, std::string_view event, std::string_view payload)
//         -> std::optional<phoenix_reply> {
//       if (event == "shout") ch.broadcast("shout", payload);   // everyone in the topic
//       return phoenix_reply::ok();                             // the pusher's phx_reply
//     }}));
//   // new Socket("/socket", {params: {}}).channel("room:lobby").join()   (in a browser)
//
// A topic the client names is literal ("room:*" is one topic, not every room) and obeys the
// hub's one rule for client-named topics (topic_name_refusal), as a raw room's does.
// Every frame is a JSON array [join_ref, ref, topic, event, payload]. The client joins a
// topic (phx_join, answered by a phx_reply whose payload is {"status":"ok"|"error",
// "response":{...}}), pushes events on it (each answered by the handler's phx_reply, if any),
// leaves it (phx_leave: "ok", then phx_close), and sends a heartbeat on the topic "phoenix"
// every 30 s (answered "ok"). What is broadcast to a topic reaches every client joined to it
// as [null, null, topic, event, payload], encoded once per broadcast. A handler that throws
// crashes its channel alone: the client gets phx_error and rejoins, as it would from Phoenix.
// Closing the socket leaves every channel.
//
// Payloads are JSON text: a handler reads the client's with its own parser, and what it
// hands back (a reply's response, a push's or a broadcast's payload) must be a JSON object,
// as Phoenix requires (std::invalid_argument otherwise, which crashes the channel rather than
// send the client a frame it cannot read). docs/server.md, "Phoenix Channels", has what
// a client that breaks the protocol or reaches a limit gets.
#pragma once

#include "waypoint/app/realtime/topics.hpp"
#include "waypoint/app/realtime/websocket.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace waypoint::app {

// A phx_reply's payload: {"status": status, "response": response}. Answers a join (joined
// when the status is "ok", refused otherwise) or an event (the client's
// push.receive(status, ...) matches the status).
struct phoenix_reply {
  std::string status = "ok";
  std::string response = "{}";  // JSON text: an object

  static phoenix_reply ok(std::string answer = "{}");
  // {"status":"error","response":{"reason":reason}}, the reason as a JSON string.
  static phoenix_reply error(std::string_view reason);
};

namespace detail {
class phoenix_session;  // src/app/realtime/phoenix_session.hpp
}

// One joined channel, as an event handler sees it: its topic, the upgrade request's context
// (the values the route's layers set: who the user is), and what it may send.
class phoenix_channel {
 public:
  std::string_view topic() const noexcept { return topic_; }
  context& request_context() const noexcept { return *ctx_; }

  // Pushes `event` to this client alone, on this channel ([join_ref, null, topic, event,
  // payload]), in order with its replies and the broadcasts it receives.
  void push(std::string_view event, std::string_view payload);
  // Sends `event` to every client joined to this topic, this one included, on every server
  // thread; returns how many it was queued for. Encoded once, whatever their number. It is
  // this client's publish, within its connection's rate (topic_hub_options::publish_rate):
  // past it, throws publish_rate_exceeded, which, uncaught, answers the push
  // {"status":"error","response":{"reason":"rate limited"}} and leaves the channel joined.
  std::size_t broadcast(std::string_view event, std::string_view payload);
  // Ends the channel from the server once the handler returns (after its reply): the client
  // gets phx_close, and the connection leaves the topic.
  void close() noexcept { closing_ = true; }

 private:
  friend class detail::phoenix_session;
  phoenix_channel(detail::phoenix_session& session, context& ctx, std::string topic,
                  std::string join_ref)
      : session_(&session), ctx_(&ctx), topic_(std::move(topic)), join_ref_(std::move(join_ref)) {}

  detail::phoenix_session* session_;
  context* ctx_;
  std::string topic_;
  std::string join_ref_;  // JSON text of the join's ref ("\"3\""), echoed as the client sent it
  bool closing_ = false;
};

struct phoenix_options {
  // Decides a phx_join of `topic` with the client's `payload` (the params of
  // socket.channel(topic, params)): "ok" joins, with the reply's response as the join's;
  // any other status refuses, and the client's join.receive("error", ...) gets the response
  // (phoenix_reply::error("unauthorized") gives {"reason":"unauthorized"}). Required. A
  // hook that throws refuses with {"reason":"join crashed"}, as Phoenix does.
  std::function<phoenix_reply(context& ctx, std::string_view topic, std::string_view payload)> join;
  // A client's event on a joined channel: its phx_reply, or nullopt for none (the client's
  // push then times out). Without it, every event is answered {"reason":"unhandled event"}.
  std::function<std::optional<phoenix_reply>(phoenix_channel& channel, std::string_view event,
                                             std::string_view payload)>
      on_event;
  // Channels one connection may have joined at once; a join past it is refused with
  // {"reason":"too many channels joined"}, as Phoenix's max_channels_per_transport (whose
  // default is 100) does. The hub's max_topics_per_subscriber bounds it too.
  std::size_t max_channels = 100;
};

// The protocol version this server speaks: phoenix.js sends it as ?vsn=2.0.0 (Phoenix's
// "~> 2.0.0": any 2.0.x is taken).
inline constexpr std::string_view phoenix_vsn = "2.0.0";

// The handler of a Phoenix socket route (serve_websocket(app, path, phoenix_socket(hub, options))).
// Topics are the hub's: give Phoenix sockets a hub whose topics no raw route publishes to,
// since a subscriber gets a topic's messages as they were published. Throws
// std::invalid_argument without a join hook.
websocket_handler phoenix_socket(std::shared_ptr<topic_hub> hub, phoenix_options options);

// Broadcasts `event` with `payload` (JSON text, an object) to every client joined to
// `topic` through `hub`, from any thread; returns how many it was queued for. The frame,
// [null, null, topic, event, payload], is encoded once. The application's own broadcast:
// no connection's publish rate applies.
std::size_t phoenix_broadcast(topic_hub& hub, std::string_view topic, std::string_view event,
                              std::string_view payload);

}  // namespace waypoint::app
