// transport: what a connection reads and writes, a TCP socket spoken plainly or through
// TLS, chosen at accept, so that one connection type serves both kinds of listener. The
// TLS stream lives behind a pointer to a type defined in transport.cpp, so that OpenSSL's
// headers stay in that one translation unit; its operations are reached through
// type-erased handlers (one per TLS operation, from Asio's recycling allocator: small next
// to the cipher), while the plain path forwards the caller's handler to the socket as is.
//
// A transport is an AsyncStream in Beast's sense (get_executor, async_read_some,
// async_write_some, and teardown/async_teardown and beast_close_socket found by ADL), so that
// boost::beast::websocket::stream<transport> works over both kinds of listener.
#pragma once

#include "asio_types.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/role.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace waypoint::beast::detail {

using read_handler = asio::any_completion_handler<void(error_code, std::size_t)>;
using write_handler = asio::any_completion_handler<void(error_code, std::size_t)>;
using done_handler = asio::any_completion_handler<void(error_code)>;
// Shown the bytes a lingering close reads; true once they hold what it waits for.
using input_watch = std::function<bool(const unsigned char* bytes, std::size_t size)>;

// How long, and how much, a side that has said its last word (an HTTP answer that closes, a
// WebSocket close frame) goes on reading and dropping what the peer still sends. Closing a
// socket with unread input makes the kernel answer with a reset, which can destroy that last
// word in the peer's receive buffer before the peer reads it (RFC 6455 §7.1.1; nginx's
// lingering_close). From server_options::linger_timeout and max_linger_bytes.
struct linger_limits {
  std::chrono::milliseconds timeout;
  std::size_t max_bytes;
};

// Invariant: the socket is the lowest layer whatever the mode; a TLS stream, when there is
// one, refers to it (so the transport never moves once it has one).
class transport {
 public:
  using executor_type = executor;

  // `tls` null: plain. Otherwise the TLS stream is made from the context by start_tls(),
  // late: a connection that has sent no hello yet holds no TLS state (Asio's OpenSSL stream
  // costs 50 to 92 KB resident, docs/server.md), so half-open handshakes cost little memory.
  transport(socket_type socket, std::shared_ptr<asio::ssl::context> tls, linger_limits linger);
  ~transport();
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;

  bool is_tls() const noexcept { return tls_ != nullptr || tls_context_ != nullptr; }
  // Makes the TLS stream from the context, once the client's hello has arrived. Only when
  // is_tls(), once, before async_handshake(). `offer_h2`: ALPN may select h2.
  void start_tls(bool offer_h2 = false);
  // After the handshake: ALPN selected h2.
  bool negotiated_h2() const noexcept;
  // The TCP socket under any TLS: for endpoints, readiness waits, options, close.
  socket_type& socket() noexcept { return socket_; }
  executor_type get_executor() noexcept { return socket_.get_executor(); }

  // The server side of the TLS handshake. Only after start_tls().
  void async_handshake(done_handler handler);
  // Sends close_notify, then waits for the peer's (or the end of the stream). Only when
  // is_tls(); a plain transport half-closes with socket().shutdown().
  void async_shutdown(done_handler handler);
  // Forgets the TLS layer, so that a client that spoke plaintext to a TLS port can be
  // told so in plaintext. Nothing of TLS may be pending.
  void drop_tls() noexcept;

  // The lingering close, the one way this server ends a connection that may have unread
  // input: half-closes (a TCP shutdown, or TLS's close_notify), then reads and drops until
  // the peer closes too, linger_limits runs out, or an error; then closes the socket. Over
  // TLS the bytes are not counted (OpenSSL's shutdown drops them): the timeout bounds it.
  void async_linger(done_handler handler);
  // The same, after first reading (and dropping) the peer's input until `wanted` returns
  // true for bytes it is shown, within the same bounds: a WebSocket server waits so for the
  // peer's close frame before it half-closes, as RFC 6455 §7.1.1 asks; a client that sees the
  // end of the stream before it has answered the close may report it as an abnormal close.
  void async_linger_after(input_watch wanted, done_handler handler);

  void close(error_code& ec) noexcept { socket_.close(ec); }
  void cancel(error_code& ec) noexcept { socket_.cancel(ec); }

  template <class MutableBufferSequence, class ReadToken>
  auto async_read_some(const MutableBufferSequence& buffers, ReadToken&& token) {
    return asio::async_initiate<ReadToken, void(error_code, std::size_t)>(
        [this](auto&& handler, const MutableBufferSequence& b) {
          if (!tls_) return socket_.async_read_some(b, std::move(handler));
          tls_read_some(first_of(b, asio::buffer_sequence_begin(b), asio::buffer_sequence_end(b)),
                        read_handler(std::move(handler)));
        },
        token, buffers);
  }

  template <class ConstBufferSequence, class WriteToken>
  auto async_write_some(const ConstBufferSequence& buffers, WriteToken&& token) {
    return asio::async_initiate<WriteToken, void(error_code, std::size_t)>(
        [this](auto&& handler, const ConstBufferSequence& b) {
          if (!tls_) return socket_.async_write_some(b, std::move(handler));
          tls_write_some(first_of(b, asio::buffer_sequence_begin(b), asio::buffer_sequence_end(b)),
                         write_handler(std::move(handler)));
        },
        token, buffers);
  }

  // For Beast's websocket teardown (below). The server's async one is async_linger: Beast's
  // own reads one buffer of the peer's input and then closes (its loop tests a byte count it
  // never sets), which resets a connection whose peer is still sending.
  void teardown(boost::beast::role_type role, error_code& ec);
  void async_teardown(boost::beast::role_type role, done_handler handler);

 private:
  struct tls_stream;  // asio::ssl::stream<socket_type&> and its context, in transport.cpp

  // The first non-empty buffer of a sequence: what Asio's own TLS stream reads into or
  // writes from, one TLS record at a time.
  template <class Sequence, class Iterator>
  static auto first_of(const Sequence&, Iterator it, Iterator end) {
    using buffer = std::decay_t<decltype(*it)>;
    for (; it != end; ++it)
      if (buffer(*it).size() > 0) return buffer(*it);
    return buffer();
  }

  void tls_read_some(asio::mutable_buffer buffer, read_handler handler);
  void tls_write_some(asio::const_buffer buffer, write_handler handler);

  socket_type socket_;
  // Invariant: at most one is set. The context until start_tls(), then the stream.
  std::shared_ptr<asio::ssl::context> tls_context_;
  std::unique_ptr<tls_stream> tls_;
  linger_limits linger_;
};

// Beast's websocket::stream<transport> closes its transport through these, found by ADL:
// a TLS close_notify over TLS, a TCP shutdown otherwise.
inline void teardown(boost::beast::role_type role, transport& t, error_code& ec) {
  t.teardown(role, ec);
}

template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, transport& t, TeardownHandler&& handler) {
  t.async_teardown(role, done_handler(std::forward<TeardownHandler>(handler)));
}

// Beast's close_socket (a websocket stream failing hard) closes the TCP socket.
inline void beast_close_socket(transport& t) {
  error_code ignored;
  t.close(ignored);
}

}  // namespace waypoint::beast::detail
