// The TLS half of transport.hpp: Asio's OpenSSL stream over the transport's own socket.
#include "transport.hpp"

#include "tls_context.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <array>

namespace waypoint::beast::detail {

struct transport::tls_stream {
  tls_stream(socket_type& socket, std::shared_ptr<asio::ssl::context> c)
      : context(std::move(c)), stream(socket, *context) {}

  // Kept alive by every connection made from it, so that a reload frees the old context
  // only once the last of its connections has gone.
  std::shared_ptr<asio::ssl::context> context;
  asio::ssl::stream<socket_type&> stream;
};

transport::transport(socket_type socket, std::shared_ptr<asio::ssl::context> tls,
                     linger_limits linger)
    : socket_(std::move(socket)), tls_context_(std::move(tls)), linger_(linger) {}

void transport::start_tls(bool h2) {
  tls_ = std::make_unique<tls_stream>(socket_, std::move(tls_context_));
  tls_context_.reset();
  if (h2) offer_h2(tls_->stream.native_handle());
}

bool transport::negotiated_h2() const noexcept {
  return tls_ && selected_h2(tls_->stream.native_handle());
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

namespace {

// One lingering close: first, when the caller waits for something in the peer's input (a
// WebSocket peer's close frame), reading and dropping until `wanted` says it came; then the
// half-close (a TCP shutdown, or TLS's close_notify) and dropping until the peer closes too.
// Both under one timeout and, on a plain socket, one count of dropped bytes. Owned by its
// own completions (and its timer's), so that it outlives whichever of them comes last;
// `done_` keeps a late timer from touching a transport that its owner may have destroyed
// once the handler ran.
class linger_op : public std::enable_shared_from_this<linger_op> {
 public:
  linger_op(transport& stream, linger_limits limits, input_watch wanted, done_handler handler)
      : stream_(stream), limits_(limits), wanted_(std::move(wanted)),
        handler_(std::move(handler)), timer_(stream.get_executor()) {}

  void start() {
    timer_.expires_after(limits_.timeout);
    // The timeout cancels whatever the linger waits on, which then ends it.
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec || self->done_) return;
      error_code ignored;
      self->stream_.cancel(ignored);
    });
    if (wanted_) return watch_input();
    half_close();
  }

 private:
  // Through the transport (decrypted, over TLS), so that `wanted_` sees what the peer sent.
  void watch_input() {
    stream_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](
                                                        error_code ec, std::size_t n) {
      if (ec || !self->count(n)) return self->finish();
      if (self->wanted_(reinterpret_cast<const unsigned char*>(self->scratch_.data()), n))
        return self->half_close();
      self->watch_input();
    });
  }

  void half_close() {
    if (stream_.is_tls()) return stream_.async_shutdown(done_handler(
        [self = shared_from_this()](error_code) { self->finish(); }));
    error_code ignored;
    stream_.socket().shutdown(socket_type::shutdown_send, ignored);
    drop_input();
  }

  // OpenSSL's shutdown drops what arrives over TLS; on a plain socket, this does.
  void drop_input() {
    stream_.socket().async_read_some(
        asio::buffer(scratch_), [self = shared_from_this()](error_code ec, std::size_t n) {
          if (ec || !self->count(n)) return self->finish();
          self->drop_input();
        });
  }

  // False past max_bytes.
  bool count(std::size_t n) noexcept {
    dropped_ += n;
    return dropped_ < limits_.max_bytes;
  }

  void finish() {
    done_ = true;
    timer_.cancel();
    error_code ignored;
    stream_.close(ignored);
    std::move(handler_)(error_code{});
  }

  transport& stream_;
  linger_limits limits_;
  input_watch wanted_;
  done_handler handler_;
  timer_type timer_;
  std::size_t dropped_ = 0;
  bool done_ = false;
  std::array<char, 4096> scratch_;
};

}  // namespace

void transport::async_linger(done_handler handler) {
  async_linger_after({}, std::move(handler));
}

void transport::async_linger_after(input_watch wanted, done_handler handler) {
  std::make_shared<linger_op>(*this, linger_, std::move(wanted), std::move(handler))->start();
}

// The server's teardown is the lingering close; a client's (never made here) would be
// Beast's, whose read loop is right for a client, which waits for the server's close.
// Beast's teardown posts its completion to the handler's executor, which Asio 1.81's
// any_completion_executor cannot do (no blocking.never): the erased handler is bound to
// the socket's executor, where the websocket stream's own operation, the only caller,
// runs anyway and goes back to its caller's executor itself.
void transport::async_teardown(boost::beast::role_type role, done_handler handler) {
  if (role == boost::beast::role_type::server) return async_linger(std::move(handler));
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
