#include <waypoint/app/middleware.hpp>
#include <waypoint/app/operations/access_log.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/typed/json.hpp>

#include <cstdint>
#include <string>

struct order_in { std::string sku; std::int64_t quantity = 0; };
WAYPOINT_JSON_OBJECT(order_in, sku, quantity)
struct order_out { std::string id, sku; std::int64_t quantity = 0; };
WAYPOINT_JSON_OBJECT(order_out, id, sku, quantity)

int main(int argc, char** argv) {
  waypoint::app::application app;
  app.use(waypoint::app::request_id());
  app.use(waypoint::app::access_log());
  auto v1 = app.group("/v1");
  v1.get("/users/{id}", [](waypoint::app::context& ctx) {
    auto id = ctx.path_value<std::int64_t>("id");   // 400 problem document when not a number
    ctx.response().json({{"id", id}});
  });
  v1.post<order_in, order_out>("/orders", [](order_in in) {   // 400/415/413/422 handled
    return order_out{"ord-1", in.sku, in.quantity};
  });
  waypoint::beast::server_options options;          // 127.0.0.1:8080, limits, timeouts
  if (argc > 1) options.listen[0].port = static_cast<std::uint16_t>(std::stoi(argv[1]));
  waypoint::app::serve(app, options);               // until SIGINT/SIGTERM, then drains
}
