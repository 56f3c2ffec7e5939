// Binding listening sockets, with the error naming the address and the step that failed;
// the unix socket file's life (reclaimed when stale, its mode and group, removed at stop);
// and taking over an inherited listening socket.
#include "listener.hpp"

#include "socket_address.hpp"

#include <boost/asio/ip/v6_only.hpp>

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace waypoint::beast::detail {
namespace {

// SO_REUSEPORT in the shape of an Asio settable socket option (Asio has none for it).
struct reuse_port_option {
  int value;
  template <class Protocol>
  int level(const Protocol&) const {
    return SOL_SOCKET;
  }
  template <class Protocol>
  int name(const Protocol&) const {
    return SO_REUSEPORT;
  }
  template <class Protocol>
  const int* data(const Protocol&) const {
    return &value;
  }
  template <class Protocol>
  std::size_t size(const Protocol&) const {
    return sizeof(value);
  }
};

std::string describe(const tcp::endpoint& e) {
  std::string host = e.address().to_string();
  if (e.address().is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(e.port());
}

[[noreturn]] void fail(int error, const std::string& address, const std::string& why) {
  throw std::system_error(error, std::system_category(),
                          "waypoint: cannot listen on " + address + " (" + why + ")");
}

// The path is taken: by a live server (refused), by something that is not a socket
// (refused), or by the file of a server that died without removing it, which connect()
// tells by ECONNREFUSED: that file is removed so that bind can take the path. A full
// backlog (EAGAIN: the connect does not wait) is a live server too.
void reclaim_stale(const unix_address& at, const std::string& address) {
  struct stat st {};
  if (::lstat(at.path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // gone meanwhile: bind again
    fail(errno, address, "lstat");
  }
  if (!S_ISSOCK(st.st_mode))
    fail(EADDRINUSE, address, "the path exists and is not a socket; not removing it");
  int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (probe < 0) fail(errno, address, "socket for the stale-file check");
  int rc = ::connect(probe, reinterpret_cast<const sockaddr*>(&at.sockaddr), at.size);
  int error = rc == 0 ? 0 : errno;
  ::close(probe);
  if (rc == 0 || error == EAGAIN || error == EINPROGRESS)
    fail(EADDRINUSE, address, "a server is listening on it");
  if (error != ECONNREFUSED) fail(error, address, "connect, checking whether the file is stale");
  if (::unlink(at.path.c_str()) != 0 && errno != ENOENT)
    fail(errno, address, "removing the stale socket file");
}

gid_t group_id(const std::string& name, const std::string& address) {
  group g{};
  group* found = nullptr;
  std::vector<char> buffer(4096);
  int rc;
  while ((rc = ::getgrnam_r(name.c_str(), &g, buffer.data(), buffer.size(), &found)) == ERANGE &&
         buffer.size() < (1u << 20))
    buffer.resize(buffer.size() * 2);
  if (rc != 0) fail(rc, address, "looking up the group \"" + name + "\"");
  if (!found) fail(EINVAL, address, "no group is named \"" + name + "\"");
  return g.gr_gid;
}

}  // namespace

void socket_file::remove() noexcept {
  if (path_.empty()) return;
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == device_ && st.st_ino == inode_)
    ::unlink(path_.c_str());
  path_.clear();
}

tcp::endpoint endpoint_of(const listen_address& a) {
  error_code ec;
  auto address = asio::ip::make_address(a.address, ec);
  if (ec) throw std::invalid_argument("waypoint: \"" + a.address + "\" is not an IP address");
  return {address, a.port};
}

acceptor_type open_listener(asio::io_context& context, const tcp::endpoint& at, bool reuse_port,
                            bool v6_only) {
  acceptor_type a(context);
  error_code ec;
  auto fail = [&](const char* step) {
    throw std::system_error(
        ec, std::string("waypoint: cannot listen on ") + describe(at) + " (" + step + ")");
  };
  if (a.open(stream_protocol(at.protocol()), ec)) fail("open");
  if (a.set_option(asio::socket_base::reuse_address(true), ec)) fail("SO_REUSEADDR");
  if (reuse_port && a.set_option(reuse_port_option{1}, ec)) fail("SO_REUSEPORT");
  if (at.address().is_v6() && v6_only && a.set_option(asio::ip::v6_only(true), ec))
    fail("IPV6_V6ONLY");
  if (a.bind(stream_protocol::endpoint(at), ec)) fail("bind");
  if (a.listen(asio::socket_base::max_listen_connections, ec)) fail("listen");
  return a;
}

// The mode and group are set between bind and listen: until listen, a connect is refused,
// so no client gets in through the umask's permissions.
opened_listener open_unix_listener(asio::io_context& context, const listen_address& a) {
  unix_address at = parse_unix_address(a.address);
  acceptor_type acceptor(context);
  error_code ec;
  if (acceptor.open(stream_protocol(AF_UNIX, 0), ec)) fail(ec.value(), a.address, "socket");
  stream_protocol::endpoint endpoint(&at.sockaddr, at.size);
  acceptor.bind(endpoint, ec);
  if (ec == asio::error::address_in_use && !at.abstract()) {
    reclaim_stale(at, a.address);
    acceptor.bind(endpoint, ec);
  }
  if (ec == asio::error::address_in_use) fail(EADDRINUSE, a.address, "a server is listening on it");
  if (ec) fail(ec.value(), a.address, "bind");
  std::optional<socket_file> file;
  if (!at.abstract()) {
    struct stat st {};
    if (::lstat(at.path.c_str(), &st) != 0) fail(errno, a.address, "lstat after bind");
    file.emplace(at.path, st.st_dev, st.st_ino);
    if (a.unix_file.mode != 0 && ::chmod(at.path.c_str(), a.unix_file.mode) != 0)
      fail(errno, a.address, "chmod");
    if (!a.unix_file.group.empty() && ::chown(at.path.c_str(), static_cast<uid_t>(-1),
                                              group_id(a.unix_file.group, a.address)) != 0)
      fail(errno, a.address, "chown to the group \"" + a.unix_file.group + "\"");
  }
  if (acceptor.listen(asio::socket_base::max_listen_connections, ec))
    fail(ec.value(), a.address, "listen");
  listen_address bound = a;
  bound.port = 0;
  return {std::move(acceptor), std::move(bound), std::move(file)};
}

std::string why_not_listening(int fd) {
  int value = 0;
  socklen_t size = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &size) != 0)
    return errno == ENOTSOCK
               ? "is not a socket"
               : "cannot be asked for its type (" + std::system_category().message(errno) + ")";
  if (value != SOCK_STREAM) return "is not a stream socket";
  size = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &size) != 0 || value == 0)
    return "is not listening (a connection, or a socket never listened on)";
  size = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &size) != 0 ||
      (value != AF_INET && value != AF_INET6 && value != AF_UNIX))
    return "is not an IPv4, IPv6 or unix socket";
  return {};
}

opened_listener adopt_listener(asio::io_context& context, const listen_address& a) {
  std::string where = "the inherited descriptor " + std::to_string(a.inherited_fd);
  if (std::string why = why_not_listening(a.inherited_fd); !why.empty())
    throw std::runtime_error("waypoint: " + where + " " + why);
  sockaddr_storage storage{};
  socklen_t size = sizeof storage;
  if (::getsockname(a.inherited_fd, reinterpret_cast<sockaddr*>(&storage), &size) != 0)
    fail(errno, where, "getsockname");
  stream_protocol::endpoint local(&storage, size,
                                  storage.ss_family == AF_UNIX ? 0 : int(IPPROTO_TCP));
  acceptor_type acceptor(context);
  error_code ec;
  if (acceptor.assign(local.protocol(), a.inherited_fd, ec)) fail(ec.value(), where, "assign");
  listen_address bound = describe(local);
  bound.tls = a.tls;
  bound.inherited_fd = a.inherited_fd;
  bound.name = a.name;
  return {std::move(acceptor), std::move(bound), std::nullopt};
}

void close_listener(listener& l) noexcept {
  if (l.file) l.file->remove();
  error_code ignored;
  l.acceptor.close(ignored);
  if (l.retry) l.retry->cancel();
}

}  // namespace waypoint::beast::detail
