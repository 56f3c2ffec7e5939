// examples/orders.hpp: the gateway's typed route POST /v1/commerce/orders answers 201 and
// every error a typed route has, as curl would see them.
#include "app_test_support.hpp"

#include "orders.hpp"

#include <waypoint/app/middleware.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

struct orders_row {
  const char* rule;
  const char* method;
  std::string body;
  const char* content_type;
  int status;
  std::optional<std::string> pointer;
  const char* detail = nullptr;  // a substring of "detail", when given
  const char* keyword = nullptr;  // "keyword": the schema keyword broken, when given
};

class Orders : public ::testing::TestWithParam<orders_row> {};

TEST_P(Orders, AnswersAsDocumented) {
  const orders_row& row = GetParam();
  application app({.json_body_limit = 64 * 1024, .logger = [](std::string_view) {}});
  waypoint::examples::add_order_routes(app);
  response res =
      app.respond(json_request(row.method, "/v1/commerce/orders", row.body, row.content_type));
  EXPECT_EQ(res.result_int(), static_cast<unsigned>(row.status)) << row.rule << ": " << res.body();
  nlohmann::json doc = body_json(res);
  if (row.status == 201) {
    EXPECT_EQ(field(res, "Content-Type"), "application/json");
    EXPECT_EQ(doc["id"], "ord-1");
    EXPECT_EQ(doc["sku"], "KB-101");
    EXPECT_EQ(doc["quantity"], 2);
    EXPECT_EQ(field(res, "Location"), "/v1/commerce/orders/ord-1");
  } else if (row.status != 204) {
    EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << row.rule;
    EXPECT_EQ(doc["status"], row.status) << row.rule;
  }
  if (row.pointer) {
    EXPECT_EQ(doc.value("pointer", "<none>"), *row.pointer) << row.rule;
  }
  if (row.detail) {
    EXPECT_NE(doc.value("detail", "").find(row.detail), std::string::npos)
        << row.rule << ": " << doc.dump();
  }
  if (doc.is_object()) {
    EXPECT_EQ(doc.value("keyword", ""), row.keyword ? row.keyword : "") << row.rule;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Orders,
    ::testing::Values(
        orders_row{"created", "POST", R"({"sku":"KB-101","quantity":2})", "application/json", 201,
                   std::nullopt},
        orders_row{"malformed", "POST", R"({"sku":"KB-101","quantity":2)", "application/json", 400,
                   std::nullopt},
        orders_row{"quantity 1e400 is malformed, not a 500", "POST",
                   R"({"sku":"KB-101","quantity":1e400})", "application/json", 400, std::nullopt,
                   "malformed JSON at byte 32: number overflow parsing '1e400'"},
        orders_row{"quantity -1e400 is malformed", "POST", R"({"sku":"KB-101","quantity":-1e400})",
                   "application/json", 400, std::nullopt, "number overflow parsing '-1e400'"},
        orders_row{"a 10,000-digit quantity is malformed", "POST",
                   R"({"sku":"KB-101","quantity":)" + std::string(10'000, '1') + "}",
                   "application/json", 400, std::nullopt, "number overflow"},
        orders_row{"invalid UTF-8 in sku is malformed", "POST",
                   "{\"sku\":\"KB-\xc3\x28\",\"quantity\":1}", "application/json", 400,
                   std::nullopt, "ill-formed UTF-8"},
        orders_row{"truncated document is malformed", "POST", R"({"sku":"KB-1)",
                   "application/json", 400, std::nullopt, "malformed JSON at byte 13"},
        orders_row{"60,000 open brackets are refused", "POST",
                   R"({"sku":"KB-101","quantity":)" + std::string(60'000, '['),
                   "application/json", 400, std::nullopt, "nested deeper than 256 levels"},
        orders_row{"sku as a number", "POST", R"({"sku":101,"quantity":1})", "application/json",
                   422, "/sku", "must be a string, not a number", "type"},
        orders_row{"missing sku", "POST", R"({"quantity":2})", "application/json", 422, "/sku",
                   "missing member \"sku\"", "required"},
        orders_row{"quantity as a string", "POST", R"({"sku":"KB-101","quantity":"2"})",
                   "application/json", 422, "/quantity", nullptr, "type"},
        orders_row{"quantity below the schema's minimum", "POST",
                   R"({"sku":"KB-101","quantity":0})", "application/json", 422, "/quantity",
                   "/quantity is 0; the minimum is 1", "minimum"},
        orders_row{"sku shorter than the schema's minLength", "POST", R"({"sku":"","quantity":1})",
                   "application/json", 422, "/sku", "the minimum is 1", "minLength"},
        orders_row{"not JSON", "POST", "x", "text/plain", 415, std::nullopt},
        orders_row{"too large", "POST", std::string(64 * 1024 + 1, ' '), "application/json", 413,
                   std::nullopt},
        orders_row{"sold out", "POST", R"({"sku":"SOLD-OUT","quantity":1})", "application/json",
                   409, std::nullopt},
        orders_row{"inventory failure", "POST", R"({"sku":"FAULTY","quantity":1})",
                   "application/json", 500, std::nullopt},
        orders_row{"wrong method", "GET", "", "application/json", 405, std::nullopt},
        orders_row{"OPTIONS", "OPTIONS", "", "application/json", 204, std::nullopt}));

// The probe that found the 500: a huge number must not reach the logs whole.
TEST(Orders, LogLinesStayShortForAHugeNumber) {
  std::vector<std::string> lines;
  application app({.logger = [&](std::string_view l) { lines.emplace_back(l); }});
  app.use(access_log());
  waypoint::examples::add_order_routes(app);
  response res = app.respond(json_request(
      "POST", "/v1/commerce/orders", R"({"sku":"KB-101","quantity":)" + std::string(10'000, '9') + "}"));
  EXPECT_EQ(res.result_int(), 400u);
  EXPECT_LT(res.body().size(), 1024u);
  ASSERT_FALSE(lines.empty());
  for (const std::string& line : lines) EXPECT_LT(line.size(), 1024u) << line.substr(0, 200);
}

TEST(Orders, IdsAreDistinct) {
  application app;
  waypoint::examples::add_order_routes(app);
  auto first = body_json(
      app.respond(json_request("POST", "/v1/commerce/orders", R"({"sku":"a","quantity":1})")));
  auto second = body_json(
      app.respond(json_request("POST", "/v1/commerce/orders", R"({"sku":"a","quantity":1})")));
  EXPECT_NE(first["id"], second["id"]);
}

// The order book is memory a client fills: bounded per organisation and in organisations,
// the write past either bound a 507 that says which, the others still taken.
TEST(OrderBook, WritesPastEitherBoundAre507AndTheRestGoOn) {
  using book = waypoint::examples::org_order_book;
  book b;
  auto order = [] { return waypoint::examples::org_order_request{"AB-1", 1, "a@example.com", {}, {}}; };
  for (std::size_t i = 0; i < book::max_orders; ++i) b.place("full", order());
  try {
    b.place("full", order());
    FAIL() << "an order past max_orders was kept";
  } catch (const waypoint::http_error& e) {
    EXPECT_EQ(e.status(), 507);
    EXPECT_NE(std::string(e.detail()).find("full"), std::string::npos) << e.detail();
  }
  for (std::size_t i = 1; i < book::max_orgs; ++i) b.place("org-" + std::to_string(i), order());
  try {
    b.place("one-too-many", order());
    FAIL() << "an organisation past max_orgs was kept";
  } catch (const waypoint::http_error& e) {
    EXPECT_EQ(e.status(), 507);
  }
  EXPECT_EQ(b.place("org-1", order()).second, 1u) << "a known organisation still takes orders";
  std::string etag;
  EXPECT_EQ(b.page("full", book::max_orders - 1, 20, etag).orders.size(), 1u);
}

}  // namespace
