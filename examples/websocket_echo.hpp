// The gateway's WebSocket route: GET /v1/echo upgrades and echoes every message, text or
// binary, until the client closes (or the gateway drains: 1001). The gateway's layers run
// on the upgrade request first, so the 101 carries its X-Request-Id.
//
//   waypoint::examples::add_websocket_route(app);
//   $ python3 -m websockets ws://127.0.0.1:8080/v1/echo      # type a line, get it back
#pragma once

#include <waypoint/app/websocket.hpp>

#include <ostream>
#include <string>
#include <string_view>

namespace waypoint::examples {

inline constexpr std::string_view websocket_echo_path = "/v1/echo";

inline void add_websocket_route(app::application& app) {
  app.websocket(websocket_echo_path, [](app::websocket& ws) -> app::awaitable<void> {
    app::websocket_message message;  // one buffer for every message
    while (co_await ws.read(message)) co_await ws.write(message);
  });
  app.describe({.summary = "WebSocket echo: every message comes back as it was sent"});
}

// `base` is the gateway's http:// URL.
inline void print_websocket_example(std::ostream& out, const std::string& base) {
  std::string ws = "ws" + base.substr(base.find(':'));
  out << "  python3 -m websockets " << ws << websocket_echo_path
      << "   # WebSocket echo (Debian: python3-websockets)\n";
}

}  // namespace waypoint::examples
