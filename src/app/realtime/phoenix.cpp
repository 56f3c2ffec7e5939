// The Phoenix Channels protocol (V2 JSON serializer) over the topic hub: the frame codec,
// the per-connection session that follows Phoenix's Phoenix.Socket and
// Phoenix.Channel.Server rule by rule, and the WebSocket handler that runs a session over a
// topic_subscriber.
//
// Where Phoenix's behaviour is copied, the reason is the client: phoenix.js matches a reply
// to its push by ref, drops a message whose join_ref is not its channel's current one, and
// rejoins a channel that errored. So a reply echoes the refs as sent, an unjoined topic is
// answered with a null join_ref ({"reason":"unmatched topic"}), and a leave is answered
// "ok" and then closed (phx_close), as Phoenix does.
#include "app/detail/client_json.hpp"
#include "app/realtime/phoenix_session.hpp"

#include "waypoint/app/typed/json.hpp"
#include "waypoint/json_string.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace waypoint::app {

namespace {

using json = nlohmann::json;

// A JSON string literal: waypoint's own writer, which writes a byte outside well-formed
// UTF-8 as U+FFFD, so every frame parses.
std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

constexpr std::string_view empty_object = "{}";
constexpr std::string_view rate_limited = "rate limited";
constexpr std::string_view null_ref = "null";

// phoenix.js sends ?vsn=2.0.0; Phoenix takes a version by "~> 2.0.0" (any 2.0.x). Refused
// after the handshake with a close reason rather than before it with an HTTP status, because
// a browser shows a script neither the status nor the body of a failed handshake.
std::optional<std::string_view> vsn_refusal(std::optional<std::string_view> vsn) {
  if (!vsn)
    return "no vsn: this socket speaks Phoenix's V2 JSON serializer, connect with ?vsn=2.0.0";
  std::string_view v = *vsn;
  bool two_oh = v.starts_with("2.0.") && v.size() > 4 &&
                std::all_of(v.begin() + 4, v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!two_oh)
    return "unsupported vsn: this socket speaks Phoenix's V2 JSON serializer (vsn=2.0.0)";
  return std::nullopt;
}

// What a handler's exception says, for the log (which escapes it: it may quote the client).
std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

// A handler's reply, checked before any of it is sent: its response an object.
void check_reply(const phoenix_reply& answer, std::string_view what) {
  detail::require_json_object(answer.response, what);
}

// The connection as a phoenix_socket's session drives it.
class subscriber_link final : public detail::phoenix_link {
 public:
  explicit subscriber_link(topic_subscriber& member) noexcept : member_(&member) {}
  void send(std::string_view frame) override { member_->send(frame); }
  void subscribe(std::string_view topic) override { member_->subscribe(topic); }
  std::size_t publish(std::string_view topic, std::string_view frame) override {
    return member_->publish(topic, frame);
  }
  void unsubscribe(std::string_view topic) override { member_->unsubscribe(topic); }
  void close(close_code code, std::string_view reason) override { member_->close(code, reason); }

 private:
  topic_subscriber* member_;
};

}  // namespace

// ---- replies and channels --------------------------------------------------------------

phoenix_reply phoenix_reply::ok(std::string answer) {
  return {.status = "ok", .response = std::move(answer)};
}

phoenix_reply phoenix_reply::error(std::string_view reason) {
  return {.status = "error", .response = "{\"reason\":" + json_string(reason) + "}"};
}

void phoenix_channel::push(std::string_view event, std::string_view payload) {
  session_->push(*this, event, payload);
}

// A client's broadcast: on its connection's behalf, within its publish rate.
std::size_t phoenix_channel::broadcast(std::string_view event, std::string_view payload) {
  return session_->broadcast(*this, event, payload);
}

// The application's broadcast: no connection's rate applies.
std::size_t phoenix_broadcast(topic_hub& hub, std::string_view topic, std::string_view event,
                              std::string_view payload) {
  return hub.publish(topic, detail::encode_broadcast(topic, event, payload));
}

// ---- the codec -------------------------------------------------------------------------

namespace detail {

std::variant<phoenix_frame, phoenix_frame_error> decode_phoenix_frame(std::string_view text) {
  constexpr std::string_view shape = "a Phoenix frame is [join_ref, ref, topic, event, payload]";
  json doc;
  try {
    parse_client_json(text, doc);  // bounded: the payload is dumped, and copied later
  } catch (const client_json_error& e) {
    // Not nlohmann/json's message: it quotes the client's bytes, which a close reason
    // (123 bytes, UTF-8) cannot be trusted to carry.
    std::string reason = "malformed JSON at byte " + std::to_string(e.byte());
    if (e.fault() == json_fault::too_deep) reason += std::string(": ") + e.what();
    return phoenix_frame_error{close_code::bad_payload, std::move(reason)};
  }
  // Phoenix matches [join_ref, ref, topic, event, payload | _]: more elements are ignored.
  if (!doc.is_array() || doc.size() < 5)
    return phoenix_frame_error{close_code::policy_error, std::string(shape)};
  if (!doc[2].is_string() || !doc[3].is_string())
    return phoenix_frame_error{close_code::policy_error,
                               "the topic and the event of a Phoenix frame are strings"};
  return phoenix_frame{.join_ref = doc[0].dump(),
                       .ref = doc[1].dump(),
                       .topic = doc[2].get<std::string>(),
                       .event = doc[3].get<std::string>(),
                       .payload = doc[4].dump()};
}

std::string encode_phoenix_frame(std::string_view join_ref, std::string_view ref,
                                 std::string_view topic, std::string_view event,
                                 std::string_view payload) {
  std::string out;
  out.reserve(join_ref.size() + ref.size() + topic.size() + event.size() + payload.size() + 10);
  out += '[';
  out += join_ref;
  out += ',';
  out += ref;
  out += ',';
  append_json_string(out, topic);
  out += ',';
  append_json_string(out, event);
  out += ',';
  out += payload;
  out += ']';
  return out;
}

void require_json_object(std::string_view text, std::string_view what) {
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{' || !json::accept(text))
    throw std::invalid_argument(std::string(what) + " must be a JSON object");
}

std::string encode_broadcast(std::string_view topic, std::string_view event,
                             std::string_view payload) {
  require_json_object(payload, "a broadcast's payload");
  return encode_phoenix_frame(null_ref, null_ref, topic, event, payload);
}

// ---- the session -----------------------------------------------------------------------

phoenix_session::phoenix_session(topic_hub& hub, const phoenix_options& options, context& ctx,
                                 phoenix_link& link)
    : hub_(&hub), options_(&options), ctx_(&ctx), link_(&link) {}

phoenix_session::channel_list::iterator phoenix_session::find(std::string_view topic) {
  return std::find_if(channels_.begin(), channels_.end(),
                      [&](const auto& c) { return c->topic_ == topic; });
}

void phoenix_session::fail(close_code code, std::string_view reason) {
  failed_ = true;
  link_->close(code, reason);
}

void phoenix_session::reply(std::string_view join_ref, std::string_view ref, std::string_view topic,
                            const phoenix_reply& answer) {
  std::string payload =
      "{\"status\":" + json_string(answer.status) + ",\"response\":" + answer.response + "}";
  link_->send(encode_phoenix_frame(join_ref, ref, topic, "phx_reply", payload));
}

void phoenix_session::push(const phoenix_channel& channel, std::string_view event,
                           std::string_view payload) {
  require_json_object(payload, "a push's payload");
  link_->send(encode_phoenix_frame(channel.join_ref_, null_ref, channel.topic_, event, payload));
}

std::size_t phoenix_session::broadcast(const phoenix_channel& channel, std::string_view event,
                                       std::string_view payload) {
  return link_->publish(channel.topic_, encode_broadcast(channel.topic_, event, payload));
}

// Phoenix sends both with the join's ref as join_ref and ref.
void phoenix_session::end_channel(channel_list::iterator channel, std::string_view event,
                                  std::string_view payload) {
  const phoenix_channel& c = **channel;
  link_->send(encode_phoenix_frame(c.join_ref_, c.join_ref_, c.topic_, event, payload));
  link_->unsubscribe(c.topic_);
  channels_.erase(channel);
}

void phoenix_session::receive(const websocket_message& message) {
  if (failed_) return;
  if (message.binary)
    return fail(close_code::unknown_data,
                "binary frames are not taken: this socket speaks Phoenix's V2 JSON serializer");
  auto decoded = decode_phoenix_frame(message.payload);
  if (auto* error = std::get_if<phoenix_frame_error>(&decoded))
    return fail(error->code, error->reason);
  const phoenix_frame& frame = std::get<phoenix_frame>(decoded);

  if (frame.topic == "phoenix" && frame.event == "heartbeat")
    return reply(null_ref, frame.ref, frame.topic, phoenix_reply::ok());
  auto channel = find(frame.topic);
  if (frame.event == "phx_join") return join(frame, channel);
  if (channel == channels_.end()) {
    // Not joined: a leave is answered "ok" (the client may have raced a server close); any
    // other event is answered as Phoenix answers a topic no channel serves.
    if (frame.event == "phx_leave")
      return reply(frame.join_ref, frame.ref, frame.topic, phoenix_reply::ok());
    return reply(null_ref, frame.ref, frame.topic, phoenix_reply::error("unmatched topic"));
  }
  // A message for an earlier join of this topic (the client rejoined since) is dropped; a
  // null join_ref is the protocol's "whichever join is current".
  if (frame.join_ref != null_ref && frame.join_ref != (*channel)->join_ref_) return;
  if (frame.event == "phx_leave") {
    reply((*channel)->join_ref_, frame.ref, frame.topic, phoenix_reply::ok());
    return end_channel(channel, "phx_close", empty_object);
  }
  handle_event(**channel, frame);
}

void phoenix_session::join(const phoenix_frame& frame, channel_list::iterator existing) {
  // A second join of a topic replaces the first, which the client is told is closed.
  if (existing != channels_.end()) end_channel(existing, "phx_close", empty_object);
  auto refuse = [&](std::string_view reason) {
    reply(frame.join_ref, frame.ref, frame.topic, phoenix_reply::error(reason));
  };
  if (channels_.size() >= options_->max_channels) return refuse("too many channels joined");
  // The hub's rule for a name a client supplies, as the raw rooms have it; the name is
  // literal ("room:*" is one topic, never every room).
  if (auto refusal = topic_name_refusal(frame.topic, hub_->options())) return refuse(*refusal);

  phoenix_reply answer;
  try {
    answer = options_->join(*ctx_, frame.topic, frame.payload);
    check_reply(answer, "a join's response");
  } catch (...) {
    std::string line = "waypoint: Phoenix join of ";
    append_log_text(line, frame.topic);
    line += " threw: ";
    append_log_text(line, describe_exception(std::current_exception()));
    ctx_->app().log(line);
    return refuse("join crashed");
  }
  if (answer.status != "ok") return reply(frame.join_ref, frame.ref, frame.topic, answer);
  try {
    link_->subscribe(frame.topic);
  } catch (const std::length_error&) {  // the hub's max_topics_per_subscriber
    return refuse("too many channels joined");
  }
  channels_.push_back(std::unique_ptr<phoenix_channel>(
      new phoenix_channel(*this, *ctx_, frame.topic, frame.join_ref)));
  reply(frame.join_ref, frame.ref, frame.topic, answer);
}

// A handler that throws crashes its channel, not the connection: phx_error, which
// phoenix.js answers by rejoining after a backoff. The push that crashed gets no reply.
// A broadcast past the connection's publish rate is no crash: the push is answered
// {"reason":"rate limited"} and the channel stays, as the client did nothing but hurry.
void phoenix_session::handle_event(phoenix_channel& channel, const phoenix_frame& frame) {
  std::optional<phoenix_reply> answer;
  try {
    if (options_->on_event)
      answer = options_->on_event(channel, frame.event, frame.payload);
    else
      answer = phoenix_reply::error("unhandled event");
    if (answer) check_reply(*answer, "a reply's response");
  } catch (const publish_rate_exceeded&) {
    answer = phoenix_reply::error(rate_limited);
  } catch (...) {
    std::string line = "waypoint: Phoenix event ";
    append_log_text(line, frame.event);
    line += " on ";
    append_log_text(line, frame.topic);
    line += " threw; the channel crashed: ";
    append_log_text(line, describe_exception(std::current_exception()));
    ctx_->app().log(line);
    return end_channel(find(frame.topic), "phx_error", "{\"reason\":\"channel_crash\"}");
  }
  if (answer) reply(channel.join_ref_, frame.ref, frame.topic, *answer);
  if (channel.closing_) end_channel(find(frame.topic), "phx_close", empty_object);
}

}  // namespace detail

// ---- the WebSocket handler -------------------------------------------------------------

websocket_handler phoenix_socket(std::shared_ptr<topic_hub> hub, phoenix_options options) {
  if (!hub) throw std::invalid_argument("phoenix_socket: no topic hub");
  if (!options.join)
    throw std::invalid_argument(
        "phoenix_socket: phoenix_options::join is required (it decides who joins which topic)");
  if (options.max_channels == 0)
    throw std::invalid_argument("phoenix_socket: max_channels must be at least 1");
  auto shared = std::make_shared<const phoenix_options>(std::move(options));
  return [hub = std::move(hub), shared](context& ctx, websocket& ws) -> awaitable<void> {
    std::optional<std::string_view> refused = vsn_refusal(ctx.query("vsn"));
    if (refused) {
      co_await ws.close(close_code::policy_error, *refused);
      co_return;
    }
    topic_subscriber member(*hub, ws);  // leaves every channel's topic when the socket ends
    subscriber_link link(member);
    detail::phoenix_session session(*hub, *shared, ctx, link);
    co_await member.run([&](const websocket_message& m) { session.receive(m); });
  };
}

}  // namespace waypoint::app
