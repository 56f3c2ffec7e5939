// The server of the memory-per-worker measurement (bench/memory/run, BENCHMARKS.md §24): one
// server thread answering requests that stay in flight a while, so that the framework's
// per-request state (contexts, coroutine frames) piles up to the client's concurrency and
// the resident set shows what each request in flight costs and what the worker keeps
// afterwards.
//   GET  /wait/{ms}        a coroutine handler that awaits a timer, then answers
//   POST /items/{id}       a synchronous handler that reads the path value and the body
//
//   waypoint_bench_worker_rss [--port P]
// prints "waypoint-worker-rss: http://127.0.0.1:PORT" once it listens, and stops on SIGTERM.
#include <waypoint/app/serve.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

namespace app = waypoint::app;
namespace wb = waypoint::beast;

int main(int argc, char** argv) {
  std::uint16_t port = 0;
  if (argc == 3 && std::string_view(argv[1]) == "--port") {
    std::string_view text = argv[2];
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
    if (ec != std::errc{} || end != text.data() + text.size()) argc = 0;
  }
  if (argc != 1 && argc != 3) {
    std::cerr << "usage: waypoint_bench_worker_rss [--port 0-65535]\n";
    return 2;
  }
  app::application application;
  application.get("/wait/{ms}", [](app::context& ctx) -> app::awaitable<void> {
    boost::asio::steady_timer timer(ctx.executor(),
                                    std::chrono::milliseconds(ctx.path_value<int>("ms")));
    co_await timer.async_wait(boost::asio::use_awaitable);
    ctx.response().body("waited\n");
  });
  application.post("/items/{id}", [](app::context& ctx) {
    ctx.response().body(std::string(ctx.path_value("id")) + " " +
                        std::to_string(ctx.body().size()) + "\n");
  });
  try {
    wb::server_options options;
    options.listen = {wb::listen_address{"127.0.0.1", port}};
    options.threads = 1;
    options.max_connections = 20000;
    wb::server server(app::options_for(application, options), app::dispatch_to(application));
    server.start();
    for (const wb::listen_address& e : server.endpoints())
      std::cout << "waypoint-worker-rss: http://" << e.address << ":" << e.port << "\n";
    std::cout << std::flush;
    server.wait();
  } catch (const std::exception& e) {
    std::cerr << "waypoint_bench_worker_rss: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
