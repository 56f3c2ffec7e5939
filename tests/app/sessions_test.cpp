// The session layer (waypoint/app/security/sessions.hpp): when a cookie is sent and when not, data
// loaded back, the idle and absolute timeouts on a fake clock, rotate() and destroy(),
// unknown and tampered ids, records a store hands back broken, the memory store's bound
// (100,000 sessions) and eviction order, threads, HEAD; then curl's cookie jar through
// login, read and logout against a loopback server.
#include "app_test_support.hpp"
#include "loopback_client.hpp"
#include "../support/missing_tool.hpp"

#include <waypoint/app/context.hpp>
#include <waypoint/app/security/sessions.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using namespace std::chrono_literals;

// A clock the test moves by hand, shared by the layer and the store.
struct fake_clock {
  std::shared_ptr<std::atomic<std::int64_t>> ms =
      std::make_shared<std::atomic<std::int64_t>>(1'800'000'000'000);
  std::function<std::chrono::system_clock::time_point()> function() const {
    return [ms = ms] { return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms->load())); };
  }
  void advance(std::chrono::milliseconds d) const { *ms += d.count(); }
};

// A memory store that counts the calls it gets, may hand back a chosen record instead of the
// one held, and keeps records past the ttl it is given (as a store without expiry would), so
// that the timeouts the tests see are the layer's own checks.
class counting_store : public session_store {
 public:
  explicit counting_store(std::function<std::chrono::system_clock::time_point()> now)
      : inner_(memory_session_store_options{.now = std::move(now)}) {}
  std::optional<std::string> load(std::string_view key) override {
    ++loads;
    auto record = inner_.load(key);
    if (record && replacement) return *replacement;
    return record;
  }
  void save(std::string_view key, std::string_view record, std::chrono::milliseconds ttl) override {
    ++saves;
    last_ttl = ttl;
    inner_.save(key, record, std::chrono::hours(24 * 365));
  }
  void erase(std::string_view key) override {
    ++erases;
    inner_.erase(key);
  }
  std::size_t size() const { return inner_.size(); }

  std::atomic<int> loads{0}, saves{0}, erases{0};
  std::chrono::milliseconds last_ttl{0};
  std::optional<std::string> replacement{};

 private:
  memory_session_store inner_;
};

// Routes that touch the session as a site would.
void add_routes(application& app) {
  app.handle("/read", [](context& ctx) {
    ctx.response().body(std::string(ctx.get<session>().get("user").value_or("-")));
  });
  app.handle("/nothing", [](context&) {});
  app.handle("/login", [](context& ctx) {
    session& s = ctx.get<session>();
    s.rotate();
    s.set("user", ctx.query("user").value_or("ada"));
  });
  app.handle("/set", [](context& ctx) { ctx.get<session>().set("note", ctx.query("v").value_or("")); });
  app.handle("/forget-user", [](context& ctx) { ctx.get<session>().erase("user"); });
  app.handle("/logout", [](context& ctx) { ctx.get<session>().destroy(); });
  app.handle("/switch", [](context& ctx) {
    session& s = ctx.get<session>();
    s.destroy();
    s.set("user", "bob");
  });
  app.handle("/fail", [](context& ctx) {
    ctx.get<session>().set("user", "mallory");
    throw std::runtime_error("the handler failed after setting a value");
  });
  app.handle("/big", [](context& ctx) { ctx.get<session>().set("blob", std::string(5000, 'x')); });
  app.handle("/count", [](context& ctx) {
    session& s = ctx.get<session>();
    int n = std::stoi(std::string(s.get("n").value_or("0")));
    s.set("n", std::to_string(n + 1));
    ctx.response().body(std::to_string(n + 1));
  });
}

// An application with sessions on a fake clock and a counting store.
struct site {
  fake_clock clock;
  std::shared_ptr<counting_store> store = std::make_shared<counting_store>(clock.function());
  application app;
  explicit site(session_options options = {}) {
    options.store = store;
    options.now = clock.function();
    app.use(sessions(std::move(options)));
    add_routes(app);
  }
};

// The session cookie's Set-Cookie fields in `res`.
std::vector<std::string> session_cookies(const response& res, std::string_view name = "__Host-session") {
  std::vector<std::string> out;
  for (auto& f : res.base())
    if (f.name() == http::field::set_cookie && std::string_view(f.value()).starts_with(std::string(name) + "="))
      out.emplace_back(f.value());
  return out;
}

// The id a Set-Cookie field carries.
std::string id_of(std::string_view set_cookie_field) {
  std::string_view v = set_cookie_field.substr(set_cookie_field.find('=') + 1);
  return std::string(v.substr(0, v.find(';')));
}

request with_id(std::string_view method, std::string_view target, std::string_view id) {
  std::string cookie = "__Host-session=" + std::string(id);
  return make_request(method, target, {{"Cookie", cookie}});
}

// Logs in and gives the session's id.
std::string log_in(application& app, std::string_view user = "ada") {
  response res = answer(app, make_request("POST", "/login?user=" + std::string(user)));
  std::vector<std::string> set = session_cookies(res);
  EXPECT_EQ(set.size(), 1u) << res.base();
  return set.empty() ? std::string() : id_of(set[0]);
}

// --- cookies sent, and not --------------------------------------------------------------------

TEST(Sessions, ANewSessionSetsTheCookieOnceItHoldsAValue) {
  site s;
  response empty = answer(s.app, "GET", "/nothing");
  EXPECT_TRUE(session_cookies(empty).empty()) << "a session left empty is neither sent nor stored";
  EXPECT_EQ(s.store->saves, 0);

  response res = answer(s.app, "POST", "/login");
  std::vector<std::string> set = session_cookies(res);
  ASSERT_EQ(set.size(), 1u);
  std::string id = id_of(set[0]);
  EXPECT_EQ(id.size(), 43u) << "32 bytes, base64url unpadded";
  EXPECT_EQ(id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
            std::string::npos);
  EXPECT_EQ(set[0], "__Host-session=" + id + "; Path=/; Secure; HttpOnly; SameSite=Lax");
  EXPECT_EQ(s.store->size(), 1u);
  EXPECT_NE(log_in(s.app), id) << "every new session gets its own id";
}

TEST(Sessions, AReturningClientsDataIsLoadedAndAnUnchangedSessionSendsNoCookie) {
  site s;
  std::string id = log_in(s.app, "grace");
  struct row {
    const char* rule;
    const char* method;
    const char* target;
    const char* body;  // nullptr: not checked
    int saves;         // store writes the request causes
  };
  const row rows[] = {
      {"a read loads the data and writes nothing", "GET", "/read", "grace", 0},
      {"HEAD loads it as GET does, and sends no body", "HEAD", "/read", "", 0},
      {"a request that changes nothing writes nothing", "GET", "/nothing", "", 0},
      {"a change is written back under the same id", "POST", "/set?v=1", "", 1},
      {"setting a value it already holds is no change", "POST", "/set?v=1", "", 0},
  };
  for (const row& r : rows) {
    int saves_before = s.store->saves;
    response res = answer(s.app, with_id(r.method, r.target, id));
    EXPECT_EQ(res.result_int(), 200u) << r.rule;
    EXPECT_EQ(res.body(), r.body) << r.rule;
    EXPECT_TRUE(session_cookies(res).empty()) << r.rule << ": " << res.base();
    EXPECT_EQ(s.store->saves - saves_before, r.saves) << r.rule;
  }
}

TEST(Sessions, HeadStartsASessionAsGetDoes) {
  site s;
  response res = answer(s.app, make_request("HEAD", "/login"));
  EXPECT_EQ(res.result_int(), 200u);
  ASSERT_EQ(session_cookies(res).size(), 1u);
  EXPECT_EQ(answer(s.app, with_id("GET", "/read", id_of(session_cookies(res)[0]))).body(), "ada");
}

// --- timeouts ------------------------------------------------------------------------------------

struct timeout_row {
  const char* rule;
  std::vector<std::chrono::minutes> gaps;  // between the login and each read, in turn
  bool last_loads;                         // every read before the last loads
};

void PrintTo(const timeout_row& row, std::ostream* os) { *os << row.rule; }

class SessionTimeouts : public ::testing::TestWithParam<timeout_row> {};

TEST_P(SessionTimeouts, AnExpiredSessionIsAbsentAndRemoved) {
  const timeout_row& row = GetParam();
  site s({.idle_timeout = 30min, .absolute_timeout = 12h});
  std::string id = log_in(s.app);
  for (std::size_t i = 0; i < row.gaps.size(); ++i) {
    s.clock.advance(row.gaps[i]);
    response res = answer(s.app, with_id("GET", "/read", id));
    bool last = i + 1 == row.gaps.size();
    bool loads = !last || row.last_loads;
    EXPECT_EQ(res.body(), loads ? "ada" : "-") << row.rule << ", read " << i;
    EXPECT_TRUE(session_cookies(res).empty()) << row.rule;
  }
  EXPECT_EQ(s.store->size(), row.last_loads ? 1u : 0u) << row.rule << ": an expired session is erased";
}

std::vector<std::chrono::minutes> every(std::chrono::minutes gap, int times, std::chrono::minutes last) {
  std::vector<std::chrono::minutes> gaps(static_cast<std::size_t>(times), gap);
  gaps.push_back(last);
  return gaps;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, SessionTimeouts,
    ::testing::Values(
        timeout_row{"a read within the idle timeout finds the session", {29min}, true},
        timeout_row{"idle for the whole idle timeout, the session is gone", {30min}, false},
        timeout_row{"reads keep a session alive past one idle timeout", {20min, 20min, 20min, 29min}, true},
        timeout_row{"idle after reads, it is gone", {20min, 20min, 31min}, false},
        timeout_row{"a session read every 20 min lives until just before the absolute timeout",
                    every(20min, 35, 19min), true},
        timeout_row{"a session read every 20 min ends at the absolute timeout", every(20min, 35, 20min),
                    false}));

TEST(Sessions, AnUnchangedSessionIsWrittenBackOncePerTouchInterval) {
  site s({.touch_interval = 1min});
  std::string id = log_in(s.app);
  int after_login = s.store->saves;
  for (int i = 0; i < 10; ++i) {  // ten reads in 50 s: no write
    s.clock.advance(5s);
    answer(s.app, with_id("GET", "/read", id));
  }
  EXPECT_EQ(s.store->saves, after_login);
  s.clock.advance(10s);
  answer(s.app, with_id("GET", "/read", id));
  EXPECT_EQ(s.store->saves, after_login + 1) << "a minute after the last write: written back";
  EXPECT_EQ(s.store->last_ttl, 30min) << "the idle timeout restarts from the write";
}

// --- rotate, destroy, erase ----------------------------------------------------------------------

TEST(Sessions, RotateGivesANewIdAndTheOldIdNoLongerLoads) {
  site s;
  std::string first = log_in(s.app, "anon");
  answer(s.app, with_id("POST", "/set?v=cart-3", first));
  response res = answer(s.app, with_id("POST", "/login?user=ada", first));
  std::vector<std::string> set = session_cookies(res);
  ASSERT_EQ(set.size(), 1u);
  std::string second = id_of(set[0]);
  EXPECT_NE(second, first);
  EXPECT_EQ(answer(s.app, with_id("GET", "/read", second)).body(), "ada");
  EXPECT_EQ(s.store->size(), 1u) << "the old record is erased, not left to expire";
  response old = answer(s.app, with_id("GET", "/read", first));
  EXPECT_EQ(old.body(), "-") << "a fixated or stolen id is worth nothing after the rotation";
  EXPECT_TRUE(session_cookies(old).empty());
}

TEST(Sessions, DestroyAndErasingEveryValueDeleteTheCookieAndTheRecord) {
  struct row {
    const char* rule;
    const char* target;
  };
  const row rows[] = {{"destroy() ends the session", "/logout"},
                      {"erasing the last value ends it too", "/forget-user"}};
  for (const row& r : rows) {
    site s;
    std::string id = log_in(s.app);
    response res = answer(s.app, with_id("POST", r.target, id));
    std::vector<std::string> set = session_cookies(res);
    ASSERT_EQ(set.size(), 1u) << r.rule;
    EXPECT_EQ(set[0], "__Host-session=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax") << r.rule;
    EXPECT_EQ(s.store->size(), 0u) << r.rule;
    EXPECT_EQ(answer(s.app, with_id("GET", "/read", id)).body(), "-") << r.rule;
  }
}

TEST(Sessions, ValuesSetAfterDestroyStartANewSession) {
  site s;
  std::string id = log_in(s.app);
  response res = answer(s.app, with_id("POST", "/switch", id));
  std::vector<std::string> set = session_cookies(res);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_NE(id_of(set[0]), id);
  EXPECT_EQ(answer(s.app, with_id("GET", "/read", id_of(set[0]))).body(), "bob");
  EXPECT_EQ(answer(s.app, with_id("GET", "/read", id)).body(), "-");
}

// --- what the client sends, and what a store gives back ------------------------------------------

TEST(Sessions, AnUnknownOrTamperedIdIsAbsentAndNeverAdopted) {
  site s;
  std::string id = log_in(s.app);
  std::string flipped = id;
  flipped[10] = flipped[10] == 'A' ? 'B' : 'A';
  struct row {
    const char* rule;
    std::string cookie_value;
    bool looked_up;  // shaped as an id: the store is asked
  };
  const row rows[] = {
      {"a well-formed id the store does not hold", std::string(43, 'Q'), true},
      {"an issued id with one character changed", flipped, true},
      {"an id one character short", id.substr(1), false},
      {"an id with a byte outside base64url", id.substr(1) + "+", false},
      {"an empty value", "", false},
      {"8 KiB of text", std::string(8192, 'a'), false},
  };
  for (const row& r : rows) {
    int loads_before = s.store->loads;
    response read = answer(s.app, with_id("GET", "/read", r.cookie_value));
    EXPECT_EQ(read.result_int(), 200u) << r.rule;
    EXPECT_EQ(read.body(), "-") << r.rule;
    EXPECT_TRUE(session_cookies(read).empty()) << r.rule;
    EXPECT_EQ(s.store->loads - loads_before, r.looked_up ? 1 : 0) << r.rule;
    // Something set under it is a new session with a fresh id, never the one sent.
    response set = answer(s.app, with_id("POST", "/set?v=x", r.cookie_value));
    ASSERT_EQ(session_cookies(set).size(), 1u) << r.rule;
    EXPECT_NE(id_of(session_cookies(set)[0]), r.cookie_value) << r.rule;
  }
  EXPECT_EQ(answer(s.app, with_id("GET", "/read", id)).body(), "ada") << "the real session is untouched";
}

TEST(Sessions, ARecordTheLayerDidNotWriteIsAbsentAndErased) {
  const char* records[] = {"", "not json", "[]", "{}", R"({"created":1,"written":1})",
                           R"({"created":"1","written":1,"data":{}})",
                           R"({"created":1,"written":1,"data":{"user":42}})",
                           R"({"created":1,"written":1,"data":[]})"};
  for (const char* record : records) {
    site s;
    std::string id = log_in(s.app);
    s.store->replacement = record;
    response res = answer(s.app, with_id("GET", "/read", id));
    EXPECT_EQ(res.result_int(), 200u) << record;
    EXPECT_EQ(res.body(), "-") << record;
    EXPECT_EQ(s.store->size(), 0u) << record;
  }
}

TEST(Sessions, AHandlerThatThrowsLeavesTheSessionAsItWas) {
  site s;
  std::string id = log_in(s.app);
  int saves = s.store->saves;
  response res = answer(s.app, with_id("POST", "/fail", id));
  EXPECT_EQ(res.result_int(), 500u);
  EXPECT_TRUE(session_cookies(res).empty());
  EXPECT_EQ(s.store->saves, saves);
  EXPECT_EQ(answer(s.app, with_id("GET", "/read", id)).body(), "ada");
}

TEST(Sessions, ASessionHoldsAtMostMaxDataBytes) {
  site s({.max_data_bytes = 4096});
  std::string id = log_in(s.app);
  response res = answer(s.app, with_id("POST", "/big", id));
  EXPECT_EQ(res.result_int(), 500u) << "set() beyond the bound throws std::length_error";
  EXPECT_EQ(answer(s.app, with_id("GET", "/read", id)).body(), "ada");
}

TEST(Sessions, RefusesOptionsThatCannotWork) {
  struct row {
    const char* rule;
    session_options options;
  };
  std::vector<row> rows;
  rows.push_back({"a zero idle timeout", {.idle_timeout = 0s}});
  rows.push_back({"a negative absolute timeout", {.absolute_timeout = -1s}});
  rows.push_back({"an absolute timeout shorter than the idle one", {.idle_timeout = 1h, .absolute_timeout = 30min}});
  rows.push_back({"a max_data_bytes of 0", {.max_data_bytes = 0}});
  rows.push_back({"a __Host- cookie without Secure", {.cookie = {.name = "__Host-s", .value = {}, .secure = false}}});
  rows.push_back({"a cookie name that is not a token", {.cookie = {.name = "a b", .value = {}}}});
  for (row& r : rows) EXPECT_THROW((void)sessions(std::move(r.options)), std::invalid_argument) << r.rule;
  EXPECT_THROW((void)memory_session_store({.max_sessions = 0}), std::invalid_argument);
}

// --- the memory store ----------------------------------------------------------------------------

TEST(MemorySessionStore, HoldsNoMoreThanMaxSessionsWith100000Clients) {
  fake_clock clock;
  auto store = std::make_shared<memory_session_store>(
      memory_session_store_options{.max_sessions = 1000, .now = clock.function()});
  application app;
  app.use(sessions({.store = store, .now = clock.function()}));
  add_routes(app);
  std::string last;
  for (int i = 0; i < 100'000; ++i) {
    response res = answer(app, "POST", "/login");
    ASSERT_EQ(session_cookies(res).size(), 1u);
    if (i == 99'999) last = id_of(session_cookies(res)[0]);
    clock.advance(1ms);  // each later login expires later: the oldest are evicted
  }
  EXPECT_EQ(store->size(), 1000u);
  EXPECT_EQ(answer(app, with_id("GET", "/read", last)).body(), "ada") << "the newest is held";
}

TEST(MemorySessionStore, EvictsTheSoonestExpiringFirst) {
  fake_clock clock;
  memory_session_store store({.max_sessions = 640, .now = clock.function()});  // 10 a shard
  for (int i = 0; i < 10'000; ++i) store.save("short-" + std::to_string(i), "s", 1min);
  for (int i = 0; i < 100; ++i) store.save("long-" + std::to_string(i), "l", 1h);
  EXPECT_EQ(store.size(), 640u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(store.load("long-" + std::to_string(i)), "l") << "a short-lived session goes before long-" << i;
  clock.advance(2min);
  int shorts = 0;
  for (int i = 0; i < 10'000; ++i) shorts += store.load("short-" + std::to_string(i)).has_value();
  EXPECT_EQ(shorts, 0) << "expired records are not handed out";
  EXPECT_EQ(store.size(), 100u) << "and are dropped when looked up";
}

TEST(MemorySessionStore, TwoApplicationsSharingAStoreShareSessions) {
  auto store = std::make_shared<memory_session_store>();
  application a, b;
  a.use(sessions({.store = store}));
  b.use(sessions({.store = store}));
  add_routes(a);
  add_routes(b);
  std::string id = log_in(a, "lin");
  EXPECT_EQ(answer(b, with_id("GET", "/read", id)).body(), "lin");
  answer(b, with_id("POST", "/logout", id));
  EXPECT_EQ(answer(a, with_id("GET", "/read", id)).body(), "-");
}

TEST(Sessions, ConcurrentRequestsKeepEachSessionsCount) {
  auto store = std::make_shared<memory_session_store>();
  application app;
  app.use(sessions({.store = store}));
  add_routes(app);
  constexpr int threads = 8, requests = 300;
  std::vector<std::string> ids(threads);
  std::vector<std::string> last(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ids[static_cast<std::size_t>(t)] = log_in(app, "user" + std::to_string(t));
      for (int i = 0; i < requests; ++i)
        last[static_cast<std::size_t>(t)] =
            answer(app, with_id("POST", "/count", ids[static_cast<std::size_t>(t)])).body();
    });
  for (std::thread& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(last[static_cast<std::size_t>(t)], std::to_string(requests)) << "thread " << t;
    EXPECT_EQ(answer(app, with_id("GET", "/read", ids[static_cast<std::size_t>(t)])).body(),
              "user" + std::to_string(t));
  }
  EXPECT_EQ(store->size(), static_cast<std::size_t>(threads));
}

// --- a real client -------------------------------------------------------------------------------

TEST(SessionsInterop, CurlsCookieJarLogsInReadsAndLogsOut) {
  if (std::system("command -v curl >/dev/null 2>&1") != 0) WAYPOINT_SKIP_MISSING("curl");
  application app;
  app.use(sessions());
  add_routes(app);
  loopback_server server(app);
  std::filesystem::path jar = std::filesystem::temp_directory_path() /
                              ("waypoint-sessions-" + std::to_string(::getpid()) + ".jar");
  std::string curl = "curl -s -c " + jar.string() + " -b " + jar.string() + " ";
  EXPECT_EQ(command_output(curl + server.url("/read")), "-");
  EXPECT_EQ(command_output(curl + "-X POST " + server.url("/login?user=ada")), "");
  std::string kept = command_output("cat " + jar.string());
  EXPECT_NE(kept.find("__Host-session"), std::string::npos) << "curl keeps the __Host- cookie: " << kept;
  EXPECT_EQ(command_output(curl + server.url("/read")), "ada");
  EXPECT_EQ(command_output(curl + "-X POST " + server.url("/logout")), "");
  EXPECT_EQ(command_output("cat " + jar.string()).find("__Host-session"), std::string::npos)
      << "Max-Age=0 removed it from the jar";
  EXPECT_EQ(command_output(curl + server.url("/read")), "-");
  std::filesystem::remove(jar);
}

}  // namespace
