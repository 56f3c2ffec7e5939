// docs/framework.md's Model Context Protocol example, compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/documents/mcp.hpp>

#include <cstdint>
#include <string>

namespace app = waypoint::app;

struct quote_request {
  std::string sku;
  std::int32_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(quote_request, sku, quantity)
nlohmann::ordered_json schema_constraints(const quote_request*) {
  return {{"properties", {{"quantity", {{"minimum", 1}, {"maximum", 1000}}}}}};
}

struct quote {
  std::string sku;
  std::int64_t cents = 0;
};
WAYPOINT_JSON_OBJECT(quote, sku, cents)

int main() {
  app::application a;
  a.post<quote_request, quote>("/v1/quotes", [](quote_request in) {
     return quote{in.sku, 1250 * static_cast<std::int64_t>(in.quantity)};
   })
      .describe({.name = "quotePrice", .summary = "Price a quantity of one SKU"});
  a.post<quote_request, quote>("/v1/internal/reprice", [](quote_request in) {
     return quote{in.sku, 0};
   })
      .describe({.name = "reprice", .tool = false});  // a route, not a tool
  // POST /mcp: tools/list offers quotePrice; tools/call runs POST /v1/quotes through every
  // layer, as a REST client's request would.
  app::serve_mcp(a, {.server_name = "quotes", .allowed_origins = {"https://agent.example"}});
  a.freeze();
}
