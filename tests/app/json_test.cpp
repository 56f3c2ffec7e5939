// json.hpp: typed routes (post/put/patch<In, Out>, get/del<Out>), every error status with
// its problem document, json_field's strictness and pointers, the validate() hook, and
// read_json for hand-written handlers.
#include "app_test_support.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/typed/json.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace shop {

struct line_item {
  std::string sku;
  std::int32_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(line_item, sku, quantity)

struct order_in {
  std::string customer;
  std::vector<line_item> items;
  std::optional<std::string> note;
  std::optional<bool> gift;
  std::optional<std::uint8_t> priority;
  std::optional<double> discount;
};
WAYPOINT_JSON_OBJECT(order_in, customer, items, note, gift, priority, discount)

std::optional<std::string> validate(const order_in& o) {
  if (o.items.empty()) return "an order needs at least one item";
  return std::nullopt;
}

struct order_out {
  std::string id;
  std::size_t lines = 0;
};
WAYPOINT_JSON_OBJECT(order_out, id, lines)

// A type whose hook throws, naming a pointer.
struct renamed {
  std::string name;
};
WAYPOINT_JSON_OBJECT(renamed, name)
void validate(const renamed& r) {
  if (r.name.size() > 5) throw waypoint::app::validation_error("name is longer than 5", "/name");
}

// A from_json written with plain nlohmann/json calls.
struct plain {
  std::string a;
  int b = 0;
};
inline void from_json(const nlohmann::json& j, plain& p) {
  j.at("a").get_to(p.a);
  j.at("b").get_to(p.b);
}
inline void to_json(nlohmann::json& j, const plain& p) { j = {{"a", p.a}, {"b", p.b}}; }

struct odd_name {
  std::string value;
};
inline void from_json(const nlohmann::json& j, odd_name& o) {
  waypoint::app::json_field(j, "a/b~c", o.value);
}

// A document carried as it came: reading it copies a nlohmann::json, which recurses once
// per nesting level.
struct envelope {
  std::string kind;
  nlohmann::json payload;
};
WAYPOINT_JSON_OBJECT(envelope, kind, payload)

}  // namespace shop

// Types for the stricter containers, enums, unknown members and output order (issue 17).
namespace holes {

enum class state { pending, shipped, cancelled };
NLOHMANN_JSON_SERIALIZE_ENUM(state, {{state::pending, "pending"},
                                     {state::shipped, "shipped"},
                                     {state::cancelled, "cancelled"}})

struct containers {
  std::map<std::string, std::int32_t> counts;
  std::set<std::string> tags;
  std::array<int, 2> pair{};
  state status = state::pending;
  std::vector<state> history;
  std::unordered_map<std::string, std::optional<std::uint8_t>> levels;
};
WAYPOINT_JSON_OBJECT(containers, counts, tags, pair, status, history, levels)

struct strict_item {
  std::string sku;
  std::int32_t quantity = 0;
};
WAYPOINT_JSON_STRICT_OBJECT(strict_item, sku, quantity)

struct strict_holder {
  std::string label;
  std::vector<strict_item> items;
};
WAYPOINT_JSON_OBJECT(strict_holder, label, items)

// Members declared out of alphabetical order.
struct inner_order {
  int zulu = 1;
  int alpha = 2;
};
WAYPOINT_JSON_OBJECT(inner_order, zulu, alpha)
struct declared_order {
  std::string zeta = "z";
  int alpha = 1;
  inner_order mid;
  std::map<std::string, int> beta{{"b", 2}, {"a", 1}};
};
WAYPOINT_JSON_OBJECT(declared_order, zeta, alpha, mid, beta)

}  // namespace holes

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

// One application with a route of each kind, shared by the tables.
class Typed : public ::testing::Test {
 protected:
  Typed() {
    app.post<shop::order_in, shop::order_out>("/orders", [](context& ctx, shop::order_in in) {
      if (in.customer == "conflict") throw waypoint::http_error(409, "duplicate order");
      if (in.customer == "crash") throw std::runtime_error("secret backend detail");
      ctx.response().header("Location", "/orders/1");
      return shop::order_out{"o-1", in.items.size()};
    });
    app.put<shop::renamed>("/names/{id}", [](shop::renamed in) { return in; });  // Out deduced
    app.patch<shop::plain, shop::plain>("/plain", [](shop::plain in) {
      in.b += 1;
      return in;
    });
    app.get<shop::order_out>("/orders/{id}", [](context& ctx) {
      return shop::order_out{std::string(ctx.path_value("id")), 0};
    });
    app.del<void>("/orders/{id}", [](context&) {});
    app.post<shop::odd_name, std::string>("/odd", [](shop::odd_name in) { return in.value; });
    app.post("/manual", [](context& ctx) {
      auto in = read_json<shop::plain>(ctx);
      ctx.response().status(200).json({{"a", in.a}});
    });
  }

  response post(std::string_view target, std::string body,
                std::string_view content_type = "application/json",
                std::string_view method = "POST") {
    return app.respond(json_request(method, target, std::move(body), content_type));
  }

  std::vector<std::string> log;
  application app{{.logger = [this](std::string_view l) { log.emplace_back(l); }},
                  typed_route_options{.json_body_limit = 256}};
};

TEST_F(Typed, PostDecodesRunsAndEncodesWith201) {
  response res =
      post("/orders",
           R"({"customer":"ada","items":[{"sku":"a","quantity":1},{"sku":"b","quantity":2}]})");
  EXPECT_EQ(res.result_int(), 201u);
  EXPECT_EQ(field(res, "Content-Type"), "application/json");
  EXPECT_EQ(field(res, "Location"), "/orders/1");
  EXPECT_EQ(body_json(res), (nlohmann::json{{"id", "o-1"}, {"lines", 2}}));
}

// JSON Schema's "integer", which the document shows, is a number without a fractional part:
// 1.0 and 1e3 are integers there, so the conversion takes them too (helper finding of the
// gateway's contract differential: 422 where every 2020-12 validator says valid).
TEST_F(Typed, AnIntegerMemberTakesANumberWithoutAFractionalPart) {
  for (std::string quantity : {"1.0", "1e3", "2147483647.0", "-0.0"}) {
    response res =
        post("/orders", R"({"customer":"a","items":[{"sku":"a","quantity":)" + quantity + "}]}");
    EXPECT_EQ(res.result_int(), 201u) << quantity << ": " << res.body();
  }
}

TEST_F(Typed, OtherMethodsAnswer200And204) {
  response put = post("/names/1", R"({"name":"bob"})", "application/json", "PUT");
  EXPECT_EQ(put.result_int(), 200u);
  EXPECT_EQ(body_json(put), (nlohmann::json{{"name", "bob"}}));
  response patch = post("/plain", R"({"a":"x","b":1})", "application/json", "PATCH");
  EXPECT_EQ(patch.result_int(), 200u);
  EXPECT_EQ(body_json(patch)["b"], 2);
  response get = answer(app, "GET", "/orders/o-9");
  EXPECT_EQ(get.result_int(), 200u);
  EXPECT_EQ(body_json(get)["id"], "o-9");
  response del = answer(app, "DELETE", "/orders/o-9");
  EXPECT_EQ(del.result_int(), 204u);
  EXPECT_TRUE(del.body().empty());
  response manual = post("/manual", R"({"a":"m","b":0})");
  EXPECT_EQ(body_json(manual), (nlohmann::json{{"a", "m"}}));
}

TEST_F(Typed, OptionalMembersMayBeAbsentOrNull) {
  EXPECT_EQ(post("/orders", R"({"customer":"a","items":[{"sku":"a","quantity":1}],"note":null})")
                .result_int(),
            201u);
  EXPECT_EQ(post("/orders", R"({"customer":"a","items":[{"sku":"a","quantity":1}],"note":"hi"})")
                .result_int(),
            201u);
}

struct error_row {
  const char* rule;
  const char* target;
  std::string body;
  const char* content_type;
  int status;
  std::optional<std::string> pointer;  // nullopt: the document has no "pointer"
  const char* detail;                  // a substring of "detail"
  const char* keyword = "";            // "keyword": the schema keyword broken; "" none
};

class TypedErrors : public Typed, public ::testing::WithParamInterface<error_row> {};

TEST_P(TypedErrors, AnswerProblemDocuments) {
  const error_row& row = GetParam();
  response res = post(row.target, row.body, row.content_type);
  EXPECT_EQ(res.result_int(), static_cast<unsigned>(row.status)) << row.rule << "\n" << res.body();
  EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << row.rule;
  nlohmann::json doc = body_json(res);
  ASSERT_TRUE(doc.is_object()) << res.body();
  EXPECT_EQ(doc["type"], "about:blank");
  EXPECT_EQ(doc["status"], row.status) << row.rule;
  EXPECT_TRUE(doc["title"].is_string());
  EXPECT_NE(doc["detail"].get<std::string>().find(row.detail), std::string::npos)
      << row.rule << ": " << doc["detail"];
  if (row.pointer) {
    EXPECT_EQ(doc.value("pointer", "<none>"), *row.pointer) << row.rule;
  } else {
    EXPECT_FALSE(doc.contains("pointer")) << row.rule << ": " << doc.dump();
  }
  // Every 422 of the decoding rules names the keyword of the type's schema it broke, as the
  // contract's do (issue 44: a missing or unknown member named none).
  EXPECT_EQ(doc.value("keyword", ""), row.keyword) << row.rule << ": " << doc.dump();
}

const std::string good_items = R"("items":[{"sku":"a","quantity":1}])";

INSTANTIATE_TEST_SUITE_P(
    Rows, TypedErrors,
    ::testing::Values(
        error_row{"malformed JSON names the byte", "/orders", R"({"customer": "a",)",
                  "application/json", 400, std::nullopt, "malformed JSON at byte 18"},
        error_row{"empty body is malformed", "/orders", "", "application/json", 400, std::nullopt,
                  "malformed JSON at byte 1"},
        error_row{"trailing garbage is malformed", "/orders", R"({"customer":"a"} x)",
                  "application/json", 400, std::nullopt, "byte"},
        error_row{"truncated document is malformed", "/orders",
                  R"({"customer":"a","items":[{"sku":"a")", "application/json", 400,
                  std::nullopt, "malformed JSON at byte 36: "},
        error_row{"number beyond any double is malformed, not a 500", "/orders",
                  R"({"customer":1e400})", "application/json", 400, std::nullopt,
                  "malformed JSON at byte 17: number overflow parsing '1e400'"},
        error_row{"negative number beyond any double is malformed", "/orders",
                  R"({"customer":"a","items":[{"sku":"a","quantity":-1e400}]})",
                  "application/json", 400, std::nullopt, "number overflow parsing '-1e400'"},
        error_row{"invalid UTF-8 in a string is malformed", "/orders",
                  "{\"customer\":\"a\xff\"}", "application/json", 400, std::nullopt,
                  "ill-formed UTF-8 byte"},
        error_row{"lone surrogate escape is malformed", "/orders", R"({"customer":"\ud800"})",
                  "application/json", 400, std::nullopt, "surrogate"},
        error_row{"missing member", "/orders", "{" + good_items + "}", "application/json", 422,
                  "/customer", "missing member \"customer\"", "required"},
        error_row{"wrong type", "/orders", R"({"customer":7,)" + good_items + "}",
                  "application/json", 422, "/customer", "must be a string, not a number", "type"},
        error_row{
            "nested wrong type in an array", "/orders",
            R"({"customer":"a","items":[{"sku":"a","quantity":1},{"sku":"b","quantity":"2"}]})",
            "application/json", 422, "/items/1/quantity", "must be an integer, not a string", "type"},
        error_row{"nested missing member", "/orders",
                  R"({"customer":"a","items":[{"quantity":1}]})", "application/json", 422,
                  "/items/0/sku", "missing member \"sku\"", "required"},
        error_row{"a whole number beyond the integer's range", "/orders",
                  R"({"customer":"a","items":[{"sku":"a","quantity":3e9}]})", "application/json",
                  422, "/items/0/quantity", "out of range", "maximum"},
        error_row{"fraction for an integer", "/orders",
                  R"({"customer":"a","items":[{"sku":"a","quantity":1.5}]})", "application/json",
                  422, "/items/0/quantity", "must be an integer", "type"},
        error_row{"integer out of the member type's range", "/orders",
                  R"({"customer":"a","priority":300,)" + good_items + "}", "application/json", 422,
                  "/priority", "300 is out of range (0 to 255)", "maximum"},
        error_row{"negative for unsigned", "/orders",
                  R"({"customer":"a","priority":-1,)" + good_items + "}", "application/json", 422,
                  "/priority", "out of range", "minimum"},
        error_row{"bool refuses a number", "/orders",
                  R"({"customer":"a","gift":1,)" + good_items + "}", "application/json", 422,
                  "/gift", "must be a boolean", "type"},
        error_row{"array refuses an object", "/orders", R"({"customer":"a","items":{}})",
                  "application/json", 422, "/items", "must be an array, not an object", "type"},
        error_row{"null for a required string", "/orders",
                  R"({"customer":null,)" + good_items + "}", "application/json", 422, "/customer",
                  "not null", "type"},
        error_row{"root not an object", "/orders", "[1,2]", "application/json", 422, "",
                  "must be an object, not an array", "type"},
        error_row{"validate() returning a message", "/orders", R"({"customer":"a","items":[]})",
                  "application/json", 422, std::nullopt, "an order needs at least one item"},
        error_row{"pointer escapes ~ and /", "/odd", R"({})", "application/json", 422, "/a~1b~0c",
                  "missing member", "required"},
        error_row{"text/plain is 415", "/orders", "{}", "text/plain", 415, std::nullopt,
                  "text/plain"},
        error_row{"form encoding (curl -d) is 415", "/orders", "a=1",
                  "application/x-www-form-urlencoded", 415, std::nullopt,
                  "application/x-www-form-urlencoded"},
        error_row{"no Content-Type is 415", "/orders", "{}", "", 415, std::nullopt, "Content-Type"},
        error_row{"application/jsonx is not JSON", "/orders", "{}", "application/jsonx", 415,
                  std::nullopt, "not JSON"},
        error_row{"a charset given twice is 400 (media_type.hpp)", "/orders", "{}",
                  "application/json; charset=utf-8; charset=utf-16", 400, std::nullopt,
                  "names the parameter \"charset\" twice"},
        error_row{"body over the limit is 413", "/orders", std::string(257, ' '),
                  "application/json", 413, std::nullopt, "257 bytes"},
        error_row{"http_error from the handler", "/orders",
                  R"({"customer":"conflict",)" + good_items + "}", "application/json", 409,
                  std::nullopt, "duplicate order"},
        error_row{"any other exception is a generic 500", "/orders",
                  R"({"customer":"crash",)" + good_items + "}", "application/json", 500,
                  std::nullopt, "request id"}));

TEST_P(TypedErrors, NeverLeakExceptionText) {
  response res = post(GetParam().target, GetParam().body, GetParam().content_type);
  EXPECT_EQ(res.body().find("secret"), std::string::npos);
}

struct accepted_type_row {
  const char* content_type;
};

class AcceptedContentType : public Typed,
                            public ::testing::WithParamInterface<accepted_type_row> {};

TEST_P(AcceptedContentType, JsonAndPlusJsonWithParameters) {
  response res = post("/names/1", R"({"name":"x"})", GetParam().content_type, "PUT");
  EXPECT_EQ(res.result_int(), 200u) << GetParam().content_type << ": " << res.body();
}

INSTANTIATE_TEST_SUITE_P(Rows, AcceptedContentType,
                         ::testing::Values(accepted_type_row{"application/json"},
                                           accepted_type_row{"application/json; charset=utf-8"},
                                           accepted_type_row{"APPLICATION/JSON"},
                                           accepted_type_row{" application/json ;charset=UTF-8"},
                                           accepted_type_row{"application/merge-patch+json"},
                                           accepted_type_row{"application/vnd.api+json"}));

// Bodies at the limits of what the parser accepts, with the default 1 MiB body limit and a
// type that copies a nested document (a nlohmann::json member), as a from_json may do.
struct limit_row {
  const char* rule;
  std::string body;
  int status;
  const char* detail;  // a substring of "detail"
};

class DecodeLimits : public ::testing::TestWithParam<limit_row> {};

TEST_P(DecodeLimits, AnswerWithoutCrashing) {
  const limit_row& row = GetParam();
  application app({.logger = [](std::string_view) {}});
  app.post<shop::envelope, std::string>("/in", [](shop::envelope e) { return e.kind; });
  response res = app.respond(json_request("POST", "/in", row.body));
  EXPECT_EQ(res.result_int(), static_cast<unsigned>(row.status)) << row.rule;
  nlohmann::json doc = body_json(res);
  if (row.status >= 400) {
    EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << row.rule;
    EXPECT_EQ(doc["status"], row.status) << row.rule;
    EXPECT_NE(doc.value("detail", "").find(row.detail), std::string::npos)
        << row.rule << ": " << doc.dump();
  }
}

std::string nested(std::size_t depth, std::string_view inner = "") {
  return std::string(depth, '[') + std::string(inner) + std::string(depth, ']');
}

INSTANTIATE_TEST_SUITE_P(
    Rows, DecodeLimits,
    ::testing::Values(
        limit_row{"100,000 open brackets are refused before parsing",
                  std::string(100'000, '['), 400,
                  "malformed JSON at byte 257: nested deeper than 256 levels"},
        limit_row{"100,000 balanced levels in a copied member are refused, not a crash",
                  R"({"kind":"k","payload":)" + nested(100'000) + "}", 400,
                  "nested deeper than 256 levels"},
        limit_row{"100,000 balanced levels of objects are refused",
                  [] {
                    std::string s;
                    for (int i = 0; i < 100'000; ++i) s += R"({"a":)";
                    return s + "1" + std::string(100'000, '}');
                  }(),
                  400, "nested deeper than 256 levels"},
        limit_row{"max_json_depth levels are accepted",
                  R"({"kind":"k","payload":)" + nested(max_json_depth - 1) + "}", 201, ""},
        limit_row{"brackets inside strings do not nest",
                  R"({"kind":")" + std::string(1000, '[') + R"(\"[","payload":0})", 201, ""},
        limit_row{"a 10,000-digit integer is malformed",
                  R"({"kind":"k","payload":)" + std::string(10'000, '7') + "}", 400,
                  "number overflow parsing '7777"},
        limit_row{"a number where a string is expected is a 422",
                  R"({"kind":7,"payload":null})", 422, "must be a string, not a number"}));

TEST_F(Typed, ValidateHookThrowingValidationErrorGivesItsPointer) {
  response res = post("/names/1", R"({"name":"too long"})", "application/json", "PUT");
  EXPECT_EQ(res.result_int(), 422u);
  nlohmann::json doc = body_json(res);
  EXPECT_EQ(doc["pointer"], "/name");
  EXPECT_EQ(doc["detail"], "name is longer than 5");
}

TEST_F(Typed, PlainFromJsonErrorsAre422WithoutPointerUnlessDiagnostics) {
  response missing = post("/plain", R"({"a":"x"})", "application/json", "PATCH");
  EXPECT_EQ(missing.result_int(), 422u);
  EXPECT_EQ(body_json(missing)["detail"], "missing member \"b\"");
  EXPECT_EQ(body_json(missing).value("keyword", ""), "required");
  response wrong = post("/plain", R"({"a":"x","b":"y"})", "application/json", "PATCH");
  EXPECT_EQ(wrong.result_int(), 422u);
  EXPECT_NE(body_json(wrong)["detail"].get<std::string>().find("type must be number"),
            std::string::npos);
  EXPECT_EQ(body_json(wrong).value("keyword", ""), "type");
#if !defined(JSON_DIAGNOSTICS) || JSON_DIAGNOSTICS == 0
  EXPECT_FALSE(body_json(wrong).contains("pointer"));
#endif
}

TEST_F(Typed, ServerErrorIsLoggedWithItsText) {
  post("/orders", R"({"customer":"crash",)" + good_items + "}");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("secret backend detail"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("POST /orders"), std::string::npos) << log[0];
}

TEST_F(Typed, TypedErrorsPassThroughMiddlewareAsHttpErrors) {
  application observed;
  std::vector<int> statuses;
  observed.use([&](context&, next inner) -> awaitable<void> {
    try {
      co_await inner();
    } catch (const waypoint::http_error& e) {
      statuses.push_back(e.status());
      throw;
    }
  });
  observed.post<shop::plain, shop::plain>("/p", [](shop::plain p) { return p; });
  observed.respond(json_request("POST", "/p", "{", "application/json"));
  observed.respond(json_request("POST", "/p", "{}", "text/plain"));
  observed.respond(json_request("POST", "/p", "{}", "application/json"));
  EXPECT_EQ(statuses, (std::vector<int>{400, 415, 422}));
}

// A typed route's result goes through the same writer as its members, so optional and
// vector-of-optional results encode as null and arrays.
TEST(TypedResult, OptionalAndVectorOfOptionalEncode) {
  application app;
  app.get<std::optional<std::int64_t>>("/none", [] { return std::optional<std::int64_t>(); });
  app.get<std::vector<std::optional<std::int64_t>>>("/list", [] {
    return std::vector<std::optional<std::int64_t>>{1, std::nullopt};
  });
  EXPECT_EQ(answer(app, "GET", "/none").body(), "null");
  EXPECT_EQ(answer(app, "GET", "/list").body(), "[1,null]");
}

TEST(JsonField, ReadsStrictlyWithoutARoute) {
  shop::line_item item;
  EXPECT_NO_THROW(from_json(nlohmann::json{{"sku", "a"}, {"quantity", 3}}, item));
  EXPECT_EQ(item.quantity, 3);
  try {
    from_json(nlohmann::json{{"sku", "a"}, {"quantity", 5000000000}}, item);
    FAIL() << "expected an out-of-range error";
  } catch (const validation_error& e) {
    EXPECT_EQ(e.status(), 422);
    EXPECT_EQ(e.pointer(), "/quantity");
  }
}

// --- strict reading at every depth (issue 17) -----------------------------------------

struct strict_row {
  const char* rule;
  std::string body;
  int status;
  std::optional<std::string> pointer;
  const char* detail;        // a substring of "detail"
  const char* keyword = "";  // "keyword", when refused
};

const std::string good_containers =
    R"("counts":{"a":1},"tags":["x","y"],"pair":[1,2],"status":"shipped","history":[],)"
    R"("levels":{})";

class StrictReading : public ::testing::TestWithParam<strict_row> {
 protected:
  StrictReading() {
    app.post<holes::containers>("/c", [](holes::containers c) { return c; });
    app.post<holes::strict_holder>("/s", [](holes::strict_holder h) { return h.label; });
  }
  application app{{.logger = [](std::string_view) {}}};
};

TEST_P(StrictReading, RefusesWhatDoesNotFitWithAPointer) {
  const strict_row& row = GetParam();
  std::string target = row.body.find("label") != std::string::npos ? "/s" : "/c";
  response res = app.respond(json_request("POST", target, row.body));
  EXPECT_EQ(res.result_int(), static_cast<unsigned>(row.status)) << row.rule << "\n" << res.body();
  if (row.status < 400) return;
  nlohmann::json doc = body_json(res);
  EXPECT_EQ(doc.value("pointer", "<none>"), row.pointer.value_or("<none>")) << row.rule;
  EXPECT_NE(doc.value("detail", "").find(row.detail), std::string::npos)
      << row.rule << ": " << doc.dump();
  EXPECT_EQ(doc.value("keyword", ""), row.keyword) << row.rule << ": " << doc.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, StrictReading,
    ::testing::Values(
        strict_row{"all containers read", "{" + good_containers + "}", 201, std::nullopt, ""},
        strict_row{"map value 1.5 for an int32 is refused, not stored as 1",
                   R"({"counts":{"a":1,"b":1.5},"tags":[],"pair":[1,2],"status":"pending",)"
                   R"("history":[],"levels":{}})",
                   422, "/counts/b", "must be an integer, not a number", "type"},
        strict_row{"map value out of the int32 range",
                   R"({"counts":{"a":2147483648},"tags":[],"pair":[1,2],"status":"pending",)"
                   R"("history":[],"levels":{}})",
                   422, "/counts/a", "out of range (-2147483648 to 2147483647)", "maximum"},
        strict_row{"map key with / is escaped in the pointer",
                   R"({"counts":{"a/b":"1"},"tags":[],"pair":[1,2],"status":"pending",)"
                   R"("history":[],"levels":{}})",
                   422, "/counts/a~1b", "must be an integer", "type"},
        strict_row{"map refuses an array",
                   R"({"counts":[1],"tags":[],"pair":[1,2],"status":"pending","history":[],)"
                   R"("levels":{}})",
                   422, "/counts", "must be an object, not an array", "type"},
        strict_row{"optional map value: null passes, 256 does not",
                   R"({"counts":{},"tags":[],"pair":[1,2],"status":"pending","history":[],)"
                   R"("levels":{"ok":null,"bad":256}})",
                   422, "/levels/bad", "256 is out of range (0 to 255)", "maximum"},
        strict_row{"set element of the wrong type",
                   R"({"counts":{},"tags":["a",2],"pair":[1,2],"status":"pending",)"
                   R"("history":[],"levels":{}})",
                   422, "/tags/1", "must be a string, not a number", "type"},
        strict_row{"set refuses a duplicate",
                   R"({"counts":{},"tags":["a","b","a"],"pair":[1,2],"status":"pending",)"
                   R"("history":[],"levels":{}})",
                   422, "/tags/2", "element 2 repeats element 0", "uniqueItems"},
        strict_row{"std::array<int, 2> given [1] points at the missing element",
                   R"({"counts":{},"tags":[],"pair":[1],"status":"pending","history":[],)"
                   R"("levels":{}})",
                   422, "/pair/1", "missing element: the array must have exactly 2 elements, not 1", "minItems"},
        strict_row{"std::array<int, 2> given three points at the extra element",
                   R"({"counts":{},"tags":[],"pair":[1,2,3],"status":"pending","history":[],)"
                   R"("levels":{}})",
                   422, "/pair/2", "unexpected element", "maxItems"},
        strict_row{"std::array element of the wrong type",
                   R"({"counts":{},"tags":[],"pair":[1,"2"],"status":"pending","history":[],)"
                   R"("levels":{}})",
                   422, "/pair/1", "must be an integer", "type"},
        strict_row{"unknown enum string lists the allowed values",
                   R"({"counts":{},"tags":[],"pair":[1,2],"status":"lost","history":[],)"
                   R"("levels":{}})",
                   422, "/status",
                   R"(must be one of "pending", "shipped" or "cancelled", not "lost")", "enum"},
        strict_row{"enum given a number is refused, not the first enumerator",
                   R"({"counts":{},"tags":[],"pair":[1,2],"status":1,"history":[],)"
                   R"("levels":{}})",
                   422, "/status", "not 1", "enum"},
        strict_row{"enum inside a vector",
                   R"({"counts":{},"tags":[],"pair":[1,2],"status":"pending",)"
                   R"("history":["shipped","Shipped"],"levels":{}})",
                   422, "/history/1", R"(not "Shipped")", "enum"},
        strict_row{"unknown members are ignored by default", "{" + good_containers + R"(,"x":1})",
                   201, std::nullopt, ""},
        strict_row{"a strict type refuses an unknown member, naming it",
                   R"({"label":"l","items":[{"sku":"a","quantity":1,"quantiy":2}]})", 422,
                   "/items/0/quantiy",
                   R"(unknown member "quantiy"; the object has "sku", "quantity")", "additionalProperties"},
        strict_row{"a strict type names every unknown member",
                   R"({"label":"l","items":[{"sku":"a","quantity":1,"b":0,"a":0}]})", 422,
                   "/items/0/a", R"(unknown members "a", "b")", "additionalProperties"},
        strict_row{"a lenient type around a strict one still ignores its own extras",
                   R"({"label":"l","extra":true,"items":[{"sku":"a","quantity":1}]})", 201,
                   std::nullopt, ""}));

TEST(UnknownMembers, ApplicationOptionRefusesThemForEveryType) {
  application app({}, typed_route_options{.unknown_json_members = unknown_members::refuse});
  app.post<shop::line_item>("/i", [](shop::line_item i) { return i; });
  response res = app.respond(json_request("POST", "/i", R"({"sku":"a","quantity":1,"qty":1})"));
  EXPECT_EQ(res.result_int(), 422u) << res.body();
  EXPECT_EQ(body_json(res).value("pointer", ""), "/qty");
  EXPECT_EQ(app.respond(json_request("POST", "/i", R"({"sku":"a","quantity":1})")).result_int(),
            201u);
}

TEST(UnknownMembers, PolicyEndsWithTheRequest) {
  application strict({}, typed_route_options{.unknown_json_members = unknown_members::refuse});
  strict.post<shop::line_item>("/i", [](shop::line_item i) { return i; });
  strict.respond(json_request("POST", "/i", R"({"sku":"a","quantity":1})"));
  shop::line_item item;
  EXPECT_NO_THROW(from_json(nlohmann::json{{"sku", "a"}, {"quantity", 1}, {"x", 0}}, item));
}

TEST(OutputOrder, MembersComeOutInDeclarationOrder) {
  application app;
  app.get<holes::declared_order>("/o", [] { return holes::declared_order{}; });
  EXPECT_EQ(answer(app, "GET", "/o").body(),
            R"({"zeta":"z","alpha":1,"mid":{"zulu":1,"alpha":2},"beta":{"a":1,"b":2}})");
}

TEST(OutputOrder, ContainersAndEnumsRoundTrip) {
  application app;
  app.post<holes::containers>("/c", [](holes::containers c) { return c; });
  std::string body =
      R"({"counts":{"a":1},"tags":["x","y"],"pair":[3,4],"status":"cancelled",)"
      R"("history":["shipped"],"levels":{"n":null}})";
  response res = app.respond(json_request("POST", "/c", body));
  EXPECT_EQ(res.result_int(), 201u) << res.body();
  EXPECT_EQ(res.body(), body);
}

// RFC 9110's reason phrases, on the status line as in the problem's title.
struct reason_row {
  const char* rule;
  std::string body;
  unsigned status;
  const char* reason;
};

class ReasonPhrase : public ::testing::TestWithParam<reason_row> {};

TEST_P(ReasonPhrase, StatusLineAgreesWithProblemTitle) {
  application app({}, typed_route_options{.json_body_limit = 64});
  app.post<shop::line_item>("/i", [](shop::line_item i) { return i; });
  response res = app.respond(json_request("POST", "/i", GetParam().body));
  EXPECT_EQ(res.result_int(), GetParam().status) << GetParam().rule;
  EXPECT_EQ(std::string(res.reason()), GetParam().reason) << GetParam().rule;
  EXPECT_EQ(body_json(res).value("title", ""), GetParam().reason) << GetParam().rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ReasonPhrase,
    ::testing::Values(reason_row{"422 Unprocessable Content", R"({"sku":1})", 422,
                                 "Unprocessable Content"},
                      reason_row{"413 Content Too Large", std::string(65, ' '), 413,
                                 "Content Too Large"},
                      reason_row{"400 keeps Beast's words", "{", 400, "Bad Request"}));

TEST(ReasonPhraseOwn, AHandlersOwnReasonIsKept) {
  application app;
  app.get("/r", [](context& ctx) {
    ctx.response().status(422);
    ctx.response().message().reason("Not Like That");
  });
  EXPECT_EQ(std::string(answer(app, "GET", "/r").reason()), "Not Like That");
}

// --- CBOR (RFC 8949) as well as JSON (issue 17) ------------------------------------------

std::string cbor_of(const nlohmann::json& value) {
  std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(value);
  return std::string(bytes.begin(), bytes.end());
}

request cbor_request(std::string body, std::string_view accept = "") {
  request req = json_request("POST", "/c", std::move(body), "application/cbor");
  if (!accept.empty()) req.set(http::field::accept, accept);
  return req;
}

class Cbor : public ::testing::Test {
 protected:
  Cbor() { app.post<holes::containers>("/c", [](holes::containers c) { return c; }); }
  application app{{.logger = [](std::string_view) {}}};
  nlohmann::json good = nlohmann::json::parse("{" + good_containers + "}");
};

TEST_F(Cbor, BodyIsReadWithTheSameRulesAndAnsweredInJsonByDefault) {
  response res = app.respond(cbor_request(cbor_of(good)));
  EXPECT_EQ(res.result_int(), 201u) << res.body();
  EXPECT_EQ(field(res, "Content-Type"), "application/json");
  EXPECT_EQ(field(res, "Vary"), "Accept");
  EXPECT_EQ(body_json(res), good);
}

TEST_F(Cbor, AcceptPreferringCborGetsCbor) {
  response res = app.respond(cbor_request(cbor_of(good), "application/cbor"));
  EXPECT_EQ(field(res, "Content-Type"), "application/cbor");
  std::vector<std::uint8_t> bytes(res.body().begin(), res.body().end());
  EXPECT_EQ(nlohmann::json::from_cbor(bytes), good);
}

TEST_F(Cbor, StrictnessAndProblemsAreTheSame) {
  nlohmann::json bad = good;
  bad["counts"]["b"] = 1.5;
  response res = app.respond(cbor_request(cbor_of(bad), "application/cbor"));
  EXPECT_EQ(res.result_int(), 422u);
  EXPECT_EQ(field(res, "Content-Type"), "application/problem+json");  // problems stay JSON
  EXPECT_EQ(body_json(res).value("pointer", ""), "/counts/b");
}

struct cbor_limit_row {
  const char* rule;
  std::string body;
  const char* detail;
};

class CborLimits : public Cbor, public ::testing::WithParamInterface<cbor_limit_row> {};

TEST_P(CborLimits, MalformedOrTooDeepIsA400NotACrash) {
  response res = app.respond(cbor_request(GetParam().body));
  EXPECT_EQ(res.result_int(), 400u) << GetParam().rule << ": " << res.body();
  EXPECT_NE(body_json(res).value("detail", "").find(GetParam().detail), std::string::npos)
      << GetParam().rule << ": " << res.body();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, CborLimits,
    ::testing::Values(
        cbor_limit_row{"truncated", std::string("\xA1\x61", 2),
                       "malformed CBOR at byte 0: map of 1 items where 1 bytes are left"},
        cbor_limit_row{"empty", "", "malformed CBOR at byte 0: truncated: an item expected"},
        cbor_limit_row{"trailing bytes", cbor_of(1) + "x",
                       "malformed CBOR at byte 1: 1 bytes after the item"},
        cbor_limit_row{"100,000 nested arrays", std::string(100'000, '\x81') + '\x01',
                       "malformed CBOR at byte 256: nested deeper than 256 levels"},
        cbor_limit_row{"100,000 nested maps",
                       [] {
                         std::string s;
                         for (int i = 0; i < 100'000; ++i) s += "\xA1\x61\x61";
                         return s + '\x01';
                       }(),
                       "malformed CBOR at byte 768: nested deeper than 256 levels"}));

struct accept_row {
  const char* accept;
  bool cbor;
};

class AcceptNegotiation : public Cbor, public ::testing::WithParamInterface<accept_row> {};

TEST_P(AcceptNegotiation, CborOnlyWhenRankedAboveJson) {
  response res = app.respond(cbor_request(cbor_of(good), GetParam().accept));
  EXPECT_EQ(field(res, "Content-Type"), GetParam().cbor ? "application/cbor" : "application/json")
      << GetParam().accept;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AcceptNegotiation,
    ::testing::Values(accept_row{"", false}, accept_row{"*/*", false},
                      accept_row{"application/json", false}, accept_row{"application/cbor", true},
                      accept_row{"application/json;q=0.5, application/cbor", true},
                      accept_row{"application/cbor;q=0.4, application/json;q=0.5", false},
                      accept_row{"application/cbor, application/json", false},
                      accept_row{"application/cbor, */*;q=0.1", true},
                      accept_row{"APPLICATION/CBOR", true},
                      accept_row{"application/*;q=0.2, application/cbor;q=0.3", true},
                      accept_row{"application/cbor;q=abc", false}));

}  // namespace
