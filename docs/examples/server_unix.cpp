// A server on a unix socket beside a TCP port, and under socket activation, as
// docs/server.md shows it: the handler reads the peer's credentials.
// Compiled by tests/docs/check.
#include <waypoint/beast/server.hpp>

#include <string>

int main() {
  namespace wb = waypoint::beast;
  wb::server_options options;
  // Started by systemd with its sockets (a .socket unit): listen on those. Otherwise a TCP
  // port, and a socket file only the group www-data (nginx) may connect to.
  options.listen = wb::inherited_listeners();
  if (options.listen.empty())
    options.listen = {{"127.0.0.1", 8080},
                      wb::listen_address::unix_socket("/run/app/http.sock",
                                                      {.mode = 0660, .group = "www-data"})};
  wb::server s(options, [](wb::exchange& x) {
    const wb::connection_endpoints& ends = x.endpoints();
    // Over the unix socket: remote.address is "unix:" and the peer's pid, and the kernel's
    // record of who connected is at hand.
    if (ends.peer && ends.peer->uid == 0) {
      x.response().body() = "hello, root\n";
      return;
    }
    x.response().body() = "hello from " + ends.remote.address + "\n";
  });
  s.run();  // at the stop, /run/app/http.sock is removed
}
