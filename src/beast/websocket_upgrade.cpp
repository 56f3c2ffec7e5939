// Whether a request can upgrade: on its own, so that the session (and its fuzzer, which
// compiles the session's sources alone) need not link the WebSocket session.
#include "websocket_handoff.hpp"

#include <boost/beast/websocket/rfc6455.hpp>

namespace waypoint::beast::detail {

bool is_websocket_upgrade(const request& req) noexcept {
  if (req.version() < 11 || req.method() != http::verb::get) return false;
  if (!req.body().empty() || req.chunked()) return false;
  return boost::beast::websocket::is_upgrade(req);
}

}  // namespace waypoint::beast::detail
