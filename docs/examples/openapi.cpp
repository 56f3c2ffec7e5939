// docs/framework.md's named routes, url_for and OpenAPI examples, compiled by tests/docs/check.
#include <waypoint/app/all.hpp>

#include <iostream>
namespace app = waypoint::app;

namespace shop {

enum class size { small, large };
NLOHMANN_JSON_SERIALIZE_ENUM(size, {{size::small, "small"}, {size::large, "large"}})

struct line { std::string sku; std::uint16_t quantity = 1; };
WAYPOINT_JSON_STRICT_OBJECT(line, sku, quantity)        // unknown members: 422

struct cart {
  std::string customer;
  std::vector<line> lines;
  std::optional<size> box;                              // absent or null: not required
  std::map<std::string, std::int32_t> coupons;          // {"SPRING": 10}
};
WAYPOINT_JSON_OBJECT(cart, customer, lines, box, coupons)
nlohmann::ordered_json schema_constraints(const cart*) {   // what validate() would refuse
  return {{"properties", {{"lines", {{"minItems", 1}}}}}};
}

}  // namespace shop

int main() {
  app::application a({}, app::typed_route_options{.unknown_json_members = app::unknown_members::refuse});
  auto carts = a.group("/v1/carts");
  carts.tag_routes("carts");
  carts.post<shop::cart>("", [](shop::cart in) { return in; })
      .describe({.name = "createCart", .summary = "Create a cart"});
  carts.get("/{id}/lines/{sku}", [](app::context& ctx) {
         ctx.response().json({{"sku", ctx.path_value("sku")}});
       })
      .describe({.name = "cartLine"})
      .path_param<std::uint64_t>("id", "the cart's number");
  a.get("/files/{path...}", [](app::context&) {}).describe({.name = "file"});

  std::string line = a.url_for("cartLine", {{"id", "7"}, {"sku", "KB/101"}});
  // "/v1/carts/7/lines/KB%2F101": one segment, the '/' escaped
  std::string file = a.url_for("file", {{"path", "manuals/KB 101.pdf"}}, {{"v", "2"}});
  // "/files/manuals/KB%20101.pdf?v=2": a rest value keeps its slashes

  nlohmann::json doc = openapi(a, {.title = "Shop", .version = "1.0.0"});
  std::cout << line << "\n" << file << "\n" << doc["paths"].size() << " paths\n";
  std::cout << app::json_schema<shop::cart>().dump(2) << "\n";

  app::serve_openapi(a, {.title = "Shop", .version = "1.0.0"},
                     {.ui_directory = "build/dev/examples/swagger-ui"});
  // GET /openapi.json and the page GET /docs/; serve as usual:
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 8080}};
  app::serve(a, options);
}
