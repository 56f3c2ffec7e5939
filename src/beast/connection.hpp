// One accepted socket and its http_session: reads, writes, deadlines and the linger after
// a close; over TLS, the handshake first. What the bytes mean is the session's business;
// this moves them.
#pragma once

#include "asio_types.hpp"
#include "transport.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <list>
#include <memory>
#include <optional>

namespace waypoint::beast::detail {

class worker;
class tls_state;

// One accepted socket and its session. Its state is three small enums: the read pending on
// the socket (read_op), the write pending (write_op), and whether the socket is still open
// (life); plus what its deadline guards (phase). At most one read and one write are
// pending; both only while a response is deferred (a chunk or a 100 Continue written beside
// the watch read). Every completion clears its operation first; once the socket is closed,
// settle() lets the last completion, or the end of the deferred response (whose request
// and response live here), destroy the connection.
class connection final : public exchange_host {
 public:
  // `tls` null: a plaintext connection. `http2`: it may become an h2_connection (ALPN's
  // h2, or the h2c preface as its first bytes).
  connection(worker& owner, socket_type socket, std::shared_ptr<asio::ssl::context> tls,
             bool http2);
  void start(std::list<connection>::iterator self);
  // Answers 503 without reading a request, then closes.
  void refuse(std::list<connection>::iterator self);

  // For the worker's sweep and shutdown, on the connection's thread.
  void on_deadline(clock::time_point now) noexcept;
  // The drain has begun: an idle connection closes, a streamed response is told to end.
  void drain() noexcept;
  void close() noexcept;

  // exchange_host
  asio::any_io_executor executor() override;
  const connection_endpoints& endpoints() override;
  asio::cancellation_slot cancellation_slot() override { return cancel_.slot(); }
  void deferred_done() noexcept override;
  bool attach_file(file_payload& file) noexcept override { return session_.attach_file(file); }
  bool body_streamed() const noexcept override { return session_.body_streamed(); }
  void read_body(boost::asio::mutable_buffer into, body_read_handler done) override;
  void write_chunk(std::string_view data, chunk_write_handler done) override;
  void set_trailers(const http::fields& trailers) override { session_.set_trailers(trailers); }
  void abort_response() noexcept override { session_.abort_response(); }
  bool upgrade(websocket_upgrade& upgrade) noexcept override {
    return session_.accept_upgrade(upgrade);
  }
  bool can_upgrade() const noexcept override { return true; }
  resource_permit acquire_descriptor() noexcept override;

 private:
  // What the deadline guards, and so what its passing means (on_deadline).
  enum class phase : std::uint8_t {
    handshaking,  // the TLS hello and handshake: closed (tls_handshake_timeout)
    idle,         // between requests: closed (idle_timeout)
    reading,      // a request's header or whole body: the read is cancelled, then 408
    expired,      // ... cancelled: its completion answers what arrived, then 408
    writing,      // a batch of responses, a file or a chunk: closed (write_timeout)
    waiting,      // a deferred response: a body read's stall or rate (408), else none
    lingering,    // the lingering close, which bounds itself
  };
  // The read pending on the socket.
  enum class read_op : std::uint8_t {
    none,
    hello,      // a readiness wait for the TLS hello's first record (on_hello)
    handshake,  // the TLS handshake (on_handshake)
    request,    // the next bytes of a request (on_read)
    watch,      // beside a deferred response: the client leaving, a streamed body (on_watch)
    linger,     // the lingering close: input dropped, or TLS's close_notify (do_linger)
  };
  // The write pending on the socket.
  enum class write_op : std::uint8_t {
    none,
    batch,   // the session's output (on_write)
    file,    // a file body: sendfile's readiness wait, or a chunk through TLS (on_file_writable)
    stream,  // beside a deferred response: a chunk or a 100 Continue (on_stream_write)
  };
  // Invariant: closed is for ever; an open connection, between completions, has an
  // operation pending or a deferred response in flight (so something will settle() it).
  enum class life : std::uint8_t { open, closed };

  void do_handshake();
  void on_hello(error_code ec);
  void wait_for_hello();
  void on_handshake(error_code ec);
  void refuse_plaintext();
  bool send_file_over_tls();
  bool note_first_bytes();
  void hand_over_h2();
  void do_read();
  void on_read(error_code ec, std::size_t n);
  void answer();
  void answer_or_close(bool expired = false);
  void release_held_calls();
  bool output_busy() const noexcept;
  bool write_now();
  void do_write();
  void on_write(error_code ec);
  bool send_file_now();
  void on_file_writable(error_code ec);
  void watch();
  void on_watch(error_code ec, std::size_t n, bool aside);
  void on_deferred_done() noexcept;
  void deliver_body(http_session::body_read outcome);
  void flush_while_waiting();
  void on_stream_write(error_code ec, std::size_t n);
  void fail_streams() noexcept;
  void end_stream() noexcept;
  void do_linger();
  void destroy() noexcept;
  void shut() noexcept;
  void settle() noexcept;
  void hand_over();

  worker& owner_;
  // On the heap so that it can leave with an upgrade (a TLS stream refers to its socket:
  // the transport itself cannot move).
  std::unique_ptr<transport> transport_;
  std::list<connection>::iterator self_;
  http_session session_;
  clock::time_point deadline_;
  // Emitted when the socket closes under a deferred response, and when the drain tells a
  // streamed one to end (end_stream()).
  asio::cancellation_signal cancel_;
  std::optional<connection_endpoints> endpoints_;  // asked for once, then kept
  phase phase_ = phase::idle;
  read_op reading_ = read_op::none;
  write_op writing_ = write_op::none;
  life life_ = life::open;
  // The drain told the streamed response to end (once per response: cleared at its end).
  bool stream_ended_ = false;
  body_read_handler body_done_;    // the dispatch's pending body read
  chunk_write_handler chunk_done_; // the dispatch's pending chunk write
  // A body read and a chunk write the dispatch made while earlier responses were still
  // being written (output_busy()): held until answer() has written them.
  asio::mutable_buffer held_read_;
  body_read_handler held_read_done_;
  std::string_view held_chunk_;  // valid until its handler runs (write_chunk's contract)
  chunk_write_handler held_chunk_done_;
  // A streamed body is parsed while the watch read is pending, and parsing may reset the
  // input's buffer under a read into it; so that read goes here, and is copied in.
  std::unique_ptr<char[]> watch_buffer_;
  bool first_read_ = true;     // nothing has been read yet
  bool http2_ = false;         // the listener serves HTTP/2
  std::unique_ptr<char[]> file_chunk_;  // over TLS, a file body's bytes between disk and cipher
};

}  // namespace waypoint::beast::detail
