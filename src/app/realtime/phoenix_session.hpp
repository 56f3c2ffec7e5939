// The Phoenix Channels protocol of one connection, without its I/O: phoenix_session turns
// each message from the client into what the connection must do (send frames, join or
// leave hub topics, close), through a phoenix_link. phoenix_socket's link is the
// connection's topic_subscriber; the tests' records what it is asked, so that every rule
// of the protocol is checked without a socket. Private to src/app (and its tests).
#pragma once

#include "waypoint/app/realtime/phoenix.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace waypoint::app::detail {

// What a session does to its connection.
class phoenix_link {
 public:
  // Queues a frame for the client, after the ones before it.
  virtual void send(std::string_view frame) = 0;
  // Joins and leaves hub topics; subscribe throws as topic_subscriber::subscribe does.
  virtual void subscribe(std::string_view topic) = 0;
  // Publishes a channel's broadcast on the client's behalf; throws as
  // topic_subscriber::publish does (publish_rate_exceeded past the connection's rate).
  virtual std::size_t publish(std::string_view topic, std::string_view frame) = 0;
  virtual void unsubscribe(std::string_view topic) = 0;
  // Closes the connection once the frames queued have gone out.
  virtual void close(close_code code, std::string_view reason) = 0;

 protected:
  ~phoenix_link() = default;
};

// A client frame, decoded. The refs are kept as the JSON text the client sent ("\"4\"",
// "null"), so that a reply echoes them exactly, as Phoenix echoes any term; the payload is
// the JSON value re-serialized compactly.
struct phoenix_frame {
  std::string join_ref;
  std::string ref;
  std::string topic;
  std::string event;
  std::string payload;
};

// Why a message is not a frame, and the close code it earns: 1007 for text that is not
// JSON, 1008 for JSON that is not [join_ref, ref, topic, event, payload] with a string topic
// and event. The reason is short ASCII (a close frame carries at most 123 bytes).
struct phoenix_frame_error {
  close_code code;
  std::string reason;
};

std::variant<phoenix_frame, phoenix_frame_error> decode_phoenix_frame(std::string_view text);

// [join_ref, ref, topic, event, payload]: the refs and the payload as JSON text, the topic
// and the event as strings (escaped here; a byte outside well-formed UTF-8 becomes U+FFFD).
std::string encode_phoenix_frame(std::string_view join_ref, std::string_view ref,
                                 std::string_view topic, std::string_view event,
                                 std::string_view payload);

// Throws std::invalid_argument unless `text` is a JSON object (what Phoenix sends as a
// payload and a reply's response).
void require_json_object(std::string_view text, std::string_view what);

// A broadcast's frame, [null, null, topic, event, payload], its payload checked an object.
std::string encode_broadcast(std::string_view topic, std::string_view event,
                             std::string_view payload);

class phoenix_session {
 public:
  phoenix_session(topic_hub& hub, const phoenix_options& options, context& ctx, phoenix_link& link);

  // One message from the client. After a message that closes the connection, the rest are
  // ignored.
  void receive(const websocket_message& message);
  std::size_t channels() const noexcept { return channels_.size(); }

  // phoenix_channel's.
  void push(const phoenix_channel& channel, std::string_view event, std::string_view payload);
  std::size_t broadcast(const phoenix_channel& channel, std::string_view event,
                        std::string_view payload);

 private:
  using channel_list = std::vector<std::unique_ptr<phoenix_channel>>;

  void join(const phoenix_frame& frame, channel_list::iterator existing);
  void handle_event(phoenix_channel& channel, const phoenix_frame& frame);
  // Ends a channel from the server: phx_close (`event` phx_error for a crash), and the topic
  // is left.
  void end_channel(channel_list::iterator channel, std::string_view event,
                   std::string_view payload);
  void reply(std::string_view join_ref, std::string_view ref, std::string_view topic,
             const phoenix_reply& answer);
  void fail(close_code code, std::string_view reason);
  channel_list::iterator find(std::string_view topic);

  topic_hub* hub_;
  const phoenix_options* options_;
  context* ctx_;
  phoenix_link* link_;
  channel_list channels_;  // Invariant: one per topic, each subscribed to its topic
  bool failed_ = false;    // the connection is closing: nothing more is read
};

}  // namespace waypoint::app::detail
