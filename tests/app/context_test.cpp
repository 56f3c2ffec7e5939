// context.hpp: path values (raw and typed), query decoding, request headers,
// request-scoped values, request ids and the response builder.
#include "app_test_support.hpp"

#include <waypoint/app/typed/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

// --- typed path values --------------------------------------------------------------

struct path_value_row {
  const char* rule;
  const char* target;
  int status;
  const char* body;  // the value as the handler printed it, or a substring of the detail
};

class TypedPathValue : public ::testing::TestWithParam<path_value_row> {};

TEST_P(TypedPathValue, ConvertsOrAnswers400) {
  const path_value_row& row = GetParam();
  application app;
  app.get("/i64/{v}", [](context& ctx) {
    ctx.response().body(std::to_string(ctx.path_value<std::int64_t>("v")));
  });
  app.get("/u8/{v}", [](context& ctx) {
    ctx.response().body(std::to_string(ctx.path_value<std::uint8_t>("v")));
  });
  app.get("/f64/{v}",
          [](context& ctx) { ctx.response().body(std::to_string(ctx.path_value<double>("v"))); });
  app.get("/bool/{v}",
          [](context& ctx) { ctx.response().body(ctx.path_value<bool>("v") ? "yes" : "no"); });
  app.get("/str/{v}", [](context& ctx) { ctx.response().body(ctx.path_value<std::string>("v")); });
  app.get("/raw/{rest...}",
          [](context& ctx) { ctx.response().body(std::string(ctx.path_value("rest"))); });
  response res = answer(app, "GET", row.target);
  EXPECT_EQ(res.result_int(), static_cast<unsigned>(row.status)) << row.rule;
  if (row.status == 200) {
    EXPECT_EQ(res.body(), row.body) << row.rule;
  } else {
    nlohmann::json doc = body_json(res);
    EXPECT_EQ(doc.value("status", 0), 400);
    EXPECT_NE(doc.value("detail", "").find(row.body), std::string::npos) << doc.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, TypedPathValue,
    ::testing::Values(
        path_value_row{"integer", "/i64/42", 200, "42"},
        path_value_row{"negative integer", "/i64/-7", 200, "-7"},
        path_value_row{"not an integer names value and name", "/i64/abc", 400, "path value \"v\""},
        path_value_row{"detail quotes the text", "/i64/abc", 400, "\"abc\""},
        path_value_row{"trailing garbage", "/i64/42x", 400, "42x"},
        path_value_row{"leading plus is not a number", "/i64/+1", 400, "+1"},
        path_value_row{"overflow", "/i64/99999999999999999999", 400, "integer in range"},
        path_value_row{"out of a small type's range", "/u8/256", 400, "256"},
        path_value_row{"negative for unsigned", "/u8/-1", 400, "-1"},
        path_value_row{"small type in range", "/u8/255", 200, "255"},
        path_value_row{"floating point", "/f64/1.5", 200, "1.500000"},
        path_value_row{"floating point refuses text", "/f64/one", 400, "a number"},
        path_value_row{"bool", "/bool/true", 200, "yes"},
        path_value_row{"bool refuses 1", "/bool/1", 400, "true or false"},
        path_value_row{"percent-decoded before conversion", "/i64/%34%32", 200, "42"},
        path_value_row{"string values are decoded", "/str/a%20b", 200, "a b"},
        path_value_row{"rest wildcard", "/raw/a/b/c", 200, "a/b/c"}));

TEST(PathValue, UnknownNameIsA500) {
  std::vector<std::string> log;
  application app({.logger = [&](std::string_view l) { log.emplace_back(l); }});
  app.get("/x/{id}",
          [](context& ctx) { ctx.response().body(std::string(ctx.path_value("nope"))); });
  response res = answer(app, "GET", "/x/1");
  EXPECT_EQ(res.result_int(), 500u);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("no such wildcard"), std::string::npos) << log[0];
}

TEST(PathValue, RoutePatternNamesTheWildcardsAHandlerMayRead) {
  application app;
  const auto has = [](context& ctx, std::string_view name) {  // a handler shared by routes
    return std::ranges::find(ctx.route_pattern().wildcard_names(), name) !=
           ctx.route_pattern().wildcard_names().end();
  };
  app.group("/v1").get("/users/{id}", [&](context& ctx) {
    ctx.response().body(std::string(ctx.route_pattern().text()) + (has(ctx, "id") ? " id" : "") +
                        (has(ctx, "other") ? " other" : ""));
  });
  EXPECT_EQ(answer(app, "GET", "/v1/users/1").body(), "GET /v1/users/{id} id");
}

// --- query --------------------------------------------------------------------------

struct query_row {
  const char* rule;
  const char* query;
  const char* name;
  std::optional<std::string> value;
};

class Query : public ::testing::TestWithParam<query_row> {};

TEST_P(Query, DecodesFirstValueOfName) {
  const query_row& row = GetParam();
  application app;
  bool handled = false;
  std::optional<std::string> seen;
  app.get("/q", [&](context& ctx) {
    handled = true;
    auto v = ctx.query(row.name);
    seen = v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
  });
  std::string target = "/q";
  if (*row.query) target += std::string("?") + row.query;
  answer(app, "GET", target);
  ASSERT_TRUE(handled) << row.rule;  // a nullopt row must not pass by never running
  EXPECT_EQ(seen, row.value) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Query,
    ::testing::Values(query_row{"simple", "a=1&b=2", "b", "2"},
                      query_row{"absent", "a=1", "b", std::nullopt},
                      query_row{"no query", "", "a", std::nullopt},
                      query_row{"plus is a space", "q=hello+world", "q", "hello world"},
                      query_row{"percent escapes", "q=a%26b%3Dc", "q", "a&b=c"},
                      query_row{"escaped plus stays a plus", "q=1%2B1", "q", "1+1"},
                      query_row{"invalid escape kept as is", "q=100%zz", "q", "100%zz"},
                      query_row{"truncated escape kept as is", "q=a%2", "q", "a%2"},
                      query_row{"name without value", "flag&x=1", "flag", ""},
                      query_row{"empty value", "x=", "x", ""},
                      query_row{"first of repeated names", "a=1&a=2", "a", "1"},
                      query_row{"names are decoded", "na%6De=v", "name", "v"},
                      query_row{"empty pieces skipped", "&&a=1&", "a", "1"},
                      query_row{"value holds '='", "a=b=c", "a", "b=c"},
                      query_row{"UTF-8 escapes", "city=K%C3%B6ln", "city", "K\xc3\xb6ln"}));

TEST(Query, ParamsInOrderAndSpillBeyondInlineCapacity) {
  application app;
  std::vector<std::pair<std::string, std::string>> seen;
  app.get("/q", [&](context& ctx) {
    for (const query_param& p : ctx.query()) seen.emplace_back(p.name, p.value);
  });
  std::string target = "/q?";
  std::vector<std::pair<std::string, std::string>> expected;
  for (int i = 0; i < 40; ++i) {  // more than inline_params, and longer than inline_bytes
    std::string name = "name" + std::to_string(i);
    std::string value = std::string(20, static_cast<char>('a' + i % 26));
    target += (i ? "&" : "") + name + "=" + value;
    expected.emplace_back(name, value);
  }
  ASSERT_GT(target.size(), detail::query_index::inline_bytes);
  answer(app, "GET", target);
  EXPECT_EQ(seen, expected);
}

TEST(Query, TypedValueConvertsOrAnswers400) {
  application app;
  app.get("/q", [](context& ctx) {
    auto limit = ctx.query<int>("limit");
    ctx.response().body(limit ? std::to_string(*limit) : "none");
  });
  EXPECT_EQ(answer(app, "GET", "/q?limit=10").body(), "10");
  EXPECT_EQ(answer(app, "GET", "/q").body(), "none");
  response bad = answer(app, "GET", "/q?limit=ten");
  EXPECT_EQ(bad.result_int(), 400u);
  EXPECT_NE(body_json(bad).value("detail", "").find("query parameter \"limit\""),
            std::string::npos);
}

// --- headers and body ---------------------------------------------------------------

TEST(Request, HeadersByNameAndField) {
  application app;
  app.post("/h", [](context& ctx) {
    ctx.response().body(std::string(ctx.header("X-Custom")) + "|" +
                        std::string(ctx.header(http::field::user_agent)) + "|" +
                        std::string(ctx.header("X-Absent")) + "|" + ctx.body() + "|" +
                        std::string(ctx.method()) + "|" + std::string(ctx.path()) + "|" +
                        std::string(ctx.host()) + "|" + std::string(ctx.outcome().query));
  });
  response res = app.respond(make_request(
      "POST", "/h?z=1", {{"x-custom", "v1"}, {"User-Agent", "t/1"}, {"Host", "h:81"}}, "payload"));
  EXPECT_EQ(res.body(), "v1|t/1||payload|POST|/h|h:81|z=1");
}

// --- request-scoped values ----------------------------------------------------------

struct user {
  std::string name;
};
struct tenant {
  int id;
};
struct big_value {
  char bytes[200];
};

TEST(Values, MiddlewareSetsHandlerReads) {
  application app;
  app.use(layer_hooks{[](context& ctx) {
    ctx.set(user{"ada"});
    ctx.set<tenant>(7);
    return true;
  }});
  app.get("/v", [](context& ctx) {
    ctx.response().body(ctx.get<user>().name + "/" + std::to_string(ctx.get<tenant>().id) +
                        (ctx.find<big_value>() ? " big" : " no big"));
  });
  EXPECT_EQ(answer(app, "GET", "/v").body(), "ada/7 no big");
}

TEST(Values, SetReplacesAndLargeValuesWork) {
  application app;
  app.get("/v", [](context& ctx) {
    ctx.set(user{"first"});
    ctx.set(user{"second"});
    big_value& b = ctx.set<big_value>();
    b.bytes[199] = 'z';
    ctx.response().body(ctx.get<user>().name + ctx.get<big_value>().bytes[199]);
  });
  EXPECT_EQ(answer(app, "GET", "/v").body(), "secondz");
}

struct pinned {  // neither copied nor moved: only set<T>(args...) can store it
  explicit pinned(std::string n) : name(std::move(n)) {}
  pinned(const pinned&) = delete;
  pinned& operator=(const pinned&) = delete;
  std::string name;
};

TEST(Values, SetOfATypeBuildsInPlaceAndSetOfAValueCopiesIt) {
  application app;
  app.get("/v", [](context& ctx) {
    ctx.set<pinned>("in place");
    const user kept{"copied"};
    user& copy = ctx.set(kept);  // an lvalue: the stored value is a copy
    copy.name += "!";
    ctx.set<tenant>(tenant{9});  // a T given to set<T>: moved in, as set(value) would
    ctx.response().body(ctx.get<pinned>().name + "/" + kept.name + "/" + ctx.get<user>().name +
                        "/" + std::to_string(ctx.get<tenant>().id));
  });
  EXPECT_EQ(answer(app, "GET", "/v").body(), "in place/copied/copied!/9");
}

TEST(Values, GetWithoutSetIsA500) {
  application app({.logger = [](std::string_view) {}});
  app.get("/v", [](context& ctx) { ctx.response().body(ctx.get<user>().name); });
  EXPECT_EQ(answer(app, "GET", "/v").result_int(), 500u);
}

template <int N>
struct distinct {
  int v = N;
};

TEST(Values, MoreTypesThanSlotsIsA500) {
  application app({.logger = [](std::string_view) {}});
  app.get("/v", [](context& ctx) {
    ctx.set(distinct<0>{});
    ctx.set(distinct<1>{});
    ctx.set(distinct<2>{});
    ctx.set(distinct<3>{});
    ctx.set(distinct<4>{});
    ctx.set(distinct<5>{});
    ctx.set(distinct<6>{});
    ctx.set(distinct<7>{});
    ctx.response().body("eight fit");
    ctx.set(distinct<8>{});
  });
  EXPECT_EQ(answer(app, "GET", "/v").result_int(), 500u);
}

struct counted {
  static inline int alive = 0;
  counted() { ++alive; }
  counted(const counted&) { ++alive; }
  ~counted() { --alive; }
};

TEST(Values, DestroyedWhenTheRequestEnds) {
  application app;
  int alive_in_handler = -1;
  app.get("/v", [&](context& ctx) {
    ctx.set<counted>();
    alive_in_handler = counted::alive;
  });
  EXPECT_EQ(answer(app, "GET", "/v").result_int(), 200u);
  EXPECT_EQ(alive_in_handler, 1);
  EXPECT_EQ(counted::alive, 0);
}

// --- request id ---------------------------------------------------------------------

TEST(RequestId, GeneratedIdsAreSixteenHexDigitsAndDistinct) {
  application app;
  std::vector<std::string> ids;
  app.get("/id", [&](context& ctx) { ids.emplace_back(ctx.request_id()); });
  for (int i = 0; i < 100; ++i) answer(app, "GET", "/id");
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
  for (const std::string& id : ids) {
    EXPECT_EQ(id.size(), 16u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  }
}

TEST(RequestId, IdsGeneratedOnManyThreadsAreDistinctAcrossTheirNumberBlocks) {
  application app;
  std::mutex mutex;
  std::vector<std::string> ids;
  app.get("/id", [&](context& ctx) {
    std::lock_guard lock(mutex);
    ids.emplace_back(ctx.request_id());
  });
  app.freeze();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)  // each thread takes its numbers in blocks of 4,096: two each
    threads.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) answer(app, "GET", "/id");
    });
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(ids.size(), 20000u);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
}

struct request_id_row {
  const char* rule;
  std::string id;
  bool accepted;
};

class RequestIdValidation : public ::testing::TestWithParam<request_id_row> {};

TEST_P(RequestIdValidation, AcceptsOnlySafeIds) {
  const request_id_row& row = GetParam();
  application app;
  bool accepted = false;
  std::string kept;
  app.get("/id", [&](context& ctx) {
    accepted = ctx.request_id(row.id);
    kept = ctx.request_id();
  });
  answer(app, "GET", "/id");
  EXPECT_EQ(accepted, row.accepted) << row.rule;
  if (row.accepted) {
    EXPECT_EQ(kept, row.id);
  } else {
    EXPECT_NE(kept, row.id);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, RequestIdValidation,
    ::testing::Values(request_id_row{"uuid", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", true},
                      request_id_row{"base64 bytes", "ab+/cd==", true},
                      request_id_row{"dots colons underscores", "svc.a:b_c", true},
                      request_id_row{"64 bytes", std::string(64, 'x'), true},
                      request_id_row{"65 bytes", std::string(65, 'x'), false},
                      request_id_row{"empty", "", false}, request_id_row{"space", "a b", false},
                      request_id_row{"quote", "a\"b", false},
                      request_id_row{"CRLF", "a\r\nSet-Cookie: x", false},
                      request_id_row{"non-ASCII", "caf\xc3\xa9", false}));

// --- response builder ---------------------------------------------------------------

TEST(ResponseBuilder, SettersChain) {
  application app;
  app.get("/r", [](context& ctx) {
    ctx.response()
        .status(201)
        .header("X-A", "1")
        .append_header("Vary", "A")
        .append_header("Vary", "B")
        .json({{"ok", true}});
  });
  response res = answer(app, "GET", "/r");
  EXPECT_EQ(res.result_int(), 201u);
  EXPECT_EQ(field(res, "Content-Type"), "application/json");
  EXPECT_EQ(res.body(), R"({"ok":true})");
  EXPECT_EQ(std::distance(res.equal_range("Vary").first, res.equal_range("Vary").second), 2);
}

TEST(ResponseBuilder, RedirectAndStatusValidation) {
  application app({.logger = [](std::string_view) {}});
  app.get("/r", [](context& ctx) { ctx.response().redirect(308, "/elsewhere"); });
  app.get("/bad-status", [](context& ctx) { ctx.response().status(42); });
  app.get("/bad-redirect", [](context& ctx) { ctx.response().redirect(200, "/x"); });
  response r = answer(app, "GET", "/r");
  EXPECT_EQ(r.result_int(), 308u);
  EXPECT_EQ(field(r, "Location"), "/elsewhere");
  EXPECT_EQ(answer(app, "GET", "/bad-status").result_int(), 500u);
  EXPECT_EQ(answer(app, "GET", "/bad-redirect").result_int(), 500u);
}

TEST(ResponseBuilder, ProblemEscapesInvalidUtf8InDetail) {
  application app;
  app.get("/p", [](context& ctx) { ctx.response().problem(400, "bad byte \xff here"); });
  response res = answer(app, "GET", "/p");
  nlohmann::json doc = body_json(res);
  ASSERT_FALSE(doc.is_discarded()) << res.body();
  EXPECT_EQ(doc.value("status", 0), 400);
  EXPECT_EQ(doc.value("title", ""), "Bad Request");
}

// --- render_problem ------------------------------------------------------------------

// The statuses waypoint::beast::server answers itself, with their RFC 9110 names.
struct render_row {
  http::status status;
  const char* title;
};

class RenderProblem : public ::testing::TestWithParam<render_row> {};

TEST_P(RenderProblem, WritesTheDocumentTheApplicationWritesForThatStatus) {
  const render_row& row = GetParam();
  const int code = static_cast<int>(row.status);
  response res{row.status, 11};
  render_problem(row.status, "why the server refused", res);
  EXPECT_EQ(res.result(), row.status) << code;
  EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << code;
  nlohmann::json doc = body_json(res);
  ASSERT_TRUE(doc.is_object()) << res.body();
  EXPECT_EQ(doc, (nlohmann::json{{"type", "about:blank"},
                                 {"title", row.title},
                                 {"status", code},
                                 {"detail", "why the server refused"}}));
  // Byte for byte what a handler's http_error of that status gets.
  application app;
  app.get("/e", [code](context&) -> void {
    throw waypoint::http_error(code, "why the server refused");
  });
  EXPECT_EQ(res.body(), answer(app, "GET", "/e").body()) << code;
}

TEST_P(RenderProblem, CutsAHugeDetail) {
  response res{GetParam().status, 11};
  render_problem(GetParam().status, std::string(100 * 1024, 'w'), res);
  nlohmann::json doc = body_json(res);
  ASSERT_TRUE(doc.is_object()) << res.body().substr(0, 200);
  EXPECT_EQ(doc.value("detail", ""),
            std::string(max_client_text_bytes, 'w') + "\xe2\x80\xa6 (+102144 bytes)");
  EXPECT_LT(res.body().size(), 512u);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, RenderProblem,
    ::testing::Values(render_row{http::status::bad_request, "Bad Request"},
                      render_row{http::status::request_timeout, "Request Timeout"},
                      render_row{http::status::payload_too_large, "Content Too Large"},
                      render_row{http::status::uri_too_long, "URI Too Long"},
                      render_row{http::status::expectation_failed, "Expectation Failed"},
                      render_row{http::status::request_header_fields_too_large,
                                 "Request Header Fields Too Large"},
                      render_row{http::status::not_implemented, "Not Implemented"},
                      render_row{http::status::service_unavailable, "Service Unavailable"}),
    [](const auto& info) { return "status" + std::to_string(static_cast<int>(info.param.status)); });

TEST(RenderProblem, ReplacesABodyAndTheFieldsThatDescribedIt) {
  response res{http::status::service_unavailable, 11};
  res.set(http::field::content_type, "text/plain");
  res.set(http::field::content_encoding, "gzip");
  res.set(http::field::retry_after, "5");
  res.body() = "draining";
  render_problem(http::status::service_unavailable, "the server is shutting down", res);
  EXPECT_EQ(field(res, "Content-Type"), "application/problem+json");
  EXPECT_EQ(field(res, "Content-Encoding"), "");
  EXPECT_EQ(field(res, "Retry-After"), "5");
  EXPECT_EQ(body_json(res).value("detail", ""), "the server is shutting down");
}

}  // namespace

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

struct escape_row {
  const char* rule;
  std::string detail;
  std::string decoded;  // what a JSON parser reads back
};

class ProblemText : public ::testing::TestWithParam<escape_row> {};

TEST_P(ProblemText, DetailIsValidJsonWhateverTheBytes) {
  application app;
  std::string detail = GetParam().detail;
  app.get("/p", [&](context& ctx) { ctx.response().problem(400, detail, "/a~1b"); });
  response res = answer(app, "GET", "/p");
  nlohmann::json doc = body_json(res);
  ASSERT_TRUE(doc.is_object()) << GetParam().rule << ": " << res.body();
  EXPECT_EQ(doc["detail"], GetParam().decoded) << GetParam().rule;
  EXPECT_EQ(doc["pointer"], "/a~1b");
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ProblemText,
    ::testing::Values(
        escape_row{"quotes and backslashes", "say \"hi\" \\o/", "say \"hi\" \\o/"},
        escape_row{"control bytes", std::string("a\n\t\x01\x1f", 5), "a\n\t\x01\x1f"},
        escape_row{"NUL", std::string("a\0b", 3), std::string("a\0b", 3)},
        escape_row{"valid UTF-8 kept", "K\xc3\xb6ln \xe2\x82\xac \xf0\x9f\x98\x80",
                   "K\xc3\xb6ln \xe2\x82\xac \xf0\x9f\x98\x80"},
        escape_row{"invalid byte replaced",
                   "a\xff"
                   "b",
                   "a\xef\xbf\xbd"
                   "b"},
        escape_row{"truncated sequence replaced", "a\xe2\x82", "a\xef\xbf\xbd\xef\xbf\xbd"},
        escape_row{"overlong encoding replaced", "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
        escape_row{"surrogate replaced", "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        escape_row{"detail of max_client_text_bytes kept whole",
                   std::string(max_client_text_bytes, 'a'),
                   std::string(max_client_text_bytes, 'a')},
        escape_row{"longer detail cut at the limit and marked",
                   std::string(max_client_text_bytes + 1, 'a'),
                   std::string(max_client_text_bytes, 'a') + "\xe2\x80\xa6 (+1 bytes)"},
        escape_row{"100 KiB detail cut", std::string(100 * 1024, 'x'),
                   std::string(max_client_text_bytes, 'x') + "\xe2\x80\xa6 (+102144 bytes)"},
        escape_row{"cut never splits a three-byte sequence",
                   std::string(max_client_text_bytes - 1, 'a') + "\xe2\x82\xac" + "zz",
                   std::string(max_client_text_bytes - 1, 'a') + "\xe2\x80\xa6 (+5 bytes)"},
        escape_row{"cut never splits a four-byte sequence",
                   std::string(max_client_text_bytes - 2, 'a') + "\xf0\x9f\x98\x80" + "z",
                   std::string(max_client_text_bytes - 2, 'a') + "\xe2\x80\xa6 (+5 bytes)"},
        escape_row{"bytes that are not UTF-8 are cut at most 3 before the limit",
                   std::string(1000, '\x80'),
                   [] {
                     std::string s;
                     for (std::size_t i = 0; i < max_client_text_bytes - 3; ++i)
                       s += "\xef\xbf\xbd";
                     return s + "\xe2\x80\xa6 (+747 bytes)";
                   }()}));

}  // namespace
