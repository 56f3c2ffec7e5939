// The TLS half of transport.hpp: Asio's OpenSSL stream over the transport's own socket.
#include "transport.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/beast/websocket/teardown.hpp>

namespace waypoint::beast::detail {

struct transport::tls_stream {
  tls_stream(socket_type& socket, std::shared_ptr<asio::ssl::context> c)
      : context(std::move(c)), stream(socket, *context) {}

  // Kept alive by every connection made from it, so that a reload frees the old context
  // only once the last of its connections has gone.
  std::shared_ptr<asio::ssl::context> context;
  asio::ssl::stream<socket_type&> stream;
};

transport::transport(socket_type socket, std::shared_ptr<asio::ssl::context> tls)
    : socket_(std::move(socket)), tls_context_(std::move(tls)) {}

void transport::start_tls() {
  tls_ = std::make_unique<tls_stream>(socket_, std::move(tls_context_));
  tls_context_.reset();
}

transport::~transport() = default;

void transport::async_handshake(done_handler handler) {
  tls_->stream.async_handshake(asio::ssl::stream_base::server, std::move(handler));
}

void transport::async_shutdown(done_handler handler) {
  tls_->stream.async_shutdown(std::move(handler));
}

void transport::drop_tls() noexcept {
  tls_.reset();
  tls_context_.reset();
}

void transport::tls_read_some(asio::mutable_buffer buffer, read_handler handler) {
  tls_->stream.async_read_some(buffer, std::move(handler));
}

void transport::tls_write_some(asio::const_buffer buffer, write_handler handler) {
  tls_->stream.async_write_some(buffer, std::move(handler));
}

void transport::teardown(boost::beast::role_type role, error_code& ec) {
  if (tls_) return boost::beast::teardown(role, tls_->stream, ec);
  boost::beast::websocket::teardown(role, socket_, ec);
}

// Beast's teardown posts its completion to the handler's executor, which Asio 1.81's
// any_completion_executor cannot do (no blocking.never): the erased handler is bound to
// the socket's executor, where the websocket stream's own operation, the only caller,
// runs anyway and goes back to its caller's executor itself.
void transport::async_teardown(boost::beast::role_type role, done_handler handler) {
  auto bound = asio::bind_executor(socket_.get_executor(), std::move(handler));
  if (tls_) return boost::beast::async_teardown(role, tls_->stream, std::move(bound));
  boost::beast::websocket::async_teardown(role, socket_, std::move(bound));
}

// What the WebSocket upgrade will need of a transport: a stream over it whose reads,
// writes and close compile (never called; it only makes the compiler check).
static_assert(boost::beast::is_async_stream<transport>::value);
void websocket_over_transport_compiles(boost::beast::websocket::stream<transport>& ws,
                                       boost::beast::flat_buffer& buffer) {
  ws.async_read(buffer, [](error_code, std::size_t) {});
  ws.async_write(buffer.data(), [](error_code, std::size_t) {});
  ws.async_close(boost::beast::websocket::close_code::normal, [](error_code) {});
}

}  // namespace waypoint::beast::detail
