// docs/framework.md's typed inputs and schema-first examples, compiled by tests/docs/check.
#include <waypoint/app/all.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace app = waypoint::app;
namespace from = waypoint::app::from;

struct order {
  std::string id;
  std::string sku;
};
WAYPOINT_JSON_OBJECT(order, id, sku)

struct order_page {
  std::vector<order> orders;
  std::optional<std::uint32_t> next_cursor;
};
WAYPOINT_JSON_OBJECT(order_page, orders, next_cursor)

struct list_orders {
  std::string org;
  std::optional<std::uint32_t> cursor;
  std::int32_t limit = 20;
  std::vector<std::string> sku;
  std::optional<std::string> if_none_match;
  static constexpr auto inputs = app::inputs(
      from::path("org", &list_orders::org).constraints(R"({"pattern":"^[a-z0-9-]{1,32}$"})"),
      from::query("cursor", &list_orders::cursor).describe("a next_cursor from an earlier page"),
      from::query("limit", &list_orders::limit).or_default()
          .constraints(R"({"minimum":1,"maximum":100})"),
      from::query("sku", &list_orders::sku),  // ?sku=A&sku=B
      from::header("If-None-Match", &list_orders::if_none_match));
};

order_page page_of(const std::string& org, std::uint32_t from, std::int32_t limit);

struct new_order {
  std::string sku;
  std::int32_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(new_order, sku, quantity)

struct place_order {
  std::string org;
  std::optional<std::string> idempotency_key;
  new_order body;
  static constexpr auto inputs = app::inputs(
      from::path("org", &place_order::org),
      from::header("Idempotency-Key", &place_order::idempotency_key),
      from::body(&place_order::body));
};

void add_routes(app::application& a) {
  a.get<order_page>("/v1/orgs/{org}/orders", [](app::context& ctx, const list_orders& in) {
    order_page page = page_of(in.org, in.cursor.value_or(0), in.limit);
    // Named by If-None-Match, this tag makes the answer a 304 without a body.
    ctx.response().header("ETag", "\"" + std::to_string(page.orders.size()) + "\"");
    return page;
  });
  a.post<place_order>("/v1/orgs/{org}/orders", [](place_order in) {
    return order{in.org + "-1", in.body.sku};
  });
  // Schema-first: the schema is text, the handler takes and gives nlohmann::json.
  a.post<nlohmann::json, nlohmann::json>("/v1/notes", [](nlohmann::json note) {
     note["id"] = 1;
     return note;
   })
      .describe({.name = "addNote",
                 .request_schema = R"({"type":"object","required":["title"],
                                      "properties":{"title":{"type":"string","minLength":1}}})",
                 .response_schema = R"({"type":"object","required":["id"]})"});
}

order_page page_of(const std::string& org, std::uint32_t from, std::int32_t limit) {
  order_page page;
  for (std::uint32_t i = from; i < from + 3 && static_cast<std::int32_t>(i - from) < limit; ++i)
    page.orders.push_back({org + "-" + std::to_string(i + 1), "KB-101"});
  return page;
}

int main() {
  app::application a({}, app::typed_route_options{.unknown_query_parameters = app::unknown_members::refuse});
  add_routes(a);
  a.freeze();
}
