// Listening sockets: a TCP address to bind (SO_REUSEPORT, IPV6_V6ONLY), a unix socket file
// (a stale one reclaimed, a live one refused, its mode and group set, removed at stop), or
// a socket the process inherited; and the worker that accepts on each (null: the control
// thread).
#pragma once

#include "asio_types.hpp"

#include <sys/types.h>

#include <optional>
#include <string>

namespace waypoint::beast::detail {

class worker;

// A unix listener's file, removed when the listener stops (or the server is destroyed),
// unless another file has taken its path since (device and inode tell).
class socket_file {
 public:
  socket_file(std::string path, dev_t device, ino_t inode)
      : path_(std::move(path)), device_(device), inode_(inode) {}
  socket_file(socket_file&& other) noexcept
      : path_(std::move(other.path_)), device_(other.device_), inode_(other.inode_) {
    other.path_.clear();
  }
  socket_file& operator=(socket_file&&) = delete;
  ~socket_file() { remove(); }

  void remove() noexcept;

 private:
  std::string path_;  // empty: removed, or moved from
  dev_t device_;
  ino_t inode_;
};

// A bound, listening socket, what it is bound to, and its file if it made one.
struct opened_listener {
  acceptor_type acceptor;
  listen_address bound;
  std::optional<socket_file> file;
};

// A listening socket and the worker whose thread accepts on it (null: the control thread).
struct listener {
  acceptor_type acceptor;
  worker* owner;
  std::optional<timer_type> retry;    // after EMFILE and the like, wait before accepting again
  listener_kind kind;
  std::optional<socket_file> file{};  // a unix listener's, removed at close
};

// The endpoint of a TCP address; throws std::invalid_argument when it is not an IP address.
tcp::endpoint endpoint_of(const listen_address& a);
// A TCP listening socket on `at`; throws std::system_error naming the address and the step.
acceptor_type open_listener(asio::io_context& context, const tcp::endpoint& at, bool reuse_port,
                            bool v6_only);
// A unix listening socket on `a` (listen_address::is_unix_socket()). Throws
// std::system_error naming the address and the step: a live server's socket, a file that is
// not a socket, an unknown group; std::invalid_argument for a path that does not fit.
opened_listener open_unix_listener(asio::io_context& context, const listen_address& a);
// The inherited socket a.inherited_fd, checked to be a listening stream socket (else
// std::runtime_error naming it).
opened_listener adopt_listener(asio::io_context& context, const listen_address& a);
// Why descriptor `fd` cannot be listened on as it is (not a socket, not a stream socket,
// not listening, a family other than IPv4, IPv6 or unix); empty when it can.
std::string why_not_listening(int fd);
// Removes the listener's file (first, so that no client finds a path about to go dead),
// then closes it.
void close_listener(listener& l) noexcept;

}  // namespace waypoint::beast::detail
