// Publish/subscribe for WebSocket routes: a topic_hub that any thread publishes to, and a
// topic_subscriber per connection that joins topics and delivers what is published to them:
//
//   auto hub = std::make_shared<waypoint::app::topic_hub>();
//   serve_websocket(app, "/v1/rooms/{room}", [hub](context& ctx, websocket& ws)
//                                                -> awaitable<void> {
//     std::string topic = "room:" + std::string(ctx.path_value("room"));
//     waypoint::app::topic_subscriber member(*hub, ws);
//     member.subscribe(topic);
//     co_await member.run([&](const websocket_message& m) { member.publish(topic, m.payload); });
//   });
//   hub->publish("room:lobby", "{\"system\":\"restarting\"}");   // from any thread
//
// A publish copies the payload once, into one shared buffer every subscriber's queue points
// at, and never waits for a subscriber: each connection has its own bounded queue (bytes and
// messages), drained by its own coroutine at the pace its peer reads. When a queue would go
// past its bounds, the hub's overflow policy applies to that connection alone: close it with
// 1008 ("slow consumer"), or drop its oldest queued messages. Either way the publisher and
// the other subscribers carry on. docs/server.md, "Topics", says what a subscriber costs.
//
// Names are literal: subscribe(name) joins the one topic spelled so, whatever its characters,
// so a name taken from a client (a path value, a Phoenix join) reaches that topic alone.
// Hearing every topic that starts a certain way is the application's explicit choice,
// subscribe_prefix(prefix). A connection's own publishes (member.publish) are held to a rate;
// the application's (hub->publish) are not.
//
// Across instances: a hub given a topic_broker (topic_hub_options::broker) also hands each
// publish to the broker, which carries it to the hubs of the other instances (through Redis:
// redis_topic_broker.hpp); what they publish comes back through it to this hub's subscribers.
#pragma once

#include "waypoint/app/realtime/websocket.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace waypoint::app {

// What a subscriber's full queue does.
enum class overflow_policy : std::uint8_t {
  close,        // the connection is closed with 1008 and its queue discarded
  drop_oldest,  // the oldest queued messages are dropped until the new one fits
};

// Carries publishes between the hubs of several instances (processes, machines) that serve
// the same topics. A hub calls start() once, from its constructor, and stop() from its
// destructor; publish() for each of its own publishes, after delivering it to its own
// subscribers. The broker calls `deliver` for every message published on another instance,
// never for this one's own (the hub has delivered those already), from any thread, in the
// order each publisher published.
class topic_broker {
 public:
  using deliver_fn = std::function<void(std::string_view topic, std::string_view payload, bool binary)>;

  virtual ~topic_broker() = default;
  // Begins delivering. Throws std::logic_error when the broker already serves a hub.
  virtual void start(deliver_fn deliver) = 0;
  // Sends one publish of this instance to the others. Must not wait on the network: the
  // hub calls it on the publisher's thread (a server thread, often).
  virtual void publish(std::string_view topic, std::string_view payload, bool binary) = 0;
  // Stops delivering: no call of `deliver` runs or begins once it returns.
  virtual void stop() noexcept = 0;
};

struct topic_hub_options {
  // Per subscriber: the payload bytes and the messages queued and not yet sent.
  std::size_t max_queued_bytes = std::size_t{1} << 20;
  std::size_t max_queued_messages = 1024;
  overflow_policy on_overflow = overflow_policy::close;
  // Per subscriber: the topics it may be in at once, and the longest topic name (a client
  // that names its topics cannot make the hub hold unbounded text).
  std::size_t max_topics_per_subscriber = 64;
  std::size_t max_topic_bytes = 256;
  // Per subscriber: what its own publishes (topic_subscriber::publish, what its peer says)
  // may come to: `publish_rate` a second on average, in bursts of up to `publish_burst`.
  // Past it, publish throws publish_rate_exceeded and publishes nothing. One member of a
  // room of 2,001 publishing 91 a second pushed the others' median delivery to 5.2 s; 20 a
  // second leaves a person typing, or a client's presence events, far below it, and a
  // burst of 100 lets a pasted block of lines through at once.
  std::size_t publish_rate = 20;
  std::size_t publish_burst = 100;
  // Empty: this process's subscribers only, at no cost. Given: every publish also goes to
  // the broker, and what other instances publish comes from it (one hub per broker).
  std::shared_ptr<topic_broker> broker = nullptr;
};

// Thrown by topic_subscriber::publish when its connection has published past its rate
// (topic_hub_options::publish_rate): nothing was published. what() names the rate.
class publish_rate_exceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The one rule for a topic name a client supplies (a room's path value, a Phoenix join):
// why `name` cannot be a topic of a hub with `options`, or nullopt when it can. A name is 1
// to max_topic_bytes bytes, any bytes, and literal (a '*' in it is a character like any
// other). subscribe() applies it and throws its reason; a protocol that answers a refusal
// in its own words (a Phoenix join's error reply) asks it first.
std::optional<std::string> topic_name_refusal(std::string_view name,
                                              const topic_hub_options& options);

// What the hub has done since it was made, for metrics.
struct topic_hub_stats {
  std::size_t topics = 0;        // names with a subscriber now (exact and prefix)
  std::size_t subscribers = 0;   // connections in at least one topic now
  std::size_t queued_bytes = 0;  // payload bytes queued and not yet sent, all subscribers
  std::uint64_t published = 0;   // publish() calls
  std::uint64_t received = 0;    // messages from other instances, through the broker
  std::uint64_t delivered = 0;   // messages queued to a subscriber
  std::uint64_t dropped = 0;     // messages dropped by drop_oldest, or larger than a queue
  std::uint64_t slow_closes = 0; // connections closed by the close policy
};

namespace detail {
struct topic_mailbox;  // src/app/realtime/topics.cpp
}

// The topics and who is in them. Thread-safe: publish() and subscribers() from any thread,
// under one mutex held for the lookup alone (queuing happens after it is released, under
// each subscriber's own).
class topic_hub {
 public:
  // Throws std::invalid_argument for a bound of zero; starts the broker, if any.
  explicit topic_hub(topic_hub_options options = {});
  ~topic_hub();
  topic_hub(const topic_hub&) = delete;
  topic_hub& operator=(const topic_hub&) = delete;

  // Queues `payload` (a text message, or binary) for every subscriber of `topic`: those of
  // the name itself and those of every prefix it starts with. A connection in both gets
  // it once. Returns how many subscribers it was queued for (those a policy refused it
  // excluded). With a broker, hands it the message too, for the other instances. Throws
  // std::length_error, queuing it for nobody, for a payload larger than max_queued_bytes,
  // which no queue could ever hold: the publisher learns it, rather than every subscriber
  // losing it (drop_oldest) or being closed for it (close).
  std::size_t publish(std::string_view topic, std::string_view payload, bool binary = false);
  // How many connections a publish to `topic` would reach now (presence).
  std::size_t subscribers(std::string_view topic) const;
  topic_hub_stats stats() const;
  const topic_hub_options& options() const noexcept { return options_; }

 private:
  friend class topic_subscriber;
  using mailbox_ptr = std::shared_ptr<detail::topic_mailbox>;

  // `prefix`: `name` is a prefix (subscribe_prefix), else a topic's name.
  void join(const mailbox_ptr& mailbox, const std::string& name, bool prefix);
  void leave(const mailbox_ptr& mailbox, const std::string& name, bool prefix);
  void collect(std::string_view topic, std::vector<mailbox_ptr>& out) const;
  std::size_t deliver(std::string_view topic, std::string_view payload, bool binary);

  // Looked up by std::string_view: a publish allocates no key.
  struct topic_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };
  using topic_table =
      std::unordered_map<std::string, std::vector<mailbox_ptr>, topic_hash, std::equal_to<>>;

  topic_hub_options options_;
  mutable std::mutex mutex_;
  topic_table exact_;     // guarded by mutex_
  topic_table prefixes_;  // guarded by mutex_: "room:" hears every "room:..."
  // The lengths the prefixes have, and how many of each: a publish looks up its topic's
  // prefixes of these lengths only.
  std::map<std::size_t, std::size_t> prefix_lengths_;  // guarded by mutex_
  std::size_t members_ = 0;                            // guarded by mutex_
  std::atomic<std::uint64_t> published_{0};
  std::atomic<std::uint64_t> received_{0};

 public:
  // Shared with the mailboxes, which count as they queue, drop and close.
  struct counters {
    std::atomic<std::size_t> queued_bytes{0};
    std::atomic<std::uint64_t> delivered{0}, dropped{0}, slow_closes{0};
  };

 private:
  std::shared_ptr<counters> counters_;
};

// One connection's membership, made in its WebSocket handler and living as long as it: it
// leaves every topic when destroyed. Not thread-safe: use it from the handler's coroutine.
class topic_subscriber {
 public:
  topic_subscriber(topic_hub& hub, websocket& ws);
  ~topic_subscriber();
  topic_subscriber(const topic_subscriber&) = delete;
  topic_subscriber& operator=(const topic_subscriber&) = delete;

  // Joins the topic named `name`, literally: "room:*" is the topic of that name, not a
  // pattern, so a name a client supplies reaches one topic. Joining twice is joining once.
  // Throws std::invalid_argument with topic_name_refusal's reason, and std::length_error
  // past max_topics_per_subscriber (topics and prefixes together).
  void subscribe(std::string_view name);
  // Joins every topic whose name starts with `prefix` ("room:" hears every room; "" every
  // topic): the application's decision, so never a client's text passed on. Throws as
  // subscribe() does, though an empty prefix is taken.
  void subscribe_prefix(std::string_view prefix);
  // Leaves the topic, or the prefix; false when the connection was not in it.
  bool unsubscribe(std::string_view name);
  bool unsubscribe_prefix(std::string_view prefix);
  const std::vector<std::string>& topics() const noexcept { return topics_; }
  const std::vector<std::string>& prefixes() const noexcept { return prefixes_; }

  // Publishes what this connection's peer said: hub.publish(topic, payload, binary), within
  // the connection's publish rate (topic_hub_options::publish_rate). Throws
  // publish_rate_exceeded past it, and std::length_error as hub.publish does; nothing is
  // published then. The route decides what a client past its rate gets (a room closes it
  // with 1008; a Phoenix push is answered an error).
  std::size_t publish(std::string_view topic, std::string_view payload, bool binary = false);

  // Queues `payload` for this connection alone, behind what is queued for it: a reply goes
  // out in order with the publishes before it, under the same bounds and overflow policy.
  // False when it will not be sent (the queue refused it, or the connection is closing).
  bool send(std::string_view payload, bool binary = false);
  // Closes the connection with `code` and `reason` once what is queued now has been sent;
  // nothing offered after this is queued. For run()'s callback, which cannot wait for a
  // close itself.
  void close(close_code code, std::string_view reason);

  // Serves the connection until it closes: reads the peer's messages, handing each to
  // `on_message` (which may publish, subscribe or unsubscribe), and meanwhile sends what is
  // published to its topics, in publish order per publisher. Returns when the connection is
  // closed, by the peer, the server, or the overflow policy (closed_with() then says 1008).
  awaitable<void> run(std::function<void(const websocket_message&)> on_message = {});

 private:
  void join(std::string_view name, bool prefix);
  bool leave(std::string_view name, bool prefix);
  bool take_publish_token();

  topic_hub* hub_;
  websocket* ws_;
  std::shared_ptr<detail::topic_mailbox> mailbox_;
  std::vector<std::string> topics_;
  std::vector<std::string> prefixes_;
  // The publish rate's token bucket: tokens as of `tokens_at`, at most publish_burst.
  double publish_tokens_;
  std::chrono::steady_clock::time_point tokens_at_;
};

}  // namespace waypoint::app
