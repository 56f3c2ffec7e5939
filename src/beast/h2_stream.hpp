// h2_stream: one HTTP/2 stream of an h2_connection as an exchange: its request assembled
// from HEADERS, DATA and trailers (RFC 9113 §8), dispatched as an HTTP/1.1 request would be
// (the same planner, limits and error answers), and its response's head and body handed to
// the connection's framing. No nghttp2 here: the connection moves frames, the stream says
// what they mean.
#pragma once

#include "asio_types.hpp"
#include "http_session.hpp"

#include <boost/asio/cancellation_signal.hpp>

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace waypoint::beast::detail {

class h2_connection;

// Fields that describe an HTTP/1.1 connection, which HTTP/2 forbids (RFC 9113 §8.2.2): a
// response's and a trailer section's are dropped rather than sent.
constexpr bool connection_specific(http::field f) noexcept {
  return f == http::field::connection || f == http::field::keep_alive ||
         f == http::field::proxy_connection || f == http::field::transfer_encoding ||
         f == http::field::upgrade;
}

// What the response's body source gives the framing for one DATA frame.
struct h2_body_piece {
  std::size_t bytes = 0;  // copied into the frame's buffer
  bool wait = false;      // nothing to send yet: the stream waits for a chunk or its end
  bool end = false;       // the body is complete with these bytes
  bool fail = false;      // the body cannot be completed: the stream is reset
};

class h2_stream final : public exchange_host {
 public:
  h2_stream(h2_connection& connection, std::int32_t id);
  h2_stream(const h2_stream&) = delete;
  h2_stream& operator=(const h2_stream&) = delete;
  ~h2_stream();

  std::int32_t id() const noexcept { return id_; }

  // --- the request, as its frames arrive ---
  // One field of the header block (or of the trailer section, after body_data). Pseudo
  // fields and their order are checked by nghttp2 already.
  void add_field(std::string_view name, std::string_view value);
  // The header block is complete; `end_stream`: no body follows. Answers, dispatches or
  // waits for the body.
  void header_done(bool end_stream);
  // Bytes of the body. Returns how many the connection may credit back to the client at
  // once (a streamed body's are credited as its handler reads them).
  std::size_t body_data(const std::uint8_t* data, std::size_t size);
  // The request is complete (END_STREAM).
  void request_done();
  // nghttp2 closed the stream (its response sent, or a reset either way). Returns whether
  // the stream can go now; otherwise it goes when its deferred response ends.
  bool closed() noexcept;
  // The response went out whole before the request did (an early answer): the rest of the
  // request is not wanted.
  bool answered_early() const noexcept { return state_ == state::finished && !request_complete_; }
  void response_sent() noexcept { state_ = state::finished; }
  // Body bytes read whole and held (the connection's budget of them), and whether the body
  // is still arriving to be read whole.
  std::size_t held_body_bytes() const noexcept { return req_.body().size(); }
  bool reading_whole() const noexcept { return state_ == state::body; }
  // Response bytes wait to be framed: with the client's window closed, they wait on it.
  bool body_pending() const noexcept;
  // When the client's window began to hold this stream's response (max: it does not).
  clock::time_point window_stalled_since = clock::time_point::max();
  // The drain began: a response being streamed is told to end.
  void drain() noexcept;
  // The connection is gone: whatever waits on the client ends.
  void cut() noexcept;
  // The body's unread bytes, for the connection to credit when the stream ends early.
  std::size_t unread_bytes() const noexcept { return unread_; }
  // Past body_timeout without body bytes while the request waits for them: answered 408,
  // or a streamed read fails with timed_out. Returns false when the header block itself is
  // past header_timeout: the connection, which cannot take another frame before it, ends.
  bool on_deadline(clock::time_point now) noexcept;

  // --- the response, for the connection's framing ---
  const response& head() const noexcept { return res_; }
  bool head_only() const noexcept { return head_only_; }
  std::string_view date() const;
  const http::fields& trailers() const noexcept { return trailers_; }
  h2_body_piece next_piece(std::uint8_t* into, std::size_t size);
  bool holds_deferred() const noexcept {
    return state_ == state::dispatching || state_ == state::deferred;
  }

  // exchange_host
  asio::any_io_executor executor() override;
  const connection_endpoints& endpoints() override;
  asio::cancellation_slot cancellation_slot() override { return cancel_.slot(); }
  void deferred_done() noexcept override;
  bool attach_file(file_payload& file) noexcept override;
  resource_permit acquire_descriptor() noexcept override;
  bool body_streamed() const noexcept override { return streamed_; }
  void read_body(boost::asio::mutable_buffer into, body_read_handler done) override;
  void write_chunk(std::string_view data, chunk_write_handler done) override;
  void set_trailers(const http::fields& trailers) override;
  void abort_response() noexcept override;

 private:
  // Where the stream is. A request goes headers → (body →) dispatching → (deferred →)
  // responding → finished; closed_ may come at any step.
  enum class state : std::uint8_t {
    headers,      // its header block is arriving
    body,         // its body is arriving, to be read whole
    dispatching,  // inside the dispatch call
    deferred,     // the dispatch deferred its response
    responding,   // the response is with the framing
    finished,     // nothing more to do
  };
  // Where the response's body comes from.
  enum class source : std::uint8_t { string, file, chunks };

  void on_deferred_done() noexcept;
  void dispatch();
  void answer_error(http::status status, std::string_view why);
  void respond();
  void deliver_body();
  void fail_read(boost::system::error_code ec);
  void release_chunk(boost::system::error_code ec);
  std::size_t copy_body(std::uint8_t* into, std::size_t size);

  h2_connection& connection_;
  std::int32_t id_;
  state state_ = state::headers;
  bool closed_ = false;  // nghttp2 is done with it
  request req_;
  response res_;
  planned_request planned_;
  std::string cookie_;  // RFC 9113 §8.2.3: the crumbs, joined again
  std::string authority_;
  std::size_t header_bytes_ = 0;    // the header list's size, as SETTINGS counts it
  bool over_header_limit_ = false;  // past max_header_bytes: 431
  bool bad_request_ = false;        // a field the server refuses: 400
  std::string bad_reason_;
  bool in_trailers_ = false;
  std::uint64_t max_body_ = 0;
  std::uint64_t body_bytes_ = 0;
  bool request_complete_ = false;
  clock::time_point body_deadline_ = clock::time_point::max();
  // A streamed body: bytes received and not yet read (within the stream window), the read
  // waiting for them, and the bytes read but not yet credited.
  bool streamed_ = false;
  std::string unread_buffer_;
  std::size_t unread_ = 0;
  boost::asio::mutable_buffer read_into_;
  body_read_handler read_done_;
  // The response's body.
  bool head_only_ = false;  // HEAD or a status without content: the head alone
  source source_ = source::string;
  std::size_t sent_ = 0;  // of res_.body()
  file_payload file_;
  std::string_view chunk_;  // the writer's, valid until its handler runs
  chunk_write_handler chunk_done_;
  bool streaming_ = false;  // the head went out with the first chunk
  bool ended_ = false;      // a streamed response's deferred send came
  bool aborted_ = false;
  bool stopping_ = false;   // the drain told it to end
  bool ready_ = false;      // deferred_done() came during the dispatch call
  clock::time_point header_deadline_;
  // A streamed body that cannot be read on (past the plan's limit, a refused trailer):
  // the next read's error, whenever it comes.
  boost::system::error_code fault_;
  bool cancelled_ = false;  // cancel_ has emitted
  http::fields trailers_;
  asio::cancellation_signal cancel_;
};

}  // namespace waypoint::beast::detail
