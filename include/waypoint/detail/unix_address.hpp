// A unix domain socket's address, "unix:/path" or "unix:@name" (Linux's abstract namespace),
// checked and turned into the sockaddr_un that bind() and connect() take: one parser for the
// server's unix listeners and the upstream client's unix URLs; and a connected socket's
// peer. The standard library and <sys/socket.h>, <sys/un.h> only.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace waypoint::detail {

// A unix socket's address, ready for bind() and connect().
struct unix_address {
  sockaddr_un sockaddr{};
  socklen_t size = 0;
  std::string path;  // the file; empty for an abstract name
  bool abstract() const noexcept { return path.empty(); }
};

// The longest path, or abstract name, sun_path holds (a path needs its terminating NUL).
inline constexpr std::size_t max_unix_path_bytes = sizeof(sockaddr_un::sun_path) - 1;

// Sets `out` to the address of "unix:PATH", "unix:@NAME", "PATH" or "@NAME" and returns "";
// otherwise returns why it is not one, as the end of a sentence naming the address: "has an
// empty path", "holds a NUL byte", "is 120 bytes long; a unix socket path holds at most 107
// (sun_path)".
inline std::string make_unix_address(std::string_view address, unix_address& out) {
  std::string_view name = address.substr(address.starts_with("unix:") ? 5 : 0);
  bool abstract = name.starts_with('@');
  if (abstract) name.remove_prefix(1);
  if (name.empty()) return abstract ? "has an empty abstract name" : "has an empty path";
  if (name.find('\0') != std::string_view::npos) return "holds a NUL byte";
  if (name.size() > max_unix_path_bytes)
    return "is " + std::to_string(name.size()) + " bytes long; a unix socket " +
           (abstract ? "name" : "path") + " holds at most " + std::to_string(max_unix_path_bytes) +
           " (sun_path)";
  out = unix_address{};
  out.sockaddr.sun_family = AF_UNIX;
  // An abstract name starts with a NUL and is as long as the address says, no terminator.
  std::memcpy(out.sockaddr.sun_path + (abstract ? 1 : 0), name.data(), name.size());
  out.size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + 1);
  if (!abstract) out.path = std::string(name);
  return {};
}

// make_unix_address, throwing std::invalid_argument naming the address when it is not one.
inline unix_address parse_unix_address(std::string_view address) {
  unix_address a;
  if (std::string why = make_unix_address(address, a); !why.empty())
    throw std::invalid_argument("waypoint: the unix socket address \"" + std::string(address) +
                                "\" " + why);
  return a;
}

// The process at the other end of connected unix socket `fd`, as the kernel recorded it
// when that end connected or listened (SO_PEERCRED: the peer cannot forge it); false when
// it cannot be read. The server reads its clients' with it, the upstream client its
// upstream's.
inline bool read_peer_credentials(int fd, ucred& out) noexcept {
  socklen_t size = sizeof out;
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &out, &size) == 0 && size == sizeof out;
}

}  // namespace waypoint::detail
