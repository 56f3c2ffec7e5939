// The gateway's typed JSON route, POST /v1/commerce/orders, written with waypoint::app:
//
//   waypoint::app::application app({.json_body_limit = 64 * 1024});
//   waypoint::examples::add_order_routes(app);
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
#include <memory>
#include <stdexcept>
#include <string>

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
      .name("placeOrder")
      .summary("Place an order")
      .description("Reserves `quantity` of `sku` and answers the order with its id.");
}

}  // namespace waypoint::examples
