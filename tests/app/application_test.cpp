// application.hpp: registration, group composition, conflicts, the answers to requests no
// route serves (404, 405, automatic OPTIONS, redirects, 400), HEAD, and exceptions.
#include "app_test_support.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/typed/json.hpp>

#include <gtest/gtest.h>
#include <exchange_harness.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

handler says(std::string text) {
  return [text](context& ctx) { ctx.response().body(text); };
}

std::vector<std::string> registered_patterns(const application& app) {
  std::vector<std::string> out;
  for (const auto& r : app.router().routes()) out.emplace_back(r.pattern.text());
  return out;
}

// --- composition --------------------------------------------------------------------

struct composition_row {
  const char* rule;
  const char* group_prefix;  // nullptr: register on the application
  const char* method;        // "" for handle()
  const char* pattern;
  const char* composed;
};

class Composition : public ::testing::TestWithParam<composition_row> {};

TEST_P(Composition, GroupPrefixComposesWithRoutePattern) {
  const composition_row& row = GetParam();
  application app;
  auto add = [&](route_scope& scope) {
    std::string m = row.method;
    if (m.empty())
      scope.handle(row.pattern, says("x"));
    else if (m == "GET")
      scope.get(row.pattern, says("x"));
    else if (m == "POST")
      scope.post(row.pattern, says("x"));
    else if (m == "PUT")
      scope.put(row.pattern, says("x"));
    else if (m == "PATCH")
      scope.patch(row.pattern, says("x"));
    else if (m == "DELETE")
      scope.del(row.pattern, says("x"));
  };
  if (row.group_prefix) {
    route_group g = app.group(row.group_prefix);
    add(g);
  } else {
    add(app);
  }
  EXPECT_EQ(registered_patterns(app), std::vector<std::string>{row.composed}) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Composition,
    ::testing::Values(
        composition_row{"host and path prefix", "api.example.com/v1", "GET", "/users/{id}",
                        "GET api.example.com/v1/users/{id}"},
        composition_row{"trailing slash of a prefix is dropped", "/v1/", "GET", "/users",
                        "GET /v1/users"},
        composition_row{"empty pattern is the prefix itself", "/v1", "POST", "", "POST /v1"},
        composition_row{"method in the prefix", "GET /admin", "", "/stats", "GET /admin/stats"},
        composition_row{"same method twice is fine", "GET /admin", "GET", "/stats",
                        "GET /admin/stats"},
        composition_row{"host-only prefix", "example.com", "GET", "/x", "GET example.com/x"},
        composition_row{"empty prefix", "", "GET", "/x", "GET /x"},
        composition_row{"root prefix", "/", "DELETE", "/x/{id}", "DELETE /x/{id}"},
        composition_row{"handle() keeps the pattern's method", "/v1", "", "PUT /x", "PUT /v1/x"},
        composition_row{"handle() without method serves every method", "/v1", "", "/x", "/v1/x"},
        composition_row{"route host inside a host-less group", "/v1", "GET", "a.example.com/x",
                        "GET a.example.com/v1/x"},
        composition_row{"wildcards in the prefix", "/users/{id}", "GET", "/posts",
                        "GET /users/{id}/posts"},
        composition_row{"on the application, the method is prepended", nullptr, "PATCH", "/x",
                        "PATCH /x"},
        composition_row{"on the application, the pattern's own method may repeat", nullptr, "GET",
                        "GET /x", "GET /x"},
        composition_row{"trailing slash route keeps the prefix match", "/static", "GET", "/",
                        "GET /static/"}));

TEST(Composition, NestedGroupsComposeEveryLevel) {
  application app;
  auto v1 = app.group("api.example.com/v1");
  auto users = v1.group("/users");
  users.get("/{id}", says("x"));
  users.group("GET /{id}/posts").handle("/{post}", says("x"));
  EXPECT_EQ(registered_patterns(app),
            (std::vector<std::string>{"GET api.example.com/v1/users/{id}",
                                      "GET api.example.com/v1/users/{id}/posts/{post}"}));
}

struct refusal_row {
  const char* rule;
  std::function<void(application&)> registration;
};

class CompositionRefusal : public ::testing::TestWithParam<refusal_row> {};

TEST_P(CompositionRefusal, ThrowsPatternError) {
  application app;
  EXPECT_THROW(GetParam().registration(app), waypoint::pattern_error) << GetParam().rule;
  EXPECT_EQ(app.router().size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, CompositionRefusal,
    ::testing::Values(refusal_row{"get() with another method in the pattern",
                                  [](application& a) { a.get("POST /x", says("x")); }},
                      refusal_row{
                          "a route method other than the group's",
                          [](application& a) { a.group("GET /admin").post("/x", says("x")); }},
                      refusal_row{"a nested group method other than the outer's",
                                  [](application& a) { a.group("GET /a").group("POST /b"); }},
                      refusal_row{"a route host inside a group with another host",
                                  [](application& a) {
                                    a.group("a.example.com/v1").get("b.example.com/x", says("x"));
                                  }},
                      refusal_row{"a malformed prefix fails when the group is made",
                                  [](application& a) { a.group("/v1/{id"); }},
                      refusal_row{"a prefix ending in a rest wildcard can take no route",
                                  [](application& a) { a.group("/files/{path...}"); }},
                      refusal_row{"a route path without a leading slash",
                                  [](application& a) { a.group("/v1").get("users", says("x")); }},
                      refusal_row{"an empty pattern on the application",
                                  [](application& a) { a.get("", says("x")); }}));

TEST(Conflict, GroupRouteConflictNamesBothComposedPatterns) {
  application app;
  app.get("/v1/users/{id}", says("by id"));
  auto users = app.group("/v1/users");
  try {
    users.get("/{name}", says("by name"));
    FAIL() << "expected a conflict";
  } catch (const waypoint::conflict_error& e) {
    EXPECT_EQ(e.added(), "GET /v1/users/{name}");
    EXPECT_EQ(e.existing(), "GET /v1/users/{id}");
    EXPECT_TRUE(e.equivalent());
  }
  EXPECT_EQ(app.router().size(), 1u);
}

TEST(Conflict, OverlappingGroupsConflictLikePlainRoutes) {
  application app;
  app.group("/a").get("/{x}/b", says("1"));
  EXPECT_THROW(app.group("/a").get("/c/{y}", says("2")), waypoint::conflict_error);
}

TEST(Registration, AfterFreezeIsRefused) {
  application app;
  app.get("/x", says("x"));
  app.freeze();
  EXPECT_THROW(app.get("/y", says("y")), std::logic_error);
  EXPECT_THROW(app.use(layer_hooks{[](context&) { return true; }}), std::logic_error);
  EXPECT_THROW(app.group("/g"), std::logic_error);
}

TEST(Registration, FirstRespondFreezes) {
  application app;
  app.get("/x", says("x"));
  EXPECT_NO_THROW(app.get("/y", says("y")));
  answer(app, "GET", "/x");
  EXPECT_THROW(app.get("/z", says("z")), std::logic_error);
}

// --- routed answers -----------------------------------------------------------------

struct routing_row {
  const char* rule;
  const char* method;
  const char* target;
  const char* host;
  int status;
  const char* body;  // the route's text; "" to skip the check
};

class Routing : public ::testing::TestWithParam<routing_row> {};

TEST_P(Routing, MostSpecificRouteAnswers) {
  const routing_row& row = GetParam();
  application app;
  app.get("/users/{id}", says("user by id"));
  app.get("/users/me", says("me"));
  app.post("/users", says("create"));
  app.handle("/any", says("any method"));
  app.group("api.example.com/v1").get("/status", says("api status"));
  app.get("/v1/status", says("plain status"));
  response res = app.respond(make_request(row.method, row.target, {{"Host", row.host}}));
  EXPECT_EQ(res.result_int(), static_cast<unsigned>(row.status)) << row.rule;
  if (*row.body) {
    EXPECT_EQ(res.body(), row.body) << row.rule;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Routing,
    ::testing::Values(routing_row{"literal beats wildcard", "GET", "/users/me", "example.com", 200,
                                  "me"},
                      routing_row{"wildcard", "GET", "/users/42", "example.com", 200, "user by id"},
                      routing_row{"method route", "POST", "/users", "example.com", 200, "create"},
                      routing_row{"any-method route takes every method", "DELETE", "/any",
                                  "example.com", 200, "any method"},
                      routing_row{"any-method route takes OPTIONS too", "OPTIONS", "/any",
                                  "example.com", 200, "any method"},
                      routing_row{"host group wins for its host", "GET", "/v1/status",
                                  "api.example.com", 200, "api status"},
                      routing_row{"host with a port", "GET", "/v1/status", "api.example.com:8443",
                                  200, "api status"},
                      routing_row{"other hosts get the host-less route", "GET", "/v1/status",
                                  "example.com", 200, "plain status"},
                      routing_row{"query does not take part in routing", "GET", "/users/me?x=1",
                                  "example.com", 200, "me"}));

// --- unrouted answers ---------------------------------------------------------------

struct unrouted_row {
  const char* rule;
  const char* method;
  const char* target;
  int status;
  const char* allow;     // expected Allow, "" when absent
  const char* location;  // expected Location, "" when absent
  bool problem;          // body is a problem document with this status
};

class Unrouted : public ::testing::TestWithParam<unrouted_row> {};

TEST_P(Unrouted, AnswersWithStatusAndHeaders) {
  const unrouted_row& row = GetParam();
  application app;
  app.get("/items/{id}", says("item"));
  app.put("/items/{id}", says("put"));
  app.get("/dir/", says("dir"));
  app.handle("OPTIONS /custom", says("custom options"));
  app.get("/custom", says("custom"));
  response res = answer(app, row.method, row.target);
  EXPECT_EQ(res.result_int(), static_cast<unsigned>(row.status)) << row.rule;
  EXPECT_EQ(field(res, "Allow"), row.allow) << row.rule;
  EXPECT_EQ(field(res, "Location"), row.location) << row.rule;
  if (row.problem) {
    EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << row.rule;
    nlohmann::json doc = body_json(res);
    EXPECT_EQ(doc.value("status", 0), row.status) << row.rule;
    EXPECT_EQ(doc.value("type", ""), "about:blank") << row.rule;
    EXPECT_FALSE(doc.value("title", "").empty()) << row.rule;
    EXPECT_FALSE(doc.value("detail", "").empty()) << row.rule;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Unrouted,
    ::testing::Values(
        unrouted_row{"no route: 404 problem", "GET", "/nothing", 404, "", "", true},
        unrouted_row{"wrong method: 405 with Allow naming OPTIONS too", "POST", "/items/1", 405,
                     "GET, HEAD, OPTIONS, PUT", "", true},
        unrouted_row{"OPTIONS without an OPTIONS route: 204 with Allow", "OPTIONS", "/items/1", 204,
                     "GET, HEAD, OPTIONS, PUT", "", false},
        unrouted_row{"OPTIONS to a path without routes: 404", "OPTIONS", "/nothing", 404, "", "",
                     true},
        unrouted_row{"an OPTIONS route answers itself", "OPTIONS", "/custom", 200, "", "", false},
        unrouted_row{"trailing-slash redirect keeps the query", "GET", "/dir?x=1&y=2", 307, "",
                     "/dir/?x=1&y=2", false},
        unrouted_row{"unclean path redirect", "GET", "/items/../dir/", 307, "", "/dir/", false},
        unrouted_row{"invalid escape: 400 problem", "GET", "/items/%zz", 400, "", "", true},
        unrouted_row{"asterisk-form target: 400 problem", "OPTIONS", "*", 400, "", "", true},
        unrouted_row{"authority-form target: 400 problem", "GET", "example.com:443", 400, "", "",
                     true}));

TEST(Unrouted, MissingHostIsBadRequest) {
  application app;
  app.get("/x", says("x"));
  request req = make_request("GET", "/x");
  req.erase(http::field::host);
  response res = app.respond(req);
  EXPECT_EQ(res.result_int(), 400u);
  EXPECT_NE(body_json(res).value("detail", "").find("Host"), std::string::npos);
}

TEST(Unrouted, NotFoundHandlerReplacesThe404) {
  application app;
  app.not_found([](context& ctx) { ctx.response().status(404).body("custom 404"); });
  response res = answer(app, "GET", "/nothing");
  EXPECT_EQ(res.result_int(), 404u);
  EXPECT_EQ(res.body(), "custom 404");
}

struct head_row {
  const char* rule;
  const char* target;
  unsigned status;
  const char* content_length;  // "" for the length of the GET answer's body
};

class Head : public ::testing::TestWithParam<head_row> {};

// HEAD is waypoint::beast::finish_body's rule: the length a GET would get, and no body.
TEST_P(Head, AnswersWithTheGetLengthAndNoBody) {
  const head_row& row = GetParam();
  application app;
  app.get("/x", says("twelve bytes"));
  app.handle("HEAD /large", [](context& ctx) { ctx.response().header("Content-Length", "1048576"); });
  app.get("/stated", [](context& ctx) {
    ctx.response().header("Content-Length", "99").body("twelve bytes");
  });
  app.get("/fail", [](context&) { throw waypoint::http_error(409, "already exists"); });
  response res = answer(app, "HEAD", row.target);
  EXPECT_EQ(res.result_int(), row.status) << row.rule;
  std::string expected = *row.content_length
                             ? std::string(row.content_length)
                             : std::to_string(answer(app, "GET", row.target).body().size());
  EXPECT_EQ(field(res, "Content-Length"), expected) << row.rule;
  EXPECT_TRUE(res.body().empty()) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Head,
    ::testing::Values(
        head_row{"a GET route answers HEAD with its body's length", "/x", 200, "12"},
        head_row{"a HEAD route's stated length of a body it does not send is kept", "/large", 200,
                 "1048576"},
        head_row{"a stated length is replaced by the body's", "/stated", 200, "12"},
        head_row{"a problem document's length", "/fail", 409, ""},
        head_row{"a 404's length", "/nothing", 404, ""}));

TEST(NoContent, StatusCarriesNoBodyEvenIfSet) {
  application app;
  app.get("/x", [](context& ctx) { ctx.response().status(204).body("ignored"); });
  for (const char* method : {"GET", "HEAD"}) {
    response res = answer(app, method, "/x");
    EXPECT_EQ(res.result_int(), 204u) << method;
    EXPECT_TRUE(res.body().empty()) << method;
  }
}

// --- exceptions ---------------------------------------------------------------------

struct exception_row {
  const char* rule;
  std::function<void()> thrower;
  int status;
  const char* detail;  // expected detail, or "" for the generic 500 text
  const char* logged;  // a substring of the one log line, nullptr when nothing is logged
};

class Exceptions : public ::testing::TestWithParam<exception_row> {};

TEST_P(Exceptions, BecomeProblemDocuments) {
  const exception_row& row = GetParam();
  std::vector<std::string> log;
  application app({.logger = [&](std::string_view line) { log.emplace_back(line); }});
  app.get("/x", [&](context&) { row.thrower(); });
  response res = answer(app, "GET", "/x");
  EXPECT_EQ(res.result_int(), static_cast<unsigned>(row.status)) << row.rule;
  EXPECT_EQ(field(res, "Content-Type"), "application/problem+json");
  nlohmann::json doc = body_json(res);
  EXPECT_EQ(doc.value("status", 0), row.status);
  if (*row.detail) {
    EXPECT_EQ(doc.value("detail", ""), row.detail) << row.rule;
  }
  EXPECT_EQ(res.body().find("secret"), std::string::npos)
      << "exception text leaked: " << res.body();
  EXPECT_EQ(log.size(), row.logged ? 1u : 0u) << row.rule;
  if (row.logged && !log.empty()) {
    EXPECT_NE(log[0].find(row.logged), std::string::npos) << log[0];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Exceptions,
    ::testing::Values(exception_row{"http_error keeps its status and detail",
                                    [] { throw waypoint::http_error(409, "already exists"); }, 409,
                                    "already exists", nullptr},
                      exception_row{"http_error 503",
                                    [] { throw waypoint::http_error(503, "draining"); }, 503,
                                    "draining", nullptr},
                      exception_row{"std::exception is a logged 500",
                                    [] { throw std::runtime_error("secret database password"); },
                                    500, "", "\"GET /x\" (route \"GET /x\", request id "},
                      exception_row{"a non-std exception is a logged 500", [] { throw 42; }, 500,
                                    "", "not derived from std::exception"},
                      exception_row{"http_error with a non-error status is a logged 500",
                                    [] { throw waypoint::http_error(200, "secret ok"); }, 500, "",
                                    "status 200: secret ok"}));

TEST(Exceptions, HttpErrorPointerBecomesProblemPointer) {
  application app;
  app.get("/x", [](context&) { throw validation_error("must be positive", "/amount"); });
  nlohmann::json doc = body_json(answer(app, "GET", "/x"));
  EXPECT_EQ(doc.value("status", 0), 422);
  EXPECT_EQ(doc.value("pointer", ""), "/amount");
  EXPECT_EQ(doc.value("title", ""), "Unprocessable Content");
}

TEST(Exceptions, ProblemKeepsHeadersSetBeforeTheError) {
  application app;
  app.get("/x", [](context& ctx) {
    ctx.response().header("X-Trace", "t1").header("ETag", "\"v1\"").body("partial", "text/html");
    throw waypoint::http_error(400, "nope");
  });
  response res = answer(app, "GET", "/x");
  EXPECT_EQ(field(res, "X-Trace"), "t1");
  EXPECT_EQ(field(res, "ETag"), "");  // described the abandoned body
  EXPECT_EQ(field(res, "Content-Type"), "application/problem+json");
}

}  // namespace

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

TEST(Concurrency, FrozenApplicationAnswersFromManyThreads) {
  application app;
  app.use(layer_hooks{[](context& ctx) {
    ctx.set(std::string(ctx.path_value("id")));
    return true;
  }});
  app.get("/items/{id}",
          [](context& ctx) { ctx.response().body() = "item " + ctx.get<std::string>(); });
  app.freeze();
  constexpr int threads = 4;
  constexpr int requests = 500;
  std::vector<int> wrong(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&app, &wrong, t] {
      for (int i = 0; i < requests; ++i) {
        std::string id = std::to_string(t * requests + i);
        response res = answer(app, "GET", "/items/" + id);
        if (res.result_int() != 200 || res.body() != "item " + id) ++wrong[t];
      }
    });
  }
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(wrong, std::vector<int>(threads, 0));
}

// --- named routes and url_for (issue 17) -----------------------------------------------

TEST(NamedRoutes, UrlForEscapesEachValueForItsSegmentAndAddsAQuery) {
  application app;
  app.get("/users/{id}", says("u")).describe({.name = "user"});
  auto v1 = app.group("api.example.com/v1");
  v1.get("/files/{path...}", says("f")).describe({.name = "file"});
  EXPECT_EQ(app.url_for("user", {{"id", "42"}}), "/users/42");
  EXPECT_EQ(app.url_for("user", {{"id", "a/b c"}}, {{"tab", "x&y"}}), "/users/a%2Fb%20c?tab=x%26y");
  EXPECT_EQ(app.url_for("file", {{"path", "docs/read me.txt"}}), "/v1/files/docs/read%20me.txt");
  // The built path routes back to the route with the value it was built from.
  response res = app.respond(make_request("GET", app.url_for("user", {{"id", "a/b c"}})));
  EXPECT_EQ(res.body(), "u");
}

TEST(NamedRoutes, UrlForRefusesMissingExtraAndUnknown) {
  application app;
  app.get("/users/{id}", says("u")).describe({.name = "user"});
  EXPECT_THROW(app.url_for("user"), waypoint::url_error);
  EXPECT_THROW(app.url_for("user", {{"id", "1"}, {"x", "2"}}), waypoint::url_error);
  EXPECT_THROW(app.url_for("nobody"), waypoint::url_error);
}

TEST(NamedRoutes, ANameTakenTwiceIsRefusedWithBothRoutesAndSites) {
  application app;
  app.get("/users/{id}", says("u")).describe({.name = "user"});
  try {
    app.get("/people/{id}", says("p")).describe({.name = "user"});
    FAIL() << "the name was taken twice";
  } catch (const waypoint::route_name_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("\"GET /people/{id}\" (at "), std::string::npos) << m;
    EXPECT_NE(m.find("already names \"GET /users/{id}\" (at "), std::string::npos) << m;
    EXPECT_NE(m.find("application_test.cpp:"), std::string::npos) << m;
  }
}

TEST(NamedRoutes, DescribingNeedsARouteAndAnOpenApplication) {
  application app;
  EXPECT_THROW(app.describe({.name = "x"}), std::logic_error);
  app.get("/a/{id}", says("a"));
  EXPECT_THROW(app.path_param<int>("nope"), std::invalid_argument);
  EXPECT_THROW(app.describe({.name = "a"}).describe({.name = "b"}), std::logic_error);
  app.freeze();
  EXPECT_THROW(app.describe({.summary = "late"}), std::logic_error);
}

// --- how a route takes its body (route_scope::body) --------------------------------------

struct body_row {
  const char* rule;
  std::optional<route_body> how;  // nullopt: body() not called
  std::uint64_t max_bytes;        // the plan the server is given (server limit 2,000)
  bool streamed;
};

class RouteBody : public ::testing::TestWithParam<body_row> {};

TEST_P(RouteBody, ThePlanTheServerGets) {
  const body_row& row = GetParam();
  application app;
  app.post("/u", [](context&) -> awaitable<void> { co_return; });
  if (row.how) app.body(*row.how);
  waypoint::beast::server_options server;
  server.max_body_bytes = 2000;
  waypoint::beast::server_options o = options_for(app, server);
  request header(http::verb::post, "/u", 11);
  header.set(http::field::host, "h");
  waypoint::beast::body_plan plan = o.plan_body(header);
  EXPECT_EQ(plan.max_bytes, row.max_bytes) << row.rule;
  EXPECT_EQ(plan.streamed, row.streamed) << row.rule;
  request other(http::verb::post, "/elsewhere", 11);  // unrouted: the server's limit, whole
  other.set(http::field::host, "h");
  EXPECT_EQ(o.plan_body(other).max_bytes, 2000u) << row.rule;
  EXPECT_FALSE(o.plan_body(other).streamed) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, RouteBody,
    ::testing::Values(
        body_row{"without body() the server's limit, read whole", std::nullopt, 2000, false},
        body_row{"max_bytes alone is a limit of the route's own", route_body{.max_bytes = 100},
                 100, false},
        body_row{"a limit above the server's is the route's", route_body{.max_bytes = 1u << 20},
                 1u << 20, false},
        body_row{"streamed without a limit takes up to 1 GiB", route_body{.streamed = true},
                 route_body::default_streamed_limit, true},
        body_row{"streamed with a limit", route_body{.max_bytes = 5, .streamed = true}, 5, true},
        body_row{"an empty route_body leaves the server's limit", route_body{}, 2000, false}));

// --- match storage sized to the request (request_view::fit_match_storage) ---------------

// A context keeps 1 KiB of match storage, enough for a path of 511 bytes; a longer one is
// given a block of its own for the request. Either way the answers are the router's: the
// decoded value, the redirect to the clean path, and 400 past the router's longest path.
struct match_storage_row {
  const char* rule;
  std::string target;
  int status;
  std::string answer;  // the body, or the Location of a redirect
};

class MatchStorage : public ::testing::TestWithParam<match_storage_row> {};

TEST_P(MatchStorage, EveryPathLengthIsAnsweredAsTheRouterAnswersIt) {
  const match_storage_row& row = GetParam();
  application app;
  app.get("/v/{value...}", [](context& ctx) { ctx.response().body() = ctx.path_value("value"); });
  app.get("/q", [](context& ctx) { ctx.response().body() = "q"; });
  response res = answer(app, "GET", row.target);
  EXPECT_EQ(res.result_int(), row.status) << row.rule;
  if (row.status == 308 || row.status == 307)
    EXPECT_EQ(field(res, "Location"), row.answer) << row.rule;
  else if (row.status == 200)
    EXPECT_EQ(res.body(), row.answer) << row.rule;
  else
    EXPECT_NE(res.body().find(row.answer), std::string::npos) << row.rule << ": " << res.body();
}

std::string escaped_spaces(std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += "%20";
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, MatchStorage,
    ::testing::Values(match_storage_row{"a short escaped value, in the context's own storage",
                                        "/v/a%20b", 200, "a b"},
                      match_storage_row{"the longest path the context holds itself (511 bytes)",
                                        "/v/" + escaped_spaces(169) + "a", 200,
                                        std::string(169, ' ') + "a"},
                      match_storage_row{"one byte longer: a block for this request",
                                        "/v/" + escaped_spaces(169) + "ab", 200,
                                        std::string(169, ' ') + "ab"},
                      match_storage_row{"an escaped value of 6,000 bytes",
                                        "/v/" + escaped_spaces(2000), 200, std::string(2000, ' ')},
                      match_storage_row{"a long unclean path is cleaned for its redirect",
                                        "/v/" + std::string(3000, 'x') + "/../y", 307, "/v/y"},
                      match_storage_row{"a long query beside a short path",
                                        "/q?" + std::string(5000, 'k'), 200, "q"},
                      match_storage_row{"past the router's longest path: 400",
                                        "/v/" + std::string(waypoint::max_path_length, 'x'), 400,
                                        "the path is longer than the router accepts"}));

// --- a request with a body is routed once, at its header (plan_body) -------------------

// The server plans a body's request at its header (application::plan_body routes it then)
// and dispatches it once the body is in, handing the plan on (beast::body_plan::planned).
// Each row changes the request's method between the two, which a second match would see:
// POST /u/7 is planned, PUT /u/7 dispatched.
enum class plan_handover { same_request, none, other_application, other_request };

struct planned_row {
  const char* rule;
  plan_handover handover;
  const char* answer;  // the body the dispatch answers with
};

class PlannedRequests : public ::testing::TestWithParam<planned_row> {};

TEST_P(PlannedRequests, TheDispatchAnswersWithThePlanOnlyWhenItIsThisRequests) {
  const planned_row& row = GetParam();
  application app, other;
  for (application* a : {&app, &other}) {
    a->post("/u/{id}", [](context& ctx) {
      ctx.response().body() = "post " + std::string(ctx.path_value("id")) + " " + ctx.body();
    });
    a->put("/u/{id}", [](context& ctx) { ctx.response().body() = "put " + ctx.body(); });
  }
  request req = make_request("POST", "/u/7");
  request elsewhere = make_request("POST", "/u/8");
  waypoint::beast::body_plan plan;
  if (row.handover == plan_handover::same_request) plan = app.plan_body(req, 2000);
  if (row.handover == plan_handover::other_application) plan = other.plan_body(req, 2000);
  if (row.handover == plan_handover::other_request) plan = app.plan_body(elsewhere, 2000);
  EXPECT_EQ(static_cast<bool>(plan.planned), row.handover != plan_handover::none);
  req.method(http::verb::put);
  req.body() = "abc";
  waypoint::testing::exchange_harness connection;
  auto dispatch = dispatch_to(app);
  response res{http::status::ok, 11};
  connection.answer(dispatch, req, res, &plan.planned);
  EXPECT_EQ(res.body(), row.answer) << row.rule;
  // Taken by its own dispatch; another's stays to be dropped by the server (here, by
  // `plan`: the sanitizer build sees a leak or a second drop).
  EXPECT_EQ(static_cast<bool>(plan.planned), row.handover == plan_handover::other_application)
      << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rules, PlannedRequests,
    ::testing::Values(
        planned_row{"the plan of this request is the routing the dispatch answers with",
                    plan_handover::same_request, "post 7 abc"},
        planned_row{"without a plan the dispatch routes the request itself", plan_handover::none,
                    "put abc"},
        planned_row{"another application's plan is left alone", plan_handover::other_application,
                    "put abc"},
        planned_row{"a plan made for another request is dropped, not answered with",
                    plan_handover::other_request, "put abc"}));

// Plans the server never hands to a dispatch (413, the client gone) are dropped with their
// body_plan, however many are alive at once, and the next request is planned afresh. (The
// sanitizer build sees a plan leaked or dropped twice.)
TEST(PlannedRequestsDropped, APlanNobodyTakesIsReleased) {
  application app;
  app.post("/u/{id}",
           [](context& ctx) { ctx.response().body() = std::string(ctx.path_value("id")); });
  {
    request header = make_request("POST", "/u/1");
    std::vector<waypoint::beast::body_plan> alive;
    for (int i = 0; i < 300; ++i) {  // more than a thread's pool keeps
      alive.push_back(app.plan_body(header, 2000));
      EXPECT_TRUE(alive.back().planned);
    }
  }
  request req = make_request("POST", "/u/9");
  waypoint::beast::body_plan plan = app.plan_body(req, 2000);
  waypoint::testing::exchange_harness connection;
  auto dispatch = dispatch_to(app);
  response res{http::status::ok, 11};
  connection.answer(dispatch, req, res, &plan.planned);
  EXPECT_EQ(res.body(), "9");
}

TEST(RouteBodyRefusals, StreamingNeedsACoroutineARouteAndAnOpenApplication) {
  application app;
  EXPECT_THROW(app.body({.max_bytes = 1}), std::logic_error);  // no route yet
  app.post("/sync", says("s"));
  try {
    app.body({.streamed = true});
    ADD_FAILURE() << "a synchronous handler was given a streamed body";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"POST /sync\" streams its body"), std::string::npos)
        << e.what();
  }
  app.body({.max_bytes = 10});  // a limit alone suits any handler
  app.freeze();
  EXPECT_THROW(app.body({.max_bytes = 20}), std::logic_error);
}

}  // namespace
