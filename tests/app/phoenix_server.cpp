// A Phoenix socket for tests/phoenix/interop.mjs, where the npm client talks to it: serves
// /socket/websocket on 127.0.0.1 (an ephemeral port, printed as "port N"), until its standard
// input closes. Topics "room:*" join (the join's response names the topic), "secret:*" are
// refused by the join hook ("unauthorized"); on a room, "ping" is answered with its payload,
// "shout" is broadcast to the room and answered ok, "crash" crashes the channel, "bye" closes
// it from the server. Each connection may broadcast 5 a second, in bursts of 10.
#include <waypoint/app/realtime/phoenix.hpp>
#include <waypoint/app/serve.hpp>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

namespace app = waypoint::app;

int main() {
  auto hub = std::make_shared<app::topic_hub>(
      app::topic_hub_options{.publish_rate = 5, .publish_burst = 10});
  app::application a{{.logger = [](std::string_view line) { std::cerr << line << '\n'; }}};
  serve_websocket(
      a, "/socket/websocket",
      app::phoenix_socket(
          hub, {.join =
                    [](app::context&, std::string_view topic, std::string_view) {
                      if (topic.starts_with("secret:"))
                        return app::phoenix_reply::error("unauthorized");
                      nlohmann::json response = {{"topic", std::string(topic)}};
                      return app::phoenix_reply::ok(response.dump());
                    },
                .on_event = [](app::phoenix_channel& channel, std::string_view event,
                               std::string_view payload) -> std::optional<app::phoenix_reply> {
                  if (event == "ping")
                    return app::phoenix_reply::ok(R"({"pong":)" + std::string(payload) + "}");
                  if (event == "crash") throw std::runtime_error("crash requested");
                  if (event == "bye") channel.close();
                  if (event == "shout") channel.broadcast("shout", payload);
                  return app::phoenix_reply::ok();
                }}));

  waypoint::beast::server_options o;
  o.listen = {{"127.0.0.1", 0}};
  o.threads = 2;
  o.handle_signals = false;
  waypoint::beast::server server(app::options_for(a, o), app::dispatch_to(a));
  server.start();
  std::cout << "port " << server.endpoints().front().port << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
  }
  server.stop();
  server.wait();
}
