// Prints the metrics exposition of a server that answered a little of everything (routes,
// 404, 405, redirect, 400 from the router, 400 and 408 from the server) and watched a topic
// hub, for `promtool check metrics` (promtool_check next to this file).
#include "loopback_client.hpp"

#include <waypoint/app/operations/metrics.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/topics.hpp>

#include <boost/asio/write.hpp>

#include <chrono>
#include <iostream>
#include <string>

int main() {
  using namespace waypoint::app;
  using namespace waypoint::app::testing;
  metrics m;
  application app({.logger = [](std::string_view) {}});
  app.use(m.layer());
  app.get("/users/{id}", [](context& ctx) { ctx.response().body("u"); });
  app.get("/dir/", [](context&) {});
  app.get("/metrics", m.endpoint());
  waypoint::beast::server_options options = loopback_options();
  waypoint::beast::server server(options, dispatch_to(app));
  m.watch(server);
  auto hub = std::make_shared<topic_hub>();
  m.watch(hub, "rooms");
  hub->publish("lobby", "nobody hears this");
  server.start();
  std::uint16_t port = server.endpoints().front().port;
  exchange(port, {make_request("GET", "/users/1"), make_request("POST", "/users/1"),
                  make_request("GET", "/nothing"), make_request("GET", "/dir"),
                  make_request("GET", "/users/1?a#b")});
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    boost::asio::write(socket, boost::asio::buffer(std::string("NOT HTTP\r\n\r\n")));
    boost::system::error_code ec;
    char buffer[1024];
    while (!ec) socket.read_some(boost::asio::buffer(buffer), ec);
  }
  // Scraped through the server, as Prometheus would.
  auto scraped = exchange(port, {make_request("GET", "/metrics")});
  server.stop();
  server.wait();
  std::cout << scraped.front().body();
  return scraped.front().result_int() == 200 ? 0 : 1;
}
