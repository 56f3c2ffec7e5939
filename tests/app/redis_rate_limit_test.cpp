// The Redis rate limit store (waypoint/app/security/redis_rate_limit_store.hpp) against a real
// redis-server started by this test (redis_test_support.hpp): two limiters in front of one
// instance ("two servers") letting one burst through between them with a correct
// Retry-After, refill at the rate, a bucket's key expiring when it would be full again,
// limiters with skewed clocks agreeing, threads, the script reloaded after SCRIPT FLUSH and
// a restart, and a Redis that is gone or silent handled as fail_open says, within the
// timeout. Exits 77 (skipped) without redis-server (`scripts/install-deps redis`).
#include "app_test_support.hpp"
#include "redis_test_support.hpp"

#include <waypoint/app/security/rate_limit.hpp>
#include <waypoint/app/security/redis_rate_limit_store.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using namespace std::chrono_literals;


std::shared_ptr<redis_rate_limit_store> store_on(std::uint16_t port, std::chrono::milliseconds retry = 1000ms) {
  return std::make_shared<redis_rate_limit_store>(
      redis_rate_limit_store_options{.connection = {.port = port, .timeout = 200ms},
                                     .retry_after_failure = retry});
}

// A server of the fleet: its own application and its own store (its own connections),
// limiting by API key.
struct instance {
  application app;
  explicit instance(rate_limit_options options, application_options app_options = {}) : app(std::move(app_options)) {
    options.key = rate_limit_key::api_key;
    app.use(rate_limit(std::move(options)));
    app.get("/", [](context& ctx) { ctx.response().body("ok"); });
  }
  response get(std::string_view api_key = "alice") { return answer(app, make_request("GET", "/", {{"X-API-Key", api_key}})); }
};

TEST(RedisRateLimit, TwoInstancesSharingRedisLetThroughOneBurstBetweenThem) {
  struct row {
    const char* rule;
    double rate;
    std::uint32_t burst;
    const char* retry_after;  // on the first 429: the next token's interval, rounded up
  };
  const row rows[] = {
      {"a token every 2 s, 4 at once", 0.5, 4, "2"},
      {"a token every 10 s, 1 at once", 0.1, 1, "10"},
      {"a token every 1.5 s, 7 at once: 1.5 s rounded up", 1.0 / 1.5, 7, "2"},
  };
  int n = 0;
  for (const row& r : rows) {
    std::string policy = "two-" + std::to_string(n++);
    instance a({.rate = r.rate, .burst = r.burst, .policy_name = policy, .store = store_on(server->port())});
    instance b({.rate = r.rate, .burst = r.burst, .policy_name = policy, .store = store_on(server->port())});
    std::uint32_t let_through = 0;
    response refused;
    for (std::uint32_t i = 0; i < 2 * r.burst + 2; ++i) {
      response res = (i % 2 ? b : a).get();
      if (res.result_int() == 200) {
        ++let_through;
        EXPECT_EQ(field(res, "RateLimit"), "\"" + policy + "\";r=" + std::to_string(r.burst - let_through) +
                                               ";t=" + r.retry_after)
            << r.rule << ": request " << i;
      } else if (refused.result_int() == 200) {
        refused = res;
      }
    }
    EXPECT_EQ(let_through, r.burst) << r.rule;
    EXPECT_EQ(refused.result_int(), 429u) << r.rule;
    EXPECT_EQ(field(refused, "Retry-After"), r.retry_after) << r.rule;
    EXPECT_EQ(a.get("bob").result_int(), 200u) << r.rule << ": another key has a bucket of its own";
  }
}

TEST(RedisRateLimit, ABucketRefillsAtTheRate) {
  auto store = store_on(server->port());
  const rate_limit_policy policy{.name = "refill", .interval = 200ms, .burst = 2};
  struct step {
    const char* rule;
    bool allowed;
    std::uint32_t remaining;
  };
  const step burst_then_empty[] = {
      {"a full bucket lets the first through", true, 1},
      {"and the second", true, 0},
      {"then it is empty", false, 0},
  };
  for (const step& s : burst_then_empty) {
    rate_limit_decision d = store->take(policy, "k");
    EXPECT_EQ(d.allowed, s.allowed) << s.rule;
    EXPECT_EQ(d.remaining, s.remaining) << s.rule;
  }
  rate_limit_decision empty = store->take(policy, "k");
  ASSERT_FALSE(empty.allowed);
  EXPECT_GT(empty.retry_after, 0ns);
  EXPECT_LE(empty.retry_after, 200ms) << "at most one interval to the next token";
  EXPECT_EQ(empty.next_token, empty.retry_after);
  std::this_thread::sleep_for(empty.retry_after + 20ms);
  rate_limit_decision refilled = store->take(policy, "k");
  EXPECT_TRUE(refilled.allowed) << "one token came back after retry_after";
  EXPECT_EQ(refilled.remaining, 0u);
  EXPECT_FALSE(store->take(policy, "k").allowed) << "and only one";
}

TEST(RedisRateLimit, ABucketsKeyExpiresWhenItWouldBeFullAgain) {
  auto store = store_on(server->port());
  struct row {
    const char* rule;
    int takes;
    long long pttl_ms;  // interval * tokens taken: the time to fill up again
  };
  const row rows[] = {{"one token taken: one interval", 1, 1000},
                      {"three taken: three intervals", 3, 3000},
                      {"all five, then a refusal that changes nothing: five", 6, 5000}};
  for (const row& r : rows) {
    const rate_limit_policy policy{.name = "expiry", .interval = 1s, .burst = 5};
    std::string key = "client-" + std::to_string(r.takes);
    for (int i = 0; i < r.takes; ++i) store->take(policy, key);
    long long pttl = std::stoll(server->cli("PTTL waypoint:ratelimit:expiry:" + key));
    EXPECT_LE(pttl, r.pttl_ms) << r.rule;
    EXPECT_GT(pttl, r.pttl_ms - 500) << r.rule;
  }
  const rate_limit_policy fast{.name = "expiry", .interval = 50ms, .burst = 1};
  store->take(fast, "brief");
  EXPECT_EQ(server->cli("EXISTS waypoint:ratelimit:expiry:brief"), "1");
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(server->cli("EXISTS waypoint:ratelimit:expiry:brief"), "0")
      << "a full bucket is no key: Redis holds only the clients of the last refill time";
}

TEST(RedisRateLimit, LimitersWithSkewedClocksAgreeOnRedisTime) {
  // The limiters' own clocks are an hour apart; with a store, neither is read.
  auto ahead = [] { return std::chrono::steady_clock::now() + 1h; };
  auto behind = [] { return std::chrono::steady_clock::now() - 1h; };
  rate_limiter a({.rate = 0.01, .burst = 3, .policy_name = "skew", .clock = ahead, .store = store_on(server->port())});
  rate_limiter b({.rate = 0.01, .burst = 3, .policy_name = "skew", .clock = behind, .store = store_on(server->port())});
  int let_through = 0;
  for (int i = 0; i < 10; ++i) let_through += (i % 2 ? a : b).take("k").allowed;
  EXPECT_EQ(let_through, 3);
  EXPECT_EQ(a.size(), 0u) << "nothing held in the process";
}

TEST(RedisRateLimit, ThreadsOnTwoLimitersLetThroughExactlyTheBurst) {
  constexpr std::uint32_t burst = 100;
  rate_limiter a({.rate = 0.01, .burst = burst, .policy_name = "threads", .store = store_on(server->port())});
  rate_limiter b({.rate = 0.01, .burst = burst, .policy_name = "threads", .store = store_on(server->port())});
  std::atomic<std::uint32_t> let_through{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&, t] {
      rate_limiter& limiter = t % 2 ? a : b;
      for (int i = 0; i < 40; ++i) let_through += limiter.take("shared").allowed;
    });
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(let_through.load(), burst) << "320 requests, one bucket of 100";
}

TEST(RedisRateLimit, AScriptRedisForgotIsSentAgain) {
  auto store = store_on(server->port());
  const rate_limit_policy policy{.name = "flush", .interval = 1s, .burst = 3};
  EXPECT_TRUE(store->take(policy, "k").allowed);
  EXPECT_EQ(server->cli("SCRIPT FLUSH"), "OK");
  rate_limit_decision d = store->take(policy, "k");  // NOSCRIPT, then EVAL
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.remaining, 1u) << "the bucket survived the flush: only the script went";
  EXPECT_EQ(store->take(policy, "k").remaining, 0u);
}

TEST(RedisRateLimit, ARedisThatIsGoneIsWhatFailOpenSays) {
  struct row {
    const char* rule;
    bool fail_open;
    unsigned status;
    const char* retry_after;
    std::size_t log_lines;  // for five failed requests
  };
  const row rows[] = {
      {"fail_open: let through uncounted, one line for the spell", true, 200, "", 1},
      {"fail closed: 503 with Retry-After 1, nothing logged", false, 503, "1", 0},
  };
  for (const row& r : rows) {
    auto own = std::make_unique<redis_server>();
    std::uint16_t port = own->port();
    std::mutex lines_mutex;
    std::vector<std::string> lines;
    instance one({.rate = 1, .burst = 5, .store = store_on(port, 300ms), .fail_open = r.fail_open},
                 {.logger = [&](std::string_view line) {
                   std::lock_guard lock(lines_mutex);
                   lines.emplace_back(line);
                 }});
    EXPECT_EQ(field(one.get(), "RateLimit"), "\"default\";r=4;t=1") << r.rule << ": counted while Redis is up";
    // Requests at once, so that the pool keeps several connections, all stale after the
    // restart below (other keys: "alice" keeps its count).
    std::vector<std::thread> warm;
    for (int t = 0; t < 4; ++t)
      warm.emplace_back([&one, t] {
        for (int i = 0; i < 20; ++i) one.get("warm-" + std::to_string(t));
      });
    for (std::thread& th : warm) th.join();
    own->stop();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) {
      response res = one.get();
      EXPECT_EQ(res.result_int(), r.status) << r.rule;
      EXPECT_EQ(field(res, "Retry-After"), r.retry_after) << r.rule;
      EXPECT_EQ(field(res, "RateLimit"), "") << r.rule << ": nothing counted, nothing claimed";
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << r.rule;
    EXPECT_EQ(lines.size(), r.log_lines) << r.rule;
    if (!lines.empty()) {
      EXPECT_NE(lines[0].find("let through uncounted"), std::string::npos) << lines[0];
    }
    // Back where it was, empty (no script, no buckets): counted again once the spell is over.
    own = std::make_unique<redis_server>(port);
    std::this_thread::sleep_for(350ms);
    EXPECT_EQ(field(one.get(), "RateLimit"), "\"default\";r=4;t=1") << r.rule << ": counted again after a restart";
  }
}

TEST(RedisRateLimit, ASilentRedisCostsOneTimeoutThenFailsAtOnce) {
  redis_server own;
  auto store = store_on(own.port(), 500ms);
  const rate_limit_policy policy{.name = "silent", .interval = 1s, .burst = 5};
  ASSERT_TRUE(store->take(policy, "k").allowed);
  own.pause();
  auto elapsed = [&] {
    auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(store->take(policy, "k"), std::runtime_error);
    return std::chrono::steady_clock::now() - start;
  };
  struct step {
    const char* rule;
    std::chrono::milliseconds at_least, below;
  };
  const step steps[] = {{"the first call waits out the 200 ms timeout", 150ms, 2s},
                        {"the next, within retry_after_failure, does not try", 0ms, 20ms}};
  for (const step& s : steps) {
    auto took = elapsed();
    EXPECT_GE(took, s.at_least) << s.rule;
    EXPECT_LT(took, s.below) << s.rule;
  }
  own.resume();
  std::this_thread::sleep_for(550ms);
  EXPECT_TRUE(store->take(policy, "k").allowed) << "tried again after retry_after_failure";
}

TEST(RedisRateLimit, AStoreThatCannotConnectFailsWhenMade) {
  std::uint16_t nobody = free_port();
  EXPECT_THROW(redis_rate_limit_store({.connection = {.port = nobody, .timeout = 200ms}}), std::runtime_error);
  EXPECT_THROW(redis_rate_limit_store({.connection = {.host = ""}}), std::invalid_argument);
}

}  // namespace

int main(int argc, char** argv) { return waypoint::app::testing::run_with_redis_server(argc, argv); }
