// schema.hpp and openapi.hpp: JSON Schema from C++ types, the OpenAPI document of an
// application (paths from patterns, operations from route descriptions and typed routes,
// problem responses), and serving the document and its page.
#include "app_test_support.hpp"
#include "orders.hpp"

#include <waypoint/app/typed/json.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/security/rate_limit.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace catalog {

enum class colour { red, green };
NLOHMANN_JSON_SERIALIZE_ENUM(colour, {{colour::red, "red"}, {colour::green, "green"}})

struct part {
  std::string sku;
  std::optional<std::int16_t> weight;
};
WAYPOINT_JSON_STRICT_OBJECT(part, sku, weight)

struct tree {
  std::string label;
  std::vector<tree> children;
};
WAYPOINT_JSON_OBJECT(tree, label, children)

struct product {
  std::string name;
  colour shade = colour::red;
  std::array<double, 2> size{};
  std::set<std::string> tags;
  std::map<std::string, std::uint32_t> stock;
  std::vector<part> parts;
  std::optional<part> spare;
};
WAYPOINT_JSON_OBJECT(product, name, shade, size, tags, stock, parts, spare)
inline nlohmann::ordered_json schema_constraints(const product*) {
  return {{"properties", {{"name", {{"minLength", 1}}}}}};
}

}  // namespace catalog

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using json = nlohmann::ordered_json;

struct schema_row {
  const char* rule;
  json schema;
  json expected;
};

class Schema : public ::testing::TestWithParam<schema_row> {};

TEST_P(Schema, FollowsTheReadingRules) {
  EXPECT_EQ(GetParam().schema, GetParam().expected) << GetParam().rule << "\n"
                                                    << GetParam().schema.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Schema,
    ::testing::Values(
        schema_row{"int8 has its exact range", json_schema<std::int8_t>(),
                   json::parse(R"({"type":"integer","format":"int8","minimum":-128,"maximum":127})")},
        schema_row{"uint64 reaches 2^64-1", json_schema<std::uint64_t>(),
                   json::parse(R"({"type":"integer","format":"uint64","minimum":0,)"
                               R"("maximum":18446744073709551615})")},
        schema_row{"int32", json_schema<std::int32_t>(),
                   json::parse(R"({"type":"integer","format":"int32","minimum":-2147483648,)"
                               R"("maximum":2147483647})")},
        schema_row{"double", json_schema<double>(),
                   json::parse(R"({"type":"number","format":"double"})")},
        schema_row{"bool", json_schema<bool>(), json::parse(R"({"type":"boolean"})")},
        schema_row{"optional allows null", json_schema<std::optional<std::string>>(),
                   json::parse(R"({"type":["string","null"]})")},
        schema_row{"std::array has its length", json_schema<std::array<bool, 3>>(),
                   json::parse(R"({"type":"array","items":{"type":"boolean"},"minItems":3,)"
                               R"("maxItems":3})")},
        schema_row{"a set has unique items", json_schema<std::set<std::string>>(),
                   json::parse(R"({"type":"array","items":{"type":"string"},"uniqueItems":true})")},
        schema_row{"a map is additionalProperties", json_schema<std::map<std::string, bool>>(),
                   json::parse(R"({"type":"object","additionalProperties":{"type":"boolean"}})")},
        schema_row{"an enum lists its values", json_schema<catalog::colour>(),
                   json::parse(R"({"type":"string","enum":["red","green"]})")},
        schema_row{"a strict object refuses additional properties", json_schema<catalog::part>(),
                   json::parse(R"({"$defs":{"part":{"type":"object","properties":{)"
                               R"("sku":{"type":"string"},"weight":{"type":["integer","null"],)"
                               R"("format":"int16","minimum":-32768,"maximum":32767}},)"
                               R"("required":["sku"],"additionalProperties":false}},)"
                               R"("$ref":"#/$defs/part"})")},
        schema_row{"a recursive object refers to itself", json_schema<catalog::tree>(),
                   json::parse(R"({"$defs":{"tree":{"type":"object","properties":{)"
                               R"("label":{"type":"string"},"children":{"type":"array",)"
                               R"("items":{"$ref":"#/$defs/tree"}}},)"
                               R"("required":["label","children"]}},"$ref":"#/$defs/tree"})")}));

TEST(Schema, ObjectsKeepDeclarationOrderNestAsRefsAndTakeConstraints) {
  json s = json_schema<catalog::product>();
  const json& product = s["$defs"]["product"];
  std::vector<std::string> order;
  for (const auto& [name, value] : product["properties"].items()) order.push_back(name);
  EXPECT_EQ(order, (std::vector<std::string>{"name", "shade", "size", "tags", "stock", "parts",
                                             "spare"}));
  EXPECT_EQ(product["properties"]["name"]["minLength"], 1);
  EXPECT_EQ(product["properties"]["parts"]["items"], json({{"$ref", "#/$defs/part"}}));
  EXPECT_EQ(product["properties"]["spare"],
            json::parse(R"({"anyOf":[{"$ref":"#/$defs/part"},{"type":"null"}]})"));
  EXPECT_EQ(product["required"], json::parse(R"(["name","shade","size","tags","stock","parts"])"));
  EXPECT_FALSE(product.contains("additionalProperties"));
  EXPECT_TRUE(json_schema<catalog::product>(true)["$defs"]["product"]["additionalProperties"] ==
              false);
}

// --- the document -------------------------------------------------------------------

class Document : public ::testing::Test {
 protected:
  Document() {
    waypoint::examples::add_order_routes(app);
    auto catalog = app.group("/v1/catalog");
    catalog.tag_routes("catalog");
    catalog.get("/products/{id}", [](context&) {})
        .describe({.name = "product", .description = "One product."})
        .path_param<std::uint32_t>("id", "the product number");
    catalog.put<catalog::product>("/products/{id}", [](catalog::product p) { return p; });
    catalog.del<void>("/products/{id}", [] {});
    app.get("/files/{path...}", [](context&) {});
    app.get("/static/", [](context&) {});
    app.get("/dir/{$}", [](context&) {});
    app.get("api.example.com/status", [](context&) {});
    app.handle("/any", [](context&) {});
    app.handle("PURGE /cache", [](context&) {});
    doc = openapi<json>(app, {.title = "Test", .version = "9"});
  }
  const json& op(const char* path, const char* method) { return doc["paths"][path][method]; }

  application app;
  json doc;
};

TEST_F(Document, HasInfoPathsAndComponents) {
  EXPECT_EQ(doc["openapi"], "3.1.0");
  EXPECT_EQ(doc["info"], json::parse(R"({"title":"Test","version":"9"})"));
  EXPECT_TRUE(doc["components"]["schemas"].contains("Problem"));
  EXPECT_TRUE(doc["components"]["schemas"].contains("order_request"));
  EXPECT_TRUE(doc["components"]["schemas"].contains("part"));
  EXPECT_EQ(doc["x-waypoint-unrouted"]["405"]["$ref"], "#/components/responses/MethodNotAllowed");
}

TEST_F(Document, TypedPostHasItsBodySuccessAndProblems) {
  const json& post = op("/v1/commerce/orders", "post");
  EXPECT_EQ(post["operationId"], "placeOrder");
  EXPECT_EQ(post["summary"], "Place an order");
  EXPECT_EQ(post["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/order_request");
  EXPECT_EQ(post["responses"]["201"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/order");
  // The same schemas in CBOR, which typed routes read and answer in when Accept asks.
  EXPECT_EQ(post["requestBody"]["content"]["application/cbor"],
            post["requestBody"]["content"]["application/json"]);
  EXPECT_EQ(post["responses"]["201"]["content"]["application/cbor"],
            post["responses"]["201"]["content"]["application/json"]);
  for (const char* status : {"400", "413", "415", "422", "500"})
    EXPECT_TRUE(post["responses"].contains(status)) << status;
  EXPECT_EQ(doc["components"]["responses"]["UnprocessableContent"]["content"]
               ["application/problem+json"]["schema"]["$ref"],
            "#/components/schemas/Problem");
}

TEST_F(Document, DeclaredPathParametersTagsAndDeletes) {
  const json& get = op("/v1/catalog/products/{id}", "get");
  EXPECT_EQ(get["operationId"], "product");
  EXPECT_EQ(get["tags"], json::parse(R"(["catalog"])"));
  EXPECT_EQ(get["parameters"][0]["schema"]["format"], "uint32");
  EXPECT_EQ(get["parameters"][0]["description"], "the product number");
  EXPECT_EQ(get["responses"].contains("default"), true);  // untyped
  const json& put = op("/v1/catalog/products/{id}", "put");
  EXPECT_EQ(put["operationId"], "put_v1_catalog_products_id");
  EXPECT_EQ(put["parameters"][0]["schema"]["type"], "string");
  EXPECT_TRUE(op("/v1/catalog/products/{id}", "delete")["responses"].contains("204"));
  EXPECT_EQ(doc["tags"], json::parse(R"([{"name":"catalog"}])"));
}

TEST_F(Document, MatchingRulesHostsAndMethodsAreFaithful) {
  EXPECT_EQ(op("/files/{path}", "get")["x-waypoint-match"], "subtree");
  EXPECT_NE(op("/files/{path}", "get")["description"].get<std::string>().find("{path...}"),
            std::string::npos);
  EXPECT_EQ(op("/static/", "get")["x-waypoint-match"], "subtree");
  EXPECT_EQ(op("/dir/", "get")["x-waypoint-match"], "exact");
  EXPECT_EQ(doc["paths"]["/status"]["x-waypoint-host"], "api.example.com");
  EXPECT_EQ(doc["paths"]["/status"]["servers"][0]["url"], "//api.example.com");
  for (const char* m : {"get", "put", "post", "delete", "options", "head", "patch", "trace"})
    EXPECT_EQ(op("/any", m)["operationId"], std::string("any_any_") + m) << m;
  EXPECT_FALSE(doc["paths"].contains("/cache"));
  EXPECT_EQ(doc["x-waypoint-unplaced"][0]["pattern"], "PURGE /cache");
  EXPECT_FALSE(doc["paths"]["/v1/commerce/orders"].contains("head"));  // GET implies HEAD
}

TEST(OtherRoutes, AreDocumentedAsUntyped) {
  application app;
  json doc = openapi<json>(app, {.other_routes = {"GET /v1/iam/users/{userId}"}});
  const json& get = doc["paths"]["/v1/iam/users/{userId}"]["get"];
  EXPECT_EQ(get["operationId"], "get_v1_iam_users_userId");
  EXPECT_EQ(get["parameters"][0]["name"], "userId");
}

// --- what layers answer: a rate limit's 429 (issue 44) -------------------------------

// A store that cannot answer, as Redis down would be.
struct failing_store : rate_limit_store {
  rate_limit_decision take(const rate_limit_policy&, std::string_view) override {
    throw std::runtime_error("the store is down");
  }
};

TEST(LayerAnswers, ARateLimitedOperationDocumentsIts429AndItsFields) {
  application app;
  auto limited = app.group("/v1/limited", rate_limit({.rate = 1, .burst = 1}));
  limited.get<catalog::part>("/parts", [] { return catalog::part{"a", {}}; });
  app.get<catalog::part>("/free", [] { return catalog::part{"b", {}}; });
  json doc = openapi<json>(app, {});
  json responses = doc["paths"]["/v1/limited/parts"]["get"]["responses"];  // a copy: [] adds
  EXPECT_EQ(responses["429"]["$ref"], "#/components/responses/TooManyRequests") << responses.dump();
  EXPECT_FALSE(responses.contains("503")) << "fail_open: a failing store lets requests through";
  EXPECT_FALSE(doc["paths"]["/free"]["get"]["responses"].contains("429"));
  json component = doc["components"]["responses"]["TooManyRequests"];
  for (const char* header : {"Retry-After", "RateLimit", "RateLimit-Policy"})
    EXPECT_TRUE(component["headers"].contains(header)) << header << ": " << component.dump();
  EXPECT_EQ(component["headers"]["Retry-After"]["schema"]["type"], "integer");
  EXPECT_FALSE(doc["components"]["responses"].contains("ServiceUnavailable"));
  // What the document says is what the layer answers.
  EXPECT_EQ(answer(app, "GET", "/v1/limited/parts").result_int(), 200u);
  response refused = answer(app, "GET", "/v1/limited/parts");
  EXPECT_EQ(refused.result_int(), 429u);
  EXPECT_FALSE(field(refused, "Retry-After").empty());
}

TEST(LayerAnswers, AnApplicationWideLimitFailingClosedDocuments429And503Everywhere) {
  application app;
  app.use(rate_limit({.store = std::make_shared<failing_store>(), .fail_open = false}));
  app.get<catalog::part>("/free", [] { return catalog::part{"b", {}}; });
  app.get("/untyped", [](context&) {});
  json doc = openapi<json>(app, {});
  for (const char* path : {"/free", "/untyped"}) {
    json responses = doc["paths"][path]["get"]["responses"];
    EXPECT_EQ(responses["429"]["$ref"], "#/components/responses/TooManyRequests") << path;
    EXPECT_EQ(responses["503"]["$ref"], "#/components/responses/ServiceUnavailable") << path;
  }
  EXPECT_TRUE(doc["components"]["responses"]["ServiceUnavailable"]["headers"].contains("Retry-After"));
  EXPECT_EQ(answer(app, "GET", "/free").result_int(), 503u);
}

TEST(LayerAnswers, ADocumentWithoutALimitHasNo429Component) {
  application app;
  waypoint::examples::add_order_routes(app);
  json doc = openapi<json>(app, {});
  EXPECT_FALSE(doc["components"]["responses"].contains("TooManyRequests"));
  EXPECT_FALSE(doc["paths"]["/v1/commerce/orders"]["post"]["responses"].contains("429"));
}

// --- serving ------------------------------------------------------------------------

TEST(Serving, DocumentPageAndFiles) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "waypoint_openapi_test";
  std::filesystem::create_directories(dir);
  for (const char* name : {"swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"})
    std::ofstream(dir / name) << "/* " << name << " */";
  application app;
  waypoint::examples::add_order_routes(app);
  serve_openapi(app, {.title = "Orders <API>"}, {.ui_directory = dir.string()});
  response document = answer(app, "GET", "/openapi.json");
  EXPECT_EQ(document.result_int(), 200u);
  json doc = json::parse(document.body());
  EXPECT_TRUE(doc["paths"].contains("/v1/commerce/orders"));
  EXPECT_FALSE(doc["paths"].contains("/openapi.json"));  // its own routes are not documented
  response page = answer(app, "GET", "/docs/");
  EXPECT_EQ(page.result_int(), 200u);
  EXPECT_NE(page.body().find("<title>Orders &lt;API&gt;</title>"), std::string::npos);
  EXPECT_NE(page.body().find("url: \"/openapi.json\""), std::string::npos);
  response css = answer(app, "GET", "/docs/swagger-ui.css");
  EXPECT_EQ(css.body(), "/* swagger-ui.css */");
  EXPECT_EQ(field(css, "Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(answer(app, "GET", "/docs/secret.txt").result_int(), 404u);
  EXPECT_EQ(answer(app, "GET", "/docs/..%2Fetc").result_int(), 400u);
  std::filesystem::remove_all(dir);
}

// The document is revalidated, not fetched again (issue 44: it had no ETag): a strong tag of
// its bytes, and 304 without content to a GET or HEAD whose If-None-Match names it.
TEST(Serving, TheDocumentHasAStrongETagAndAnswers304ToIt) {
  application app;
  waypoint::examples::add_order_routes(app);
  serve_openapi(app, {.title = "Orders"});
  response first = answer(app, "GET", "/openapi.json");
  ASSERT_EQ(first.result_int(), 200u);
  std::string etag = field(first, "ETag");
  EXPECT_TRUE(std::regex_match(etag, std::regex("\"[0-9a-f]{32}\""))) << etag;
  EXPECT_EQ(field(first, "Cache-Control"), "no-cache");
  EXPECT_EQ(field(answer(app, "GET", "/openapi.json"), "ETag"), etag) << "the same bytes, the same tag";
  struct row {
    const char* method;
    std::string if_none_match;
    unsigned status;
  };
  for (const row& r : {row{"GET", etag, 304}, row{"HEAD", etag, 304}, row{"GET", "W/" + etag, 304},
                       row{"GET", "\"x\", " + etag, 304}, row{"GET", "*", 304},
                       row{"GET", "\"x\"", 200}, row{"HEAD", "\"x\"", 200}}) {
    response res = app.respond(make_request(r.method, "/openapi.json", {{"If-None-Match", r.if_none_match}}));
    EXPECT_EQ(res.result_int(), r.status) << r.method << " " << r.if_none_match;
    EXPECT_EQ(field(res, "ETag"), etag) << r.method << " " << r.if_none_match;
    EXPECT_EQ(res.body().empty(), r.status == 304 || std::string_view(r.method) == "HEAD")
        << r.method << " " << r.if_none_match;
  }
  // Another application's document is other bytes, and another tag.
  application other;
  serve_openapi(other, {.title = "Other"});
  EXPECT_NE(field(answer(other, "GET", "/openapi.json"), "ETag"), etag);
}

TEST(Serving, MissingFilesLoadPinnedSwaggerUiFromTheCdnWithIntegrity) {
  const std::string cdn = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@";
  const std::regex pinned(  // a versioned URL, a SHA-384 hash (64 base64 digits), CORS
      "(src|href)=\"" + cdn + "[0-9]+\\.[0-9]+\\.[0-9]+/([a-z-]+\\.(js|css))\" "
      "integrity=\"sha384-[A-Za-z0-9+/]{64}\" crossorigin=\"anonymous\"");
  for (const std::string dir : {"", "/nonexistent"}) {
    application app;
    serve_openapi(app, {}, {.ui_directory = dir});
    response page = answer(app, "GET", "/docs/");
    EXPECT_EQ(page.result_int(), 200u) << dir;
    std::set<std::string> loaded;
    for (auto m = std::sregex_iterator(page.body().begin(), page.body().end(), pinned);
         m != std::sregex_iterator(); ++m)
      loaded.insert((*m)[2]);
    EXPECT_EQ(loaded, (std::set<std::string>{"swagger-ui.css", "swagger-ui-bundle.js"}))
        << page.body();
    // The page's own files are the CDN's: a redirect, never a 503.
    response icon = answer(app, "GET", "/docs/favicon-32x32.png");
    EXPECT_EQ(icon.result_int(), 302u);
    EXPECT_EQ(field(icon, "Location").rfind(cdn, 0), 0u) << field(icon, "Location");
    EXPECT_TRUE(field(icon, "Location").ends_with("/favicon-32x32.png"));
    EXPECT_EQ(answer(app, "GET", "/docs/swagger-ui-bundle.js").result_int(), 302u);
    EXPECT_EQ(answer(app, "GET", "/docs/secret.txt").result_int(), 404u);
    EXPECT_EQ(answer(app, "GET", "/openapi.json").result_int(), 200u);
  }
}

TEST(Serving, FilesCompiledInAreServedBeforeADirectory) {
  // A table as waypoint_embed_directory() generates it, sorted by path.
  static constexpr waypoint::embedded_file all[] = {
      {"favicon-32x32.png", "icon bytes", "\"1\""},
      {"swagger-ui-bundle.js", "bundle bytes", "\"2\""},
      {"swagger-ui.css", "css bytes", "\"3\""},
  };
  application app;
  serve_openapi(app, {}, {.ui_directory = "/nonexistent", .ui_files = waypoint::embedded_directory(all)});
  std::string page = answer(app, "GET", "/docs/").body();
  EXPECT_NE(page.find("<script src=\"swagger-ui-bundle.js\"></script>"), std::string::npos);
  EXPECT_EQ(page.find("cdn.jsdelivr.net"), std::string::npos);
  EXPECT_EQ(answer(app, "GET", "/docs/swagger-ui-bundle.js").body(), "bundle bytes");
  EXPECT_EQ(answer(app, "GET", "/docs/favicon-32x32.png").body(), "icon bytes");

  // A table without every file is not used: the page falls back to the CDN.
  application partial;
  serve_openapi(partial, {}, {.ui_files = waypoint::embedded_directory(std::span(all, 2))});
  EXPECT_NE(answer(partial, "GET", "/docs/").body().find("cdn.jsdelivr.net"), std::string::npos);
}

TEST(Serving, LocalFilesAreLoadedFromThePageWithoutTheCdn) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "waypoint_openapi_local";
  std::filesystem::create_directories(dir);
  for (const char* name : {"swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"})
    std::ofstream(dir / name) << name;
  application app;
  serve_openapi(app, {}, {.ui_directory = dir.string()});
  std::string page = answer(app, "GET", "/docs/").body();
  EXPECT_NE(page.find("<script src=\"swagger-ui-bundle.js\"></script>"), std::string::npos);
  EXPECT_EQ(page.find("cdn.jsdelivr.net"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
