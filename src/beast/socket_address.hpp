// Socket addresses of both kinds the server listens on, TCP and unix: a unix listen
// address ("unix:/path", "unix:@name") as the sockaddr_un to bind, any bound or connected
// end as a listen_address, and a unix peer's credentials.
#pragma once

#include "asio_types.hpp"
#include "waypoint/detail/unix_address.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace waypoint::beast::detail {

// The unix address parser is shared with the upstream client's unix URLs.
using waypoint::detail::max_unix_path_bytes;
using waypoint::detail::parse_unix_address;
using waypoint::detail::unix_address;

// A bound or connected end: "127.0.0.1"/port, "::1"/port, "unix:/path", "unix:@name", or
// "unix:" for an unnamed unix socket (a client's).
listen_address describe(const stream_protocol::endpoint& e);

// A TCP endpoint from a generic one of family AF_INET or AF_INET6.
tcp::endpoint to_tcp(const stream_protocol::endpoint& e);

// SO_PEERCRED of a connected unix socket; nothing when the call fails.
std::optional<peer_credentials> credentials_of(int fd) noexcept;

}  // namespace waypoint::beast::detail
