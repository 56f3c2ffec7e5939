// The Asio types the server's parts share: one concrete executor (each worker's own
// io_context), so no operation pays for a type-erased one; and one socket type for TCP
// and unix domain sockets alike, Asio's generic stream protocol (the address family is a
// run-time value; the reactor's work, and a connection's size, are those of a TCP socket).
#pragma once

#include "http_session.hpp"

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace waypoint::beast::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using executor = asio::io_context::executor_type;
using stream_protocol = asio::generic::stream_protocol;
using socket_type = asio::basic_stream_socket<stream_protocol, executor>;
using acceptor_type = asio::basic_socket_acceptor<stream_protocol, executor>;
using timer_type = asio::basic_waitable_timer<clock, asio::wait_traits<clock>, executor>;

// What a listener's connections are: TLS or plaintext, TCP (TCP_NODELAY) or unix, and
// whether they may speak HTTP/2 (listen_address::http2).
struct listener_kind {
  bool tls = false;
  bool tcp = true;
  bool http2 = false;
};

}  // namespace waypoint::beast::detail
