// Endpoints described, and SO_PEERCRED read.
#include "socket_address.hpp"

#include <cstddef>
#include <cstring>

namespace waypoint::beast::detail {

listen_address describe(const stream_protocol::endpoint& e) {
  if (e.protocol().family() != AF_UNIX) {
    tcp::endpoint t = to_tcp(e);
    return {t.address().to_string(), t.port()};
  }
  const auto* un = reinterpret_cast<const sockaddr_un*>(e.data());
  std::size_t header = offsetof(sockaddr_un, sun_path);
  if (e.size() <= header) return {"unix:", 0};
  std::size_t n = e.size() - header;
  if (un->sun_path[0] == '\0') return {"unix:@" + std::string(un->sun_path + 1, n - 1), 0};
  return {"unix:" + std::string(un->sun_path, ::strnlen(un->sun_path, n)), 0};
}

tcp::endpoint to_tcp(const stream_protocol::endpoint& e) {
  tcp::endpoint t;
  std::memcpy(t.data(), e.data(), std::min<std::size_t>(e.size(), t.capacity()));
  t.resize(std::min<std::size_t>(e.size(), t.capacity()));
  return t;
}

std::optional<peer_credentials> credentials_of(int fd) noexcept {
  ucred c{};
  if (!waypoint::detail::read_peer_credentials(fd, c)) return std::nullopt;
  return peer_credentials{static_cast<std::int32_t>(c.pid), static_cast<std::uint32_t>(c.uid),
                          static_cast<std::uint32_t>(c.gid)};
}

}  // namespace waypoint::beast::detail
