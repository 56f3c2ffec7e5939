// Middleware: the onion order of application and group layers, short-circuits, work after
// the handler, exceptions seen through next(), and the built-in layers (recover,
// request_id, access_log, cors).
#include "app_test_support.hpp"
#include "loopback_client.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/operations/access_log.hpp>
#include <waypoint/app/operations/trace_context.hpp>
#include <waypoint/app/security/cors.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/typed/json.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <ctime>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

using trace = std::vector<std::string>;

middleware tracing(trace& t, std::string name) {
  return [&t, name](context&, next inner) -> awaitable<void> {
    t.push_back(name + ">");
    co_await inner();
    t.push_back("<" + name);
  };
}

handler traced_handler(trace& t) {
  return [&t](context& ctx) {
    t.push_back("handler");
    ctx.response().body("ok");
  };
}

// --- order --------------------------------------------------------------------------

TEST(Order, ApplicationThenGroupLayersWrapTheHandlerLikeAnOnion) {
  trace t;
  application app;
  app.use(tracing(t, "a1"));
  auto g = app.group("/g", tracing(t, "g1"), tracing(t, "g2"));
  g.get("/x", traced_handler(t));
  g.group("/inner", tracing(t, "i1")).get("/y", traced_handler(t));
  app.use(tracing(t, "a2"));  // after the routes: still wraps them (fixed at freeze)

  answer(app, "GET", "/g/x");
  EXPECT_EQ(t, (trace{"a1>", "a2>", "g1>", "g2>", "handler", "<g2", "<g1", "<a2", "<a1"}));
  t.clear();
  answer(app, "GET", "/g/inner/y");
  EXPECT_EQ(
      t, (trace{"a1>", "a2>", "g1>", "g2>", "i1>", "handler", "<i1", "<g2", "<g1", "<a2", "<a1"}));
}

TEST(Order, GroupLayersDoNotWrapOtherRoutes) {
  trace t;
  application app;
  app.group("/g", tracing(t, "g"));
  app.get("/plain", traced_handler(t));
  answer(app, "GET", "/plain");
  EXPECT_EQ(t, (trace{"handler"}));
}

struct unrouted_trace_row {
  const char* rule;
  const char* method;
  const char* target;
  unsigned status;
};

class UnroutedLayers : public ::testing::TestWithParam<unrouted_trace_row> {};

TEST_P(UnroutedLayers, ApplicationLayersWrapRequestsNoRouteServes) {
  trace t;
  application app;
  app.use(tracing(t, "a"));
  app.group("/g", tracing(t, "g")).get("/x", traced_handler(t));
  response res = answer(app, GetParam().method, GetParam().target);
  EXPECT_EQ(res.result_int(), GetParam().status) << GetParam().rule;
  EXPECT_EQ(t, (trace{"a>", "<a"})) << GetParam().rule;
}

INSTANTIATE_TEST_SUITE_P(Rows, UnroutedLayers,
                         ::testing::Values(unrouted_trace_row{"404", "GET", "/nothing", 404},
                                           unrouted_trace_row{"405", "POST", "/g/x", 405},
                                           unrouted_trace_row{"automatic OPTIONS", "OPTIONS",
                                                              "/g/x", 204},
                                           unrouted_trace_row{"redirect", "GET", "/g//x", 307},
                                           unrouted_trace_row{"400", "GET", "/g/%zz", 400}));

// --- short-circuit, after, errors -----------------------------------------------------

TEST(ShortCircuit, LayerAnswersWithoutCallingNext) {
  trace t;
  application app;
  app.use(tracing(t, "outer"));
  app.use([&t](context& ctx, next inner) -> awaitable<void> {
    if (ctx.header("Authorization").empty()) {
      t.push_back("refused");
      ctx.response().problem(401, "missing credentials");
      co_return;
    }
    co_await inner();
  });
  app.use(tracing(t, "inner"));
  app.get("/x", traced_handler(t));
  response res = answer(app, "GET", "/x");
  EXPECT_EQ(res.result_int(), 401u);
  EXPECT_EQ(t, (trace{"outer>", "refused", "<outer"}));
  t.clear();
  res = app.respond(make_request("GET", "/x", {{"Authorization", "Bearer t"}}));
  EXPECT_EQ(res.result_int(), 200u);
  EXPECT_EQ(t, (trace{"outer>", "inner>", "handler", "<inner", "<outer"}));
}

TEST(After, LayerSeesAndChangesTheHandlersResponse) {
  application app;
  app.use([](context& ctx, next inner) -> awaitable<void> {
    co_await inner();
    ctx.response().header("X-Status-Seen", std::to_string(ctx.response().status()));
    ctx.response().body() += " (wrapped)";
  });
  app.get("/x", [](context& ctx) { ctx.response().status(202).body("accepted"); });
  response res = answer(app, "GET", "/x");
  EXPECT_EQ(field(res, "X-Status-Seen"), "202");
  EXPECT_EQ(res.body(), "accepted (wrapped)");
}

TEST(Errors, ExceptionsComeOutOfNextSoALayerCanHandleThem) {
  trace t;
  application app;
  app.use(tracing(t, "outer"));  // never sees "<outer": the exception passes through it
  app.use([&t](context& ctx, next inner) -> awaitable<void> {
    try {
      co_await inner();
    } catch (const waypoint::http_error& e) {
      t.push_back("caught " + std::to_string(e.status()));
      ctx.response().status(200).body("handled");
    }
  });
  app.get("/x", [](context&) -> void { throw waypoint::http_error(418, "teapot"); });
  response res = answer(app, "GET", "/x");
  EXPECT_EQ(res.result_int(), 200u);
  EXPECT_EQ(res.body(), "handled");
  EXPECT_EQ(t, (trace{"outer>", "caught 418", "<outer"}));
}

TEST(Errors, ExceptionFromALayerBeforeNextIsAnswered) {
  trace t;
  application app({.logger = [](std::string_view) {}});
  app.use([](context&, next) -> awaitable<void> {
    throw std::runtime_error("layer failed");
    co_return;
  });
  app.get("/x", traced_handler(t));
  EXPECT_EQ(answer(app, "GET", "/x").result_int(), 500u);
  EXPECT_TRUE(t.empty());
}

TEST(Errors, RecoverTurnsInnerExceptionsIntoResponsesForOuterLayers) {
  std::vector<int> seen_by_outer;
  std::vector<std::string> log;
  application app({.logger = [&](std::string_view l) { log.emplace_back(l); }});
  app.use([&](context& ctx, next inner) -> awaitable<void> {
    co_await inner();  // no exception reaches here: recover answered it
    seen_by_outer.push_back(ctx.response().status());
  });
  app.use(recover());
  app.get("/boom", [](context&) { throw std::runtime_error("secret cause"); });
  app.get("/gone", [](context&) { throw waypoint::http_error(410, "gone"); });
  response boom = answer(app, "GET", "/boom");
  response gone = answer(app, "GET", "/gone");
  EXPECT_EQ(seen_by_outer, (std::vector<int>{500, 410}));
  EXPECT_EQ(boom.body().find("secret"), std::string::npos);
  EXPECT_EQ(body_json(gone).value("detail", ""), "gone");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("secret cause"), std::string::npos);
}

// The 500 log line quotes the exception's text, which may quote the client.
TEST(Errors, LoggedExceptionTextIsClippedAndCannotForgeLines) {
  std::vector<std::string> log;
  application app({.logger = [&](std::string_view l) { log.emplace_back(l); }});
  app.use(recover());
  app.get("/boom", [](context& ctx) {
    throw std::runtime_error("bad token\r\nwaypoint: 500 for GET /forged " +
                             ctx.body());
  });
  answer(app, make_request("GET", "/boom", {}, std::string(100 * 1024, 't')));
  ASSERT_EQ(log.size(), 1u);
  const std::string& line = log[0];
  EXPECT_EQ(line.find_first_of("\r\n"), std::string::npos) << line.substr(0, 200);
  EXPECT_NE(line.find("bad token\\r\\nwaypoint: 500 for GET /forged"), std::string::npos);
  EXPECT_LT(line.size(), 1024u) << "a 100 KiB token is logged whole";
  EXPECT_TRUE(line.ends_with(" bytes)\"")) << line.substr(line.size() - 40);
}

TEST(Errors, NextIsCopyableAndCallableLater) {
  application app;
  app.use([](context& ctx, next inner) -> awaitable<void> {
    next copy = inner;
    ctx.response().header("X-Before", "1");
    co_await copy();
  });
  app.get("/x", [](context& ctx) { ctx.response().body("ran"); });
  EXPECT_EQ(answer(app, "GET", "/x").body(), "ran");
}

// --- request_id ---------------------------------------------------------------------

struct request_id_row {
  const char* rule;
  const char* incoming;  // "" for none
  const char* target;
  bool kept;
};

class RequestIdLayer : public ::testing::TestWithParam<request_id_row> {};

TEST_P(RequestIdLayer, KeepsValidIdsGeneratesOthersAndEchoes) {
  const request_id_row& row = GetParam();
  application app;
  app.use(request_id());
  std::string handler_saw;
  app.get("/x", [&](context& ctx) { handler_saw = ctx.request_id(); });
  app.get("/fail", [&](context&) { throw waypoint::http_error(400, "bad"); });
  request req = *row.incoming ? make_request("GET", row.target, {{"X-Request-Id", row.incoming}})
                              : make_request("GET", row.target);
  response res = app.respond(req);
  std::string echoed = field(res, "X-Request-Id");
  EXPECT_FALSE(echoed.empty()) << row.rule;
  if (row.kept) {
    EXPECT_EQ(echoed, row.incoming) << row.rule;
  } else {
    EXPECT_NE(echoed, row.incoming) << row.rule;
  }
  if (!handler_saw.empty()) {
    EXPECT_EQ(handler_saw, echoed);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, RequestIdLayer,
    ::testing::Values(request_id_row{"valid incoming id kept", "abc-123", "/x", true},
                      request_id_row{"none: generated", "", "/x", false},
                      request_id_row{"invalid incoming replaced", "bad id!", "/x", false},
                      request_id_row{"echoed on a 404", "id-404", "/nothing", true},
                      request_id_row{"echoed on a handler error", "id-err", "/fail", true}));

// --- access_log ---------------------------------------------------------------------

struct access_row {
  const char* rule;
  const char* method;
  const char* target;
  int status;
  const char* path;
  const char* route;  // nullptr: JSON null
};

class AccessLog : public ::testing::TestWithParam<access_row> {};

TEST_P(AccessLog, OneJsonLinePerRequest) {
  const access_row& row = GetParam();
  std::vector<std::string> lines;
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.sink = [&](std::string_view l) { lines.emplace_back(l); }}));
  app.use(request_id());
  app.get("/users/{id}", [](context& ctx) { ctx.response().body("u"); });
  app.get("/boom", [](context&) { throw std::runtime_error("x"); });
  answer(app, row.method, row.target);
  ASSERT_EQ(lines.size(), 1u) << row.rule;
  EXPECT_EQ(lines[0].find('\n'), std::string::npos);
  nlohmann::json entry = nlohmann::json::parse(lines[0], nullptr, false);
  ASSERT_TRUE(entry.is_object()) << lines[0];
  EXPECT_EQ(entry["method"], row.method) << row.rule;
  EXPECT_EQ(entry["path"], row.path) << row.rule;
  if (row.route) {
    EXPECT_EQ(entry["route"], row.route) << row.rule;
  } else {
    EXPECT_TRUE(entry["route"].is_null()) << row.rule;
  }
  EXPECT_EQ(entry["status"], row.status) << row.rule;
  EXPECT_TRUE(entry["duration_us"].is_number_integer());
  EXPECT_EQ(entry["request_id"].get<std::string>().size(), 16u);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AccessLog,
    ::testing::Values(access_row{"matched route, query left out", "GET", "/users/42?token=secret",
                                 200, "/users/42", "GET /users/{id}"},
                      access_row{"404 has no route", "GET", "/nothing", 404, "/nothing", nullptr},
                      access_row{"405", "DELETE", "/users/1", 405, "/users/1", nullptr},
                      access_row{"exception logged with the status it gets", "GET", "/boom", 500,
                                 "/boom", "GET /boom"},
                      access_row{"escaped path kept escaped", "GET", "/users/a%20b", 200,
                                 "/users/a%20b", "GET /users/{id}"},
                      access_row{"a 400's query is not logged", "GET", "/users/1?token=s3cret#top",
                                 400, "/users/1", nullptr}));

// The method and path are the client's: a line stays one line and short, whatever they hold.
struct hostile_access_row {
  const char* rule;
  std::string method;
  std::string target;
  std::string logged_method;
  std::string logged_path;
};

class AccessLogClientText : public ::testing::TestWithParam<hostile_access_row> {};

TEST_P(AccessLogClientText, IsClippedAndCannotForgeLines) {
  const hostile_access_row& row = GetParam();
  std::vector<std::string> lines;
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.sink = [&](std::string_view l) { lines.emplace_back(l); }}));
  app.get("/{token}", [](context& ctx) { ctx.response().body("t"); });
  app.respond(make_request(row.method, row.target));
  ASSERT_EQ(lines.size(), 1u) << row.rule;
  EXPECT_EQ(lines[0].find_first_of("\r\n"), std::string::npos) << row.rule;
  EXPECT_LT(lines[0].size(), 1024u) << row.rule;
  nlohmann::json entry = nlohmann::json::parse(lines[0], nullptr, false);
  ASSERT_TRUE(entry.is_object()) << row.rule << ": " << lines[0].substr(0, 200);
  EXPECT_EQ(entry["method"], row.logged_method) << row.rule;
  EXPECT_EQ(entry["path"], row.logged_path) << row.rule;
}

const std::string ellipsis = "\xe2\x80\xa6";

INSTANTIATE_TEST_SUITE_P(
    Rows, AccessLogClientText,
    ::testing::Values(
        hostile_access_row{"a 100 KiB path token is cut at max_client_text_bytes", "GET",
                           "/" + std::string(100 * 1024, 'a'), "GET",
                           "/" + std::string(max_client_text_bytes - 1, 'a') + ellipsis +
                               " (+102145 bytes)"},
        hostile_access_row{"a 100 KiB method token is cut", std::string(100 * 1024, 'M'), "/x",
                           std::string(max_client_text_bytes, 'M') + ellipsis + " (+102144 bytes)",
                           "/x"},
        hostile_access_row{"CR LF in the target stay inside the line", "GET",
                           "/a\r\n{\"method\":\"GET\"}", "GET", "/a\r\n{\"method\":\"GET\"}"}));

TEST(AccessLog, DefaultSinkIsTheApplicationLogger) {
  std::vector<std::string> lines;
  application app({.logger = [&](std::string_view l) { lines.emplace_back(l); }});
  app.use(access_log());
  app.get("/x", [](context&) {});
  answer(app, "GET", "/x");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"status\":200"), std::string::npos);
}

// Every field of the default line, for each outcome the application answers.
enum class logged_bytes { body, zero, null };

struct access_field_row {
  const char* rule;
  const char* method;
  const char* target;
  int status;
  const char* route;  // nullptr: JSON null
  logged_bytes bytes;
};

class AccessLogFields : public ::testing::TestWithParam<access_field_row> {};

bool is_rfc3339_utc_micros(const std::string& t) {
  // YYYY-MM-DDTHH:MM:SS.uuuuuuZ
  if (t.size() != 27) return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    char want = i == 4 || i == 7 ? '-' : i == 10 ? 'T' : i == 13 || i == 16 ? ':'
              : i == 19 ? '.' : i == 26 ? 'Z' : '9';
    if (want == '9' ? !std::isdigit(static_cast<unsigned char>(t[i])) : t[i] != want) return false;
  }
  return true;
}

// The UTC time now as the log writes it, to the second, from the clock the log reads:
// time() reads the kernel's coarse clock, which may still be in the previous second for a
// tick after system_clock has moved on (a failure seen in CI at 01:39:13.0018).
std::string utc_second_now() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[20];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  return text;
}

TEST_P(AccessLogFields, EachOutcomeHasEveryField) {
  const access_field_row& row = GetParam();
  std::vector<std::string> lines;
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.sink = [&](std::string_view l) { lines.emplace_back(l); }}));
  app.use(request_id());
  app.use(waypoint::app::tracing());
  app.get("/users/{id}", [](context& ctx) { ctx.response().body("user 7"); });
  app.get("/dir/", [](context& ctx) { ctx.response().body("dir"); });
  app.get("/boom", [](context&) { throw std::runtime_error("x"); });
  std::string before = utc_second_now();
  response res = answer(app, make_request(row.method, row.target,
                           {{"User-Agent", "curl/7.88.1"},
                            {"traceparent",
                             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}));
  std::string after = utc_second_now();
  ASSERT_EQ(lines.size(), 1u) << row.rule;
  nlohmann::json entry = nlohmann::json::parse(lines[0], nullptr, false);
  ASSERT_TRUE(entry.is_object()) << lines[0];
  // The default fields, in access_field's order.
  std::size_t at = 0;
  for (const char* key : {"time", "remote", "method", "path", "protocol", "route", "status",
                          "bytes", "duration_us", "user_agent", "request_id", "trace_id"}) {
    std::size_t found = lines[0].find("\"" + std::string(key) + "\":");
    ASSERT_NE(found, std::string::npos) << key << " in " << lines[0];
    EXPECT_GE(found, at) << key << " out of order in " << lines[0];
    at = found;
  }
  EXPECT_EQ(entry.size(), 12u) << lines[0];
  EXPECT_EQ(entry["protocol"], "HTTP/1.1") << "respond()'s requests are HTTP/1.1";
  std::string time = entry["time"];
  EXPECT_TRUE(is_rfc3339_utc_micros(time)) << time;
  EXPECT_TRUE(time.substr(0, 19) == before || time.substr(0, 19) == after) << time;
  EXPECT_TRUE(entry["remote"].is_null()) << "respond() has no connection";
  EXPECT_EQ(entry["method"], row.method) << row.rule;
  EXPECT_EQ(entry["status"], row.status) << row.rule;
  if (row.route)
    EXPECT_EQ(entry["route"], row.route) << row.rule;
  else
    EXPECT_TRUE(entry["route"].is_null()) << row.rule;
  switch (row.bytes) {
    case logged_bytes::body:
      EXPECT_EQ(entry["bytes"], res.body().size()) << row.rule;
      EXPECT_GT(res.body().size(), 0u) << row.rule;
      break;
    case logged_bytes::zero:  // a redirect's note is added after every layer has run
      EXPECT_EQ(entry["bytes"], 0) << row.rule;
      break;
    case logged_bytes::null:  // the answer to an exception is written outside the layer
      EXPECT_TRUE(entry["bytes"].is_null()) << row.rule;
      break;
  }
  EXPECT_EQ(entry["user_agent"], "curl/7.88.1") << row.rule;
  EXPECT_EQ(entry["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736") << row.rule;
  EXPECT_EQ(entry["request_id"].get<std::string>().size(), 16u) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AccessLogFields,
    ::testing::Values(
        access_field_row{"match", "GET", "/users/7", 200, "GET /users/{id}", logged_bytes::body},
        access_field_row{"404", "GET", "/nothing", 404, nullptr, logged_bytes::body},
        access_field_row{"405", "DELETE", "/users/7", 405, nullptr, logged_bytes::body},
        access_field_row{"redirect to the subtree", "GET", "/dir", 307, nullptr, logged_bytes::zero},
        access_field_row{"400 from the router", "GET", "/users/1?token=s3cret#top", 400, nullptr, logged_bytes::body},
        access_field_row{"500 from an exception", "GET", "/boom", 500, "GET /boom", logged_bytes::null}));

TEST(AccessLog, FieldsAreSelectableAndOrdered) {
  std::vector<std::string> lines;
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.sink = [&](std::string_view l) { lines.emplace_back(l); },
                      .fields = {access_field::status, access_field::route, access_field::trace_id}}));
  app.get("/x", [](context&) {});
  answer(app, "GET", "/x");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], R"({"status":200,"route":"GET /x","trace_id":null})");
}

// The descriptor sink: each line and its newline in one write(2), readable from a pipe.
TEST(AccessLog, DescriptorSinkWritesWholeLines) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.fd = fds[1], .fields = {access_field::method, access_field::status}}));
  app.get("/x", [](context&) {});
  answer(app, "GET", "/x");
  answer(app, "POST", "/x");
  close(fds[1]);
  std::string text;
  char buffer[256];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(fds[0]);
  EXPECT_EQ(text, "{\"method\":\"GET\",\"status\":200}\n{\"method\":\"POST\",\"status\":405}\n");
}

// Over a real connection the remote address is the client's.
TEST(AccessLog, RemoteIsThePeerAddress) {
  std::vector<std::string> lines;
  std::mutex mutex;
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.sink = [&](std::string_view l) {
                        std::lock_guard lock(mutex);
                        lines.emplace_back(l);
                      },
                      .fields = {access_field::remote, access_field::bytes}}));
  app.get("/x", [](context& ctx) { ctx.response().body("12345"); });
  waypoint::beast::server_options options = loopback_options();
  waypoint::beast::server server(options, dispatch_to(app));
  server.start();
  exchange(server.endpoints().front().port, {make_request("GET", "/x")});
  server.stop();
  server.wait();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], R"({"remote":"127.0.0.1","bytes":5})");
}

// --- access_log to a descriptor over a server: lines gathered per loop pass -----------

// A pipe whose reading end a thread drains while the test runs, as a log collector would:
// the server's writes never wait for a full pipe, and lines split by a write would show.
class drained_pipe {
 public:
  drained_pipe() {
    if (::pipe(fds_) != 0) throw std::runtime_error("pipe");
    reader_ = std::thread([this] {
      char buffer[8192];
      for (ssize_t n; (n = ::read(fds_[0], buffer, sizeof buffer)) > 0;) text_.append(buffer, n);
    });
  }
  ~drained_pipe() {
    if (fds_[1] >= 0) finish();
    ::close(fds_[0]);
  }
  int write_end() const { return fds_[1]; }
  // Closes the writing end and returns everything written to it.
  std::string finish() {
    ::close(fds_[1]);
    fds_[1] = -1;
    reader_.join();
    return text_;
  }

 private:
  int fds_[2];
  std::thread reader_;
  std::string text_;
};

// Sends `count` GETs of `target_of(i)` on one connection in a single write (pipelined, the
// last one closing the connection) and reads until the server closes it; returns how many
// 200 answers came back.
template <class Target>
int pipelined_gets(std::uint16_t port, int count, Target target_of) {
  std::string requests;
  for (int i = 0; i < count; ++i) {
    requests += "GET " + target_of(i) + " HTTP/1.1\r\nHost: t\r\n";
    if (i + 1 == count) requests += "Connection: close\r\n";
    requests += "\r\n";
  }
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(s);
    return -1;
  }
  std::string answers;
  std::thread sender([&] {
    for (std::size_t sent = 0; sent < requests.size();) {
      ssize_t n = ::send(s, requests.data() + sent, requests.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
  });
  char buffer[16384];
  for (ssize_t n; (n = ::recv(s, buffer, sizeof buffer, 0)) > 0;) answers.append(buffer, n);
  sender.join();
  ::close(s);
  int ok = 0;
  for (std::size_t at = 0; (at = answers.find("HTTP/1.1 200 ", at)) != std::string::npos; ++at)
    ++ok;
  return ok;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

struct gathered_row {
  const char* rule;
  unsigned threads;
  int connections;
  int requests_per_connection;
  std::size_t padding;  // path bytes added to each request (longer lines)
};

class AccessLogToDescriptor : public ::testing::TestWithParam<gathered_row> {};

// Whatever the batching, every request has its line, whole, and the lines of one
// connection (one thread) keep their order; all of them are out when the server has stopped.
TEST_P(AccessLogToDescriptor, LinesAreWholeInOrderAndAllOutAtStop) {
  const gathered_row& row = GetParam();
  drained_pipe log;
  application app({.logger = [](std::string_view) {}});
  app.use(
      access_log({.fd = log.write_end(), .fields = {access_field::path, access_field::status}}));
  app.get("/seq/{connection}/{i}/{pad}", [](context& ctx) { ctx.response().body("ok"); });
  waypoint::beast::server_options options = loopback_options();
  options.threads = row.threads;
  std::string pad(row.padding + 1, 'p');
  std::vector<int> answered(row.connections);
  {
    waypoint::beast::server server(options, dispatch_to(app));
    server.start();
    std::uint16_t port = server.endpoints().front().port;
    std::vector<std::thread> clients;
    for (int c = 0; c < row.connections; ++c)
      clients.emplace_back([&, c] {
        answered[c] = pipelined_gets(port, row.requests_per_connection, [&](int i) {
          return "/seq/" + std::to_string(c) + "/" + std::to_string(i) + "/" + pad;
        });
      });
    for (std::thread& t : clients) t.join();
    server.stop();
    server.wait();
  }
  std::string text = log.finish();
  for (int c = 0; c < row.connections; ++c)
    ASSERT_EQ(answered[c], row.requests_per_connection) << row.rule << ": connection " << c;
  ASSERT_FALSE(text.empty()) << row.rule;
  EXPECT_EQ(text.back(), '\n') << row.rule;
  std::map<int, int> next_of_connection;
  std::size_t count = 0;
  for (const std::string& line : split_lines(text)) {
    int c = -1, i = -1;
    char tail[8] = {};
    // The clipped path may end in the clip's mark; the prefix carries the sequence.
    ASSERT_EQ(std::sscanf(line.c_str(), "{\"path\":\"/seq/%d/%d/%7[p]", &c, &i, tail), 3)
        << row.rule << ": a broken line: " << line.substr(0, 120);
    EXPECT_NE(line.find("\",\"status\":200}"), std::string::npos) << row.rule << ": " << line;
    EXPECT_EQ(line.back(), '}') << row.rule;
    EXPECT_EQ(i, next_of_connection[c]++) << row.rule << ": connection " << c << " out of order";
    ++count;
  }
  EXPECT_EQ(count, static_cast<std::size_t>(row.connections * row.requests_per_connection))
      << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AccessLogToDescriptor,
    ::testing::Values(gathered_row{"one connection, requests in one pass", 1, 1, 50, 0},
                      gathered_row{"several connections on one thread", 1, 6, 200, 0},
                      gathered_row{"several connections on several threads", 3, 8, 200, 0},
                      // 400 lines of ~300 bytes in a read: past the 32 KiB at which a pass's lines
                      // are written without waiting, and many PIPE_BUF writes.
                      gathered_row{"a pass past the flush threshold", 1, 1, 400, 240},
                      gathered_row{"long lines on several threads", 2, 4, 300, 240}));

// A line longer than PIPE_BUF (a long route pattern is logged whole) is written alone,
// whole, between the short lines around it.
TEST(AccessLog, LineLongerThanPipeBufIsWrittenWhole) {
  drained_pipe log;
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.fd = log.write_end(), .fields = {access_field::route}}));
  std::string long_path = "/long/" + std::string(6000, 'x');
  app.get(long_path, [](context&) {});
  app.get("/short/{i}", [](context&) {});
  {
    loopback_server server(app);
    std::vector<request> requests;
    for (int i = 0; i < 9; ++i)
      requests.push_back(
          make_request("GET", i % 3 == 1 ? long_path : "/short/" + std::to_string(i)));
    exchange(server.port(), requests);
  }  // stops and waits
  std::vector<std::string> lines = split_lines(log.finish());
  ASSERT_EQ(lines.size(), 9u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string expected =
        i % 3 == 1 ? "{\"route\":\"GET " + long_path + "\"}" : "{\"route\":\"GET /short/{i}\"}";
    EXPECT_EQ(lines[i], expected) << "line " << i;
  }
}

struct immediate_row {
  const char* rule;
  const char* target;
};

class AccessLogUnderRespond : public ::testing::TestWithParam<immediate_row> {};

// Without a server's loop the line is written by the time respond() returns: at once for a
// synchronous answer, and for one that waited (respond() ran its own io_context) when that
// io_context ends with the flush still queued.
TEST_P(AccessLogUnderRespond, LineIsOutWhenRespondReturns) {
  const immediate_row& row = GetParam();
  drained_pipe log;
  application app({.logger = [](std::string_view) {}});
  app.use(
      access_log({.fd = log.write_end(), .fields = {access_field::path, access_field::status}}));
  app.get("/sync", [](context&) {});
  app.get("/waits", [](context&) -> awaitable<void> {
    co_await boost::asio::post(co_await boost::asio::this_coro::executor,
                               boost::asio::use_awaitable);
  });
  answer(app, "GET", row.target);
  answer(app, "GET", row.target);
  EXPECT_EQ(log.finish(), "{\"path\":\"" + std::string(row.target) + "\",\"status\":200}\n" +
                              "{\"path\":\"" + std::string(row.target) + "\",\"status\":200}\n")
      << row.rule;
}

INSTANTIATE_TEST_SUITE_P(Rows, AccessLogUnderRespond,
                         ::testing::Values(immediate_row{"synchronous handler", "/sync"},
                                           immediate_row{"handler that suspends", "/waits"}));

// The sink is unchanged by the descriptor's batching: called once per request, on its
// thread, before its response goes out.
TEST(AccessLog, SinkSeesEachLineBeforeItsResponse) {
  std::vector<std::string> lines;
  std::mutex mutex;
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.sink =
                          [&](std::string_view l) {
                            std::lock_guard lock(mutex);
                            lines.emplace_back(l);
                          },
                      .fields = {access_field::path}}));
  app.get("/n/{i}", [](context&) {});
  loopback_server server(app);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
  boost::beast::flat_buffer buffer;
  for (int i = 0; i < 20; ++i) {
    request req = make_request("GET", "/n/" + std::to_string(i));
    req.prepare_payload();
    http::write(socket, req);
    response res;
    http::read(socket, buffer, res);
    std::lock_guard lock(mutex);
    ASSERT_EQ(lines.size(), static_cast<std::size_t>(i + 1));
    EXPECT_EQ(lines.back(), "{\"path\":\"/n/" + std::to_string(i) + "\"}");
  }
}

// --- cors ---------------------------------------------------------------------------

struct cors_row {
  const char* rule;
  const char* method;
  const char* target;
  std::vector<header_field> headers;
  unsigned status;
  const char* allow_origin;   // "" when absent
  const char* allow_methods;  // "" when absent
  const char* allow_headers;  // "" when absent
};

class Cors : public ::testing::TestWithParam<cors_row> {};

TEST_P(Cors, AnswersPreflightsAndMarksResponses) {
  const cors_row& row = GetParam();
  application app;
  app.use(cors({.origins = {"https://app.example.com"},
                .max_age = std::chrono::seconds(60),
                .skip_paths = {"/metrics", "/internal/"}}));
  app.get("/items/{id}", [](context& ctx) { ctx.response().body("item"); });
  app.get("/metrics", [](context& ctx) { ctx.response().body("up 1"); });
  app.get("/metrics/more", [](context& ctx) { ctx.response().body("more"); });
  app.get("/internal/{name}", [](context& ctx) { ctx.response().body("internal"); });
  app.put("/items/{id}", [](context& ctx) { ctx.response().body("put"); });
  app.get("/own", [](context&) {});
  app.handle("OPTIONS /own", [](context& ctx) { ctx.response().body("own"); });
  app.handle("/any", [](context&) {});
  app.get("/fail", [](context&) { throw waypoint::http_error(403, "no"); });
  request req = make_request(row.method, row.target);
  for (const header_field& h : row.headers) req.set(h.name, h.value);
  response res = app.respond(req);
  EXPECT_EQ(res.result_int(), row.status) << row.rule;
  EXPECT_EQ(field(res, "Access-Control-Allow-Origin"), row.allow_origin) << row.rule;
  EXPECT_EQ(field(res, "Access-Control-Allow-Methods"), row.allow_methods) << row.rule;
  EXPECT_EQ(field(res, "Access-Control-Allow-Headers"), row.allow_headers) << row.rule;
  if (*row.allow_origin) {
    EXPECT_EQ(field(res, "Vary"), "Origin") << row.rule;
  }
  if (*row.allow_methods) {
    EXPECT_EQ(field(res, "Access-Control-Max-Age"), "60") << row.rule;
  }
}

const std::string app_origin = "https://app.example.com";

INSTANTIATE_TEST_SUITE_P(
    Rows, Cors,
    ::testing::Values(cors_row{"preflight without an OPTIONS route is answered",
                               "OPTIONS",
                               "/items/1",
                               {{"Origin", app_origin},
                                {"Access-Control-Request-Method", "PUT"},
                                {"Access-Control-Request-Headers", "content-type"}},
                               204,
                               "https://app.example.com",
                               "GET, HEAD, PUT",
                               "content-type"},
                      cors_row{"preflight the path's OPTIONS route matches lists all its methods",
                               "OPTIONS",
                               "/own",
                               {{"Origin", app_origin}, {"Access-Control-Request-Method", "GET"}},
                               204,
                               "https://app.example.com",
                               "GET, HEAD, OPTIONS",
                               ""},
                      cors_row{"preflight to a route of every method allows the asked method",
                               "OPTIONS",
                               "/any",
                               {{"Origin", app_origin}, {"Access-Control-Request-Method", "PATCH"}},
                               204,
                               "https://app.example.com",
                               "PATCH",
                               ""},
                      cors_row{"preflight from another origin is a plain OPTIONS",
                               "OPTIONS",
                               "/items/1",
                               {{"Origin", "https://evil.example"},
                                {"Access-Control-Request-Method", "PUT"}},
                               204,
                               "",
                               "",
                               ""},
                      cors_row{"preflight to a path without routes is a 404",
                               "OPTIONS",
                               "/nothing",
                               {{"Origin", app_origin}, {"Access-Control-Request-Method", "GET"}},
                               404,
                               "",
                               "",
                               ""},
                      cors_row{"simple request gets the origin",
                               "GET",
                               "/items/1",
                               {{"Origin", app_origin}},
                               200,
                               "https://app.example.com",
                               "",
                               ""},
                      cors_row{"error responses keep the origin",
                               "GET",
                               "/fail",
                               {{"Origin", app_origin}},
                               403,
                               "https://app.example.com",
                               "",
                               ""},
                      cors_row{"no Origin: not CORS", "GET", "/items/1", {}, 200, "", "", ""},
                      cors_row{"plain OPTIONS (no request method) is not a preflight",
                               "OPTIONS",
                               "/items/1",
                               {{"Origin", app_origin}},
                               204,
                               "https://app.example.com",
                               "",
                               ""},
                      cors_row{"a skipped path gets no origin", "GET", "/metrics",
                               {{"Origin", app_origin}}, 200, "", "", ""},
                      cors_row{"a skipped path's preflight is a plain OPTIONS",
                               "OPTIONS",
                               "/metrics",
                               {{"Origin", app_origin}, {"Access-Control-Request-Method", "GET"}},
                               204,
                               "",
                               "",
                               ""},
                      cors_row{"a skipped prefix covers the paths under it", "GET",
                               "/internal/keys", {{"Origin", app_origin}}, 200, "", "", ""},
                      cors_row{"a skipped path escaped is skipped as the route it reaches", "GET",
                               "/%6Detrics", {{"Origin", app_origin}}, 200, "", "", ""},
                      cors_row{"a skipped prefix escaped is skipped too", "GET",
                               "/internal/%6Beys", {{"Origin", app_origin}}, 200, "", "", ""},
                      cors_row{"a skipped path is not a prefix of another", "GET",
                               "/metrics/more", {{"Origin", app_origin}}, 200,
                               "https://app.example.com", "", ""}));

struct preflight_row {
  const char* rule;
  const char* target;
  const char* host;
  const char* asked;    // Access-Control-Request-Method
  const char* allowed;  // Access-Control-Allow-Methods
};

class PreflightMethods : public ::testing::TestWithParam<preflight_row> {};

// Without configured methods a preflight allows what the router says the path serves
// (router::methods_at), whatever the preflight's own OPTIONS matched.
TEST_P(PreflightMethods, AreTheMethodsTheRouterServesAtThePath) {
  const preflight_row& row = GetParam();
  application app;
  app.use(cors());
  app.get("/items/{id}", [](context&) {});
  app.put("/items/{id}", [](context&) {});
  app.del("/items/{id}", [](context&) {});
  app.get("/own", [](context&) {});
  app.handle("OPTIONS /own", [](context& ctx) { ctx.response().body("own"); });
  app.handle("/any", [](context&) {});
  app.handle("/mixed", [](context&) {});
  app.post("/mixed", [](context&) {});
  app.group("api.example.com").get("/h", [](context&) {});
  app.post("/h", [](context&) {});
  app.freeze();
  request req = make_request("OPTIONS", row.target,
                             {{"Host", row.host},
                              {"Origin", "https://a.example"},
                              {"Access-Control-Request-Method", row.asked}});
  response res = app.respond(req);
  EXPECT_EQ(res.result_int(), 204u) << row.rule;
  EXPECT_EQ(field(res, "Access-Control-Allow-Methods"), row.allowed) << row.rule;
  waypoint::path_methods served = app.router().methods_at(row.target, row.host);
  EXPECT_EQ(served.any ? std::string(row.asked) : served.named.to_string(), row.allowed)
      << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, PreflightMethods,
    ::testing::Values(
        preflight_row{"a path with several methods", "/items/7", "example.com", "PUT",
                      "DELETE, GET, HEAD, PUT"},
        preflight_row{"a path with an OPTIONS route of its own", "/own", "example.com", "GET",
                      "GET, HEAD, OPTIONS"},
        preflight_row{"a method-less route allows the asked method", "/any", "example.com",
                      "PATCH", "PATCH"},
        preflight_row{"a method-less route beside a method route", "/mixed", "example.com",
                      "DELETE", "DELETE"},
        preflight_row{"a host's routes and the host-less ones", "/h", "api.example.com", "POST",
                      "GET, HEAD, POST"},
        preflight_row{"other hosts only the host-less ones", "/h", "example.com", "POST",
                      "POST"}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

TEST(Cors, AnyOriginWithoutCredentialsAnswersStar) {
  application app;
  app.use(cors());
  app.post("/x", [](context&) {});
  request req =
      make_request("OPTIONS", "/x",
                   {{"Origin", "https://a.example"}, {"Access-Control-Request-Method", "POST"}});
  response res = app.respond(req);
  EXPECT_EQ(res.result_int(), 204u);
  EXPECT_EQ(field(res, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(field(res, "Access-Control-Allow-Methods"), "POST");
}

TEST(Cors, ConfiguredMethodsHeadersAndCredentials) {
  application app;
  app.use(cors({.origins = {"*"},
                .methods = {"GET", "POST"},
                .headers = {"Authorization", "Content-Type"},
                .expose_headers = {"X-Request-Id"},
                .credentials = true}));
  app.get("/x", [](context&) {});
  response pre = app.respond(
      make_request("OPTIONS", "/x",
                   {{"Origin", "https://a.example"}, {"Access-Control-Request-Method", "GET"}}));
  EXPECT_EQ(field(pre, "Access-Control-Allow-Origin"),
            "https://a.example");  // never * with credentials
  EXPECT_EQ(field(pre, "Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(field(pre, "Access-Control-Allow-Methods"), "GET, POST");
  EXPECT_EQ(field(pre, "Access-Control-Allow-Headers"), "Authorization, Content-Type");
  response simple = app.respond(make_request("GET", "/x", {{"Origin", "https://a.example"}}));
  EXPECT_EQ(field(simple, "Access-Control-Expose-Headers"), "X-Request-Id");
}

}  // namespace
