// A Boost.Beast HTTP server written with C++20 coroutines the way Beast's own awaitable
// example is (an acceptor loop, one coroutine per connection, tcp_stream timeouts), that
// hands every request to a waypoint::app::application with async_handle(). This is what a
// user who owns the server writes; waypoint's server is not involved.
#pragma once

#include <waypoint/app/async.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <chrono>

namespace waypoint::examples {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// One connection: read a request, let the application answer it, write, until the
// client or the application closes. Errors (end of stream, timeouts) end the coroutine.
inline asio::awaitable<void> serve_connection(beast::tcp_stream stream, app::application& app) {
  beast::error_code ec;
  tcp::endpoint local = stream.socket().local_endpoint(ec);
  tcp::endpoint remote = stream.socket().remote_endpoint(ec);
  const waypoint::beast::connection_endpoints ends{
      {local.address().to_string(), local.port()}, {remote.address().to_string(), remote.port()}};
  beast::flat_buffer buffer;
  for (;;) {
    stream.expires_after(std::chrono::seconds(30));
    http::request<http::string_body> req;
    co_await http::async_read(stream, buffer, req, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    http::response<http::string_body> res{http::status::ok, req.version()};
    // No timeout while the application works: its own deadline() layer is the bound.
    stream.expires_never();
    co_await app.async_handle(req, res, &ends);
    res.keep_alive(req.keep_alive());
    stream.expires_after(std::chrono::seconds(30));
    co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !res.keep_alive()) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

inline asio::awaitable<void> accept_connections(tcp::acceptor& acceptor, app::application& app) {
  for (;;) {
    tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
    asio::co_spawn(acceptor.get_executor(), serve_connection(beast::tcp_stream(std::move(socket)), app),
                   asio::detached);
  }
}

}  // namespace waypoint::examples
