// The gateway's mounted child service: examples/child_service.cpp's program, run in its own
// process from beside the gateway's executable and mounted at /v1/child, started by the
// first request and stopped after a while without one. SIGHUP reloads it.
//
//   auto child = waypoint::examples::add_child_service(app, std::chrono::minutes(1));
//   $ curl -i localhost:8080/v1/child/hello     # GET /hello on the child, over its socket
#pragma once

#include <waypoint/app/application.hpp>
#include <waypoint/app/services/child_service.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace waypoint::examples {

inline constexpr std::string_view child_prefix = "/v1/child";

// Null when the child's executable is not beside this one (a gateway copied elsewhere).
inline std::shared_ptr<app::child_service> add_child_service(app::application& app,
                                                             std::chrono::milliseconds idle_stop) {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return nullptr;
  std::string exe = (self.parent_path() / "waypoint-example-child").string();
  if (::access(exe.c_str(), X_OK) != 0) return nullptr;
  auto child = std::make_shared<app::child_service>(
      "example", app::child_service_options{.command = {exe, "--unix", "{socket}"}, .lazy = true,
                                            .idle_stop = idle_stop});
  app::mount(app, child_prefix, child);
  return child;
}

inline void print_child_examples(std::ostream& out, const std::string& base) {
  out << "  curl -i " << base << child_prefix
      << "/hello   # a mounted service in its own process, started by this first request\n";
  out << "  curl -i -N '" << base << child_prefix
      << "/events?count=3&interval_ms=250'   # the mounted service's event stream, relayed as it arrives\n";
  out << "  kill -HUP " << ::getpid()
      << "   # reloads it: a new process takes the traffic once ready, the old one drains\n";
}

}  // namespace waypoint::examples
