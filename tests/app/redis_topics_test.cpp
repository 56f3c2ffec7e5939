// Topics across instances (waypoint/app/realtime/redis_topic_broker.hpp) against a real redis-server
// started by this test (redis_test_support.hpp). Two "instances" are two brokers, or two
// servers each with its hub and broker, on one Redis: a publish on one reaches the other's
// subscribers (real WebSocket clients, Beast's, on both servers), once, in each publisher's
// order, byte for byte; what is on the channel and is not a frame is ignored; Redis stopped
// mid-run and started again: local delivery goes on meanwhile, delivery between instances
// resumes; a Redis that stops answering is noticed by the heartbeat; a broker stops
// promptly with Redis gone or silent. Exits 77 (skipped) without
// redis-server (`scripts/install-deps redis`).
#include "redis_test_support.hpp"
#include "topic_server.hpp"

#include <waypoint/app/realtime/redis_topic_broker.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/topics.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace beast = boost::beast;

redis_topic_broker_options options_on(std::uint16_t port) {
  return {.port = port,
          .timeout = 500ms,
          .reconnect_min = 50ms,
          .reconnect_max = 400ms,
          .heartbeat = 300ms};
}

// What a broker hands to its hub, recorded: the stand-in for a hub in the broker's own tests.
struct recorded {
  std::string topic, payload;
  bool binary = false;
};

class recorder {
 public:
  topic_broker::deliver_fn sink() {
    return [this](std::string_view topic, std::string_view payload, bool binary) {
      std::lock_guard lock(mutex_);
      got_.push_back({std::string(topic), std::string(payload), binary});
      arrived_.notify_all();
    };
  }
  // Waits until `count` have arrived; false after `within`.
  bool await(std::size_t count, std::chrono::milliseconds within = 10s) {
    std::unique_lock lock(mutex_);
    return arrived_.wait_for(lock, within, [&] { return got_.size() >= count; });
  }
  std::vector<recorded> got() {
    std::lock_guard lock(mutex_);
    return got_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<recorded> got_;
};

struct broker_instance {
  std::shared_ptr<redis_topic_broker> broker;
  recorder seen;
  explicit broker_instance(std::uint16_t port)
      : broker(std::make_shared<redis_topic_broker>(options_on(port))) {
    broker->start(seen.sink());
  }
};

TEST(RedisTopicBroker, DeliversWhatOtherInstancesPublishAndSkipsItsOwn) {
  redis_server redis;
  broker_instance a(redis.port()), b(redis.port());
  ASSERT_TRUE(a.broker->stats().subscribed && b.broker->stats().subscribed)
      << "start() waits for the subscription";
  a.broker->publish("room:1", "one", false);
  a.broker->publish("room:2", "two", false);
  b.broker->publish("room:1", "three", false);
  ASSERT_TRUE(b.seen.await(2));
  ASSERT_TRUE(a.seen.await(1));
  std::this_thread::sleep_for(200ms);  // time for a copy that should not come
  std::vector<recorded> at_b = b.seen.got(), at_a = a.seen.got();
  ASSERT_EQ(at_b.size(), 2u) << "once each, and not its own";
  EXPECT_EQ(at_b[0].topic + "=" + at_b[0].payload, "room:1=one");
  EXPECT_EQ(at_b[1].topic + "=" + at_b[1].payload, "room:2=two");
  ASSERT_EQ(at_a.size(), 1u);
  EXPECT_EQ(at_a[0].payload, "three");
  EXPECT_EQ(a.broker->stats().sent, 2u);
  EXPECT_EQ(b.broker->stats().received, 2u);
}

TEST(RedisTopicBroker, KeepsEachPublishersOrderAcrossThreads) {
  redis_server redis;
  broker_instance a(redis.port()), b(redis.port());
  constexpr int publishers = 4, messages = 500;
  std::vector<std::thread> threads;
  for (int p = 0; p < publishers; ++p)
    threads.emplace_back([&, p] {
      for (int i = 0; i < messages; ++i)
        a.broker->publish("t", std::to_string(p) + ":" + std::to_string(i), false);
    });
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(b.seen.await(publishers * messages)) << b.seen.got().size() << " arrived";
  std::map<int, int> next;  // publisher -> the sequence number it must send next
  for (const recorded& r : b.seen.got()) {
    int p = std::stoi(r.payload.substr(0, r.payload.find(':')));
    int i = std::stoi(r.payload.substr(r.payload.find(':') + 1));
    EXPECT_EQ(i, next[p]) << "publisher " << p;
    next[p] = i + 1;
  }
  EXPECT_EQ(a.broker->stats().dropped, 0u);
}

TEST(RedisTopicBroker, CarriesTopicsAndPayloadsByteForByte) {
  struct row {
    const char* rule;
    std::string topic, payload;
    bool binary;
  };
  const std::vector<row> rows = {
      {"empty payload", "t", "", false},
      {"empty topic (a \"*\" pattern hears it)", "", "to everyone", false},
      {"NUL, CR LF, and bytes past 0x7f", "t", std::string("a\0b\r\n\xff\xfe", 7), true},
      {"a topic with spaces and a NUL", std::string("a b\0c", 5), "x", false},
      {"a payload of 1 MiB", "big", std::string(1 << 20, '\x01'), true},
      {"UTF-8 text", "salle:été", "héllo ✓", false},
  };
  redis_server redis;
  broker_instance a(redis.port()), b(redis.port());
  for (const row& r : rows) a.broker->publish(r.topic, r.payload, r.binary);
  ASSERT_TRUE(b.seen.await(rows.size()));
  std::vector<recorded> got = b.seen.got();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(got[i].topic, rows[i].topic) << rows[i].rule;
    EXPECT_EQ(got[i].payload, rows[i].payload) << rows[i].rule;
    EXPECT_EQ(got[i].binary, rows[i].binary) << rows[i].rule;
  }
}

TEST(RedisTopicBroker, IgnoresAndCountsWhatOnTheChannelIsNotAFrame) {
  auto frame = [](unsigned char version, unsigned char flags, std::uint32_t topic_length,
                  std::string rest) {
    std::string f{static_cast<char>(version), static_cast<char>(flags)};
    f += std::string(16, 'i');
    for (int shift = 24; shift >= 0; shift -= 8)
      f.push_back(static_cast<char>((topic_length >> shift) & 0xff));
    return f + rest;
  };
  struct row {
    const char* rule;
    std::string bytes;
  };
  const std::vector<row> rows = {
      {"text from another program", "hello"},
      {"shorter than the header", std::string(10, '\x01')},
      {"an unknown version", frame(2, 0, 1, "tx")},
      {"unknown flags", frame(1, 4, 1, "tx")},
      {"cut inside its header", frame(1, 0, 1, "").substr(0, 20)},
      {"a topic longer than the frame", frame(1, 0, 99, "tx")},
  };
  redis_server redis;
  broker_instance b(redis.port());
  std::string file = "/tmp/waypoint-redis-topics-" + std::to_string(::getpid());
  for (const row& r : rows) {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(r.bytes.data(), 1, r.bytes.size(), f);
    std::fclose(f);
    EXPECT_EQ(redis.cli("-x PUBLISH waypoint:topics < " + file), "1") << r.rule;
  }
  std::remove(file.c_str());
  broker_instance a(redis.port());
  a.broker->publish("after", "still delivering", false);
  ASSERT_TRUE(b.seen.await(1));
  EXPECT_EQ(b.seen.got().front().payload, "still delivering") << "none of the rows was delivered";
  EXPECT_EQ(b.broker->stats().malformed, rows.size());
}

TEST(RedisTopicBroker, RefusesOptionsByName) {
  struct row {
    const char* rule;
    redis_topic_broker_options options;
  };
  const row rows[] = {
      {"empty host", {.host = ""}},
      {"empty channel", {.channel = ""}},
      {"zero timeout", {.timeout = 0ms}},
      {"zero pending messages", {.max_pending_messages = 0}},
      {"zero pending bytes", {.max_pending_bytes = 0}},
      {"zero reconnect_min", {.reconnect_min = 0ms}},
      {"reconnect_max below reconnect_min", {.reconnect_min = 500ms, .reconnect_max = 100ms}},
      {"zero heartbeat", {.heartbeat = 0ms}},
  };
  for (const row& r : rows)
    EXPECT_THROW(redis_topic_broker{r.options}, std::invalid_argument) << r.rule;
  EXPECT_THROW(redis_topic_broker({.port = free_port(), .timeout = 200ms}), std::runtime_error)
      << "nothing listens there: the constructor says so";
  redis_server redis;
  auto broker = std::make_shared<redis_topic_broker>(options_on(redis.port()));
  topic_hub hub({.broker = broker});
  EXPECT_THROW(topic_hub({.broker = broker}), std::logic_error) << "one hub per broker";
}

// A Redis that stops answering holds the publisher's batch in flight; what is published
// meanwhile waits in the pending queue up to its bound, and the rest is dropped, counted.
TEST(RedisTopicBroker, PendingPublishesStayWithinTheirBoundWhileRedisIsSilent) {
  redis_server redis;
  redis_topic_broker_options o = options_on(redis.port());
  o.max_pending_messages = 10;
  o.max_pending_bytes = 1 << 20;
  auto broker = std::make_shared<redis_topic_broker>(o);
  recorder seen;
  broker->start(seen.sink());
  redis.pause();
  constexpr std::uint64_t published = 1000;
  for (std::uint64_t i = 0; i < published; ++i) broker->publish("t", "held up", false);
  // At most the bound waits, and at most one batch (no larger than the bound) is in flight.
  EXPECT_GE(broker->stats().dropped, published - 2 * o.max_pending_messages);
  redis.resume();
}

TEST(RedisTopicBroker, StopsPromptlyWithRedisGoneOrSilent) {
  struct row {
    const char* rule;
    bool pause;  // SIGSTOP: the socket stays open and nothing answers
  };
  for (const row& r : {row{"stopped", false}, row{"paused", true}}) {
    redis_server redis;
    auto broker = std::make_shared<redis_topic_broker>(options_on(redis.port()));
    auto hub = std::make_unique<topic_hub>(topic_hub_options{.broker = broker});
    if (r.pause)
      redis.pause();
    else
      redis.stop();
    for (int i = 0; i < 100; ++i) hub->publish("t", "while down", false);  // some in flight
    std::this_thread::sleep_for(100ms);
    auto start = std::chrono::steady_clock::now();
    hub.reset();
    broker.reset();
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took, 1500ms) << r.rule << ": at most one PUBLISH's timeout (500 ms)";
    if (r.pause) redis.resume();
  }
}

TEST(RedisTopicBroker, ResumesAfterRedisRestartsAndDropsWhatWasPublishedMeanwhile) {
  auto redis = std::make_unique<redis_server>();
  std::uint16_t port = redis->port();
  broker_instance a(port), b(port);
  a.broker->publish("t", "before", false);
  ASSERT_TRUE(b.seen.await(1));
  redis.reset();  // stopped
  for (int i = 0; i < 20 && b.broker->stats().subscribed; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(b.broker->stats().subscribed);
  for (int i = 0; i < 5; ++i) {
    a.broker->publish("t", "during", false);
    std::this_thread::sleep_for(20ms);
  }
  redis = std::make_unique<redis_server>(port);
  // Published until one arrives: the publisher reconnects on its own backoff.
  bool resumed = false;
  for (int i = 0; i < 100 && !resumed; ++i) {
    a.broker->publish("t", "after", false);
    resumed = b.seen.await(2, 100ms);
  }
  ASSERT_TRUE(resumed) << "delivery between instances resumed";
  for (const recorded& r : b.seen.got())
    EXPECT_NE(r.payload, "during") << "at most once: nothing replayed";
  EXPECT_GE(b.broker->stats().reconnects, 1u);
  EXPECT_GE(a.broker->stats().dropped, 5u);
  EXPECT_TRUE(b.broker->stats().subscribed);
}

TEST(RedisTopicBroker, NoticesARedisThatStopsAnsweringAndSubscribesAgainWhenItAnswers) {
  redis_server redis;
  broker_instance a(redis.port()), b(redis.port());
  redis.pause();  // its sockets stay open: only the heartbeat's unanswered PING tells
  bool noticed = false;
  for (int i = 0; i < 60 && !noticed; ++i) {
    std::this_thread::sleep_for(50ms);
    noticed = !b.broker->stats().subscribed;
  }
  EXPECT_TRUE(noticed) << "within two heartbeats (300 ms each)";
  redis.resume();
  bool resumed = false;
  for (int i = 0; i < 100 && !resumed; ++i) {
    a.broker->publish("t", "answering again", false);
    resumed = b.seen.await(1, 100ms);
  }
  ASSERT_TRUE(resumed);
  EXPECT_GE(b.broker->stats().reconnects, 1u);
}

// ---- two servers, real WebSocket clients ------------------------------------------------

// The topic route of topic_server.hpp, on a hub with a broker to the given Redis.
struct served_broker {
  std::shared_ptr<redis_topic_broker> broker;
  explicit served_broker(std::uint16_t redis_port)
      : broker(std::make_shared<redis_topic_broker>(options_on(redis_port))) {}
};
struct served : served_broker, waypoint::app::testing::topic_server {
  explicit served(std::uint16_t redis_port)
      : served_broker(redis_port),
        topic_server(std::make_shared<topic_hub>(topic_hub_options{.broker = broker})) {}
};

// A WebSocket client (Beast's, synchronous) reading on a thread of its own into a queue.
class ws_client {
 public:
  ws_client(std::uint16_t port, const std::string& path) : ws_(io_) {
    ws_.next_layer().connect({asio::ip::address_v4::loopback(), port});
    ws_.handshake("127.0.0.1", path);
    reader_ = std::thread([this] { read_all(); });
  }
  ~ws_client() {
    ::shutdown(ws_.next_layer().native_handle(), SHUT_RDWR);  // ends the reader's read
    reader_.join();
  }
  // The next message, or nothing within `within`.
  std::optional<std::string> next(std::chrono::milliseconds within = 10s) {
    std::unique_lock lock(mutex_);
    arrived_.wait_for(lock, within, [&] { return !messages_.empty() || closed_; });
    if (messages_.empty()) return std::nullopt;
    std::string m = std::move(messages_.front());
    messages_.pop_front();
    return m;
  }

 private:
  void read_all() {
    for (;;) {
      beast::flat_buffer buffer;
      beast::error_code ec;
      ws_.read(buffer, ec);
      std::lock_guard lock(mutex_);
      if (ec) {
        closed_ = true;
        arrived_.notify_all();
        return;
      }
      messages_.push_back(beast::buffers_to_string(buffer.data()));
      arrived_.notify_all();
    }
  }

  asio::io_context io_;
  beast::websocket::stream<asio::ip::tcp::socket> ws_;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::string> messages_;
  bool closed_ = false;
};

TEST(RedisTopics, APublishOnOneServerReachesSubscribersOnBothInOrder) {
  redis_server redis;
  served a(redis.port()), b(redis.port());
  ws_client on_a(a.port, "/topics/room:x"), on_b(b.port, "/watch/room:*");
  ASSERT_TRUE(a.await_subscribers("room:x", 1) && b.await_subscribers("room:x", 1));
  constexpr int messages = 200;
  for (int i = 0; i < messages; ++i) a.hub->publish("room:x", "m" + std::to_string(i));
  for (ws_client* c : {&on_a, &on_b})
    for (int i = 0; i < messages; ++i)
      ASSERT_EQ(c->next(), "m" + std::to_string(i)) << (c == &on_a ? "a" : "b");
  b.hub->publish("room:x", "from b");  // after: two publishers' messages have no order between them
  EXPECT_EQ(on_a.next(), "from b");
  EXPECT_EQ(on_b.next(), "from b");
  EXPECT_EQ(on_b.next(300ms), std::nullopt) << "one copy each, a server's own not echoed back";
  EXPECT_EQ(on_a.next(0ms), std::nullopt);
  EXPECT_EQ(b.hub->stats().received, std::uint64_t{messages});
  EXPECT_EQ(a.hub->stats().received, 1u);
}

TEST(RedisTopics, LocalDeliveryGoesOnWhileRedisIsDownAndDeliveryBetweenServersResumes) {
  auto redis = std::make_unique<redis_server>();
  std::uint16_t port = redis->port();
  served a(port), b(port);
  ws_client on_a(a.port, "/topics/t"), on_b(b.port, "/topics/t");
  ASSERT_TRUE(a.await_subscribers("t", 1) && b.await_subscribers("t", 1));
  a.hub->publish("t", "before");
  ASSERT_EQ(on_a.next(), "before");
  ASSERT_EQ(on_b.next(), "before");

  redis.reset();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(a.hub->publish("t", "down " + std::to_string(i)), 1u);
    EXPECT_EQ(on_a.next(), "down " + std::to_string(i)) << "local delivery does not wait on Redis";
  }
  EXPECT_EQ(on_b.next(300ms), std::nullopt) << "not across while Redis is down";

  redis = std::make_unique<redis_server>(port);
  std::optional<std::string> got;
  for (int i = 0; i < 100 && !got; ++i) {
    a.hub->publish("t", "up");
    EXPECT_EQ(on_a.next(), "up");
    got = on_b.next(100ms);
  }
  EXPECT_EQ(got, "up") << "delivery between servers resumed, and nothing from while it was down";
}

}  // namespace

int main(int argc, char** argv) {
  skip_without_redis_server();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
