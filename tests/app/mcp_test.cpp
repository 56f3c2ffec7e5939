// The Model Context Protocol endpoint (issue #28), in process: the named typed routes are the
// tools, their schemas one object of the route's inputs and body, a call runs the route
// through every layer and answers what the REST call answers, and the protocol's errors are
// the JSON-RPC codes the specification gives. tests/mcp/ drives it with the npm SDK.
#include "app_test_support.hpp"
#include "item_fixture.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/content/compression.hpp>
#include <waypoint/app/documents/mcp.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/typed/inputs.hpp>
#include <waypoint/app/typed/json.hpp>

#include <gtest/gtest.h>
#include <zlib.h>

#include <cctype>
#include <cstdint>
#include <optional>
#include <ostream>
#include <tuple>
#include <string>
#include <vector>

namespace tools {

using fixtures::item;

struct placed {
  std::string id;
  std::string org;
  std::string sku;
  std::int32_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(placed, id, org, sku, quantity)

struct place {
  std::string org;
  std::optional<std::string> request_id;
  item body;
  static constexpr auto inputs =
      waypoint::app::inputs(waypoint::app::from::path("org", &place::org),
                            waypoint::app::from::header("X-Trace-Tag", &place::request_id),
                            waypoint::app::from::body(&place::body));
};

struct listing {
  std::string org;
  std::int32_t limit = 10;
  std::vector<std::string> tag;
  static constexpr auto inputs = waypoint::app::inputs(
      waypoint::app::from::path("org", &listing::org),
      waypoint::app::from::query("limit", &listing::limit).or_default()
          .constraints(R"({"maximum":50})"),
      waypoint::app::from::query("tag", &listing::tag));
};

struct page {
  std::string org;
  std::int32_t limit = 0;
  std::vector<std::string> tags;
};
WAYPOINT_JSON_OBJECT(page, org, limit, tags)

// A body whose member clashes with an input: it stays nested under "body".
struct clash {
  std::string org;
  item body;
  static constexpr auto inputs = waypoint::app::inputs(
      waypoint::app::from::query("sku", &clash::org), waypoint::app::from::body(&clash::body));
};

// A body that must stay nested beside an input already named "body": no tool can hold both.
struct nested_beside_body {
  std::string sku, body;
  item content;
  static constexpr auto inputs =
      waypoint::app::inputs(waypoint::app::from::query("sku", &nested_beside_body::sku),
                            waypoint::app::from::query("body", &nested_beside_body::body),
                            waypoint::app::from::body(&nested_beside_body::content));
};

// Two inputs of one name: no tool can hold both.
struct twice {
  std::string a, b;
  static constexpr auto inputs = waypoint::app::inputs(waypoint::app::from::query("x", &twice::a),
                                                       waypoint::app::from::header("x", &twice::b));
};

// A conditional read: the handler sets an ETag, and an If-None-Match naming it is a 304.
struct versioned {
  std::string org;
  std::optional<std::string> if_none_match;
  static constexpr auto inputs = waypoint::app::inputs(
      waypoint::app::from::path("org", &versioned::org),
      waypoint::app::from::header("If-None-Match", &versioned::if_none_match));
};

}  // namespace tools

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

struct token {
  std::string who;
};

void add_tools(application& app) {
  app.post<tools::place, tools::placed>("/orgs/{org}/items", [](tools::place in) {
       return tools::placed{"i-1", in.org, in.body.sku, in.body.quantity};
     })
      .describe({.name = "placeItem", .summary = "Place an item", .description = "Adds one."});
  app.get<tools::page>("/orgs/{org}/items", [](const tools::listing& in) {
       return tools::page{in.org, in.limit, in.tag};
     })
      .describe({.name = "listItems"});
  app.put<tools::clash, tools::item>("/clash", [](tools::clash in) { return in.body; })
      .describe({.name = "clash"});
  app.del<void>("/orgs/{org}", [] {}).describe({.name = "dropOrg"});
  app.post<tools::item, tools::item>("/unnamed", [](tools::item in) { return in; });
  app.post<tools::item, tools::item>("/hidden", [](tools::item in) { return in; })
      .describe({.name = "hidden", .tool = false});
  // Behind an authentication layer: a request without a bearer token is refused by it.
  auto secured = app.group("/secure", layer_hooks{[](context& ctx) {
                             if (ctx.header(http::field::authorization) != "Bearer good") {
                               ctx.response().problem(401, "a bearer token is required");
                               return false;
                             }
                             ctx.set(token{"ada"});
                             return true;
                           }});
  secured.get<tools::page>("/whoami", [](context& ctx) {
           return tools::page{ctx.get<token>().who, 0, {}};
         })
      .describe({.name = "whoami"});
  serve_mcp(app, {.allowed_origins = {"https://agent.example"}});
}

request rpc(std::string body, std::initializer_list<header_field> extra = {}) {
  request req = make_request("POST", "/mcp", extra, std::move(body));
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "application/json, text/event-stream");
  return req;
}

nlohmann::json call(application& app, const std::string& method, const nlohmann::json& params,
                    std::initializer_list<header_field> extra = {}) {
  nlohmann::json message = {{"jsonrpc", "2.0"}, {"id", 7}, {"method", method}, {"params", params}};
  response res = app.respond(rpc(message.dump(), extra));
  EXPECT_EQ(res.result_int(), 200u) << res.body();
  EXPECT_EQ(field(res, "Content-Type"), "application/json");
  nlohmann::json answer = body_json(res);
  EXPECT_EQ(answer.value("id", 0), 7) << res.body();
  return answer;
}

nlohmann::json tool_named(const nlohmann::json& list, std::string_view name) {
  for (const auto& t : list["result"]["tools"])
    if (t["name"] == name) return t;
  return nullptr;
}

TEST(McpLifecycle, InitializeAgreesOnTheClientsVersionOrOffersTheNewest) {
  application app;
  add_tools(app);
  nlohmann::json a = call(app, "initialize", {{"protocolVersion", "2025-06-18"},
                                               {"capabilities", nlohmann::json::object()},
                                               {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  EXPECT_EQ(a["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(a["result"]["capabilities"]["tools"]["listChanged"], false);
  EXPECT_EQ(a["result"]["serverInfo"]["name"], "waypoint");
  nlohmann::json b = call(app, "initialize", {{"protocolVersion", "2099-01-01"}});
  EXPECT_EQ(b["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(call(app, "ping", nlohmann::json::object())["result"], nlohmann::json::object());
}

TEST(McpTools, EveryNamedTypedRouteIsAToolUnlessItOptsOut) {
  application app;
  add_tools(app);
  nlohmann::json list = call(app, "tools/list", nlohmann::json::object());
  std::vector<std::string> names;
  for (const auto& t : list["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"placeItem", "listItems", "clash", "dropOrg", "whoami"}));
}

TEST(McpTools, TheInputSchemaHoldsTheInputsAndTheBodysMembersFlattened) {
  application app;
  add_tools(app);
  nlohmann::json t = tool_named(call(app, "tools/list", nlohmann::json::object()), "placeItem");
  EXPECT_EQ(t["title"], "Place an item");
  EXPECT_EQ(t["description"], "Adds one.");
  nlohmann::json input = t["inputSchema"];
  EXPECT_EQ(input["type"], "object");
  std::vector<std::string> properties;
  for (auto it = input["properties"].begin(); it != input["properties"].end(); ++it)
    properties.push_back(it.key());
  std::sort(properties.begin(), properties.end());
  EXPECT_EQ(properties, (std::vector<std::string>{"X-Trace-Tag", "org", "quantity", "sku"}));
  EXPECT_EQ(input["properties"]["quantity"]["minimum"], 1);
  std::vector<std::string> required = input["required"];
  std::sort(required.begin(), required.end());
  EXPECT_EQ(required, (std::vector<std::string>{"org", "quantity", "sku"}));
  EXPECT_EQ(t["outputSchema"]["type"], "object");
  EXPECT_TRUE(t["outputSchema"]["properties"].contains("id"));
  EXPECT_EQ(t["annotations"]["readOnlyHint"], false);
  EXPECT_EQ(t["annotations"]["idempotentHint"], false);
  EXPECT_EQ(t["annotations"]["destructiveHint"], false);
}

TEST(McpTools, ABodyWhoseMemberNamesAnInputStaysNestedUnderBody) {
  application app;
  add_tools(app);
  nlohmann::json t = tool_named(call(app, "tools/list", nlohmann::json::object()), "clash");
  EXPECT_TRUE(t["inputSchema"]["properties"].contains("body")) << t.dump();
  EXPECT_EQ(t["inputSchema"]["properties"]["body"]["$ref"], "#/$defs/item") << t.dump();
  EXPECT_TRUE(t["inputSchema"]["$defs"].contains("item")) << t.dump();
  EXPECT_EQ(t["annotations"]["idempotentHint"], true);
  nlohmann::json r = call(app, "tools/call",
                          {{"name", "clash"}, {"arguments", {{"sku", "q"}, {"body", {{"sku", "k"}, {"quantity", 2}}}}}});
  EXPECT_EQ(r["result"]["structuredContent"], nlohmann::json::parse(R"({"sku":"k","quantity":2})"))
      << r.dump();
}

TEST(McpTools, AnnotationsFollowTheMethod) {
  application app;
  add_tools(app);
  nlohmann::json list = call(app, "tools/list", nlohmann::json::object());
  EXPECT_EQ(tool_named(list, "listItems")["annotations"]["readOnlyHint"], true);
  nlohmann::json drop = tool_named(list, "dropOrg");
  EXPECT_EQ(drop["annotations"]["destructiveHint"], true);
  EXPECT_EQ(drop["annotations"]["idempotentHint"], true);
  EXPECT_FALSE(drop.contains("outputSchema")) << "a 204 route answers no object";
}

TEST(McpCalls, AToolCallAnswersWhatTheRestCallAnswers) {
  application app;
  add_tools(app);
  nlohmann::json r = call(app, "tools/call",
                          {{"name", "listItems"},
                           {"arguments", {{"org", "a b"}, {"limit", 5}, {"tag", {"x", "y"}}}}});
  response rest = app.respond(make_request("GET", "/orgs/a%20b/items?limit=5&tag=x&tag=y"));
  ASSERT_EQ(rest.result_int(), 200u) << rest.body();
  EXPECT_EQ(r["result"]["structuredContent"], body_json(rest)) << r.dump();
  EXPECT_EQ(r["result"]["content"][0]["text"], rest.body());
  EXPECT_FALSE(r["result"].contains("isError"));

  // Many values of a repeated key: each one's text stays where the path builder reads it.
  nlohmann::json many = nlohmann::json::array();
  for (int i = 0; i < 200; ++i) many.push_back("tag-" + std::to_string(i));
  nlohmann::json tags = call(app, "tools/call",
                             {{"name", "listItems"}, {"arguments", {{"org", "o"}, {"tag", many}}}});
  EXPECT_EQ(tags["result"]["structuredContent"]["tags"], many) << tags.dump().substr(0, 300);

  nlohmann::json placed = call(app, "tools/call",
                               {{"name", "placeItem"},
                                {"arguments", {{"org", "acme"}, {"sku", "k"}, {"quantity", 3}}}});
  EXPECT_EQ(placed["result"]["structuredContent"],
            nlohmann::json::parse(R"({"id":"i-1","org":"acme","sku":"k","quantity":3})"))
      << placed.dump();
}

TEST(McpCalls, ABrokenConstraintIsAnErrorResultWithThePointer) {
  application app;
  add_tools(app);
  nlohmann::json r = call(app, "tools/call",
                          {{"name", "placeItem"},
                           {"arguments", {{"org", "acme"}, {"sku", "k"}, {"quantity", 0}}}});
  EXPECT_EQ(r["result"]["isError"], true) << r.dump();
  std::string text = r["result"]["content"][0]["text"];
  EXPECT_NE(text.find("422"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(pointer "/quantity")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(keyword "minimum")"), std::string::npos) << text;
  nlohmann::json q = call(app, "tools/call",
                          {{"name", "listItems"}, {"arguments", {{"org", "a"}, {"limit", 99}}}});
  EXPECT_EQ(q["result"]["isError"], true) << q.dump();
}

TEST(McpCalls, TheRoutesLayersRunAndSeeTheCallersAuthorization) {
  application app;
  add_tools(app);
  nlohmann::json refused = call(app, "tools/call", {{"name", "whoami"}});
  EXPECT_EQ(refused["result"]["isError"], true) << refused.dump();
  EXPECT_NE(refused["result"]["content"][0]["text"].get<std::string>().find("401"), std::string::npos);
  nlohmann::json allowed =
      call(app, "tools/call", {{"name", "whoami"}}, {{"Authorization", "Bearer good"}});
  EXPECT_EQ(allowed["result"]["structuredContent"]["org"], "ada") << allowed.dump();
}

// --- the protocol's errors -----------------------------------------------------------------

struct error_row {
  const char* rule;
  std::string body;
  unsigned status;
  int code;  // 0: no JSON-RPC error expected
};

class McpErrors : public ::testing::TestWithParam<error_row> {};

TEST_P(McpErrors, EachMistakeGetsItsCode) {
  const error_row& row = GetParam();
  application app;
  add_tools(app);
  response res = app.respond(rpc(row.body));
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  if (row.code != 0) {
    EXPECT_EQ(body_json(res)["error"]["code"], row.code) << row.rule << ": " << res.body();
  } else {
    EXPECT_TRUE(res.body().empty()) << row.rule << ": " << res.body();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, McpErrors,
    ::testing::Values(
        error_row{"not JSON", "{", 400, -32700},
        error_row{"a batch", R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", 400, -32600},
        error_row{"not JSON-RPC 2.0", R"({"id":1,"method":"ping"})", 400, -32600},
        error_row{"a jsonrpc that is not a string", R"({"jsonrpc":{},"id":1,"method":"ping"})", 400, -32600},
        error_row{"a jsonrpc that is a number", R"({"jsonrpc":2.0,"id":1,"method":"ping"})", 400, -32600},
        error_row{"an id that is an object", R"({"jsonrpc":"2.0","id":{},"method":"ping"})", 400, -32600},
        error_row{"an unknown method", R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})", 200, -32601},
        error_row{"params that are not an object", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[]})", 200, -32602},
        error_row{"initialize without a version", R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})", 200, -32602},
        error_row{"an unknown tool", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}})", 200, -32602},
        error_row{"a tool left out is unknown", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hidden"}})", 200, -32602},
        error_row{"a path input missing", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listItems","arguments":{}}})", 200, -32602},
        error_row{"a path input that cannot route back", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listItems","arguments":{"org":".."}}})", 200, -32602},
        error_row{"an argument that is an object", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listItems","arguments":{"org":{}}}})", 200, -32602},
        error_row{"a notification is 202 without a body", R"({"jsonrpc":"2.0","method":"notifications/initialized"})", 202, 0},
        error_row{"a response from the client is 202", R"({"jsonrpc":"2.0","id":3,"result":{}})", 202, 0}));

TEST(McpHttp, GetIs405AndForeignOriginsAre403) {
  application app;
  add_tools(app);
  response get = app.respond(make_request("GET", "/mcp", {{"Accept", "text/event-stream"}}));
  EXPECT_EQ(get.result_int(), 405u);
  EXPECT_NE(field(get, "Allow").find("POST"), std::string::npos);
  std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  EXPECT_EQ(app.respond(rpc(ping, {{"Origin", "https://evil.example"}})).result_int(), 403u);
  // DNS rebinding: the rebound name is both the Host and the Origin.
  EXPECT_EQ(app.respond(rpc(ping, {{"Host", "evil.example"}, {"Origin", "http://evil.example"}}))
                .result_int(),
            403u);
  EXPECT_EQ(app.respond(rpc(ping, {{"Origin", "http://example.com"}})).result_int(), 403u)
      << "the request's own authority is not enough";
  for (const char* loopback : {"http://localhost:6274", "http://127.0.0.1", "http://[::1]:8080"})
    EXPECT_EQ(app.respond(rpc(ping, {{"Origin", loopback}})).result_int(), 200u) << loopback;
  EXPECT_EQ(app.respond(rpc(ping, {{"Origin", "http://localhost.evil.example"}})).result_int(), 403u);
  EXPECT_EQ(app.respond(rpc(ping, {{"Origin", "https://agent.example"}})).result_int(), 200u)
      << "an allowed origin";
  EXPECT_EQ(app.respond(rpc(ping, {{"MCP-Protocol-Version", "1999-01-01"}})).result_int(), 400u);
  EXPECT_EQ(app.respond(rpc(ping, {{"MCP-Protocol-Version", "2025-06-18"}})).result_int(), 200u);
  request text = rpc(ping);
  text.set(http::field::content_type, "text/plain");
  EXPECT_EQ(app.respond(text).result_int(), 415u);
  // Read by the one media-type reader: parameters and case aside, and a parameter twice is
  // the client's error, named.
  for (const char* json : {"application/json; charset=utf-8", "Application/JSON"}) {
    text.set(http::field::content_type, json);
    EXPECT_EQ(app.respond(text).result_int(), 200u) << json;
  }
  text.set(http::field::content_type, "application/json; charset=utf-8; charset=latin1");
  response twice = app.respond(text);
  EXPECT_EQ(twice.result_int(), 400u);
  EXPECT_NE(twice.body().find("charset\\\" twice"), std::string::npos) << twice.body();
}

TEST(McpHttp, TheEndpointIsNotInTheDocument) {
  application app;
  add_tools(app);
  EXPECT_FALSE(openapi(app)["paths"].contains("/mcp"));
}

TEST(McpRegistration, TwoInputsOfOneNameFailFreeze) {
  application app;
  app.get<tools::item>("/t", [](tools::twice) { return tools::item{}; }).describe({.name = "t"});
  serve_mcp(app);
  try {
    app.freeze();
    FAIL() << "freeze() accepted a tool with two inputs named x";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("two of its inputs are named \"x\""), std::string::npos)
        << e.what();
  }
}

TEST(McpRegistration, ANestedBodyBesideAnInputNamedBodyFailsFreeze) {
  application app;
  app.post<tools::nested_beside_body, tools::item>(
         "/n", [](tools::nested_beside_body in) { return in.content; })
      .describe({.name = "n"});
  serve_mcp(app);
  try {
    app.freeze();
    FAIL() << "freeze() accepted a tool whose nested body clashes with an input named body";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("an input is named \"body\" and the body cannot be "
                                         "flattened"),
              std::string::npos)
        << e.what();
  }
}

// --- client values are bounded before anything recurses over them -------------------------

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string nested_objects(std::size_t depth) {
  std::string s;
  s.reserve(depth * 6 + 1);
  for (std::size_t i = 0; i < depth; ++i) s += R"({"a":)";
  return s + "1" + std::string(depth, '}');
}

std::string gzipped(std::string_view text) {
  std::string out(compressBound(static_cast<uLong>(text.size())) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct deep_row {
  const char* member;  // where the deep value is
  std::string body;
};

std::vector<deep_row> deep_rows() {
  std::string deep = nested_arrays(100'000);
  std::string deep_object = nested_objects(100'000);
  return {
      {"id", R"({"jsonrpc":"2.0","method":"ping","id":)" + deep + "}"},
      {"params", R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" + deep_object + "}}"},
      {"arguments", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"placeItem",)"
                    R"("arguments":{"org":"a","sku":"k","quantity":1,"extra":)" + deep + "}}}"},
      {"the body argument", R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"clash",)"
                            R"("arguments":{"body":)" + deep_object + "}}}"},
  };
}

void PrintTo(const deep_row& row, std::ostream* os) { *os << row.member; }

class McpDeepValues : public ::testing::TestWithParam<std::tuple<deep_row, bool>> {};

// 100,000 levels (200-600 KB, under the 1 MiB limit; a few hundred bytes gzipped) in each
// member a handler copies or dumps: refused when parsed, a 400 naming the rule, never a
// stack overflow. Before the bound, each of these was a SIGSEGV.
TEST_P(McpDeepValues, AreA400NotAStackOverflow) {
  const auto& [row, gzip] = GetParam();
  ASSERT_LT(row.body.size(), 1024u * 1024u) << row.member;
  application app;
  app.use(compression());
  add_tools(app);
  request req = rpc(gzip ? gzipped(row.body) : row.body);
  if (gzip) {
    req.set(http::field::content_encoding, "gzip");
    req.prepare_payload();
    EXPECT_LT(req.body().size(), 4096u) << row.member;
  }
  response res = app.respond(req);
  ASSERT_EQ(res.result_int(), 400u) << row.member << ": " << res.body().substr(0, 300);
  nlohmann::json answer = body_json(res);
  EXPECT_EQ(answer["error"]["code"], -32700) << row.member;
  EXPECT_NE(answer["error"]["message"].get<std::string>().find("nested deeper than 256 levels"),
            std::string::npos)
      << row.member << ": " << res.body();
}

INSTANTIATE_TEST_SUITE_P(Members, McpDeepValues,
                         ::testing::Combine(::testing::ValuesIn(deep_rows()), ::testing::Bool()),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param).member;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name + (std::get<1>(info.param) ? "_gzip" : "_plain");
                         });

TEST(McpBounds, ValuesAtTheDepthLimitAreAccepted) {
  application app;
  add_tools(app);
  // The message object, "params", "x": three levels around the value.
  std::string within = nested_arrays(max_json_depth - 3);
  response res = app.respond(
      rpc(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" + within + "}}"));
  EXPECT_EQ(res.result_int(), 200u) << res.body().substr(0, 300);
  response over = app.respond(
      rpc(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" + within + "[]}}"));
  EXPECT_EQ(over.result_int(), 400u) << over.body().substr(0, 300);
}

// --- client errors are 4xx with a JSON-RPC body, never a 500 -------------------------------

struct client_error_row {
  const char* rule;
  std::string body;
  std::vector<header_field> headers;
  unsigned status;
  int code;
  const char* says;  // in the error's message
};

void PrintTo(const client_error_row& row, std::ostream* os) { *os << row.rule; }

class McpClientErrors : public ::testing::TestWithParam<client_error_row> {};

TEST_P(McpClientErrors, AreAnsweredWithWhy) {
  const client_error_row& row = GetParam();
  application app;
  add_tools(app);
  request req = rpc(row.body);
  for (const header_field& h : row.headers) req.set(h.name, h.value);
  response res = app.respond(req);
  ASSERT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body().substr(0, 300);
  nlohmann::json answer = nlohmann::json::parse(res.body(), nullptr, false);
  ASSERT_TRUE(answer.is_object()) << row.rule << ": " << res.body().substr(0, 300);
  EXPECT_EQ(answer["error"]["code"], row.code) << row.rule;
  EXPECT_NE(answer["error"]["message"].get<std::string>().find(row.says), std::string::npos)
      << row.rule << ": " << answer["error"]["message"];
}

std::string place_with_header(std::string value) {
  nlohmann::json message = {
      {"jsonrpc", "2.0"},
      {"id", 1},
      {"method", "tools/call"},
      {"params",
       {{"name", "placeItem"},
        {"arguments", {{"org", "a"}, {"sku", "k"}, {"quantity", 1}, {"X-Trace-Tag", std::move(value)}}}}}};
  return message.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, McpClientErrors,
    ::testing::Values(
        client_error_row{"invalid UTF-8 in a string of the body",
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}",
                         {}, 400, -32700, "malformed JSON at byte"},
        client_error_row{"invalid UTF-8 outside a string", "{\"jsonrpc\":\"2.0\",\xc3\x28}", {}, 400,
                         -32700, "malformed JSON at byte"},
        client_error_row{"invalid UTF-8 in MCP-Protocol-Version", R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
                         {{"MCP-Protocol-Version", "2025-06-18\xff"}}, 400, -32600,
                         "is not one this server speaks"},
        // Argument mistakes are the call's (-32602, HTTP 200, as every other argument error):
        // the message was accepted, its params were not.
        client_error_row{"a header argument over 64 KiB", place_with_header(std::string(70'000, 'h')), {},
                         200, -32602, "is 70000 bytes; at most 16384"},
        client_error_row{"a header argument over the header limit",
                         place_with_header(std::string(16 * 1024 + 1, 'h')), {}, 200, -32602,
                         "at most 16384"},
        client_error_row{"a header argument with a line break", place_with_header("a\r\nX-Evil: 1"), {},
                         200, -32602, "holds a control character"}));

TEST(McpBounds, AHeaderArgumentWithinTheLimitIsSent) {
  application app;
  add_tools(app);
  response res = app.respond(rpc(place_with_header(std::string(16 * 1024, 'h'))));
  ASSERT_EQ(res.result_int(), 200u) << res.body().substr(0, 300);
  nlohmann::json answer = body_json(res);
  EXPECT_FALSE(answer["result"].contains("isError")) << res.body().substr(0, 300);
}

// --- the Origin check reads origins with the one URL parser --------------------------------

struct origin_row {
  const char* origin;
  unsigned status;
};

void PrintTo(const origin_row& row, std::ostream* os) { *os << row.origin; }

class McpOrigins : public ::testing::TestWithParam<origin_row> {};

TEST_P(McpOrigins, OnlyLoopbackOrListedOriginsPass) {
  application app;
  add_tools(app);
  response res =
      app.respond(rpc(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Origin", GetParam().origin}}));
  EXPECT_EQ(res.result_int(), GetParam().status) << GetParam().origin << ": " << res.body();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, McpOrigins,
    ::testing::Values(origin_row{"http://localhost", 200}, origin_row{"http://localhost:6274", 200},
                      origin_row{"HTTPS://LocalHost:443", 200}, origin_row{"http://127.0.0.1", 200},
                      origin_row{"http://[::1]:8080", 200}, origin_row{"http://[::1]", 200},
                      origin_row{"https://agent.example", 200},
                      // userinfo: the host is evil.example
                      origin_row{"http://localhost:80@evil.example", 403},
                      origin_row{"http://localhost@evil.example", 403},
                      // text after the IPv6 literal
                      origin_row{"http://[::1]evil", 403}, origin_row{"http://[::1]evil.example:80", 403},
                      origin_row{"http://[::1", 403}, origin_row{"http://localhost.evil.example", 403},
                      origin_row{"http://127.0.0.1.evil.example", 403},
                      origin_row{"http://localhost/evil", 403}, origin_row{"http://localhost:", 403},
                      origin_row{"http://localhost:80x", 403}, origin_row{"ftp://localhost", 403},
                      origin_row{"null", 403}, origin_row{"localhost", 403}));

// --- a 304 is a result -----------------------------------------------------------------------

TEST(McpCalls, A304FromAConditionalRouteIsNotAnError) {
  application app;
  app.get<tools::page>("/orgs/{org}/page", [](context& ctx, const tools::versioned& in) {
       ctx.response().header("ETag", "\"v1\"");
       return tools::page{in.org, 1, {}};
     })
      .describe({.name = "readPage"});
  serve_mcp(app);
  nlohmann::json fresh =
      call(app, "tools/call", {{"name", "readPage"}, {"arguments", {{"org", "a"}}}});
  EXPECT_EQ(fresh["result"]["structuredContent"]["org"], "a") << fresh.dump();
  nlohmann::json same = call(app, "tools/call",
                             {{"name", "readPage"},
                              {"arguments", {{"org", "a"}, {"If-None-Match", "\"v1\""}}}});
  EXPECT_FALSE(same["result"].contains("isError")) << same.dump();
  std::string text = same["result"]["content"][0]["text"];
  EXPECT_NE(text.find("304 Not Modified"), std::string::npos) << text;
  EXPECT_NE(text.find("\"v1\""), std::string::npos) << text;
  nlohmann::json other = call(app, "tools/call",
                              {{"name", "readPage"},
                               {"arguments", {{"org", "a"}, {"If-None-Match", "\"v0\""}}}});
  EXPECT_EQ(other["result"]["structuredContent"]["org"], "a") << other.dump();
}

}  // namespace
