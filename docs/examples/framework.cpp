// The program docs/framework.md quotes: its main example, the require_token layer of
// "Middleware" and the options of "Serving" (tests/docs/check holds the quotes to this file
// and compiles it).
#include <waypoint/app/all.hpp>
namespace app = waypoint::app;

struct order_request { std::string sku; std::int64_t quantity = 0; };
WAYPOINT_JSON_OBJECT(order_request, sku, quantity)
std::optional<std::string> validate(const order_request& o) {   // found by ADL
  if (o.quantity < 1) return "quantity must be at least 1";
  return std::nullopt;
}
struct order { std::string id, sku; std::int64_t quantity = 0; };
WAYPOINT_JSON_OBJECT(order, id, sku, quantity)

struct caller { std::string name; };                         // set by require_token
std::string lookup(std::string_view authorization);          // token -> caller name
app::awaitable<void> require_token(app::context& ctx, app::next next);  // a layer

int main() {
  app::application a;
  a.use(app::access_log());
  a.use(app::request_id());
  a.use(app::cors({.origins = {"https://shop.example.com"}}));

  auto v1 = a.group("api.example.com/v1", require_token);   // host + path prefix + a layer
  v1.get("/users/{id}", [](app::context& ctx) {
    auto id = ctx.path_value<std::int64_t>("id");             // 400 problem if not a number
    ctx.response().json({{"id", id}, {"by", ctx.get<caller>().name}});
  });
  v1.post<order_request, order>("/orders", [](app::context&, order_request in) {
    return order{"ord-1", in.sku, in.quantity};               // 201 application/json
  });

  waypoint::beast::server_options options;       // limits, timeouts, threads: docs/server.md
  options.listen = {{"0.0.0.0", 8080}};
  app::serve(a, options);                        // freezes, runs, returns after a graceful stop
  // or: waypoint::beast::server s(options, app::dispatch_to(a)); s.start(); ...
}

// A stand-in for an identity service: the caller is whoever the bearer token names.
std::string lookup(std::string_view authorization) {
  constexpr std::string_view scheme = "Bearer ";
  if (authorization.substr(0, scheme.size()) != scheme) return "anonymous";
  return std::string(authorization.substr(scheme.size()));
}

app::awaitable<void> require_token(app::context& ctx, app::next next) {
  if (ctx.header("Authorization").empty()) {
    ctx.response().problem(401, "missing credentials");   // short-circuit
    co_return;
  }
  ctx.set(caller{lookup(ctx.header("Authorization"))});   // read by handlers with get<caller>()
  co_await next();                                        // the inner layers and the handler
  ctx.response().header("X-Served-By", "api-1");          // after the handler
}
