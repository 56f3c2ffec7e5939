// A connection after its upgrade: Beast's websocket::stream over its transport (TLS or not), the handler's
// coroutine, and the close. Owned by the worker, like a connection, so the connection cap,
// the drain and stats() see it. Beast's WebSocket headers stay in websocket_session.cpp.
#pragma once

#include "asio_types.hpp"
#include "websocket_handoff.hpp"

#include <list>
#include <memory>

namespace waypoint::beast::detail {

class transport;
class worker;

class websocket_session {
 public:
  websocket_session(worker& owner, std::unique_ptr<transport> stream, websocket_handoff handoff);
  ~websocket_session();
  websocket_session(const websocket_session&) = delete;
  websocket_session& operator=(const websocket_session&) = delete;

  void start(std::list<websocket_session>::iterator self);
  // The drain: a close frame with 1001 (once the handshake is done; before it, a cut).
  void going_away() noexcept;
  // Cuts the connection now (the drain ran out, or a second signal).
  void close() noexcept;

 private:
  class impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace waypoint::beast::detail
