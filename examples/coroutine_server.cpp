// waypoint-coroutine-server: the application of waypoint::app served by a plain Beast
// coroutine server (coroutine_server.hpp) on one io_context, with one route that awaits a
// timer, one synchronous route and the typed orders route.
//
//   $ waypoint-coroutine-server 8081
//   $ curl -i localhost:8081/slow/250        # answered after 250 ms, the thread never blocks
#include "coroutine_server.hpp"
#include "orders.hpp"

#include <waypoint/app/middleware.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  namespace asio = boost::asio;
  namespace app = waypoint::app;
  unsigned long port = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 8081;
  if (port > 65535) {
    std::cerr << "usage: waypoint-coroutine-server [PORT]\n";
    return 2;
  }
  app::application application;
  application.use(app::request_id());
  application.use(app::deadline(std::chrono::seconds(5)));
  application.get("/slow/{ms}", [](app::context& ctx) -> app::awaitable<void> {
    asio::steady_timer timer(ctx.executor(), std::chrono::milliseconds(ctx.path_value<int>("ms")));
    co_await timer.async_wait(asio::use_awaitable);
    ctx.response().body("slept " + std::string(ctx.path_value("ms")) + " ms\n");
  });
  application.get("/hello", [](app::context& ctx) { ctx.response().body("hello\n"); });
  waypoint::examples::add_order_routes(application);

  asio::io_context io(1);
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"),
                                        static_cast<std::uint16_t>(port)});
  asio::co_spawn(io, waypoint::examples::accept_connections(acceptor, application), asio::detached);
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int) { io.stop(); });
  std::cout << "waypoint-coroutine-server on http://127.0.0.1:" << acceptor.local_endpoint().port()
            << "\n  curl -i http://127.0.0.1:" << acceptor.local_endpoint().port() << "/slow/250\n"
            << std::flush;
  io.run();
}
