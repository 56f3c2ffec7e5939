// The operational side of waypoint::app, as docs/framework.md and docs/deploy.md show it:
// liveness and readiness with a drain grace, Prometheus metrics, the JSON access log and
// W3C trace context, forwarded to an upstream. Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/services/upstream.hpp>

#include <unistd.h>

#include <chrono>
#include <memory>

namespace app = waypoint::app;
using namespace std::chrono_literals;

int main() {
  app::application a;
  auto health = std::make_shared<app::health>();
  auto metrics = std::make_shared<app::metrics>(
      app::metrics_options{.latency_buckets = {0.001, 0.005, 0.025, 0.1, 0.5, 2.5}});

  // Outermost first: the log sees the final status, the metrics time every inner layer,
  // the trace is read before anything logs or forwards it.
  a.use(app::access_log({.fd = STDERR_FILENO,
                         .fields = {app::access_field::time, app::access_field::method,
                                    app::access_field::route, app::access_field::status,
                                    app::access_field::duration, app::access_field::trace_id}}));
  a.use(metrics->layer());
  a.use(app::tracing());

  a.get("/healthz", app::healthz());
  a.get("/readyz", app::readyz(health));
  a.get("/metrics", metrics->endpoint());

  app::upstream orders({.url = "http://127.0.0.1:9000"});
  a.get("/v1/orders/{id}", [&orders](app::context& ctx) -> app::awaitable<void> {
    app::request out{app::http::verb::get, "/orders/" + std::string(ctx.path_value("id")), 11};
    // traceparent: the client's trace, this server's span as the parent.
    ctx.response().message() = co_await orders.send(ctx, std::move(out));
  });

  waypoint::beast::server_options options;
  options.listen = {{"0.0.0.0", 8080}};
  options.reuse_port = true;     // the next version binds the port while this one drains
  options.drain_grace = 2s;      // /readyz says 503 this long before the listeners close
  options.drain_timeout = 20s;   // then in-flight requests get this long
  options = app::watch_drain(app::with_problem_errors(std::move(options)), health);
  waypoint::beast::server server(options, app::dispatch_to(a));
  metrics->watch(server);        // connections, bytes, the server's own errors, timeouts
  server.run();                  // until SIGTERM, then the grace and the drain
}
