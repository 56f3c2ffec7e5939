// The Redis session store (waypoint/app/security/redis_session_store.hpp) against a real redis-server,
// started by this test on a free loopback port and stopped by its pid: records saved, loaded
// and erased under the prefix, PX expiry, two applications sharing sessions through one
// instance, threads, and a Redis that has gone away answered 500. Exits 77 (skipped) without
// redis-server (`scripts/install-deps redis`).
#include "app_test_support.hpp"
#include "redis_test_support.hpp"

#include <waypoint/app/context.hpp>
#include <waypoint/app/security/redis_session_store.hpp>
#include <waypoint/app/security/sessions.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using namespace std::chrono_literals;


std::shared_ptr<redis_session_store> store_with(std::string prefix) {
  return std::make_shared<redis_session_store>(
      redis_session_store_options{.connection = {.port = server->port()},
                                  .key_prefix = std::move(prefix)});
}

void add_routes(application& app) {
  app.handle("/login", [](context& ctx) {
    session& s = ctx.get<session>();
    s.rotate();
    s.set("user", ctx.query("user").value_or("ada"));
  });
  app.handle("/read", [](context& ctx) {
    ctx.response().body(std::string(ctx.get<session>().get("user").value_or("-")));
  });
  app.handle("/count", [](context& ctx) {
    session& s = ctx.get<session>();
    int n = std::stoi(std::string(s.get("n").value_or("0"))) + 1;
    s.set("n", std::to_string(n));
    ctx.response().body(std::to_string(n));
  });
  app.handle("/logout", [](context& ctx) { ctx.get<session>().destroy(); });
}

std::string session_id(const response& res) {
  for (auto& f : res.base())
    if (f.name() == http::field::set_cookie) {
      std::string_view v = f.value();
      if (!v.starts_with("__Host-session=")) continue;
      v.remove_prefix(15);
      return std::string(v.substr(0, v.find(';')));
    }
  return {};
}

request with_id(std::string_view target, const std::string& id) {
  std::string cookie = "__Host-session=" + id;
  return make_request("POST", target, {{"Cookie", cookie}});
}

TEST(RedisSessionStore, SavesLoadsAndErasesUnderItsPrefix) {
  auto a = store_with("test-a:");
  auto b = store_with("test-b:");
  struct row {
    const char* rule;
    std::string record;
  };
  const row rows[] = {{"text", R"({"data":{}})"},
                      {"bytes of every value, NUL included", std::string("a\0b\xff\r\n", 6)},
                      {"an empty record", ""},
                      {"64 KiB", std::string(65536, 'r')}};
  for (const row& r : rows) {
    a->save("k1", r.record, 1min);
    EXPECT_EQ(a->load("k1"), r.record) << r.rule;
    EXPECT_EQ(b->load("k1"), std::nullopt) << r.rule << ": another prefix is another space";
    a->erase("k1");
    EXPECT_EQ(a->load("k1"), std::nullopt) << r.rule;
  }
  a->erase("never-saved");  // no error
}

TEST(RedisSessionStore, RedisDropsARecordWhenItsTtlEnds) {
  auto store = store_with("test-ttl:");
  store->save("short", "s", 100ms);
  store->save("long", "l", 1min);
  EXPECT_EQ(store->load("short"), "s");
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(store->load("short"), std::nullopt);
  EXPECT_EQ(store->load("long"), "l");
}

TEST(RedisSessionStore, TwoApplicationsShareSessionsThroughOneInstance) {
  application a, b;
  a.use(sessions({.store = store_with("shared:")}));
  b.use(sessions({.store = store_with("shared:")}));
  add_routes(a);
  add_routes(b);
  std::string id = session_id(answer(a, make_request("POST", "/login?user=grace")));
  ASSERT_EQ(id.size(), 43u);
  EXPECT_EQ(answer(b, with_id("/read", id)).body(), "grace") << "logged in on a, known on b";
  EXPECT_EQ(answer(b, with_id("/count", id)).body(), "1");
  EXPECT_EQ(answer(a, with_id("/count", id)).body(), "2") << "b's write is a's next read";
  answer(a, with_id("/logout", id));
  EXPECT_EQ(answer(b, with_id("/read", id)).body(), "-") << "logged out on a, gone on b";
}

TEST(RedisSessionStore, ThreadsEachKeepTheirOwnSession) {
  application app;
  app.use(sessions({.store = store_with("threads:")}));
  add_routes(app);
  constexpr int threads = 4, requests = 100;
  std::vector<std::string> last(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::string id = session_id(answer(app, make_request("POST", "/login")));
      for (int i = 0; i < requests; ++i)
        last[static_cast<std::size_t>(t)] = answer(app, with_id("/count", id)).body();
    });
  for (std::thread& th : pool) th.join();
  for (const std::string& n : last) EXPECT_EQ(n, std::to_string(requests));
}

TEST(RedisSessionStore, ARedisThatIsGoneIsA500NotAHang) {
  redis_server own;
  auto store = std::make_shared<redis_session_store>(
      redis_session_store_options{.connection = {.port = own.port(), .timeout = 200ms}});
  application app;
  app.use(sessions({.store = store}));
  add_routes(app);
  std::string id = session_id(answer(app, make_request("POST", "/login")));
  own.stop();
  auto start = std::chrono::steady_clock::now();
  response res = answer(app, with_id("/read", id));
  EXPECT_EQ(res.result_int(), 500u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_THROW(redis_session_store({.connection = {.port = own.port(), .timeout = 200ms}}), std::runtime_error)
      << "a store that cannot connect fails when made";
}

TEST(RedisSessionStore, ARedisThatStopsAnsweringCostsATimeoutNotAHang) {
  // A listener that never accepts: connecting succeeds (the kernel's backlog), no reply comes.
  std::uint16_t port = free_port();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  redis_session_store store({.connection = {.port = port, .timeout = 200ms}});
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW((void)store.load("k"), std::runtime_error);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, 2s);
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) { return waypoint::app::testing::run_with_redis_server(argc, argv); }
