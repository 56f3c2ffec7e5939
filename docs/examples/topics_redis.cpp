// Topics across instances, as docs/server.md shows them: the rooms of docs/examples/topics.cpp
// on a hub whose broker is Redis, so that every instance started with the same REDIS_HOST
// serves the same rooms. Compiled by tests/docs/check (linked with waypoint::app_redis).
#include <waypoint/app/all.hpp>
#include <waypoint/app/realtime/redis_topic_broker.hpp>
#include <waypoint/app/serve.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

namespace app = waypoint::app;

int main() {
  const char* redis_host = std::getenv("REDIS_HOST");
  auto broker = std::make_shared<app::redis_topic_broker>(app::redis_topic_broker_options{
      .host = redis_host ? redis_host : "127.0.0.1",
      .port = 6379,
      .channel = "myapp:topics",  // the instances that share it share their topics
      .log = [](std::string_view line) { std::cerr << line << "\n"; }});
  auto hub = std::make_shared<app::topic_hub>(app::topic_hub_options{.broker = broker});

  app::application a;
  serve_websocket(a, "/v1/rooms/{room}", [hub](app::context& ctx, app::websocket& ws) -> app::awaitable<void> {
    std::string topic = "room:" + std::string(ctx.path_value("room"));
    app::topic_subscriber member(*hub, ws);
    member.subscribe(topic);
    co_await member.run([&](const app::websocket_message& m) {
      if (!m.binary) hub->publish(topic, m.payload);  // here now, elsewhere through Redis
    });
  });
  a.get("/v1/rooms-stats", [broker](app::context& ctx) {
    app::redis_topic_broker_stats s = broker->stats();
    ctx.response().body(std::string(s.subscribed ? "subscribed" : "not subscribed") + ", sent " +
                        std::to_string(s.sent) + ", dropped " + std::to_string(s.dropped));
  });
  app::serve(a, {});
}
