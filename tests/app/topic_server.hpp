// The topic route topics_test.cpp and redis_topics_test.cpp serve: GET /topics/{topics}
// joins the comma-separated topics; a client's "TOPIC PAYLOAD" is published to TOPIC (its
// own publish, within its rate). A topic the hub refuses, or a publish past the rate, closes
// the connection with 1008 and the reason. A name is literal ("room:*" is that topic), as
// the hub takes a client's names; GET /watch/{topics} is the same but for this
// application's explicit choice that a name ending in '*' there is a prefix ("room:*" hears
// every "room:...", through subscribe_prefix).
#pragma once

#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/topics.hpp>

#include <chrono>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace waypoint::app::testing {

struct topic_server {
  std::shared_ptr<topic_hub> hub;
  application app{{.logger = [](std::string_view) {}}};
  std::unique_ptr<waypoint::beast::server> server;
  std::uint16_t port = 0;

  explicit topic_server(std::shared_ptr<topic_hub> shared, unsigned threads = 2)
      : hub(std::move(shared)) {
    websocket_options limits;
    limits.write_timeout = std::chrono::seconds(2);  // a peer that reads nothing is cut this soon
    limits.max_queued_bytes = 4 << 20;
    serve_websocket(app, "/topics/{topics}", serve_member(hub, false), limits);
    serve_websocket(app, "/watch/{topics}", serve_member(hub, true), limits);
    waypoint::beast::server_options o;
    o.listen = {{"127.0.0.1", 0}};
    o.threads = threads;
    o.handle_signals = false;
    o.max_connections = 4096;
    server = std::make_unique<waypoint::beast::server>(options_for(app, o), dispatch_to(app));
    server->start();
    port = server->endpoints().front().port;
  }
  // `star_is_prefix`: a name ending in '*' joins the prefix before it.
  static websocket_handler serve_member(std::shared_ptr<topic_hub> hub, bool star_is_prefix) {
    return [hub, star_is_prefix](context& ctx, websocket& ws) -> awaitable<void> {
      topic_subscriber member(*hub, ws);
      std::istringstream names{std::string(ctx.path_value("topics"))};
      std::string refused;
      try {
        for (std::string name; std::getline(names, name, ',');) {
          if (star_is_prefix && name.ends_with('*'))
            member.subscribe_prefix(std::string_view(name).substr(0, name.size() - 1));
          else
            member.subscribe(name);
        }
      } catch (const std::exception& e) {
        refused = e.what();
      }
      if (!refused.empty()) {
        co_await ws.close(close_code::policy_error, refused);
        co_return;
      }
      co_await member.run([&](const websocket_message& m) {
        std::string_view text = m.payload;
        std::size_t space = text.find(' ');
        if (space == std::string_view::npos) return;
        try {
          member.publish(text.substr(0, space), text.substr(space + 1));
        } catch (const publish_rate_exceeded& e) {
          member.close(close_code::policy_error, e.what());
        } catch (const std::length_error& e) {  // larger than a queue: no member could get it
          member.close(close_code::too_big, e.what());
        }
      });
    };
  }

  ~topic_server() {
    server->stop();
    server->wait();
  }

  // Waits until `count` connections are in `topic`; false after 20 s.
  bool await_subscribers(const std::string& topic, std::size_t count) const {
    for (int i = 0; i < 2000; ++i) {
      if (hub->subscribers(topic) == count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

}  // namespace waypoint::app::testing
