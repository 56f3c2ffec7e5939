// Topics (waypoint/app/topics.hpp) over waypoint::beast::server, with Debian's
// python3-websockets as the clients (topics_client.py): fan-out to a thousand clients on
// every server thread, published from a thread that is not the server's; a client that stops
// reading closed by the policy while the others carry on and its count returns to 0; prefix
// patterns; and the hub's bounds, refused by name.
#include <waypoint/app/serve.hpp>
#include <waypoint/app/topics.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using namespace waypoint::app;
using namespace std::chrono_literals;

std::string python() { return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

// GET /topics/{topics}: joins the comma-separated topics; a client's "TOPIC PAYLOAD" is
// published to TOPIC. A topic the hub refuses closes the connection with 1008 and the reason.
struct served {
  std::shared_ptr<topic_hub> hub;
  application app{{.logger = [](std::string_view) {}}};
  std::unique_ptr<waypoint::beast::server> server;
  std::uint16_t port = 0;

  explicit served(topic_hub_options options, unsigned threads = 2)
      : hub(std::make_shared<topic_hub>(options)) {
    websocket_options limits;
    limits.write_timeout = 2s;  // a peer that reads nothing is cut this soon
    limits.max_queued_bytes = 4 << 20;
    app.websocket(
        "/topics/{topics}",
        [hub = hub](context& ctx, websocket& ws) -> awaitable<void> {
          topic_subscriber member(*hub, ws);
          std::istringstream names{std::string(ctx.path_value("topics"))};
          std::string refused;
          try {
            for (std::string name; std::getline(names, name, ',');) member.subscribe(name);
          } catch (const std::exception& e) {
            refused = e.what();
          }
          if (!refused.empty()) {
            co_await ws.close(close_code::policy_error, refused);
            co_return;
          }
          co_await member.run([&](const websocket_message& m) {
            std::string_view text = m.payload;
            std::size_t space = text.find(' ');
            if (space != std::string_view::npos)
              hub->publish(text.substr(0, space), text.substr(space + 1));
          });
        },
        limits);
    waypoint::beast::server_options o;
    o.listen = {{"127.0.0.1", 0}};
    o.threads = threads;
    o.handle_signals = false;
    o.max_connections = 4096;
    server = std::make_unique<waypoint::beast::server>(options_for(app, o), dispatch_to(app));
    server->start();
    port = server->endpoints().front().port;
  }
  ~served() {
    server->stop();
    server->wait();
  }

  // Waits until `count` connections are in `topic`; false after 20 s.
  bool await_subscribers(const std::string& topic, std::size_t count) const {
    for (int i = 0; i < 2000; ++i) {
      if (hub->subscribers(topic) == count) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
};

void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 8192);
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

struct client_result {
  int status = -1;
  std::string output;
};

// Runs the client; `on_ready` runs (on this thread) when it prints "ready".
template <class OnReady>
client_result run_client(std::uint16_t port, const std::string& args, OnReady on_ready) {
  std::string command =
      python() + " " WAYPOINT_TOPICS_CLIENT " " + std::to_string(port) + " " + args + " 2>&1";
  client_result result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return result;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe)) {
    if (std::string_view(line) == "ready\n") {
      on_ready();
      continue;
    }
    result.output += line;
  }
  int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(Topics, AThousandClientsEachGetTheirTopicsMessagesInOrderFromAnotherThread) {
  raise_descriptor_limit();
  constexpr int clients = 1000, topics = 10, messages = 50;
  served s({});
  bool joined = true;
  client_result r = run_client(s.port, "fanout 1000 10", [&] {
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
  if (r.status == 77) GTEST_SKIP() << "python3-websockets is not installed";
  EXPECT_TRUE(joined) << "not every client joined its topic";
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("got the 50 messages"), std::string::npos) << r.output;
  EXPECT_TRUE(s.await_subscribers("t0", 0)) << "the clients left their topics on close";
  topic_hub_stats stats = s.hub->stats();
  EXPECT_EQ(stats.delivered, std::uint64_t{(messages + 1) * clients});
  EXPECT_EQ(stats.dropped + stats.slow_closes, 0u);
  EXPECT_EQ(stats.subscribers, 0u);
}

TEST(Topics, AClientThatStopsReadingIsClosedWhileTheOthersGetEverything) {
  served s({.max_queued_bytes = 1 << 20, .on_overflow = overflow_policy::close}, 1);
  constexpr int messages = 800;
  const std::string payload(20 * 1024, 'x');
  client_result r = run_client(s.port, "slow", [&] {
    ASSERT_TRUE(s.await_subscribers("slow", 2));
    for (int i = 0; i < messages; ++i) {
      s.hub->publish("slow", "slow:" + std::to_string(i) + " " + payload);
      std::this_thread::sleep_for(1ms);  // about the pace a reader on this machine keeps
    }
    s.hub->publish("slow", "slow:end");
  });
  if (r.status == 77) GTEST_SKIP() << "python3-websockets is not installed";
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(s.await_subscribers("slow", 0)) << "the topic's count returns to 0";
  topic_hub_stats stats = s.hub->stats();
  EXPECT_EQ(stats.slow_closes, 1u) << "the stalled client's queue overflowed once, and only its";
  std::printf("%s", r.output.c_str());
  EXPECT_EQ(stats.queued_bytes, 0u);
}

TEST(Topics, PrefixPatternsReachEveryTopicTheyStartAndAConnectionGetsOneCopy) {
  served s({});
  client_result r = run_client(s.port, "prefix", [] {});
  if (r.status == 77) GTEST_SKIP() << "python3-websockets is not installed";
  EXPECT_EQ(r.status, 0) << r.output;
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
