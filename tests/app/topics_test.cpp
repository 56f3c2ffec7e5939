// Topics (waypoint/app/realtime/topics.hpp) over waypoint::beast::server, with Debian's
// python3-websockets as the clients (topics_client.py): fan-out to a thousand clients on
// every server thread, published from a thread that is not the server's; a client that stops
// reading closed by the policy while the others carry on and its count returns to 0; prefixes
// the application chose, and a client's names taken literally; the hub's bounds, refused by
// name; a connection's publish rate; a message larger than any queue refused, not lost.
#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/topics.hpp>

#include "../support/command.hpp"
#include "topic_server.hpp"
#include "../support/missing_tool.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace waypoint::app;
using namespace std::chrono_literals;

std::string python() { return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

// Its own hub, made from `options`.
struct served : waypoint::app::testing::topic_server {
  explicit served(topic_hub_options options, unsigned threads = 2)
      : topic_server(std::make_shared<topic_hub>(options), threads) {}
};

void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 8192);
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

using waypoint::testing::command_result;

// Runs the client; `on_ready` runs (on this thread) when it prints "ready".
command_result run_client(std::uint16_t port, const std::string& args,
                          const std::function<void()>& on_ready) {
  return waypoint::testing::run_command(
      python() + " " WAYPOINT_TOPICS_CLIENT " " + std::to_string(port) + " " + args,
      [&](std::string_view line) {
        if (line != "ready\n") return false;
        on_ready();
        return true;
      });
}

TEST(Topics, AThousandClientsEachGetTheirTopicsMessagesInOrderFromAnotherThread) {
  raise_descriptor_limit();
  constexpr int clients = 1000, topics = 10, messages = 50;
  served s({});
  bool joined = true;
  command_result r = run_client(s.port, "fanout 1000 10", [&] {
    for (int t = 0; t < topics; ++t)
      joined = s.await_subscribers("t" + std::to_string(t), clients / topics) && joined;
    // Not a server thread: the hub is published to from anywhere.
    std::thread publisher([&] {
      for (int i = 0; i < messages; ++i)
        for (int t = 0; t < topics; ++t) {
          std::string topic = "t" + std::to_string(t);
          EXPECT_EQ(s.hub->publish(topic, topic + ":" + std::to_string(i)),
                    std::size_t{clients / topics});
        }
      for (int t = 0; t < topics; ++t) s.hub->publish("t" + std::to_string(t), "t" + std::to_string(t) + ":end");
    });
    publisher.join();
  });
  if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
  EXPECT_TRUE(joined) << "not every client joined its topic";
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("got the 50 messages"), std::string::npos) << r.output;
  EXPECT_TRUE(s.await_subscribers("t0", 0)) << "the clients left their topics on close";
  topic_hub_stats stats = s.hub->stats();
  EXPECT_EQ(stats.delivered, std::uint64_t{(messages + 1) * clients});
  EXPECT_EQ(stats.dropped + stats.slow_closes, 0u);
  EXPECT_EQ(stats.subscribers, 0u);
}

// A client that stops reading, beside one that reads everything (the client case), on
// `s`'s hub: 800 messages of 20 KiB at about one a millisecond, then "end".
command_result stall_one_of_two(served& s, const std::string& client_case) {
  constexpr int messages = 800;
  const std::string payload(20 * 1024, 'x');
  return run_client(s.port, client_case, [&] {
    ASSERT_TRUE(s.await_subscribers("slow", 2));
    for (int i = 0; i < messages; ++i) {
      s.hub->publish("slow", "slow:" + std::to_string(i) + " " + payload);
      std::this_thread::sleep_for(1ms);  // about the pace a reader on this machine keeps
    }
    s.hub->publish("slow", "slow:end");
  });
}

TEST(Topics, AClientThatStopsReadingIsClosedWhileTheOthersGetEverything) {
  served s({.max_queued_bytes = 1 << 20, .on_overflow = overflow_policy::close}, 1);
  command_result r = stall_one_of_two(s, "slow");
  if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(s.await_subscribers("slow", 0)) << "the topic's count returns to 0";
  topic_hub_stats stats = s.hub->stats();
  EXPECT_EQ(stats.slow_closes, 1u) << "the stalled client's queue overflowed once, and only its";
  EXPECT_EQ(stats.queued_bytes, 0u);
}

TEST(Topics, DropOldestKeepsAStalledClientConnectedWithTheLatestMessages) {
  served s({.max_queued_bytes = 1 << 20, .on_overflow = overflow_policy::drop_oldest}, 1);
  command_result r = stall_one_of_two(s, "slow_drop");
  if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
  EXPECT_EQ(r.status, 0) << r.output;
  topic_hub_stats stats = s.hub->stats();
  EXPECT_GT(stats.dropped, 0u);
  EXPECT_EQ(stats.slow_closes, 0u);
  EXPECT_TRUE(s.await_subscribers("slow", 0));
}

TEST(Topics, APrefixTheApplicationChoseReachesEveryTopicItStartsAndAConnectionGetsOneCopy) {
  served s({});
  command_result r = run_client(s.port, "prefix", [] {});
  if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
  EXPECT_EQ(r.status, 0) << r.output;
}

// Issue 44: a room named "sec*" heard "secret-7f3a9c".
TEST(Topics, AClientsTopicNameIsLiteralEvenEndingInAStar) {
  served s({});
  command_result r = run_client(s.port, "literal", [] {});
  if (r.status == 77) GTEST_SKIP() << "python3-websockets is not installed";
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(Topics, AConnectionPublishingPastItsRateIsClosedWith1008NamingIt) {
  served s({.publish_rate = 5, .publish_burst = 10});
  command_result r = run_client(s.port, "rate 5 10", [] {});
  if (r.status == 77) GTEST_SKIP() << "python3-websockets is not installed";
  EXPECT_EQ(r.status, 0) << r.output;
}

// Issue 44: a message past the queue vanished for every member; under the close policy it
// closed every member as a slow consumer.
TEST(Topics, AMessageLargerThanAQueueIsRefusedToItsSenderAndReachesNobody) {
  constexpr std::size_t queue = 64 * 1024;
  served s({.max_queued_bytes = queue, .on_overflow = overflow_policy::close});
  command_result r = run_client(s.port, "too_big " + std::to_string(queue), [] {});
  if (r.status == 77) GTEST_SKIP() << "python3-websockets is not installed";
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(s.hub->stats().slow_closes, 0u) << "nobody was closed as a slow consumer for it";
}

TEST(Topics, APublishLargerThanAQueueThrowsAndCountsNothing) {
  topic_hub hub({.max_queued_bytes = 1024});
  EXPECT_THROW(hub.publish("t", std::string(1025, 'x')), std::length_error);
  EXPECT_EQ(hub.publish("t", std::string(1024, 'x')), 0u) << "a queue's worth is taken";
  EXPECT_EQ(hub.stats().published, 1u);
}

struct name_row {
  const char* rule;
  std::string name;
  bool taken;
};

TEST(Topics, TopicNameRefusalIsTheRuleForNamesAClientSupplies) {
  const topic_hub_options options{.max_topic_bytes = 8};
  const name_row rows[] = {
      {"EmptyIsRefused", "", false},
      {"OneByteIsTaken", "a", true},
      {"TheBoundIsTaken", "12345678", true},
      {"PastTheBoundIsRefused", "123456789", false},
      {"AStarIsACharacter", "sec*", true},
      {"AnyBytes", std::string("a\0\n\xff", 4), true},
  };
  for (const name_row& r : rows) {
    std::optional<std::string> refusal = topic_name_refusal(r.name, options);
    EXPECT_EQ(!refusal, r.taken) << r.rule;
    if (refusal) {
      EXPECT_NE(refusal->find("1 to 8 bytes"), std::string::npos) << *refusal;
    }
  }
}

TEST(Topics, TopicsPastTheHubsBoundsAreRefusedNamingTheBound) {
  served s({});
  command_result r = run_client(s.port, "bounds", [] {});
  if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(s.await_subscribers("t0", 0));
}

TEST(Topics, BoundsOfZeroAreRefused) {
  struct row {
    const char* rule;
    topic_hub_options options;
  };
  const row rows[] = {
      {"max_queued_bytes 0", {.max_queued_bytes = 0}},
      {"max_queued_messages 0", {.max_queued_messages = 0}},
      {"max_topics_per_subscriber 0", {.max_topics_per_subscriber = 0}},
      {"max_topic_bytes 0", {.max_topic_bytes = 0}},
      {"publish_rate 0", {.publish_rate = 0}},
      {"publish_burst 0", {.publish_burst = 0}},
  };
  for (const row& r : rows) EXPECT_THROW(topic_hub{r.options}, std::invalid_argument) << r.rule;
}

TEST(Topics, APublishToATopicNobodyIsInReachesNobody) {
  topic_hub hub;
  EXPECT_EQ(hub.publish("empty", "x"), 0u);
  EXPECT_EQ(hub.subscribers("empty"), 0u);
  EXPECT_EQ(hub.stats().published, 1u);
  EXPECT_EQ(hub.stats().delivered, 0u);
}

}  // namespace
