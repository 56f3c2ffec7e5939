// Topics across instances through Redis pub/sub: every instance's hub gets a broker pointed
// at the same Redis, and a publish on any of them reaches the subscribers of all of them.
//
//   auto hub = std::make_shared<waypoint::app::topic_hub>(waypoint::app::topic_hub_options{
//       .broker = std::make_shared<waypoint::app::redis_topic_broker>(
//           waypoint::app::redis_topic_broker_options{.host = "10.0.0.5", .port = 6379})});
//
// Built as part of waypoint::app_redis when Debian's libhiredis-dev is installed
// (`scripts/install-deps redis`).
//
// How: every publish travels on one Redis channel (`channel`), framed with the topic, the
// publishing instance's id and whether it is binary; every instance subscribes to that
// channel and hands each message to its hub, which delivers it to the subscribers of the
// topic and of every prefix it starts with, exactly as a local publish. One channel
// rather than one per topic: prefixes need no mapping onto Redis's glob patterns, and
// no message is lost between a connection joining a topic and a SUBSCRIBE reaching Redis;
// the price is that every instance reads every message, whether or not it has a subscriber
// for it. The hub delivers its own publishes locally at once, and the broker skips them
// when Redis echoes them back (by the instance id), so that local delivery never waits on
// Redis nor stops when Redis does.
//
// Threads: publish() only queues (a bounded queue, `max_pending_*`); a publisher thread
// sends the queue in order, batches of PUBLISH written together on one connection, so one
// publisher's messages reach Redis, and so every other instance, in the order published. A subscriber
// thread holds the subscribing connection (hiredis's synchronous client, polled with a
// heartbeat so that a Redis that stops answering is noticed) and delivers on that thread.
//
// What is lost (Redis pub/sub delivers at most once, to whoever is subscribed then):
// - while this instance cannot reach Redis: its publishes reach its own subscribers only
//   (the failed batch, of which Redis may have run a part, those queued when it noticed, and
//   those made until it has reconnected, are dropped and counted), and what other instances
//   publish does not reach it;
// - a publish made while the queue is full (Redis slower than the publishers): dropped;
// - what is queued when the broker is destroyed.
// Nothing is replayed after a reconnect. The broker reconnects by itself, with a backoff
// from `reconnect_min` doubling to `reconnect_max`.
#pragma once

#include "waypoint/app/realtime/topics.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace waypoint::app {

struct redis_topic_broker_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  // The channel every instance publishes to and subscribes to: instances that share a
  // Redis and a channel share their topics.
  std::string channel = "waypoint:topics";
  // For connecting, and for each PUBLISH (on the publisher thread, never a caller's).
  std::chrono::milliseconds timeout{1000};
  // The queue of publishes not yet sent; a publish past either bound is dropped.
  std::size_t max_pending_messages = 4096;
  std::size_t max_pending_bytes = std::size_t{4} << 20;
  // Between attempts to reach Redis again: from the first, doubling to the second.
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{5000};
  // The subscribing connection PINGs Redis after this long without a message, and
  // reconnects when another passes without an answer.
  std::chrono::milliseconds heartbeat{1000};
  // Told when Redis is lost and reached again (a line, no newline), from the broker's
  // threads. Empty: not told.
  std::function<void(std::string_view)> log = nullptr;
};

// What the broker has done since it was made.
struct redis_topic_broker_stats {
  bool subscribed = false;       // the subscribing connection is subscribed now
  std::uint64_t sent = 0;        // publishes sent to Redis
  std::uint64_t received = 0;    // messages from other instances handed to the hub
  std::uint64_t dropped = 0;     // publishes not sent: queue full, or Redis unreachable
  std::uint64_t malformed = 0;   // messages on the channel that were not a broker's frame
  std::uint64_t reconnects = 0;  // subscriptions made again after one was lost
};

// A topic_broker over Redis. Thread-safe.
class redis_topic_broker final : public topic_broker {
 public:
  // Connects once, so that a wrong address fails here. Throws std::runtime_error when it
  // cannot, std::invalid_argument for an empty host or channel, a timeout, heartbeat or
  // backoff that is not positive, or a bound of zero.
  explicit redis_topic_broker(redis_topic_broker_options options = {});
  // Stops both threads: at most `timeout` (a PUBLISH in flight to a Redis that stopped
  // answering), however Redis is.
  ~redis_topic_broker() override;
  redis_topic_broker(const redis_topic_broker&) = delete;
  redis_topic_broker& operator=(const redis_topic_broker&) = delete;

  // Subscribes, and waits up to `timeout` for Redis to confirm, so that a hub made with this
  // broker hears what other instances publish after its constructor returns (when Redis is
  // reachable; otherwise it keeps trying in the background).
  void start(deliver_fn deliver) override;
  void publish(std::string_view topic, std::string_view payload, bool binary) override;
  void stop() noexcept override;

  redis_topic_broker_stats stats() const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace waypoint::app
