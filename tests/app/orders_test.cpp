// examples/orders.hpp: the gateway's typed route POST /v1/commerce/orders answers 201 and
// every error a typed route has, as curl would see them.
#include "app_test_support.hpp"

#include "orders.hpp"

#include <waypoint/app/middleware.hpp>
#include <waypoint/app/operations/access_log.hpp>

#include <gtest/gtest.h>

#include <malloc.h>

#include <algorithm>
#include <cstdio>

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
  application app({.logger = [](std::string_view) {}},
                  typed_route_options{.json_body_limit = 64 * 1024});
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

// --- the order book: memory a client fills, bounded in bytes --------------------------

using book = waypoint::examples::org_order_book;
using waypoint::examples::org_order_request;

org_order_request small_order() { return {"AB-1", 1, "a@example.com", {}, {}}; }

// The largest order the contract allows: a 32-character SKU, a 254-byte email, a date and a
// note of 280 four-byte code points (1,120 bytes).
org_order_request largest_order() {
  std::string note;
  for (int i = 0; i < 280; ++i) note += "\xF0\x9F\x98\x80";  // U+1F600
  return {"AB-" + std::string(29, '9'), 1000, std::string(64, 'a') + "@" + std::string(185, 'b') + ".com",
          "2026-12-31", note};
}

// Places `in` for `org` as `client`; the status of the http_error when it is refused, 201 when taken.
int place_status(book& b, const std::string& org, const std::string& client,
                 org_order_request in) {
  try {
    b.place(org, client, std::move(in));
    return 201;
  } catch (const waypoint::http_error& e) {
    return e.status();
  }
}

TEST(OrderBook, TheLargestOrderIsCountedAsTheHeapHoldsIt) {
  org_order_request in = largest_order();
  ASSERT_EQ(in.email.size(), 254u);
  ASSERT_EQ(in.note->size(), 1120u);
  waypoint::examples::org_order o{"org-" + std::string(28, 'x') + "-1", std::string(32, 'x'),
                                  in.sku, in.quantity, in.email, in.deliver_by, in.note};
  // Every string outside its object is counted with its malloc chunk; the short date is not.
  std::size_t strings = waypoint::examples::heap_bytes(o.id) + waypoint::examples::heap_bytes(o.org) +
                        waypoint::examples::heap_bytes(o.sku) + waypoint::examples::heap_bytes(o.email) +
                        waypoint::examples::heap_bytes(o.note);
  EXPECT_EQ(waypoint::examples::heap_bytes(o.deliver_by), 0u);
  EXPECT_EQ(book::order_footprint(o),
            waypoint::examples::heap_chunk(sizeof(o)) + 3 * sizeof(void*) + strings);
  EXPECT_GT(book::order_footprint(o), 1675u);  // the issue's estimate left out the heap's own
}

// A client at its share is refused (507 naming the client's share), whichever organisation
// it writes to; another client's order to the same organisation is still taken (a stranger
// cannot fill a tenant's book to lock it out), and the full client's orders stay readable.
TEST(OrderBook, AClientAtItsShareIsRefusedAndAnotherClientIsNot) {
  book b({.max_bytes = 256 * 1024, .max_client_bytes = 64 * 1024});
  std::size_t taken = 0;
  while (place_status(b, "acme", "10.0.0.1", small_order()) == 201) ++taken;
  EXPECT_GT(taken, 200u);
  for (const char* org : {"acme", "another"}) {
    try {
      b.place(org, "10.0.0.1", small_order());
      ADD_FAILURE() << "an order past the client's share was kept, for " << org;
    } catch (const waypoint::http_error& e) {
      EXPECT_EQ(e.status(), 507);
      EXPECT_NE(std::string(e.detail()).find("for one client"), std::string::npos) << e.detail();
    }
  }
  EXPECT_EQ(place_status(b, "acme", "10.0.0.2", small_order()), 201);
  std::string etag;
  EXPECT_EQ(b.page("acme", taken - 1, 20, etag).orders.size(), 2u);
  EXPECT_LE(b.bytes(), b.limits().max_bytes);
}

// The issue's flood: 1,000 organisations made with one order each locked every new one out
// until a restart. One client making organisations at will is stopped at its share; another
// client's first order to a new organisation is taken; nothing taken is ever dropped.
TEST(OrderBook, AFloodOfOrganisationsFromOneClientLocksNoOtherOut) {
  book b({.max_bytes = 256 * 1024, .max_client_bytes = 32 * 1024});
  ASSERT_EQ(place_status(b, "first", "10.0.0.9", small_order()), 201);
  int made = 0;
  while (made < 3000 && place_status(b, "flood-" + std::to_string(made), "10.0.0.1",
                                     small_order()) == 201)
    ++made;
  EXPECT_GT(made, 50);
  EXPECT_LT(made, 3000) << "the flooding client was never stopped";
  EXPECT_EQ(place_status(b, "new", "10.0.0.2", small_order()), 201);
  std::string etag;
  EXPECT_EQ(b.page("first", 0, 20, etag).orders.size(), 1u);
  EXPECT_EQ(b.page("flood-0", 0, 20, etag).orders.size(), 1u);
  EXPECT_LE(b.bytes(), b.limits().max_bytes);
}

// The book is full only once many clients have filled their shares: then every new order is
// refused (507 naming the book), the count stays under the cap, and what was taken stays.
TEST(OrderBook, FullOnlyWhenManyClientsFillItAndThenDropsNothing) {
  book b({.max_bytes = 128 * 1024, .max_client_bytes = 16 * 1024});
  int client = 0;
  int refused_for_the_book = 0;
  for (; client < 64 && refused_for_the_book == 0; ++client) {
    std::string who = "10.0.1." + std::to_string(client);
    for (;;) {
      try {
        b.place("org-" + std::to_string(client), who, largest_order());
      } catch (const waypoint::http_error& e) {
        ASSERT_EQ(e.status(), 507);
        if (std::string(e.detail()).find("for one client") == std::string::npos)
          ++refused_for_the_book;
        break;
      }
    }
  }
  EXPECT_GE(client, 7) << "full before the clients had used their shares";
  EXPECT_EQ(refused_for_the_book, 1) << "never full";
  EXPECT_LE(b.bytes(), b.limits().max_bytes);
  std::string etag;
  EXPECT_FALSE(b.page("org-0", 0, 20, etag).orders.empty()) << "an order taken was dropped";
}

// The counted bytes are the heap's: filling the default book to its cap with the largest
// orders grows the heap by no more than the cap,
// and the count is close to what the heap holds (not a bound met by counting generously).
TEST(OrderBook, HoldsNoMoreHeapThanItsCapAndCountsWhatItHolds) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "ASan's allocator is not malloc's: mallinfo2 does not see it";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "ASan's allocator is not malloc's: mallinfo2 does not see it";
#endif
#endif
  auto heap_in_use = [] {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
  };
  std::size_t before = heap_in_use();
  {
    book b;
    std::vector<std::string> orgs;
    for (int i = 0; i < 200; ++i) orgs.push_back(std::string(28, 'o') + std::to_string(1000 + i));
    std::size_t peak = 0;
    int taken = 0;
    // 200 clients, one organisation each, until the book is full.
    for (int i = 0; i < 60'000; ++i) {
      std::size_t k = static_cast<std::size_t>(i) % orgs.size();
      if (place_status(b, orgs[k], "client-" + std::to_string(k), largest_order()) != 201) break;
      ++taken;
      if (i % 1000 == 999) peak = std::max(peak, heap_in_use() - before);
    }
    EXPECT_GT(taken, 30'000);
    std::size_t held = heap_in_use() - before;
    EXPECT_LE(b.bytes(), b.limits().max_bytes);
    EXPECT_LE(peak, b.limits().max_bytes) << "the heap grew past the cap";
    EXPECT_GE(b.bytes(), held - held / 10) << "counted " << b.bytes() << ", held " << held;
    org_order_request shortest{"AB", 1, "a@example.com", {}, {}};
    book room;
    waypoint::examples::org_order smallest = room.place("acme", "a", shortest).first;
    waypoint::examples::org_order largest = room.place(std::string(32, 'z'), "a", largest_order()).first;
    std::printf("the default book, full of the largest orders: %zu bytes counted, %zu held; "
                "an order of the largest: %zu bytes, of the smallest: %zu bytes\n",
                b.bytes(), held, book::order_footprint(largest), book::order_footprint(smallest));
  }
}

}  // namespace
