// http_session: the HTTP/1.1 side of one connection, without the socket. Bytes go in
// (prepare/commit), requests are parsed by Beast's parser, framed, limited and dispatched,
// and the serialised responses come out (output()). The connection (server.cpp) moves bytes
// and time; everything a request's outcome depends on is decided here, from the bytes
// alone, so that the outcome cannot depend on how the bytes were split into reads. Tests
// and the fuzzer feed it directly.
//
// Memory: the input holds at most one unfinished header (max_header_bytes), one
// unfinished chunk-size line (max_chunk_line_bytes) or one trailer section
// (max_header_bytes), plus one read (read_chunk): every other byte is consumed as it
// arrives. The body is at most max_body_bytes; the output at most flush_threshold plus one
// response. A file body (file_payload) is never in the output: the session stops after the
// head that announces it, the connection sends the file, and file_sent() lets it go on.
// A streamed body (body_plan::streamed) is parsed only into the reader's buffer, as far as
// it has room, so it adds nothing; a streamed response holds one chunk at a time.
#pragma once

#include "http_date.hpp"
#include "request_parser.hpp"
#include "response_writer.hpp"
#include "server_counters.hpp"
#include "waypoint/beast/server.hpp"
#include "websocket_handoff.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace waypoint::beast::detail {

using clock = std::chrono::steady_clock;

// Bytes asked of one read. Large enough for a burst of pipelined requests (wrk's are ~100
// bytes each); the input only grows past it for a request line, header or trailer larger
// than this.
inline constexpr std::size_t read_chunk = 16 * 1024;

// Responses are batched while pipelined requests are buffered; past this many bytes the
// batch is written before parsing on, which bounds a connection's output memory.
inline constexpr std::size_t flush_threshold = 64 * 1024;

// A chunk-size line with its extensions. Go's net/http allows 4096 bytes for it; nothing
// legitimate comes near.
inline constexpr std::size_t max_chunk_line_bytes = 4096;

// What every session of a server thread shares.
struct session_environment {
  const server_options& options;
  const exchange_function& dispatch;
  const error_renderer& render_error;  // never null
  date_cache& date;
  // Set by stop() on any thread: responses finished after it say `Connection: close`.
  const std::atomic<bool>& stop_requested;
  // Requests answered, errors included; written by this thread only.
  std::atomic<std::uint64_t>& requests_answered;
  // Bytes, error answers and timeouts; written by this thread only.
  server_counters& counters;
};

class http_session {
 public:
  http_session(const session_environment& environment, exchange_host& host) noexcept;

  // Room for the next read, then how much of it was filled.
  boost::asio::mutable_buffer prepare() { return input_.prepare(read_chunk); }
  void commit(std::size_t n) noexcept { input_.commit(n); }

  // Answers what the input holds, until it needs more bytes, the output passes
  // flush_threshold, a response is deferred, or the connection is to close. A deferred
  // response that is done goes out first.
  void process();
  // The host's deferred_done(), on the session's thread: the response goes out at the next
  // process() (during a dispatch, once it returns).
  void deferred_done() noexcept { response_ready_ = true; }
  // A dispatch deferred its response, which is not done yet: nothing more is parsed.
  bool awaiting_response() const noexcept {
    return exchange_ == exchange_state::deferred && !response_ready_;
  }
  bool dispatching() const noexcept { return exchange_ == exchange_state::dispatching; }
  // The host's attach_file(): `file` becomes the body of the response being answered (from
  // its dispatch until it is sent); false, and `file` untouched, at any other time.
  bool attach_file(file_payload& file) noexcept;
  // After output(): a file body to send before anything else; file_sent() once it is.
  bool file_pending() const noexcept { return static_cast<bool>(pending_file_); }
  file_payload& pending_file() noexcept { return pending_file_; }
  void file_sent() noexcept { pending_file_.reset(); }
  // The host's upgrade(): takes `upgrade` when the request being answered is a valid
  // WebSocket upgrade; its response is then not sent, and nothing after it is parsed.
  bool accept_upgrade(websocket_upgrade& upgrade) noexcept;
  // After output(): the request upgraded; take_upgrade() hands over what the WebSocket
  // needs (the request, its response, what was read past it).
  bool upgraded() const noexcept { return static_cast<bool>(upgraded_); }
  websocket_handoff take_upgrade();
  // Bytes received and not yet parsed.
  std::size_t input_size() const noexcept { return input_.size(); }
  // --- a streamed request body (body_plan::streamed), for exchange_host::read_body ---
  bool body_streamed() const noexcept { return body_ != body_state::whole; }
  // A body read's outcome: ready with a count (0: the body is complete) or an error, or
  // not ready until more input arrives (then poll_body() after each commit).
  struct body_read {
    bool ready = false;
    boost::system::error_code ec;
    std::size_t bytes = 0;
  };
  body_read read_body(boost::asio::mutable_buffer into);
  body_read poll_body();
  bool body_read_pending() const noexcept { return body_ == body_state::streamed_reading; }
  // While body_read_pending(): when the read fails with timed_out for want of the client's
  // bytes. The buffered body's rules (no wait over body_timeout; past body_timeout, an
  // average of min_body_rate), counted over the time reads have waited for the client
  // only: a handler slow to read (the server's own backpressure) costs the client nothing.
  clock::time_point body_read_deadline() const noexcept;
  // The pending body read fails: the client is gone, or the body stalled (timed_out).
  body_read fail_body_read(boost::system::error_code ec);

  // --- a streamed response, for exchange_host::write_chunk ---
  // Appends the head (on the first call), then `data` as the next chunk. in_progress, with
  // nothing appended, unless a deferred response is in flight; body_not_allowed (the head
  // appended, `data` not) when the response carries no body.
  boost::system::error_code write_chunk(std::string_view data);
  // The deferred response's head has gone out: its body follows in chunks.
  bool response_streaming() const noexcept { return writing_ != writing_state::head; }
  void set_trailers(const http::fields& trailers);
  // exchange_host::abort_response: the streamed response ends without its last chunk, and
  // the connection with it.
  void abort_response() noexcept {
    if (writing_ == writing_state::chunks) aborted_ = true;
  }

  std::string_view input() const noexcept {
    return {static_cast<const char*>(input_.data().data()), input_.size()};
  }
  // The request being read ran out of time: answers 408 (the connection then closes).
  // Between requests it does nothing: an idle connection is just closed.
  void expire();
  // Answers `status` before reading anything (a connection over the limit), then closes.
  void refuse(http::status status, std::string_view why);

  std::string& output() noexcept { return output_; }
  // After the output is written the connection is to close.
  bool closing() const noexcept { return keep_alive_ == keep_alive::disabled; }
  // Bytes of a request have arrived and it is not answered yet.
  bool in_request() const noexcept { return exchange_ != exchange_state::idle; }
  // While in_request(): when the request being read runs out of time.
  clock::time_point deadline() const noexcept { return deadline_; }
  // The input's memory, for the tests that pin its bound.
  std::size_t input_capacity() const noexcept { return input_.capacity(); }

 private:
  enum class step : std::uint8_t { need_more, progress };

  step parse_step();
  step parse_header();
  step parse_body();
  step parse_chunked();
  step finish_put(boost::system::error_code ec, std::size_t used);
  bool check_header();
  bool check_framing(const request& req);
  bool check_expectation(const request& req);
  bool plan_body();
  void send_continue();
  void body_fault(http::status status, std::string_view why, boost::system::error_code ec);
  void start_stream();

  struct chunk_frame {
    std::size_t length;  // bytes of the complete element; 0: not all here yet
    bool error;          // answered: over a limit
  };
  chunk_frame measure_chunk_frame(std::string_view pending);
  void begin_request();
  void note_body_progress(std::size_t bytes);
  void answer_request();
  void hand_over_upgrade();
  void send_response();
  bool head_keeps_alive() const;
  bool body_left() const noexcept;
  // The request is with its dispatch: during the call, or deferred after it.
  bool answering() const noexcept {
    return exchange_ == exchange_state::dispatching || exchange_ == exchange_state::deferred;
  }
  void answer_error(http::status status, std::string_view why);
  void end_request() noexcept;

  const session_environment& env_;
  exchange_host& host_;
  boost::beast::flat_buffer input_;
  std::string output_;                    // serialized responses not yet written
  std::optional<request_parser> parser_;  // engaged while a request is being read
  // The planner's work on the header of the request in parser_, until its dispatch takes it
  // (declared after parser_: what it holds may point into the request).
  planned_request planned_;
  boost::asio::mutable_buffer body_into_;   // the pending body read's buffer
  std::size_t body_filled_ = 0;             // ... and how much of it holds body bytes
  boost::system::error_code body_fault_;    // the streamed body cannot be read further
  std::string trailers_;                    // a streamed response's, serialised
  response response_;                     // reused: keeps its body's capacity
  file_payload attached_;                 // the body of response_, when it is a file
  file_payload pending_file_;             // follows the output; parsing waits for it
  std::size_t header_scan_ = 0;    // where the search for the header's end resumes
  std::uint64_t body_bytes_ = 0;   // bytes of this request's body (with chunk framing) taken
  std::size_t chunk_scan_ = 0;     // where the search for the trailer section's end resumes
  clock::time_point body_start_;   // when this request's header ended
  clock::time_point body_progress_at_;  // when body bytes were last parsed
  // A streamed body: when the pending read began waiting (valid in streamed_reading), and
  // the time earlier reads of this body spent waiting for the client.
  clock::time_point body_wait_start_;
  clock::duration body_waited_{};
  clock::time_point deadline_;
  response_framing framing_{};     // of the request being answered
  // The session's state: the request in hand (exchange_state), its body (body_state), its
  // response (writing_state) and whether the connection outlives it (keep_alive), after
  // hyper's Reading x Writing x KeepAlive. All but keep_alive_ go back to their first value
  // at end_request().

  // Where the request in hand is.
  enum class exchange_state : std::uint8_t {
    idle,         // no byte of a request yet (between requests)
    reading,      // its bytes are arriving (header, or a body read whole); answered next
    dispatching,  // inside the dispatch call
    deferred,     // the dispatch deferred its response; the session waits for deferred_done
  };
  // Invariant: parser_ is engaged in dispatching and deferred (and in reading, but for a
  // refusal that answers before any byte).
  exchange_state exchange_ = exchange_state::idle;
  // deferred_done() came (possibly during the dispatch call): the response goes out at the
  // next process(). Only while dispatching or deferred.
  bool response_ready_ = false;

  // Who reads the request's body.
  enum class body_state : std::uint8_t {
    whole,             // the session, into the request (or there is none)
    streamed,          // the dispatch (read_body), no read pending
    streamed_reading,  // the dispatch, a read waiting for input (body_into_ is its buffer)
  };
  body_state body_ = body_state::whole;
  // `Expect: 100-continue` not answered yet: before a whole body is read, or at the first
  // read of a streamed one.
  bool continue_pending_ = false;

  // What of a deferred response has gone out (a response sent whole goes from head to
  // end_request at once).
  enum class writing_state : std::uint8_t {
    head,       // nothing yet: the head goes with the whole response or the first chunk
    chunks,     // the head went out: chunks follow, then the last chunk and trailers
    head_only,  // the head went out and no body may follow (HEAD, 1xx, 204, 304, a 500)
  };
  // Invariant: chunks and head_only only while deferred.
  writing_state writing_ = writing_state::head;
  bool aborted_ = false;  // abort_response(): chunks, and no last chunk

  // Whether the connection outlives the response being answered (decided by
  // head_keeps_alive() and the framing errors): once disabled, never enabled again.
  enum class keep_alive : std::uint8_t { enabled, disabled };
  keep_alive keep_alive_ = keep_alive::enabled;
  std::optional<websocket_upgrade> upgrade_;   // accepted for the request being answered
  std::optional<websocket_handoff> upgraded_;  // ... whose response was due: hand over
};

}  // namespace waypoint::beast::detail
