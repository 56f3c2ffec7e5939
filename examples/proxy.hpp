// The gateway's route that awaits real I/O: GET /v1/proxy/{path...} forwards the request
// to an upstream service with waypoint::app::upstream (a Beast client) and answers with the
// upstream's response; 502 when the upstream cannot be reached or answers garbage, 504
// when it does not answer in time, both problem documents.
//
//   auto target = std::make_shared<waypoint::examples::proxy_target>();
//   target->set({.url = "http://127.0.0.1:9000"});
//   waypoint::examples::add_proxy_route(app, target);
//   $ curl -i localhost:8080/v1/proxy/v1/health      # GET http://127.0.0.1:9000/v1/health
#pragma once

#include <waypoint/app/async.hpp>
#include <waypoint/app/services/upstream.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <utility>

namespace waypoint::examples {

// What the gateway writes into Via (RFC 9110 §7.6.3); a request that already carries it
// went round a loop (a gateway proxying to itself, say) and is refused with 508.
inline constexpr std::string_view via_token = "1.1 waypoint-gateway";

inline constexpr std::string_view proxy_prefix = "/v1/proxy";

// Where the proxy route forwards; settable after the routes are frozen, since a gateway
// that proxies to itself knows its own port only once it listens.
class proxy_target {
 public:
  void set(app::upstream_options options) {
    std::atomic_store(&upstream_, std::make_shared<const app::upstream>(std::move(options)));
  }
  std::shared_ptr<const app::upstream> get() const { return std::atomic_load(&upstream_); }

 private:
  std::shared_ptr<const app::upstream> upstream_;
};

inline void add_proxy_route(app::route_scope& scope, std::shared_ptr<const proxy_target> target) {
  scope.get(std::string(proxy_prefix) + "/{path...}", [target](app::context& ctx) -> app::awaitable<void> {
    if (ctx.header(app::http::field::via).find(via_token) != std::string_view::npos)
      throw http_error(508, "the request has been through this gateway already");
    std::shared_ptr<const app::upstream> to = target->get();
    if (!to) throw http_error(503, "the gateway has no upstream yet");
    // Hop-by-hop fields go first, so the client's Connection cannot name what is added.
    app::request out = app::forwarded_request(ctx, via_token);
    // The path as the client escaped it: decoding it would turn %2F into a separator.
    std::string target(ctx.path().substr(proxy_prefix.size()));
    if (!ctx.outcome().query.empty()) target += "?" + std::string(ctx.outcome().query);
    out.target(target);
    out.set("X-Request-Id", ctx.request_id());
    app::response res = co_await to->send(ctx, std::move(out));  // with the trace
    res.version(ctx.request().version());
    ctx.response().message() = std::move(res);
  });
}

}  // namespace waypoint::examples
