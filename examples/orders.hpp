// The gateway's typed JSON routes, written with waypoint::app:
//
//   waypoint::app::application app({.json_body_limit = 64 * 1024});
//   waypoint::examples::add_order_routes(app);
//
// POST /v1/commerce/orders (below), and an order book per organisation whose inputs come from
// the path, the query and headers as well as the body (waypoint/app/inputs.hpp):
//
//   $ org=localhost:8080/v1/orgs/acme/orders; json='Content-Type: application/json'
//   $ curl -i $org -H "$json" -d '{"sku":"KB-101","quantity":2,"email":"ada@example.com"}'  # 201
//   $ curl -i $org -H "$json" -d '{"sku":"kb","quantity":5000,"email":"ada"}'  # 422 /sku pattern
//   $ curl -i "$org?limit=2"                     # 200, ETag, and next_cursor when there is more
//   $ curl -i "$org?limit=2" -H 'If-None-Match: "<the ETag>"'           # 304 until an order lands
//   $ curl -i "$org?limit=500"                   # 422: limit's maximum is 100
//   $ curl -i "$org?limit=two"                   # 400: limit must be an integer
//
// Request {"sku": string, "quantity": integer >= 1}; answer 201 with
// {"id": string, "sku": ..., "quantity": ...} and Location. Every error of a typed route can
// be produced with curl (port 8080 as in examples/gateway.cpp):
//
//   $ url=localhost:8080/v1/commerce/orders; json='Content-Type: application/json'
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":2}'     # 201
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":2'      # 400 malformed, byte 29
//   $ curl -i $url -H "$json" -d '{"quantity":2}'                    # 422 pointer /sku
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":"2"}'   # 422 pointer /quantity
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":0}'     # 422 /quantity, minimum
//   $ curl -i $url -H "$json" -d '{"sku":"KB-101","quantity":1e400}' # 400 number overflow
//   $ curl -i $url -d 'sku=KB-101'                                   # 415 (form encoding)
//   $ head -c 70000 /dev/zero | curl -i $url -H "$json" --data-binary @-   # 413
//   $ curl -i $url -H "$json" -d '{"sku":"SOLD-OUT","quantity":1}'   # 409 from http_error
//   $ curl -i $url -H "$json" -d '{"sku":"FAULTY","quantity":1}'     # 500, cause only logged
//   $ curl -i -X PUT $url          # 405 with Allow: GET, HEAD, POST (the gateway's own router)
//
// SOLD-OUT and FAULTY stand in for an inventory that refuses and one that fails.
#pragma once

#include <waypoint/app/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace waypoint::examples {

struct order_request {
  std::string sku;
  std::int64_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(order_request, sku, quantity)

// Found by argument-dependent lookup: a JSON merge patch of the type's schema, which the
// OpenAPI document shows and the route enforces (a 422 naming the member and the keyword).
inline nlohmann::ordered_json schema_constraints(const order_request*) {
  return {{"properties", {{"sku", {{"minLength", 1}}}, {"quantity", {{"minimum", 1}}}}}};
}

struct order {
  std::string id;
  std::string sku;
  std::int64_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(order, id, sku, quantity)

// --- an order book per organisation ----------------------------------------------------

struct org_order_request {
  std::string sku;
  std::int64_t quantity = 0;
  std::string email;                      // who to tell when it ships
  std::optional<std::string> deliver_by;  // a date
  std::optional<std::string> note;
};
WAYPOINT_JSON_STRICT_OBJECT(org_order_request, sku, quantity, email, deliver_by, note)

inline nlohmann::ordered_json schema_constraints(const org_order_request*) {
  return {{"properties",
           {{"sku", {{"pattern", "^[A-Z0-9][A-Z0-9-]{1,31}$"}}},
            {"quantity", {{"minimum", 1}, {"maximum", 1000}}},
            {"email", {{"format", "email"}, {"maxLength", 254}}},
            {"deliver_by", {{"format", "date"}}},
            {"note", {{"maxLength", 280}}}}}};
}

struct org_order {
  std::string id;
  std::string org;
  std::string sku;
  std::int64_t quantity = 0;
  std::string email;
  std::optional<std::string> deliver_by;
  std::optional<std::string> note;
};
WAYPOINT_JSON_OBJECT(org_order, id, org, sku, quantity, email, deliver_by, note)

struct order_page {
  std::vector<org_order> orders;
  std::optional<std::uint32_t> next_cursor;  // absent on the last page
};
WAYPOINT_JSON_OBJECT(order_page, orders, next_cursor)

// An organisation's name in a path: the constraint both routes document and enforce.
inline constexpr std::string_view org_name_schema = R"({"pattern":"^[a-z0-9][a-z0-9-]{0,31}$"})";

struct place_org_order {
  std::string org;
  org_order_request order;
  static constexpr auto inputs = app::inputs(
      app::from::path("org", &place_org_order::org)
          .describe("the organisation")
          .constraints(org_name_schema),
      app::from::body(&place_org_order::order));
};

struct list_org_orders {
  std::string org;
  std::optional<std::uint32_t> cursor;
  std::int32_t limit = 20;
  std::optional<std::string> if_none_match;
  static constexpr auto inputs = app::inputs(
      app::from::path("org", &list_org_orders::org)
          .describe("the organisation")
          .constraints(org_name_schema),
      app::from::query("cursor", &list_org_orders::cursor)
          .describe("where the page starts: a next_cursor from an earlier page"),
      app::from::query("limit", &list_org_orders::limit)
          .describe("the most orders on the page")
          .or_default()
          .constraints(R"({"minimum":1,"maximum":100})"),
      app::from::header("If-None-Match", &list_org_orders::if_none_match)
          .describe("the ETag of a page already held: 304 while it is current"));
};

// The orders of every organisation, in memory and bounded: past max_orgs organisations, or
// max_orders orders in one, a write is refused (507) rather than grow without limit.
class org_order_book {
 public:
  static constexpr std::size_t max_orgs = 1000;
  static constexpr std::size_t max_orders = 10000;

  // The order placed, and its place in the organisation's book (a cursor that starts there).
  std::pair<org_order, std::size_t> place(const std::string& org, org_order_request in) {
    std::lock_guard lock(mutex_);
    auto it = books_.find(org);
    if (it == books_.end()) {
      if (books_.size() >= max_orgs)
        throw http_error(507, "this example keeps at most " + std::to_string(max_orgs) +
                                  " organisations");
      it = books_.emplace(org, std::vector<org_order>()).first;
    }
    if (it->second.size() >= max_orders)
      throw http_error(507, "organisation " + org + " holds the most orders this example keeps (" +
                                std::to_string(max_orders) + ")");
    it->second.push_back({org + "-" + std::to_string(it->second.size() + 1), org,
                          std::move(in.sku), in.quantity, std::move(in.email),
                          std::move(in.deliver_by), std::move(in.note)});
    return {it->second.back(), it->second.size() - 1};
  }

  // The page from `start`, and its ETag: the organisation's order count and the page's place,
  // which change exactly when the page's content does (orders are only ever appended).
  order_page page(const std::string& org, std::size_t start, std::size_t limit,
                  std::string& etag) const {
    std::lock_guard lock(mutex_);
    order_page out;
    auto it = books_.find(org);
    std::size_t count = it == books_.end() ? 0 : it->second.size();
    for (std::size_t i = start; i < count && out.orders.size() < limit; ++i)
      out.orders.push_back(it->second[i]);
    if (start + out.orders.size() < count)
      out.next_cursor = static_cast<std::uint32_t>(start + out.orders.size());
    etag = "\"" + std::to_string(count) + "." + std::to_string(start) + "." +
           std::to_string(limit) + "\"";
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<org_order>> books_;
};

// Registers POST /v1/commerce/orders on `scope` (an application or a group). Order ids
// come from a counter shared by the route's copies, so ids are unique per process.
inline void add_order_routes(app::route_scope& scope) {
  auto last_id = std::make_shared<std::atomic<std::uint64_t>>(0);
  scope.post<order_request, order>(
      "/v1/commerce/orders", [last_id](app::context& ctx, order_request in) {
        if (in.sku == "SOLD-OUT") throw http_error(409, "sku SOLD-OUT is out of stock");
        if (in.sku == "FAULTY") throw std::runtime_error("inventory service timed out");
        order placed{"ord-" + std::to_string(++*last_id), std::move(in.sku), in.quantity};
        ctx.response().header("Location", "/v1/commerce/orders/" + placed.id);
        return placed;
      })
      .describe({.name = "placeOrder",
                 .summary = "Place an order",
                 .description = "Reserves `quantity` of `sku` and answers the order with its id."});

  auto book = std::make_shared<org_order_book>();
  scope.post<place_org_order, org_order>(
      "/v1/orgs/{org}/orders", [book](app::context& ctx, place_org_order in) {
        auto [placed, position] = book->place(in.org, std::move(in.order));
        ctx.response().header("Location", "/v1/orgs/" + in.org + "/orders?cursor=" +
                                              std::to_string(position) + "&limit=1");
        return placed;
      })
      .describe({.name = "placeOrgOrder",
                 .summary = "Place an order for an organisation",
                 .description = "The body's constraints (a SKU's shape, a quantity from 1 to "
                                "1000, an email, a date) are the schema's, enforced with a 422 "
                                "naming the member."});
  scope.get<order_page>("/v1/orgs/{org}/orders",
                        [book](app::context& ctx, const list_org_orders& in) {
                          std::string etag;
                          order_page out = book->page(in.org, in.cursor.value_or(0),
                                                      static_cast<std::size_t>(in.limit), etag);
                          ctx.response().header("ETag", etag);
                          return out;
                        })
      .describe({.name = "listOrgOrders",
                 .summary = "List an organisation's orders, a page at a time",
                 .description = "Oldest first. Send the page's ETag back in If-None-Match to get "
                                "304 while no order has landed on it."});
}

}  // namespace waypoint::examples
