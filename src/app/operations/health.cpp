// The health handlers and the drain hook that flips readiness.
#include "waypoint/app/operations/health.hpp"

#include <utility>

namespace waypoint::app {
namespace {

void answer_health(context& ctx, int status, std::string_view body) {
  ctx.response().status(status).header(http::field::cache_control, "no-store").body(
      std::string(body), "application/json");
}

}  // namespace

handler healthz() {
  return [](context& ctx) { answer_health(ctx, 200, R"({"status":"ok"})"); };
}

handler readyz(std::shared_ptr<const health> state) {
  return [state = std::move(state)](context& ctx) {
    if (state->ready())
      answer_health(ctx, 200, R"({"status":"ready"})");
    else
      answer_health(ctx, 503, R"({"status":"draining"})");
  };
}

beast::server_options watch_drain(beast::server_options options, std::shared_ptr<health> state) {
  options.on_drain = [earlier = std::move(options.on_drain), state = std::move(state)] {
    if (earlier) earlier();
    state->start_draining();
  };
  return options;
}

}  // namespace waypoint::app
