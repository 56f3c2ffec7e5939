// What the gateway does for the platform it runs on: liveness at /healthz, readiness at
// /readyz (503 from the first SIGTERM for the drain grace), Prometheus metrics at
// /metrics, the JSON access log on stderr (a loop pass's lines in one write(2)) and W3C
// trace context, all on (the log unless --quiet). gateway.cpp calls
// add_operation_layers() before its own layers (the log is outermost),
// add_operation_routes() after its table (whose routes its startup output draws on),
// with_operations() on its server options and metrics->watch() on its server.
#pragma once

#include <waypoint/app/middleware.hpp>
#include <waypoint/app/operations/access_log.hpp>
#include <waypoint/app/operations/health.hpp>
#include <waypoint/app/operations/metrics.hpp>
#include <waypoint/app/operations/trace_context.hpp>
#include <waypoint/app/security/cors.hpp>
#include <waypoint/beast/server.hpp>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace waypoint::examples {

struct operations_options {
  bool access_log = true;
  // How long readiness says 503 before the listeners close; longer than the balancer's
  // check interval times its fall count (bench/deploy/run checks every 100 ms, fall 2).
  std::chrono::milliseconds drain_grace{1000};
};

// The operational parts of one process, shared by the handlers and the server hooks.
struct operations {
  operations_options options;
  std::shared_ptr<app::health> health = std::make_shared<app::health>();
  std::shared_ptr<app::metrics> metrics = std::make_shared<app::metrics>();
};

// The layers: the access log outermost (it sees the final status), then the metrics (the
// time they measure includes every other layer), then the trace, read before anything
// that logs or proxies.
inline std::shared_ptr<operations> add_operation_layers(app::application& app,
                                                        operations_options options = {}) {
  auto ops = std::make_shared<operations>();
  ops->options = options;
  if (options.access_log) app.use(app::access_log({.fd = STDERR_FILENO}));
  app.use(ops->metrics->layer());
  app.use(app::tracing());
  return ops;
}

// Where add_operation_routes() serves, in its order: cors() skips them (the gateway's
// cors_options).
inline const std::vector<std::string> operation_paths{"/healthz", "/readyz", "/metrics"};

inline void add_operation_routes(app::application& app, const operations& ops) {
  app.get(operation_paths[0], app::healthz());
  app.get(operation_paths[1], app::readyz(ops.health));
  app.get(operation_paths[2], ops.metrics->endpoint());
}

inline beast::server_options with_operations(beast::server_options server_options,
                                             const operations& ops) {
  server_options.drain_grace = ops.options.drain_grace;
  return app::watch_drain(std::move(server_options), ops.health);
}

// The lines of the startup output that say where the operational endpoints are.
inline void print_operations(std::ostream& out, const operations& ops, const std::string& base) {
  out << "operations:\n"
      << "  " << base << "/healthz   liveness\n"
      << "  " << base << "/readyz    readiness: 503 for " << ops.options.drain_grace.count()
      << " ms after SIGTERM, then the listeners close and the drain runs\n"
      << "  " << base << "/metrics   Prometheus text: requests by route, latency, connections\n"
      << "  access log: " << (ops.options.access_log ? "JSON lines on stderr" : "off (--quiet)")
      << "; traceparent kept or started, forwarded by /v1/proxy/\n";
}

}  // namespace waypoint::examples
