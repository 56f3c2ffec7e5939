// The Asio types the server's parts share: one concrete executor (each worker's own
// io_context), so no operation pays for a type-erased one.
#pragma once

#include "http_session.hpp"

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/basic_stream_socket.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace waypoint::beast::detail {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using executor = asio::io_context::executor_type;
using socket_type = asio::basic_stream_socket<tcp, executor>;
using acceptor_type = asio::basic_socket_acceptor<tcp, executor>;
using timer_type = asio::basic_waitable_timer<clock, asio::wait_traits<clock>, executor>;

}  // namespace waypoint::beast::detail
