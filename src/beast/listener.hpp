// Listening sockets: an address to bind, SO_REUSEPORT, IPV6_V6ONLY, and the worker that
// accepts on each (null: the control thread).
#pragma once

#include "asio_types.hpp"

#include <optional>
#include <string>

namespace waypoint::beast::detail {

class worker;

// A listening socket and the worker whose thread accepts on it (null: the control thread).
struct listener {
  acceptor_type acceptor;
  worker* owner;
  std::optional<timer_type> retry;  // after EMFILE and the like, wait before accepting again
  bool tls = false;                 // its connections speak TLS
};

// The endpoint of an address; throws std::invalid_argument when it is not an IP address.
tcp::endpoint endpoint_of(const listen_address& a);
// "127.0.0.1:8080", "[::1]:8080".
std::string describe(const tcp::endpoint& e);
// A listening socket on `at`; throws std::system_error naming the address and the step.
acceptor_type open_listener(asio::io_context& context, const tcp::endpoint& at, bool reuse_port,
                            bool v6_only);

}  // namespace waypoint::beast::detail
