// Where a server listens and who is on each end of a connection: addresses (TCP, unix
// sockets, ones inherited from systemd) and the endpoints an exchange reports. Standard
// library only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace waypoint::beast {

// The file of a unix listener, set between its bind and its listen, so that no client
// ever connects through looser permissions.
struct unix_socket_options {
  // The file's permission bits; connecting needs write permission (0660: owner and group).
  // 0: what the umask leaves.
  unsigned mode = 0;
  // The group owning the file, by name ("www-data"); empty: the process's. The process
  // must be a member (or root).
  std::string group{};
};

// An address and port: where a server listens, or one end of a connection.
//
// A unix domain socket is an address in nginx's and gunicorn's spelling, "unix:" then a
// path, or a Linux abstract name after '@' (no file; gone with the socket), port 0:
//   listen_address::unix_socket("/run/app/http.sock", {.mode = 0660, .group = "www-data"})
//   listen_address::unix_socket("@app-http")
// A listening socket inherited from systemd (inherited_listeners()) carries its descriptor.
// Of a connection: a unix one's local address is its listener's ("unix:/run/app/http.sock"),
// its remote address "unix:" and the peer's pid ("unix:4242"; connection_endpoints::peer).
struct listen_address {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8080;
  // The listener speaks TLS (server_options::tls); of a connection's local end, it came
  // over TLS.
  bool tls = false;
  // The listener serves HTTP/2 beside HTTP/1.1 (server_options::http2): over TLS when the
  // client's ALPN offers h2, in plaintext (h2c) when the client opens with HTTP/2's
  // connection preface (prior knowledge). `Upgrade: h2c` is not taken: such a request is
  // answered over HTTP/1.1, as if the field were absent.
  bool http2 = false;
  // A unix listener's file mode and group (a path; an abstract name has neither).
  unix_socket_options unix_file{};
  // >= 0: a listening socket the process was given (socket activation); the server listens
  // on it as it is, and owns it from start(). `address` and `port` then describe it.
  int inherited_fd = -1;
  // The inherited socket's name (systemd's FileDescriptorName=, LISTEN_FDNAMES), for
  // picking which of several is which.
  std::string name{};

  // "unix:" + `path`; a path starting with '@' is an abstract name.
  static listen_address unix_socket(std::string path, unix_socket_options file = {});
  bool is_unix_socket() const noexcept { return address.starts_with("unix:"); }
};

// The process on the other end of a unix connection, as the kernel recorded it when the
// peer connected (SO_PEERCRED): not forgeable by the peer.
struct peer_credentials {
  std::int32_t pid = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

// The listening sockets systemd passed to this process (socket activation: LISTEN_PID,
// LISTEN_FDS, LISTEN_FDNAMES, as sd_listen_fds() reads them, without libsystemd), in their
// order, each described (address, port or unix path) and named. None when the variables
// are absent or name another process. Clears the variables, so that a child process does
// not take the sockets for its own. Throws std::runtime_error naming the descriptor when
// one is not a listening stream socket (a datagram socket, or Accept=yes's connection).
std::vector<listen_address> inherited_listeners();

// The two ends of a connection, as the socket reports them (a proxy in front is the
// remote end; waypoint/app/operations/forwarded.hpp reads past trusted ones).
struct connection_endpoints {
  listen_address local{"", 0};
  listen_address remote{"", 0};
  // Of a unix connection: the peer process's pid, uid and gid.
  std::optional<peer_credentials> peer{};
};

}  // namespace waypoint::beast
