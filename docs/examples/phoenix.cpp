// The Phoenix Channels protocol, as docs/server.md shows it: a socket whose join hook lets
// a signed-in user into their own "user:ID" topic and anyone into "room:*", whose rooms
// broadcast "shout" events, and a broadcast from a thread of the application's own.
// Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/serve.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace app = waypoint::app;
using namespace std::chrono_literals;

// Who the request is for; an auth layer would set it (docs/framework.md).
std::string user_of(app::context& ctx) { return std::string(ctx.query("user").value_or("")); }

int main() {
  auto hub = std::make_shared<app::topic_hub>();
  app::application a;

  app::phoenix_options channels{
      .join = [](app::context& ctx, std::string_view topic, std::string_view /*params*/) {
        if (topic.starts_with("room:")) return app::phoenix_reply::ok();
        if (topic == "user:" + user_of(ctx)) return app::phoenix_reply::ok(R"({"private":true})");
        return app::phoenix_reply::error("unauthorized");  // join.receive("error", ...)
      },
      .on_event = [](app::phoenix_channel& channel, std::string_view event,
                     std::string_view payload) -> std::optional<app::phoenix_reply> {
        if (event != "shout") return app::phoenix_reply::error("unknown event");
        auto body = nlohmann::json::parse(payload);  // the client's payload, as JSON text
        if (!body.contains("body")) return app::phoenix_reply::error("a shout has a body");
        channel.broadcast("shout", payload);  // to everyone in the topic, encoded once
        return app::phoenix_reply::ok();      // push.receive("ok", ...)
      },
      .max_channels = 16,
  };
  serve_websocket(a, "/socket/websocket", app::phoenix_socket(hub, channels));

  // Any thread may broadcast: a clock in the lobby.
  std::jthread clock([hub](std::stop_token stop) {
    while (!stop.stop_requested()) {
      app::phoenix_broadcast(*hub, "room:lobby", "tick", R"({"at":"now"})");
      std::this_thread::sleep_for(1s);
    }
  });
  app::serve(a, {});
}
