// Binding listening sockets, with the error naming the address and the step that failed.
#include "listener.hpp"

#include <boost/asio/ip/v6_only.hpp>

#include <sys/socket.h>

#include <stdexcept>
#include <system_error>

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

}  // namespace

tcp::endpoint endpoint_of(const listen_address& a) {
  error_code ec;
  auto address = asio::ip::make_address(a.address, ec);
  if (ec) throw std::invalid_argument("waypoint: \"" + a.address + "\" is not an IP address");
  return {address, a.port};
}

std::string describe(const tcp::endpoint& e) {
  std::string host = e.address().to_string();
  if (e.address().is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(e.port());
}

acceptor_type open_listener(asio::io_context& context, const tcp::endpoint& at, bool reuse_port,
                            bool v6_only) {
  acceptor_type a(context);
  error_code ec;
  auto fail = [&](const char* step) {
    throw std::system_error(
        ec, std::string("waypoint: cannot listen on ") + describe(at) + " (" + step + ")");
  };
  if (a.open(at.protocol(), ec)) fail("open");
  if (a.set_option(asio::socket_base::reuse_address(true), ec)) fail("SO_REUSEADDR");
  if (reuse_port && a.set_option(reuse_port_option{1}, ec)) fail("SO_REUSEPORT");
  if (at.address().is_v6() && v6_only && a.set_option(asio::ip::v6_only(true), ec))
    fail("IPV6_V6ONLY");
  if (a.bind(at, ec)) fail("bind");
  if (a.listen(asio::socket_base::max_listen_connections, ec)) fail("listen");
  return a;
}

}  // namespace waypoint::beast::detail
