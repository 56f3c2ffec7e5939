// Typed inputs (issue #27): an input type binds its members to the path, the query, headers,
// cookies and the body; a missing required input and a value of the wrong type are 400s
// naming the input, a broken constraint is a 422 naming it and the keyword, unknown query
// keys are ignored or refused as the application says, the OpenAPI parameters come from the
// same declaration, and a route that binds If-None-Match answers 304 to a matching tag.
// Schema-first routes (a JSON Schema as text, a handler on nlohmann::json) are checked and
// documented the same way.
#include "app_test_support.hpp"
#include "item_fixture.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/typed/inputs.hpp>
#include <waypoint/app/typed/json.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace listing {

enum class state { open, closed };
NLOHMANN_JSON_SERIALIZE_ENUM(state, {{state::open, "open"}, {state::closed, "closed"}})

struct page_query {
  std::int64_t org = 0;
  std::optional<std::string> cursor;
  std::int32_t limit = 20;
  std::vector<std::string> tags;
  std::optional<state> status;
  std::string tenant;
  std::optional<std::string> session;
  std::optional<std::string> if_none_match;

  static constexpr auto inputs = waypoint::app::inputs(
      waypoint::app::from::path("org", &page_query::org).describe("the organisation's number"),
      waypoint::app::from::query("cursor", &page_query::cursor),
      waypoint::app::from::query("limit", &page_query::limit)
          .or_default()
          .constraints(R"({"minimum":1,"maximum":100})"),
      waypoint::app::from::query("tag", &page_query::tags).constraints(R"({"pattern":"^[a-z]+$"})"),
      waypoint::app::from::query("status", &page_query::status),
      waypoint::app::from::header("X-Tenant", &page_query::tenant),
      waypoint::app::from::cookie("session", &page_query::session),
      waypoint::app::from::header("If-None-Match", &page_query::if_none_match));
};

struct page {
  std::int64_t org = 0;
  std::string cursor;
  std::int32_t limit = 0;
  std::vector<std::string> tags;
  std::string status;
  std::string tenant;
  std::string session;
};
WAYPOINT_JSON_OBJECT(page, org, cursor, limit, tags, status, tenant, session)

using fixtures::item;

// A write whose path and body are both inputs.
struct add_item {
  std::string org;
  item body;
  static constexpr auto inputs =
      waypoint::app::inputs(waypoint::app::from::path("org", &add_item::org),
                            waypoint::app::from::body(&add_item::body));
};

struct placed {
  std::string org;
  std::string sku;
  std::int32_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(placed, org, sku, quantity)

}  // namespace listing

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

listing::page list_page(context& ctx, const listing::page_query& in) {
  ctx.response().header("ETag", "\"v" + std::to_string(in.limit) + "\"");
  return {in.org,
          in.cursor.value_or("-"),
          in.limit,
          in.tags,
          in.status ? (*in.status == listing::state::open ? "open" : "closed") : "-",
          in.tenant,
          in.session.value_or("-")};
}

void add_listing(application& app) { app.get<listing::page>("/orgs/{org}/orders", list_page); }

struct input_row {
  const char* rule;
  std::string target;
  std::vector<header_field> headers;
  unsigned status;
  std::string detail;   // a part of the problem's detail, or of the body on success
  const char* keyword;  // "" when none
};

class TypedInputs : public ::testing::TestWithParam<input_row> {};

request with_headers(std::string_view target, const std::vector<header_field>& headers) {
  request req = make_request("GET", target);
  for (const header_field& h : headers) req.insert(h.name, h.value);
  return req;
}

TEST_P(TypedInputs, EachInputIsReadFromItsSourceAndRefusedNamingIt) {
  const input_row& row = GetParam();
  application app;
  add_listing(app);
  response res = app.respond(with_headers(row.target, row.headers));
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  EXPECT_NE(res.body().find(row.detail), std::string::npos) << row.rule << ": " << res.body();
  nlohmann::json doc = body_json(res);
  if (res.result_int() >= 400) {
    EXPECT_EQ(doc.value("keyword", ""), row.keyword) << row.rule << ": " << res.body();
    EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << row.rule;
  }
}

const std::vector<header_field> tenant{{"X-Tenant", "acme"}};

INSTANTIATE_TEST_SUITE_P(
    Rows, TypedInputs,
    ::testing::Values(
        input_row{"every input from its source", "/orgs/7/orders?cursor=c1&limit=5&tag=a&tag=b&status=closed",
                  {{"X-Tenant", "acme"}, {"Cookie", "theme=dark; session=\"s-1\""}}, 200,
                  R"({"org":7,"cursor":"c1","limit":5,"tags":["a","b"],"status":"closed","tenant":"acme","session":"s-1"})",
                  ""},
        input_row{"absent optional inputs keep their defaults", "/orgs/7/orders", tenant, 200,
                  R"("cursor":"-","limit":20,"tags":[],"status":"-")", ""},
        input_row{"a required header that is absent is a 400 naming it", "/orgs/7/orders", {}, 400,
                  R"(missing header \"X-Tenant\")", ""},
        input_row{"a path value of the wrong type is a 400", "/orgs/seven/orders", tenant, 400,
                  R"(path value \"org\" must be an integer in range, not \"seven\")", ""},
        input_row{"a query value of the wrong type is a 400", "/orgs/7/orders?limit=ten", tenant, 400,
                  R"(query parameter \"limit\" must be an integer in range, not \"ten\")", ""},
        input_row{"a long value is clipped where the detail echoes it",
                  "/orgs/7/orders?limit=" + std::string(100, '9') + "x", tenant, 400,
                  R"(not \")" + std::string(64, '9') + R"(...\")", ""},
        input_row{"an empty value is not an integer", "/orgs/7/orders?limit=", tenant, 400,
                  R"(query parameter \"limit\" must be an integer)", ""},
        input_row{"an enum takes only its listed strings", "/orgs/7/orders?status=lost", tenant, 400,
                  R"(query parameter \"status\" must be one of \"open\", \"closed\", not \"lost\")", ""},
        input_row{"above the maximum is a 422 naming the keyword", "/orgs/7/orders?limit=101", tenant,
                  422, R"(query parameter \"limit\" is 101)", "maximum"},
        input_row{"below the minimum is a 422", "/orgs/7/orders?limit=0", tenant, 422,
                  R"(query parameter \"limit\")", "minimum"},
        input_row{"each repeated value is checked", "/orgs/7/orders?tag=a&tag=B2", tenant, 422,
                  R"(query parameter \"tag\", value 1,)", "pattern"},
        input_row{"the first of a repeated scalar key is read", "/orgs/7/orders?limit=3&limit=400",
                  tenant, 200, R"("limit":3)", ""},
        input_row{"percent-decoded query values", "/orgs/7/orders?cursor=a%20b%2Fc", tenant, 200,
                  R"("cursor":"a b/c")", ""},
        input_row{"unknown query keys are ignored by default", "/orgs/7/orders?limt=5", tenant, 200,
                  R"("limit":20)", ""},
        input_row{"a cookie among others, in a second Cookie field", "/orgs/7/orders",
                  {{"X-Tenant", "acme"}, {"Cookie", "a=1"}, {"Cookie", "b=2;session=s2"}}, 200,
                  R"("session":"s2")", ""},
        input_row{"a cookie name is matched exactly", "/orgs/7/orders",
                  {{"X-Tenant", "acme"}, {"Cookie", "xsession=1; sessions=2"}}, 200,
                  R"("session":"-")", ""},
        input_row{"a field sent between two Cookie fields is not read as cookies", "/orgs/7/orders",
                  {{"X-Tenant", "acme"}, {"Cookie", "a=1"}, {"X-Note", "session=forged"},
                   {"Cookie", "b=2"}},
                  200, R"("session":"-")", ""},
        input_row{"a pair without '=' is a nameless cookie's value, not a name", "/orgs/7/orders",
                  {{"X-Tenant", "acme"}, {"Cookie", "session; session=s3"}}, 200,
                  R"("session":"s3")", ""}));

TEST(TypedInputs, UnknownQueryKeysAreRefusedWhenTheApplicationSaysSo) {
  application app({}, typed_route_options{.unknown_query_parameters = unknown_members::refuse});
  add_listing(app);
  response res = app.respond(with_headers("/orgs/7/orders?limt=5&limit=5&x=1&limt=6", tenant));
  EXPECT_EQ(res.result_int(), 400u) << res.body();
  EXPECT_NE(res.body().find(R"(unknown query parameters \"limt\", \"x\")"), std::string::npos)
      << res.body();
  EXPECT_NE(res.body().find(R"(\"cursor\", \"limit\", \"tag\", \"status\")"), std::string::npos)
      << res.body();
  EXPECT_EQ(app.respond(with_headers("/orgs/7/orders?limit=5", tenant)).result_int(), 200u);
}

TEST(TypedInputs, LogLetsABrokenConstraintThroughAndOffChecksNothing) {
  std::vector<std::string> lines;
  application logged({.logger = [&](std::string_view l) { lines.emplace_back(l); }},
                     typed_route_options{.request_contract = contract_check::log});
  add_listing(logged);
  EXPECT_EQ(logged.respond(with_headers("/orgs/7/orders?limit=500", tenant)).result_int(), 200u);
  ASSERT_EQ(lines.size(), 1u);
  // The line's text is a JSON string (the log's rule for what may quote the client).
  EXPECT_NE(lines[0].find(R"(query parameter \"limit\" is 500)"), std::string::npos) << lines[0];
  application off({}, typed_route_options{.request_contract = contract_check::off});
  add_listing(off);
  EXPECT_EQ(off.respond(with_headers("/orgs/7/orders?limit=500", tenant)).result_int(), 200u);
  // A value of the wrong type is not a constraint: it is refused whatever the option says.
  EXPECT_EQ(off.respond(with_headers("/orgs/7/orders?limit=x", tenant)).result_int(), 400u);
}

// --- integers beyond their type's range (issue 44) ------------------------------------

struct window_query {
  std::optional<std::uint32_t> cursor;
  std::vector<std::uint8_t> shard;
  std::int64_t org = 0;
  static constexpr auto inputs = waypoint::app::inputs(
      waypoint::app::from::path("org", &window_query::org),
      waypoint::app::from::query("cursor", &window_query::cursor),
      waypoint::app::from::query("shard", &window_query::shard));
};

struct window {
  std::int64_t org = 0;
  std::int64_t cursor = -1;  // -1: none given
};
WAYPOINT_JSON_OBJECT(window, org, cursor)

void add_window(application& app) {
  app.get<window>("/orgs/{org}/window", [](const window_query& in) {
    return window{in.org, in.cursor ? static_cast<std::int64_t>(*in.cursor) : -1};
  });
}

class IntegerRange : public ::testing::TestWithParam<input_row> {};

// The document states an integer's range as its schema's minimum and maximum: a value the
// type cannot hold is a 422 naming that keyword, as a declared constraint's is; text that is
// no integer stays the 400 of a value that does not convert.
TEST_P(IntegerRange, BeyondTheTypeIs422NamingTheBoundAndNotANumberIs400) {
  const input_row& row = GetParam();
  application app;
  add_window(app);
  response res = app.respond(with_headers(row.target, row.headers));
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  EXPECT_NE(res.body().find(row.detail), std::string::npos) << row.rule << ": " << res.body();
  if (res.result_int() >= 400) {
    EXPECT_EQ(body_json(res).value("keyword", ""), row.keyword) << row.rule << ": " << res.body();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, IntegerRange,
    ::testing::Values(
        input_row{"the issue's cursor=-1: below an unsigned type's minimum",
                  "/orgs/7/window?cursor=-1", {}, 422,
                  R"(query parameter \"cursor\" is -1; the minimum is 0)", "minimum"},
        input_row{"above an unsigned type's maximum", "/orgs/7/window?cursor=4294967296", {}, 422,
                  R"(query parameter \"cursor\" is 4294967296; the maximum is 4294967295)",
                  "maximum"},
        input_row{"the largest value is taken", "/orgs/7/window?cursor=4294967295", {}, 200,
                  R"("cursor":4294967295)", ""},
        input_row{"-0 is zero, as JSON reads it", "/orgs/7/window?cursor=-0", {}, 200,
                  R"("cursor":0)", ""},
        input_row{"each value of a repeated key", "/orgs/7/window?shard=1&shard=256", {}, 422,
                  R"(query parameter \"shard\" is 256; the maximum is 255)", "maximum"},
        input_row{"a path value beyond int64", "/orgs/-99999999999999999999/window", {}, 422,
                  R"(path value \"org\" is -99999999999999999999; the minimum is -9223372036854775808)",
                  "minimum"},
        input_row{"a long number is clipped where the detail echoes it",
                  "/orgs/7/window?cursor=" + std::string(100, '9'), {}, 422,
                  R"(is )" + std::string(64, '9') + R"(...; the maximum)", "maximum"},
        input_row{"a fraction is no integer: 400", "/orgs/7/window?cursor=1.5", {}, 400,
                  R"(query parameter \"cursor\" must be an integer in range, not \"1.5\")", ""},
        input_row{"a plus sign is no integer: 400", "/orgs/7/window?cursor=%2B1", {}, 400,
                  R"(not \"+1\")", ""},
        input_row{"a minus sign alone is no integer: 400", "/orgs/7/window?cursor=-", {}, 400,
                  R"(not \"-\")", ""},
        input_row{"text is no integer: 400", "/orgs/7/window?cursor=-x1", {}, 400,
                  R"(not \"-x1\")", ""}));

TEST(IntegerRange, IsRefusedWhateverTheContractOptionSays) {
  application off({}, typed_route_options{.request_contract = contract_check::off});
  add_window(off);
  EXPECT_EQ(off.respond(make_request("GET", "/orgs/7/window?cursor=-1")).result_int(), 422u);
}

TEST(IntegerRange, TheDocumentListsThe422OfAnUnconstrainedInteger) {
  application app;
  add_window(app);
  nlohmann::json op = openapi(app)["paths"]["/orgs/{org}/window"]["get"];
  EXPECT_TRUE(op["responses"].contains("422")) << op["responses"].dump();
  EXPECT_EQ(op["parameters"][1]["schema"]["minimum"], 0) << op["parameters"].dump();
}

// --- If-None-Match ------------------------------------------------------------------------

struct conditional_row {
  const char* rule;
  const char* method;
  const char* if_none_match;
  unsigned status;
};

class ConditionalInputs : public ::testing::TestWithParam<conditional_row> {};

TEST_P(ConditionalInputs, AMatchingTagIs304WithoutABody) {
  const conditional_row& row = GetParam();
  application app;
  add_listing(app);
  std::vector<header_field> headers = tenant;
  if (*row.if_none_match) headers.push_back({"If-None-Match", row.if_none_match});
  request req = with_headers("/orgs/7/orders?limit=5", headers);
  req.method_string(row.method);
  response res = app.respond(req);
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  EXPECT_EQ(field(res, "ETag"), "\"v5\"") << row.rule;
  EXPECT_EQ(field(res, "Vary"), "Accept") << row.rule;
  if (row.status == 304 || std::string_view(row.method) == "HEAD") {
    EXPECT_TRUE(res.body().empty()) << row.rule;
  }
  if (row.status == 304) {
    EXPECT_TRUE(field(res, "Content-Type").empty()) << row.rule;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ConditionalInputs,
    ::testing::Values(conditional_row{"the same tag", "GET", "\"v5\"", 304},
                      conditional_row{"the weak form matches weakly", "GET", "W/\"v5\"", 304},
                      conditional_row{"one of a list", "GET", "\"v1\", \"v5\"", 304},
                      conditional_row{"any", "GET", "*", 304},
                      conditional_row{"another tag", "GET", "\"v6\"", 200},
                      conditional_row{"no If-None-Match", "GET", "", 200},
                      conditional_row{"HEAD with the same tag", "HEAD", "\"v5\"", 304},
                      conditional_row{"HEAD with another tag", "HEAD", "\"v6\"", 200}));

TEST(ConditionalInputs, ARouteThatDoesNotBindIfNoneMatchIgnoresIt) {
  application app;
  app.get<listing::placed>("/p", [](context& ctx) {
    ctx.response().header("ETag", "\"a\"");
    return listing::placed{"o", "s", 1};
  });
  response res = app.respond(make_request("GET", "/p", {{"If-None-Match", "\"a\""}}));
  EXPECT_EQ(res.result_int(), 200u) << res.body();
}

// --- a body beside other inputs -------------------------------------------------------

TEST(TypedInputs, AWriteReadsItsPathAndItsBodyEachWithItsRules) {
  application app;
  app.post<listing::add_item>("/orgs/{org}/items", [](listing::add_item in) {
    return listing::placed{in.org, in.body.sku, in.body.quantity};
  });
  response ok = app.respond(json_request("POST", "/orgs/acme/items", R"({"sku":"k","quantity":2})"));
  EXPECT_EQ(ok.result_int(), 201u) << ok.body();
  EXPECT_EQ(body_json(ok), nlohmann::json::parse(R"({"org":"acme","sku":"k","quantity":2})"));
  response broken = app.respond(json_request("POST", "/orgs/acme/items", R"({"sku":"k","quantity":0})"));
  EXPECT_EQ(broken.result_int(), 422u) << broken.body();
  EXPECT_EQ(body_json(broken).value("pointer", ""), "/quantity");
  EXPECT_EQ(body_json(broken).value("keyword", ""), "minimum");
  EXPECT_EQ(app.respond(json_request("POST", "/orgs/acme/items", "{", "text/plain")).result_int(),
            415u);
}

TEST(TypedInputs, ACoroutineHandlerTakesItsInputsToo) {
  application app;
  app.get<listing::page>("/orgs/{org}/orders",
                         [](const listing::page_query& in) -> awaitable<listing::page> {
                           co_return listing::page{in.org, "-", in.limit, {}, "-", in.tenant, "-"};
                         });
  response res = app.respond(with_headers("/orgs/9/orders?limit=7", tenant));
  EXPECT_EQ(res.result_int(), 200u) << res.body();
  EXPECT_EQ(body_json(res).value("limit", 0), 7);
  EXPECT_EQ(app.respond(with_headers("/orgs/9/orders?limit=0", tenant)).result_int(), 422u);
}

// --- the document ---------------------------------------------------------------------

TEST(TypedInputsDocument, ParametersComeFromTheDeclaration) {
  application app;
  add_listing(app);
  nlohmann::json op = openapi(app)["paths"]["/orgs/{org}/orders"]["get"];
  nlohmann::json expected = nlohmann::json::parse(R"([
    {"name":"org","in":"path","required":true,"description":"the organisation's number",
     "schema":{"type":"integer","format":"int64","minimum":-9223372036854775808,"maximum":9223372036854775807}},
    {"name":"cursor","in":"query","required":false,"schema":{"type":"string"}},
    {"name":"limit","in":"query","required":false,
     "schema":{"type":"integer","format":"int32","minimum":1,"maximum":100,"default":20}},
    {"name":"tag","in":"query","required":false,
     "schema":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"}}},
    {"name":"status","in":"query","required":false,"schema":{"type":"string","enum":["open","closed"]}},
    {"name":"X-Tenant","in":"header","required":true,"schema":{"type":"string"}},
    {"name":"session","in":"cookie","required":false,"schema":{"type":"string"}},
    {"name":"If-None-Match","in":"header","required":false,"schema":{"type":"string"}}
  ])");
  EXPECT_EQ(op["parameters"], expected) << op["parameters"].dump(1);
  EXPECT_TRUE(op["responses"].contains("304")) << op["responses"].dump();
  EXPECT_TRUE(op["responses"].contains("400"));
  EXPECT_TRUE(op["responses"].contains("422"));
  EXPECT_FALSE(op.contains("requestBody"));
}

TEST(TypedInputsDocument, AWriteDocumentsItsBodyAndPathOnly) {
  application app;
  app.post<listing::add_item>("/orgs/{org}/items",
                              [](listing::add_item in) { return listing::placed{in.org, "", 0}; });
  nlohmann::json op = openapi(app)["paths"]["/orgs/{org}/items"]["post"];
  EXPECT_EQ(op["parameters"].size(), 1u) << op.dump(1);
  EXPECT_EQ(op["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/item");
  EXPECT_FALSE(op["responses"].contains("304"));
}

// --- registration -----------------------------------------------------------------------

struct wrong_wildcard {
  std::string id;
  static constexpr auto inputs =
      waypoint::app::inputs(waypoint::app::from::path("id", &wrong_wildcard::id));
};

struct unenforceable {
  std::int32_t n = 0;
  static constexpr auto inputs = waypoint::app::inputs(
      waypoint::app::from::query("n", &unenforceable::n).constraints(R"({"minProperties":1})"));
};

TEST(TypedInputsRegistration, APathInputNamingNoWildcardIsRefusedAtRegistration) {
  application app;
  try {
    app.get<listing::placed>("/things/{key}",
                             [](wrong_wildcard) { return listing::placed{}; });
    FAIL() << "registered a path input for a wildcard the pattern lacks";
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("GET /things/{key}"), std::string::npos) << what;
    EXPECT_NE(what.find("inputs_test.cpp"), std::string::npos) << what;
    EXPECT_NE(what.find("{id}"), std::string::npos) << what;
  }
}

TEST(TypedInputsRegistration, FreezeRefusesAConstraintItCannotEnforceNamingTheParameter) {
  application app;
  app.get<listing::placed>("/n", [](unenforceable) { return listing::placed{}; });
  try {
    app.freeze();
    FAIL() << "freeze() accepted minProperties on a query parameter";
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("GET /n"), std::string::npos) << what;
    EXPECT_NE(what.find(R"(query parameter "n")"), std::string::npos) << what;
    EXPECT_NE(what.find("minProperties"), std::string::npos) << what;
  }
}

// --- schema-first routes ---------------------------------------------------------------

constexpr const char* note_schema = R"({
  "type":"object",
  "properties":{"title":{"type":"string","minLength":1,"maxLength":20},
                "due":{"type":"string","format":"date"},
                "priority":{"type":"integer","minimum":1,"maximum":5}},
  "required":["title"],
  "additionalProperties":false})";

void add_notes(application& app, bool broken_answer = false) {
  app.post<nlohmann::json, nlohmann::json>("/notes", [broken_answer](nlohmann::json note) {
       note["id"] = broken_answer ? nlohmann::json("n-1") : nlohmann::json(1);
       return note;
     })
      .describe({.request_schema = note_schema,
                 .response_schema =
                     R"({"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]})"});
}

struct schema_first_row {
  const char* rule;
  const char* body;
  unsigned status;
  const char* pointer;
  const char* keyword;
};

class SchemaFirst : public ::testing::TestWithParam<schema_first_row> {};

TEST_P(SchemaFirst, TheTextIsEnforcedLikeATypesSchema) {
  const schema_first_row& row = GetParam();
  application app;
  add_notes(app);
  response res = app.respond(json_request("POST", "/notes", row.body));
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  if (row.status == 422) {
    EXPECT_EQ(body_json(res).value("pointer", "?"), row.pointer) << row.rule;
    EXPECT_EQ(body_json(res).value("keyword", ""), row.keyword) << row.rule;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, SchemaFirst,
    ::testing::Values(
        schema_first_row{"a valid note", R"({"title":"t","due":"2026-12-02","priority":3})", 201, "", ""},
        schema_first_row{"a missing title", R"({"due":"2026-12-02"})", 422, "/title", "required"},
        schema_first_row{"a title too long", R"({"title":"aaaaaaaaaaaaaaaaaaaaa"})", 422, "/title",
                         "maxLength"},
        schema_first_row{"a date that is not one", R"({"title":"t","due":"2026-13-02"})", 422, "/due",
                         "format"},
        schema_first_row{"a member the schema does not allow", R"({"title":"t","x":1})", 422, "/x",
                         "additionalProperties"},
        schema_first_row{"not an object", R"([1])", 422, "", "type"}));

TEST(SchemaFirst, AnAnswerBreakingItsSchemaIsA500) {
  application app;
  add_notes(app, true);
  EXPECT_EQ(app.respond(json_request("POST", "/notes", R"({"title":"t"})")).result_int(), 500u);
}

TEST(SchemaFirst, TheDocumentShowsTheText) {
  application app;
  add_notes(app);
  nlohmann::json op = openapi(app)["paths"]["/notes"]["post"];
  EXPECT_EQ(op["requestBody"]["content"]["application/json"]["schema"], nlohmann::json::parse(note_schema));
  EXPECT_EQ(op["responses"]["201"]["content"]["application/json"]["schema"]["required"],
            nlohmann::json::array({"id"}));
}

TEST(SchemaFirst, ASchemaIsRefusedWhereItCannotStand) {
  application app;
  app.post<nlohmann::json, nlohmann::json>("/a", [](nlohmann::json v) { return v; });
  EXPECT_THROW(app.describe({.request_schema = "{"}), std::invalid_argument);
  EXPECT_THROW(app.describe({.request_schema = R"({"$ref":"#/components/schemas/x"})"}), std::invalid_argument);
  EXPECT_THROW(app.describe({.request_schema = R"({"minProperties":1})"}), std::invalid_argument);
  EXPECT_THROW(app.describe({.request_schema = "[]"}), std::invalid_argument);
  app.post<listing::item, listing::item>("/b", [](listing::item v) { return v; });
  EXPECT_THROW(app.describe({.request_schema = note_schema}), std::logic_error);
  EXPECT_THROW(app.describe({.response_schema = note_schema}), std::logic_error);
}

}  // namespace
