#include <waypoint/beast/router_dispatch.hpp>

#include <string>

namespace wb = waypoint::beast;

int main() {
  wb::router r;
  r.add("GET /users/{id}", [](const wb::request&, wb::response& res, const wb::route_match& m) {
    res.body() = "user " + std::string(m.value("id"));
  });
  r.freeze();
  wb::server_options options;                  // 127.0.0.1:8080, a thread per core, timeouts, limits
  wb::server(options, wb::dispatch_to(r)).run();  // until SIGINT/SIGTERM, then a graceful drain
}
