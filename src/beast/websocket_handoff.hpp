// What a connection hands to the WebSocket it becomes; no socket here, so that the
// http_session (which has none) can build it.
#pragma once

#include "waypoint/beast/server.hpp"
#include "waypoint/beast/websocket.hpp"

#include <string>

namespace waypoint::beast::detail {

// What a connection hands over with its socket.
struct websocket_handoff {
  request upgrade_request;
  response upgrade_response;  // its fields go out with the 101
  websocket_upgrade upgrade;
  std::string unread;  // bytes read past the request (a client that did not wait for 101)
  connection_endpoints endpoints;
};

}  // namespace waypoint::beast::detail
