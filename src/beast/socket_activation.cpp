// Socket activation without libsystemd: systemd's LISTEN_PID, LISTEN_FDS and
// LISTEN_FDNAMES read as sd_listen_fds_with_names(unset_environment = 1) reads them
// (sd_listen_fds(3)): descriptors from 3 on, for this process only, the variables cleared.
// And listen_address::unix_socket, the other way to a listener that is not a TCP address.
#include "waypoint/beast/server.hpp"

#include "listener.hpp"
#include "socket_address.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <stdexcept>

namespace waypoint::beast {
namespace {

// The first descriptor systemd passes (SD_LISTEN_FDS_START).
constexpr int listen_fds_start = 3;

std::optional<long> number(const char* text) {
  if (!text || !*text) return std::nullopt;
  std::string_view s(text);
  long value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

// Clears the variables whatever they said, so a child started later inherits none of them.
struct unset_on_exit {
  ~unset_on_exit() {
    ::unsetenv("LISTEN_PID");
    ::unsetenv("LISTEN_FDS");
    ::unsetenv("LISTEN_FDNAMES");
  }
};

}  // namespace

listen_address listen_address::unix_socket(std::string path, unix_socket_options file) {
  listen_address a;
  a.address = "unix:" + std::move(path);
  a.port = 0;
  a.unix_file = std::move(file);
  return a;
}

std::vector<listen_address> inherited_listeners() {
  unset_on_exit unset;
  std::optional<long> pid = number(std::getenv("LISTEN_PID"));
  std::optional<long> count = number(std::getenv("LISTEN_FDS"));
  if (!pid || !count || *pid != static_cast<long>(::getpid())) return {};
  if (*count > 4096) throw std::runtime_error("waypoint: LISTEN_FDS is implausibly large");
  std::vector<std::string> names;
  if (const char* text = std::getenv("LISTEN_FDNAMES")) {
    std::string_view rest(text);
    for (std::size_t colon; (colon = rest.find(':')) != std::string_view::npos;
         rest.remove_prefix(colon + 1))
      names.emplace_back(rest.substr(0, colon));
    names.emplace_back(rest);
  }
  std::vector<listen_address> out;
  for (int i = 0; i < static_cast<int>(*count); ++i) {
    int fd = listen_fds_start + i;
    std::string where = "waypoint: the inherited descriptor " + std::to_string(fd);
    if (std::string why = detail::why_not_listening(fd); !why.empty())
      throw std::runtime_error(where + " (LISTEN_FDS) " + why);
    // Not for a program this one starts (sd_listen_fds sets it too).
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    sockaddr_storage storage{};
    socklen_t size = sizeof storage;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &size) != 0)
      throw std::runtime_error(where + ": getsockname failed");
    listen_address a = detail::describe(detail::stream_protocol::endpoint(
        &storage, size, storage.ss_family == AF_UNIX ? 0 : int(IPPROTO_TCP)));
    a.inherited_fd = fd;
    if (static_cast<std::size_t>(i) < names.size()) a.name = names[i];
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace waypoint::beast
