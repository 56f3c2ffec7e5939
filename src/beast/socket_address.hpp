// Socket addresses of both kinds the server listens on, TCP and unix: a unix listen
// address ("unix:/path", "unix:@name") as the sockaddr_un to bind, any bound or connected
// end as a listen_address, and a unix peer's credentials.
#pragma once

#include "asio_types.hpp"

#include <sys/socket.h>
#include <sys/un.h>

#include <optional>
#include <string>
#include <string_view>

namespace waypoint::beast::detail {

// A unix socket's address, ready for bind() and connect().
struct unix_address {
  sockaddr_un sockaddr{};
  socklen_t size = 0;
  std::string path;  // the file; empty for an abstract name
  bool abstract() const noexcept { return path.empty(); }
};

// The longest path, or abstract name, sun_path holds (a path needs its terminating NUL).
constexpr std::size_t max_unix_path_bytes = sizeof(sockaddr_un::sun_path) - 1;

// The address of "unix:PATH" or "unix:@NAME". Throws std::invalid_argument naming the
// address when it is empty, or longer than max_unix_path_bytes (saying both lengths), or
// holds a NUL.
unix_address parse_unix_address(std::string_view address);

// A bound or connected end: "127.0.0.1"/port, "::1"/port, "unix:/path", "unix:@name", or
// "unix:" for an unnamed unix socket (a client's).
listen_address describe(const stream_protocol::endpoint& e);

// A TCP endpoint from a generic one of family AF_INET or AF_INET6.
tcp::endpoint to_tcp(const stream_protocol::endpoint& e);

// SO_PEERCRED of a connected unix socket; nothing when the call fails.
std::optional<peer_credentials> credentials_of(int fd) noexcept;

}  // namespace waypoint::beast::detail
