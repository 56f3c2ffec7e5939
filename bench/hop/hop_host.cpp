// The host of the hop benchmark (bench/hop/run, BENCHMARKS.md §23): one server thread
// answering the same trivial GET three ways, so that one run prices the hop to a service in
// another process.
//   /inproc/hello  the host's own handler, the one examples/child_service.cpp has;
//   /unix/hello    a mounted child (waypoint::app::mount) running that program, over the
//                  unix socket its child_service gives it;
//   /tcp/hello     the same program started by the script with --tcp PORT, reached over
//                  loopback by an upstream, forwarded as mount() forwards (the request's
//                  fields, Via and the X-Forwarded fields, the request id, relay()).
// Each answer names the process that made it, which the script checks before measuring.
//
//   waypoint_bench_hop_host --port 0 --child build/bench/examples/waypoint-example-child
//                           --tcp-child http://127.0.0.1:8091
// prints "waypoint-hop-host: 8 routes on http://127.0.0.1:PORT" (the line bench/load's
// harness reads) once the unix child is ready, and stops on SIGTERM, its child after it.
#include <waypoint/app/services/child_service.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/services/upstream.hpp>

#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

namespace app = waypoint::app;
namespace wb = waypoint::beast;

namespace {

struct options {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;
  std::string child;      // the child program's executable, mounted at /unix
  std::string tcp_child;  // the URL of the same program listening on TCP, forwarded at /tcp
};

[[noreturn]] void usage(std::string_view why) {
  std::cerr << "waypoint_bench_hop_host: " << why
            << "\nusage: waypoint_bench_hop_host [--address A] [--port P] --child EXE --tcp-child URL\n";
  std::exit(2);
}

options parse_arguments(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(std::string(flag) + " needs a value");
    std::string_view value = argv[++i];
    if (flag == "--address") {
      o.address = value;
    } else if (flag == "--port") {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), o.port);
      if (ec != std::errc{} || end != value.data() + value.size()) usage("--port needs 0-65535");
    } else if (flag == "--child") {
      o.child = value;
    } else if (flag == "--tcp-child") {
      o.tcp_child = value;
    } else {
      usage("unknown option " + std::string(flag));
    }
  }
  if (o.child.empty() || o.tcp_child.empty()) usage("--child and --tcp-child are required");
  return o;
}

// The target mount() sends: the path under the prefix, and the query.
// Appended piece by piece: GCC 12 at -O3 takes insert(0, "/") for an overlapping copy
// (-Wrestrict).
std::string target_under(const app::context& ctx, std::string_view prefix) {
  std::string_view rest = ctx.path().substr(prefix.size());
  std::string_view query = ctx.outcome().query;
  std::string target;
  if (rest.empty() || rest.front() != '/') target += '/';
  target += rest;
  if (!query.empty()) {
    target += '?';
    target += query;
  }
  return target;
}

// GET under `prefix` forwarded to `upstream` the way mount() forwards to its child, so that
// the TCP row differs from the unix row in the transport only (mount's lease of the child's
// process aside).
void forward_over_tcp(app::application& application, std::string prefix, app::upstream upstream) {
  application.get(prefix + "/{path...}", [prefix, upstream](app::context& ctx) -> app::awaitable<void> {
    app::request out = app::forwarded_request(ctx, "1.1 waypoint");
    out.target(target_under(ctx, prefix));
    out.set("X-Request-Id", ctx.request_id());
    co_await upstream.relay(ctx, std::move(out));
  });
}

}  // namespace

int main(int argc, char** argv) {
  options o = parse_arguments(argc, argv);
  std::string pid = std::to_string(::getpid());
  app::application application;
  application.get("/inproc/hello",
                  [pid](app::context& ctx) { ctx.response().body("hello from pid " + pid + "\n"); });

  try {
    // The mounted child with its defaults but for the start: at once, so no request measures it.
    auto child = std::make_shared<app::child_service>(
        "hop", app::child_service_options{.command = {o.child, "--unix", "{socket}"}});
    app::mount(application, "/unix", child);
    // The same forwarding limits as the mounted child's, so the two hops differ in transport only.
    app::upstream_options tcp = app::child_service_options{}.forwarding;
    tcp.url = o.tcp_child;
    forward_over_tcp(application, "/tcp", app::upstream(tcp));

    child->start().get();
    wb::server_options server_options;
    server_options.listen = {wb::listen_address{o.address, o.port}};
    server_options.threads = 1;
    wb::server server(app::options_for(application, server_options), app::dispatch_to(application));
    server.start();
    for (const wb::listen_address& e : server.endpoints())
      std::cout << "waypoint-hop-host: " << application.router().size() << " routes on http://"
                << e.address << ":" << e.port << "\n";
    std::cout << std::flush;
    server.wait();
    child->stop().get();  // after the drain: the last forwarded requests are done
  } catch (const std::exception& e) {
    std::cerr << "waypoint_bench_hop_host: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
