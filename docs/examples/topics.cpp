// Topics, as docs/server.md shows them: rooms whose members hear what any of them says,
// a prefix subscriber that hears every room, and a publish from a thread of the
// application's own. Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/serve.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace app = waypoint::app;
using namespace std::chrono_literals;

int main() {
  auto hub = std::make_shared<app::topic_hub>(app::topic_hub_options{
      .max_queued_bytes = 256 * 1024,  // per connection
      .on_overflow = app::overflow_policy::drop_oldest});

  app::application a;
  serve_websocket(a, "/v1/rooms/{room}", [hub](app::context& ctx, app::websocket& ws) -> app::awaitable<void> {
    std::string topic = "room:" + std::string(ctx.path_value("room"));
    app::topic_subscriber member(*hub, ws);  // leaves its topics when the handler ends
    member.subscribe(topic);
    co_await member.run([&](const app::websocket_message& m) {
      if (m.binary) return;
      try {
        member.publish(topic, m.payload);  // to everyone in the room, within the member's rate
      } catch (const app::publish_rate_exceeded& e) {
        member.close(app::close_code::policy_error, e.what());
      }
    });
  });
  serve_websocket(a, "/v1/rooms", [hub](app::websocket& ws) -> app::awaitable<void> {
    app::topic_subscriber moderator(*hub, ws);
    moderator.subscribe_prefix("room:");  // every room: the application's choice
    co_await moderator.run();
  });

  // Any thread may publish: a clock announcing the time in the lobby.
  std::jthread clock([hub](std::stop_token stop) {
    while (!stop.stop_requested()) {
      hub->publish("room:lobby", "tick");
      std::this_thread::sleep_for(1s);
    }
  });
  app::serve(a, {});
}
