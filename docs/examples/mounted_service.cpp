// A service in its own process, mounted at a prefix, as docs/server.md shows it: started at
// the first request, stopped after five idle minutes, reloaded by SIGHUP, stopped after the
// drain. Compiled by tests/docs/check.
#include <waypoint/app/services/child_service.hpp>
#include <waypoint/app/serve.hpp>

#include <chrono>
#include <memory>

int main() {
  namespace wa = waypoint::app;
  wa::application app;
  auto reports = std::make_shared<wa::child_service>(
      "reports", wa::child_service_options{.command = {"/usr/lib/acme/reports", "--unix", "{socket}"},
                                           .lazy = true,
                                           .idle_stop = std::chrono::minutes(5)});
  wa::mount(app, "/reports", reports);  // GET /reports/q1 -> GET /q1 on the child

  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 8080}};
  options.on_reload = [reports] { (void)reports->reload(); };  // kill -HUP: a new build, no failed request
  reports->start().get();  // lazy: returns at once; otherwise waits until /healthz is 2xx
  wa::serve(app, options);
  reports->stop().get();   // after the drain, so the last forwarded requests are answered
}
