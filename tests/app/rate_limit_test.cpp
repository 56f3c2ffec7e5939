// The rate limit layer (waypoint/app/security/rate_limit.hpp): bursts past the limit answered 429
// with Retry-After rounded up, refill over time on a fake clock, the keys (client address,
// behind trusted proxies only when the peer is one; API key; route; a custom function and
// its exemption), the RateLimit fields on every answer, HEAD, the bound on held keys under
// a million distinct clients, and requests from several threads.
#include "app_test_support.hpp"

#include <waypoint/app/security/rate_limit.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/beast/server.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using namespace std::chrono_literals;

// A clock the test moves by hand, readable from any thread.
struct fake_clock {
  std::shared_ptr<std::atomic<std::int64_t>> ns = std::make_shared<std::atomic<std::int64_t>>(1'000'000'000);
  std::function<std::chrono::steady_clock::time_point()> function() const {
    return [ns = ns] { return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns->load())); };
  }
  void advance(std::chrono::nanoseconds by) const { *ns += by.count(); }
};

// A server connection without a socket whose peer is `peer` (support/exchange_harness.hpp,
// with the peer chosen).
class peer_connection final : public waypoint::beast::exchange_host {
 public:
  explicit peer_connection(std::string peer) {
    endpoints_.local = {"127.0.0.1", 8080};
    endpoints_.remote = {std::move(peer), 50000};
  }
  response answer(application& app, const request& req) {
    auto dispatch = dispatch_to(app);
    response res{http::status::ok, 11};
    waypoint::beast::exchange x(*this, req, res);
    dispatch(x);
    EXPECT_FALSE(x.deferred());
    return res;
  }
  boost::asio::any_io_executor executor() override { return io_.get_executor(); }
  const waypoint::beast::connection_endpoints& endpoints() override { return endpoints_; }
  boost::asio::cancellation_slot cancellation_slot() override { return cancel_.slot(); }
  void deferred_done() noexcept override {}

 private:
  boost::asio::io_context io_{1};
  boost::asio::cancellation_signal cancel_;
  waypoint::beast::connection_endpoints endpoints_;
};

void add_routes(application& app) {
  app.get("/a", [](context& ctx) { ctx.response().body("a"); });
  app.get("/b/{id}", [](context& ctx) { ctx.response().body("b"); });
}

// --- bursts and Retry-After ------------------------------------------------------------

struct burst_row {
  const char* rule;
  double rate;
  std::uint32_t burst;
  const char* retry_after;  // of the first refused request
  const char* policy;       // RateLimit-Policy
  const char* refused;      // RateLimit on the refusal
};

class RateLimitBurst : public ::testing::TestWithParam<burst_row> {};

TEST_P(RateLimitBurst, RequestsPastTheBurstGet429WithRetryAfterRoundedUp) {
  const burst_row& row = GetParam();
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = row.rate, .burst = row.burst, .clock = clock.function()}));
  add_routes(app);
  for (std::uint32_t i = 0; i < row.burst; ++i) {
    response ok = answer(app, "GET", "/a");
    EXPECT_EQ(ok.result_int(), 200u) << row.rule << ": request " << i;
    std::string expected = "\"default\";r=" + std::to_string(row.burst - 1 - i) + ";t=";
    EXPECT_TRUE(field(ok, "RateLimit").starts_with(expected)) << row.rule << ": " << field(ok, "RateLimit");
  }
  response refused = answer(app, "GET", "/a");
  EXPECT_EQ(refused.result_int(), 429u) << row.rule;
  EXPECT_EQ(field(refused, "Retry-After"), row.retry_after) << row.rule;
  EXPECT_EQ(field(refused, "RateLimit-Policy"), row.policy) << row.rule;
  EXPECT_EQ(field(refused, "RateLimit"), row.refused) << row.rule;
  // Draft -11 §6: Retry-After does not end before the effective window t.
  EXPECT_EQ(field(refused, "RateLimit"), "\"default\";r=0;t=" + field(refused, "Retry-After")) << row.rule;
  EXPECT_EQ(field(refused, "Content-Type"), "application/problem+json") << row.rule;
  EXPECT_EQ(body_json(refused)["status"], 429) << row.rule;
  // Refusals take no token: the answer stays the same until time passes.
  response again = answer(app, "GET", "/a");
  EXPECT_EQ(again.result_int(), 429u) << row.rule;
  EXPECT_EQ(field(again, "Retry-After"), row.retry_after) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, RateLimitBurst,
    ::testing::Values(
        burst_row{"one a second, three at once", 1, 3, "1", "\"default\";q=3;w=3", "\"default\";r=0;t=1"},
        burst_row{"a token every 3.33 s: Retry-After 4, not 3", 0.3, 2, "4", "\"default\";q=2;w=7",
                  "\"default\";r=0;t=4"},
        burst_row{"ten a second: 0.1 s rounds up to 1", 10, 1, "1", "\"default\";q=1;w=1",
                  "\"default\";r=0;t=1"},
        burst_row{"one every 100 s", 0.01, 5, "100", "\"default\";q=5;w=500", "\"default\";r=0;t=100"}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

TEST(RateLimit, BucketsRefillAtTheRateUpToTheBurst) {
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = 2, .burst = 2, .clock = clock.function()}));
  add_routes(app);
  struct step {
    std::chrono::milliseconds wait;
    unsigned status;
  };
  const std::vector<step> steps{
      {0ms, 200},    {0ms, 200},   {0ms, 429},
      {499ms, 429},  // one token takes 500 ms
      {1ms, 200},    {0ms, 429},
      {10s, 200},    {0ms, 200},   {0ms, 429},  // ten quiet seconds fill two tokens, not twenty
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    clock.advance(steps[i].wait);
    EXPECT_EQ(answer(app, "GET", "/a").result_int(), steps[i].status) << "step " << i;
  }
}

TEST(RateLimit, SuccessfulAnswersCarryTheFields) {
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = 1, .burst = 3, .policy_name = "per-client", .clock = clock.function()}));
  add_routes(app);
  // t is until the next token (a second at this rate), however many are missing.
  const char* expected[] = {"\"per-client\";r=2;t=1", "\"per-client\";r=1;t=1",
                            "\"per-client\";r=0;t=1"};
  for (const char* value : expected) {
    response res = answer(app, "GET", "/a");
    EXPECT_EQ(res.result_int(), 200u);
    EXPECT_EQ(field(res, "RateLimit-Policy"), "\"per-client\";q=3;w=3");
    EXPECT_EQ(field(res, "RateLimit"), value);
    EXPECT_EQ(res.count("Retry-After"), 0u);
  }
  // Errors the handler answers carry them too: a 404 passes through app.use() layers.
  response missing = answer(app, "GET", "/nothing");
  EXPECT_EQ(missing.result_int(), 429u);  // and counts: the bucket is empty
  clock.advance(1s);
  missing = answer(app, "GET", "/nothing");
  EXPECT_EQ(missing.result_int(), 404u);
  EXPECT_EQ(field(missing, "RateLimit"), "\"per-client\";r=0;t=1");
}

TEST(RateLimit, HeadRequestsCountAndCarryTheFields) {
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = 1, .burst = 1, .clock = clock.function()}));
  add_routes(app);
  response head = answer(app, "HEAD", "/a");
  EXPECT_EQ(head.result_int(), 200u);
  EXPECT_EQ(field(head, "RateLimit"), "\"default\";r=0;t=1");
  response refused = answer(app, "HEAD", "/a");
  EXPECT_EQ(refused.result_int(), 429u);
  EXPECT_EQ(field(refused, "Retry-After"), "1");
  EXPECT_EQ(answer(app, "GET", "/a").result_int(), 429u);  // GET and HEAD share the bucket
}

// --- keys --------------------------------------------------------------------------------

TEST(RateLimit, ClientAddressesHaveTheirOwnBuckets) {
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = 1, .burst = 1, .clock = clock.function()}));
  add_routes(app);
  peer_connection first("192.0.2.1"), second("192.0.2.2");
  EXPECT_EQ(first.answer(app, make_request("GET", "/a")).result_int(), 200u);
  EXPECT_EQ(first.answer(app, make_request("GET", "/a")).result_int(), 429u);
  EXPECT_EQ(second.answer(app, make_request("GET", "/a")).result_int(), 200u);
  EXPECT_EQ(second.answer(app, make_request("GET", "/a")).result_int(), 429u);
}

struct key_row {
  const char* rule;
  rate_limit_key by;
  const char* peer;
  std::vector<header_field> headers;
  const char* target;
  std::string key;
};

class RateLimitKeys : public ::testing::TestWithParam<key_row> {};

TEST_P(RateLimitKeys, TheKeyIsWhatTheOptionNames) {
  const key_row& row = GetParam();
  rate_limiter limiter({.key = row.by, .proxies = trusted_proxies({"10.0.0.0/8"})});
  application app;
  std::string seen = "(not reached)";
  app.get("/a", [&](context& ctx) { seen = limiter.key_of(ctx); });
  app.get("/b/{id}", [&](context& ctx) { seen = limiter.key_of(ctx); });
  request req = make_request("GET", row.target);
  for (const header_field& h : row.headers) req.insert(h.name, h.value);
  peer_connection(row.peer).answer(app, req);
  EXPECT_EQ(seen, row.key) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, RateLimitKeys,
    ::testing::Values(
        key_row{"the peer", rate_limit_key::client_address, "192.0.2.1", {}, "/a", "192.0.2.1"},
        key_row{"X-Forwarded-For from a trusted proxy names the client",
                rate_limit_key::client_address, "10.0.0.2", {{"X-Forwarded-For", "198.51.100.7"}},
                "/a", "198.51.100.7"},
        key_row{"Forwarded from a trusted proxy names the client", rate_limit_key::client_address,
                "10.0.0.2", {{"Forwarded", "for=\"[2001:db8::1]:4711\""}}, "/a", "2001:db8::1"},
        key_row{"X-Forwarded-For from an untrusted peer is ignored", rate_limit_key::client_address,
                "203.0.113.9", {{"X-Forwarded-For", "198.51.100.7"}}, "/a", "203.0.113.9"},
        key_row{"an API key", rate_limit_key::api_key, "192.0.2.1", {{"X-API-Key", "alpha"}}, "/a",
                "k:alpha"},
        key_row{"no API key: the address, in its own space", rate_limit_key::api_key, "192.0.2.1", {},
                "/a", "a:192.0.2.1"},
        key_row{"the route's pattern, not the path", rate_limit_key::route, "192.0.2.1", {}, "/b/42",
                "GET /b/{id}"}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

TEST(RateLimit, TrustedProxyAddressesAreUsedOnlyFromATrustedPeer) {
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = 1, .burst = 1, .proxies = trusted_proxies({"10.0.0.0/8"}),
                      .clock = clock.function()}));
  add_routes(app);
  peer_connection proxy("10.0.0.2"), stranger("203.0.113.9");
  auto from = [](const char* client) { return make_request("GET", "/a", {{"X-Forwarded-For", client}}); };
  // Two clients behind the proxy: a bucket each.
  EXPECT_EQ(proxy.answer(app, from("198.51.100.1")).result_int(), 200u);
  EXPECT_EQ(proxy.answer(app, from("198.51.100.2")).result_int(), 200u);
  EXPECT_EQ(proxy.answer(app, from("198.51.100.1")).result_int(), 429u);
  // A direct client cannot claim a fresh bucket by writing the header itself.
  EXPECT_EQ(stranger.answer(app, from("198.51.100.3")).result_int(), 200u);
  EXPECT_EQ(stranger.answer(app, from("198.51.100.4")).result_int(), 429u);
}

TEST(RateLimit, ApiKeysHaveTheirOwnBuckets) {
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = 1, .burst = 1, .key = rate_limit_key::api_key,
                      .api_key_header = "Authorization", .clock = clock.function()}));
  add_routes(app);
  peer_connection one_address("192.0.2.1");
  auto with = [](const char* key) { return make_request("GET", "/a", {{"Authorization", key}}); };
  EXPECT_EQ(one_address.answer(app, with("Bearer a")).result_int(), 200u);
  EXPECT_EQ(one_address.answer(app, with("Bearer b")).result_int(), 200u);
  EXPECT_EQ(one_address.answer(app, with("Bearer a")).result_int(), 429u);
  EXPECT_EQ(one_address.answer(app, make_request("GET", "/a")).result_int(), 200u);  // keyless
  EXPECT_EQ(one_address.answer(app, make_request("GET", "/a")).result_int(), 429u);
  // A key of 8 KiB is held as its digest: still its own bucket.
  std::string long_key(8192, 'x');
  EXPECT_EQ(one_address.answer(app, with(long_key.c_str())).result_int(), 200u);
  EXPECT_EQ(one_address.answer(app, with(long_key.c_str())).result_int(), 429u);
  long_key.back() = 'y';
  EXPECT_EQ(one_address.answer(app, with(long_key.c_str())).result_int(), 200u);
}

TEST(RateLimit, RoutesHaveOneBucketEachForAllClients) {
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = 1, .burst = 1, .key = rate_limit_key::route, .clock = clock.function()}));
  add_routes(app);
  peer_connection first("192.0.2.1"), second("192.0.2.2");
  EXPECT_EQ(first.answer(app, make_request("GET", "/b/1")).result_int(), 200u);
  EXPECT_EQ(second.answer(app, make_request("GET", "/b/2")).result_int(), 429u);  // same route
  EXPECT_EQ(second.answer(app, make_request("GET", "/a")).result_int(), 200u);
}

TEST(RateLimit, ACustomKeyAndItsEmptyKeyExemption) {
  fake_clock clock;
  application app;
  app.use(rate_limit({.rate = 1, .burst = 1, .key = rate_limit_key::custom,
                      .key_function = [](context& ctx) { return std::string(ctx.header("X-Tenant")); },
                      .clock = clock.function()}));
  add_routes(app);
  auto tenant = [](const char* t) { return make_request("GET", "/a", {{"X-Tenant", t}}); };
  EXPECT_EQ(answer(app, tenant("acme")).result_int(), 200u);
  EXPECT_EQ(answer(app, tenant("acme")).result_int(), 429u);
  EXPECT_EQ(answer(app, tenant("globex")).result_int(), 200u);
  for (int i = 0; i < 5; ++i) {
    response exempt = answer(app, "GET", "/a");
    EXPECT_EQ(exempt.result_int(), 200u);
    EXPECT_EQ(exempt.count("RateLimit"), 0u);
  }
}

// --- bounds and threads ------------------------------------------------------------------

TEST(RateLimit, AMillionClientsNeverHoldMoreThanMaxKeys) {
  fake_clock clock;
  constexpr std::size_t bound = 10'000;
  rate_limiter limiter({.rate = 1, .burst = 2, .max_keys = bound, .clock = clock.function()});
  std::size_t largest = 0;
  for (std::size_t i = 0; i < 1'000'000; ++i) {
    EXPECT_TRUE(limiter.take("client-" + std::to_string(i)).allowed);
    if (i % 997 == 0) {
      largest = std::max(largest, limiter.size());
      ASSERT_LE(limiter.size(), bound) << "after " << i + 1 << " clients";
      clock.advance(1ms);
    }
  }
  EXPECT_LE(limiter.size(), bound);
  EXPECT_GT(largest, bound * 9 / 10);  // the shards fill close to the bound before evicting
  // A recent client is still held: its second request leaves it empty.
  EXPECT_TRUE(limiter.take("client-999999").allowed);
  EXPECT_FALSE(limiter.take("client-999999").allowed);
  // An evicted one starts again with a full bucket: the documented cost of the bound.
  EXPECT_EQ(limiter.take("client-0").remaining, 1u);
}

// Keys that share `key`'s shard, found through the public surface alone: in a limiter with
// one key per shard, a key in the same shard evicts `key` and the count stays at one.
std::vector<std::string> keys_sharing_a_shard_with(const std::string& key, std::size_t count) {
  std::vector<std::string> found;
  for (int i = 0; found.size() < count && i < 100'000; ++i) {
    rate_limiter probe({.max_keys = 64});
    probe.take(key);
    std::string candidate = "candidate-" + std::to_string(i);
    probe.take(candidate);
    if (probe.size() == 1) found.push_back(candidate);
  }
  return found;
}

TEST(RateLimit, AFullBucketIsEvictedBeforeALessRecentlyUsedBusyOne) {
  fake_clock clock;
  // 128 keys over 64 shards: two a shard.
  rate_limiter limiter({.rate = 1, .burst = 10, .max_keys = 128, .clock = clock.function()});
  std::string busy = "busy";
  std::vector<std::string> same = keys_sharing_a_shard_with(busy, 2);
  ASSERT_EQ(same.size(), 2u);
  const std::string& idle = same[0];
  const std::string& newcomer = same[1];
  for (int i = 0; i < 5; ++i) limiter.take(busy);  // five seconds of debt
  limiter.take(idle);                              // one second: more recent than busy
  clock.advance(std::chrono::seconds(2));          // idle is full again, busy is not
  limiter.take(newcomer);                          // the shard is full: one must go
  EXPECT_EQ(limiter.size(), 2u);
  // busy kept its debt (a fresh bucket would leave 9): 10 - (5 + 1 - 2) = 6.
  EXPECT_EQ(limiter.take(busy).remaining, 6u);
}

TEST(RateLimit, WithoutAFullBucketTheLeastRecentlyUsedIsEvicted) {
  fake_clock clock;
  rate_limiter limiter({.rate = 1, .burst = 10, .max_keys = 128, .clock = clock.function()});
  std::string first = "first";
  std::vector<std::string> same = keys_sharing_a_shard_with(first, 2);
  ASSERT_EQ(same.size(), 2u);
  for (int i = 0; i < 5; ++i) limiter.take(first);
  for (int i = 0; i < 5; ++i) limiter.take(same[0]);
  limiter.take(same[1]);  // neither held bucket is full: the least recently used, first, goes
  EXPECT_EQ(limiter.take(same[0]).remaining, 4u);  // kept: 10 - 6
  EXPECT_EQ(limiter.take(first).remaining, 9u);    // back with a full bucket
}

TEST(RateLimit, ABoundOfOneKeyHoldsOne) {
  fake_clock clock;
  rate_limiter limiter({.rate = 1, .burst = 1, .max_keys = 1, .clock = clock.function()});
  EXPECT_TRUE(limiter.take("a").allowed);
  EXPECT_FALSE(limiter.take("a").allowed);
  EXPECT_TRUE(limiter.take("b").allowed);
  EXPECT_EQ(limiter.size(), 1u);
}

TEST(RateLimit, ThreadsSharingBucketsLetThroughExactlyTheBurst) {
  fake_clock clock;  // never advanced: no refill, so exactly `burst` per key get through
  constexpr int threads = 4, per_thread = 5000, keys = 8;
  constexpr std::uint32_t burst = 100;
  application app;
  app.use(rate_limit({.rate = 1, .burst = burst, .key = rate_limit_key::custom,
                      .key_function = [](context& ctx) { return std::string(ctx.header("X-Who")); },
                      .clock = clock.function()}));
  std::array<std::atomic<int>, keys> served{};
  app.get("/a", [&](context& ctx) {
    served[static_cast<std::size_t>(ctx.header("X-Who")[1] - '0')]++;
  });
  app.freeze();
  std::atomic<int> refused{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        std::string who = "k" + std::to_string((i + t) % keys);
        response res = app.respond(make_request("GET", "/a", {{"X-Who", who}}));
        if (res.result_int() == 429) refused++;
      }
    });
  for (std::thread& t : pool) t.join();
  int total_served = 0;
  for (std::size_t k = 0; k < keys; ++k) {
    EXPECT_EQ(served[k].load(), static_cast<int>(burst)) << "key " << k;
    total_served += served[k].load();
  }
  EXPECT_EQ(total_served + refused.load(), threads * per_thread);
}

// A store the test scripts: it answers `next` and records what it was asked.
class scripted_store final : public rate_limit_store {
 public:
  rate_limit_decision next{};
  bool fails = false;
  std::vector<std::string> keys;
  std::vector<std::string> policy_names;
  std::vector<std::chrono::nanoseconds> intervals;
  std::vector<std::uint32_t> bursts;

  rate_limit_decision take(const rate_limit_policy& policy, std::string_view key) override {
    if (fails) throw std::runtime_error("store down");
    keys.emplace_back(key);
    policy_names.emplace_back(policy.name);
    intervals.push_back(policy.interval);
    bursts.push_back(policy.burst);
    return next;
  }
};

TEST(RateLimit, AStoreIsAskedWithThePolicyAndAKeyOfAtMost65Bytes) {
  struct row {
    const char* rule;
    std::string api_key;
    std::string stored_key;  // what the store is asked for
  };
  const std::string long_key(8192, 'k');
  const row rows[] = {
      {"a short key as it is", "abc", "k:abc"},
      {"64 bytes as they are", std::string(62, 'x'), "k:" + std::string(62, 'x')},
      {"an 8 KiB key as # and its SHA-256", long_key, ""},
  };
  for (const row& r : rows) {
    auto store = std::make_shared<scripted_store>();
    store->next = {.allowed = true, .remaining = 7, .next_token = 1500ms};
    application app;
    app.use(rate_limit({.rate = 4, .burst = 9, .key = rate_limit_key::api_key, .policy_name = "shared",
                        .store = store}));
    app.get("/", [](context& ctx) { ctx.response().body("ok"); });
    response res = answer(app, make_request("GET", "/", {{"X-API-Key", r.api_key}}));
    EXPECT_EQ(res.result_int(), 200u) << r.rule;
    EXPECT_EQ(field(res, "RateLimit"), "\"shared\";r=7;t=2") << r.rule << ": the store's decision";
    EXPECT_EQ(field(res, "RateLimit-Policy"), "\"shared\";q=9;w=3") << r.rule;
    ASSERT_EQ(store->keys.size(), 1u) << r.rule;
    EXPECT_EQ(store->policy_names[0], "shared") << r.rule;
    EXPECT_EQ(store->intervals[0], 250ms) << r.rule;
    EXPECT_EQ(store->bursts[0], 9u) << r.rule;
    if (r.stored_key.empty()) {
      EXPECT_EQ(store->keys[0].size(), 65u) << r.rule;
      EXPECT_EQ(store->keys[0][0], '#') << r.rule;
    } else {
      EXPECT_EQ(store->keys[0], r.stored_key) << r.rule;
    }
  }
  auto store = std::make_shared<scripted_store>();
  store->next = {.allowed = false, .retry_after = 2100ms, .next_token = 2100ms};
  rate_limiter limiter({.store = store});
  application app;
  app.use(limiter.layer());
  response refused = answer(app, "GET", "/");
  EXPECT_EQ(refused.result_int(), 429u);
  EXPECT_EQ(field(refused, "Retry-After"), "3") << "the store's retry_after, rounded up";
  EXPECT_EQ(limiter.size(), 0u) << "with a store nothing is held in the process";
}

TEST(RateLimit, AStoreThatThrowsIsWhatFailOpenSays) {
  struct row {
    const char* rule;
    bool fail_open;
    unsigned status;
    const char* retry_after;
    std::size_t log_lines;  // for three requests in a row
  };
  const row rows[] = {
      {"fail_open (the default): let through uncounted, one line per 10 s", true, 200, "", 1},
      {"fail closed: 503 with Retry-After 1, no line", false, 503, "1", 0},
  };
  for (const row& r : rows) {
    auto store = std::make_shared<scripted_store>();
    store->fails = true;
    std::vector<std::string> lines;
    application app({.logger = [&](std::string_view line) { lines.emplace_back(line); }});
    app.use(rate_limit({.policy_name = "p", .store = store, .fail_open = r.fail_open}));
    app.get("/", [](context& ctx) { ctx.response().body("ok"); });
    for (int i = 0; i < 3; ++i) {
      response res = answer(app, "GET", "/");
      EXPECT_EQ(res.result_int(), r.status) << r.rule;
      EXPECT_EQ(field(res, "Retry-After"), r.retry_after) << r.rule;
      EXPECT_EQ(field(res, "RateLimit"), "") << r.rule << ": no count to report";
    }
    ASSERT_EQ(lines.size(), r.log_lines) << r.rule;
    if (!lines.empty()) {
      EXPECT_EQ(lines[0], "rate_limit \"p\": the store failed (store down); 1 request(s) let through uncounted "
                          "(fail_open)");
    }
  }
}

// What the layer says it answers in the handler's place, for the OpenAPI document (issue 44:
// the 429 was in no operation's responses): 429, and 503 only when a store fails closed.
TEST(RateLimit, TheLayerDeclaresTheStatusesItAnswers) {
  struct row {
    const char* rule;
    rate_limit_options options;
    std::vector<int> answers;
  };
  const std::vector<row> rows{
      {"in process", {}, {429}},
      {"a store failing open lets requests through", {.store = std::make_shared<scripted_store>()}, {429}},
      {"a store failing closed answers 503 too",
       {.store = std::make_shared<scripted_store>(), .fail_open = false}, {429, 503}},
  };
  for (const row& r : rows) {
    middleware layer = rate_limit(r.options);
    EXPECT_EQ(std::vector<int>(layer.answers().begin(), layer.answers().end()), r.answers) << r.rule;
  }
}

struct refused_options_row {
  const char* rule;
  rate_limit_options options;
};

TEST(RateLimit, BadOptionsAreRefusedWhenTheLayerIsMade) {
  const std::vector<refused_options_row> rows{
      {"rate 0", {.rate = 0}},
      {"negative rate", {.rate = -1}},
      {"NaN rate", {.rate = std::numeric_limits<double>::quiet_NaN()}},
      {"burst 0", {.burst = 0}},
      {"burst over a year of tokens", {.rate = 1e-6, .burst = 100}},
      {"max_keys 0", {.max_keys = 0}},
      {"policy name with a quote", {.policy_name = "a\"b"}},
      {"empty policy name", {.policy_name = ""}},
      {"custom key without a function", {.key = rate_limit_key::custom}},
      {"API key without a header name", {.key = rate_limit_key::api_key, .api_key_header = ""}},
  };
  for (const refused_options_row& row : rows)
    EXPECT_THROW(rate_limit(row.options), std::invalid_argument) << row.rule;
}

}  // namespace
