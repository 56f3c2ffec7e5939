// Unix addresses parsed and checked, endpoints described, and SO_PEERCRED read.
#include "socket_address.hpp"

#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace waypoint::beast::detail {

unix_address parse_unix_address(std::string_view address) {
  std::string_view name = address.substr(address.starts_with("unix:") ? 5 : 0);
  auto refuse = [&](const std::string& why) {
    throw std::invalid_argument("waypoint: the unix socket address \"" + std::string(address) +
                                "\" " + why);
  };
  bool abstract = name.starts_with('@');
  if (abstract) name.remove_prefix(1);
  if (name.empty()) refuse(abstract ? "has an empty abstract name" : "has an empty path");
  if (name.find('\0') != std::string_view::npos) refuse("holds a NUL byte");
  if (name.size() > max_unix_path_bytes)
    refuse("is " + std::to_string(name.size()) + " bytes long; a unix socket " +
           (abstract ? "name" : "path") + " holds at most " + std::to_string(max_unix_path_bytes) +
           " (sun_path)");
  unix_address a;
  a.sockaddr.sun_family = AF_UNIX;
  // An abstract name starts with a NUL and is as long as the address says, no terminator.
  std::memcpy(a.sockaddr.sun_path + (abstract ? 1 : 0), name.data(), name.size());
  a.size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + 1);
  if (!abstract) a.path = std::string(name);
  return a;
}

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
  socklen_t size = sizeof c;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &size) != 0) return std::nullopt;
  return peer_credentials{static_cast<std::int32_t>(c.pid), static_cast<std::uint32_t>(c.uid),
                          static_cast<std::uint32_t>(c.gid)};
}

}  // namespace waypoint::beast::detail
