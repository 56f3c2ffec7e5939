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

// One accepted socket and its session. At most one operation on the socket is pending (a
// read, a write or a lingering read), so whoever closes the socket knows that the
// operation's completion will destroy the connection; a deferred response in flight holds
// the connection too, until it is done, since its request and response live here. The one
// exception: a deferred response that streams writes beside its watch read; it cannot be
// done while its write is in flight (the writer waits for it), so the last completion is
// still the one that destroys.
class connection final : public exchange_host {
 public:
  // `tls` null: a plaintext connection.
  connection(worker& owner, socket_type socket, std::shared_ptr<asio::ssl::context> tls);
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
  bool upgrade(websocket_upgrade& upgrade) noexcept override {
    return session_.accept_upgrade(upgrade);
  }

 private:
  enum class phase : std::uint8_t { handshaking, idle, reading, writing, waiting, lingering };

  void do_handshake();
  void on_hello(error_code ec);
  void wait_for_hello();
  void on_handshake(error_code ec);
  void refuse_plaintext();
  bool send_file_over_tls();
  void note_first_bytes();
  void do_read();
  void on_read(error_code ec, std::size_t n);
  void answer();
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
  void abandon() noexcept;
  void do_linger();
  void on_linger(error_code ec);
  void destroy() noexcept;
  void hand_over();

  worker& owner_;
  // On the heap so that it can leave with an upgrade (a TLS stream refers to its socket:
  // the transport itself cannot move).
  std::unique_ptr<transport> transport_;
  std::list<connection>::iterator self_;
  http_session session_;
  clock::time_point deadline_;
  asio::cancellation_signal cancel_;  // emitted when the socket closes under a deferred response
  std::optional<connection_endpoints> endpoints_;  // asked for once, then kept
  phase phase_ = phase::idle;
  bool expired_ = false;       // the read was cancelled because the request ran out of time
  bool read_pending_ = false;  // the read that watches a deferred response's connection
  bool gone_ = false;          // closed while a deferred response is in flight
  // While a response is deferred, output (a chunk, a 100 Continue) is written beside the
  // watch read; its completion, not the phase, says when the next may start.
  bool stream_writing_ = false;
  bool stream_ended_ = false;  // the drain told the streamed response to end
  body_read_handler body_done_;    // the dispatch's pending body read
  chunk_write_handler chunk_done_; // the dispatch's pending chunk write
  // A streamed body is parsed while the watch read is pending, and parsing may reset the
  // input's buffer under a read into it; so that read goes here, and is copied in.
  std::unique_ptr<char[]> watch_buffer_;
  bool first_read_ = true;     // nothing has been read yet
  std::unique_ptr<char[]> file_chunk_;  // over TLS, a file body's bytes between disk and cipher
};

}  // namespace waypoint::beast::detail
