// The HTTP/2 connection: nghttp2's session fed from the socket and drained into it, its
// callbacks routed to the streams, and the limits of http2_options. nghttp2 is included
// here and nowhere else.
#include "h2_connection.hpp"

#include "waypoint/detail/http_grammar.hpp"
#include "worker.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace waypoint::beast::detail {
namespace {

// Bytes asked of one read, and framed into one write at most.
constexpr std::size_t h2_read_bytes = 16 * 1024;
constexpr std::size_t h2_write_bytes = 64 * 1024;

// The fields a response may not carry over HTTP/2, and the ones the server writes itself.
bool dropped_from_response(http::field f) noexcept {
  return connection_specific(f) || f == http::field::content_length || f == http::field::date;
}

nghttp2_nv field(std::string_view name, std::string_view value) noexcept {
  // NGHTTP2_NV_FLAG_NONE: nghttp2 copies both, so they need not outlive the submit.
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
          value.size(), NGHTTP2_NV_FLAG_NONE};
}

// The logs of a limit a client ran into: once per process and kind, as the TLS notices.
void notice_once(std::atomic<bool>& said, std::string_view what) noexcept {
  if (said.exchange(true, std::memory_order_relaxed)) return;
  std::fprintf(stderr, "waypoint: HTTP/2: %.*s (logged once; server_stats::http2 counts them)\n",
               static_cast<int>(what.size()), what.data());
}
std::atomic<bool> said_empty_frames{false};
std::atomic<bool> said_control_flood{false};
std::atomic<bool> said_continuations{false};
std::atomic<bool> said_resets{false};
std::atomic<bool> said_invalid{false};
std::atomic<bool> said_bad_frames{false};

// The fields of `fields` HTTP/2 may carry, lowercased (RFC 9113 §8.2.1), as nghttp2 takes
// them. The buffers are the thread's, reused, so a response allocates nothing once they
// have grown; nghttp2 copies what it is given (NGHTTP2_NV_FLAG_NONE) before the next call.
std::vector<nghttp2_nv>& encode_fields(const http::fields& fields) {
  thread_local std::string names;
  thread_local std::vector<nghttp2_nv> nv;
  names.clear();
  for (const auto& f : fields)
    if (!dropped_from_response(f.name()))
      for (char c : f.name_string()) names += waypoint::detail::ascii_lower(c);
  nv.clear();
  std::size_t at = 0;
  for (const auto& f : fields) {
    if (dropped_from_response(f.name())) continue;
    std::size_t length = f.name_string().size();
    nv.push_back(field({names.data() + at, length}, f.value()));
    at += length;
  }
  return nv;
}

}  // namespace

bool event_budget::take(clock::time_point now) noexcept {
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - at_).count();
  std::uint64_t earned = static_cast<std::uint64_t>(elapsed) * per_second_ / 1000;
  if (earned > 0) {
    tokens_ = std::min(burst_, tokens_ + earned);
    at_ = now;
  }
  if (tokens_ == 0) return false;
  --tokens_;
  return true;
}

// --- nghttp2's callbacks ---------------------------------------------------------------

struct h2_connection::callbacks {
  static h2_connection& of(void* user) { return *static_cast<h2_connection*>(user); }

  static int begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    h2_connection& c = of(user);
    std::int32_t id = frame->hd.stream_id;
    c.streams_.emplace(id, std::make_unique<h2_stream>(c, id));
    server_counters::add(c.owner_.counters().h2_streams);
    c.idle_since_ = clock::time_point::max();  // not idle while it has a stream
    return 0;
  }

  static int header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                    std::size_t name_length, const std::uint8_t* value, std::size_t value_length,
                    std::uint8_t, void* user) {
    if (h2_stream* s = of(user).find(frame->hd.stream_id))
      s->add_field({reinterpret_cast<const char*>(name), name_length},
                   {reinterpret_cast<const char*>(value), value_length});
    return 0;
  }

  static int frame_received(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    h2_connection& c = of(user);
    bool end_stream = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    h2_stream* s = c.find(frame->hd.stream_id);
    switch (frame->hd.type) {
      case NGHTTP2_HEADERS:
        if (!s) return 0;
        if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
          s->header_done(end_stream);
        } else if (end_stream) {
          s->request_done();  // the trailer section
        }
        return 0;
      case NGHTTP2_DATA:
        // An empty DATA frame that does not end the stream carries nothing but a wakeup.
        if (frame->hd.length == 0 && !end_stream &&
            ++c.empty_frames_ > c.owner_.options().http2.max_empty_frames) {
          server_counters::add(c.owner_.counters().h2_floods);
          notice_once(said_empty_frames,
                      "a client sent a flood of empty frames; its connection ended");
          return nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM) == 0
                     ? 0
                     : NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        if (s && end_stream) s->request_done();
        return 0;
      case NGHTTP2_RST_STREAM:
        server_counters::add(c.owner_.counters().h2_resets_received);
        return 0;
      default:
        return 0;
    }
  }

  static int data_chunk(nghttp2_session* session, std::uint8_t, std::int32_t id,
                        const std::uint8_t* data, std::size_t size, void* user) {
    h2_connection& c = of(user);
    h2_stream* s = c.find(id);
    if (!s)
      return nghttp2_session_consume_connection(session, size) == 0 ? 0
                                                                    : NGHTTP2_ERR_CALLBACK_FAILURE;
    bool whole = s->reading_whole();
    std::size_t credit = s->body_data(data, size);
    if (credit == 0) return 0;
    // A body read whole: the stream's window at once, the connection's while the other
    // streams' bodies are within their budget.
    if (whole && c.held_body_bytes() - s->held_body_bytes() >
                     c.owner_.options().http2.max_buffered_body_bytes) {
      nghttp2_session_consume_stream(session, id, credit);
      c.withheld_credit_ += credit;
      return 0;
    }
    nghttp2_session_consume(session, id, credit);
    return 0;
  }

  // A response sent whole before its request ended: the rest of the request is refused
  // (RFC 9113 §8.1: RST_STREAM NO_ERROR), and nghttp2 drops and credits what still comes.
  static int frame_sent(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    // nghttp2's own reset bucket (http2_options::reset_burst) ends a connection with
    // INTERNAL_ERROR, which this server sends for nothing else.
    if (frame->hd.type == NGHTTP2_GOAWAY && frame->goaway.error_code == NGHTTP2_INTERNAL_ERROR) {
      server_counters::add(of(user).owner_.counters().h2_floods);
      notice_once(said_resets, "a client reset streams faster than its budget; its connection ended");
      return 0;
    }
    if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM) ||
        (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA))
      return 0;
    h2_stream* s = of(user).find(frame->hd.stream_id);
    if (!s) return 0;
    s->response_sent();
    if (s->answered_early())
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
    return 0;
  }

  static int stream_closed(nghttp2_session* session, std::int32_t id, std::uint32_t, void* user) {
    h2_connection& c = of(user);
    auto it = c.streams_.find(id);
    if (it == c.streams_.end()) return 0;
    // Body bytes nobody will read still hold the connection's window.
    if (std::size_t unread = it->second->unread_bytes())
      nghttp2_session_consume_connection(session, unread);
    if (it->second->closed()) c.erase(it);
    return 0;
  }

  // A frame nghttp2 refused with a stream error of the server's: the client caused it, and
  // a client that causes many (MadeYouReset) is cut off.
  static int invalid_frame(nghttp2_session* session, const nghttp2_frame*, int, void* user) {
    h2_connection& c = of(user);
    server_counters::add(c.owner_.counters().h2_resets_sent);
    if (c.invalid_frames_.take(clock::now())) return 0;
    server_counters::add(c.owner_.counters().h2_floods);
    notice_once(said_invalid, "a client caused too many stream errors; its connection ended");
    return nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM) == 0
               ? 0
               : NGHTTP2_ERR_CALLBACK_FAILURE;
  }

  // The response body's source, one DATA frame's worth at a time.
  static ssize_t read_body(nghttp2_session* session, std::int32_t id, std::uint8_t* buf,
                           std::size_t length, std::uint32_t* flags, nghttp2_data_source*,
                           void* user) {
    h2_connection& c = of(user);
    h2_stream* s = c.find(id);
    if (!s) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    h2_body_piece piece = s->next_piece(buf, length);
    if (piece.fail) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    if (piece.wait) return NGHTTP2_ERR_DEFERRED;
    if (piece.end) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      const http::fields& trailers = s->trailers();
      if (trailers.begin() != trailers.end()) {
        std::vector<nghttp2_nv>& nv = encode_fields(trailers);
        if (nghttp2_submit_trailer(session, id, nv.data(), nv.size()) == 0)
          *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
      }
    }
    return static_cast<ssize_t>(piece.bytes);
  }
};

// --- the connection --------------------------------------------------------------------

h2_connection::h2_connection(worker& owner, std::unique_ptr<transport> stream, std::string preread,
                             connection_endpoints endpoints)
    : owner_(owner),
      transport_(std::move(stream)),
      endpoints_(std::move(endpoints)),
      input_(std::move(preread)),
      read_buffer_(std::make_unique<std::uint8_t[]>(h2_read_bytes)),
      idle_since_(clock::now()),
      goaway_timer_(transport_->get_executor()),
      invalid_frames_(owner.options().http2.server_reset_burst,
                      owner.options().http2.server_resets_per_second) {
  const http2_options& o = owner.options().http2;
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_option* opt = nullptr;
  if (nghttp2_session_callbacks_new(&cb) != 0 || nghttp2_option_new(&opt) != 0) {
    nghttp2_session_callbacks_del(cb);
    throw std::bad_alloc();
  }
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, &callbacks::begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cb, &callbacks::header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &callbacks::frame_received);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &callbacks::data_chunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, &callbacks::stream_closed);
  nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, &callbacks::invalid_frame);
  nghttp2_session_callbacks_set_on_frame_send_callback(cb, &callbacks::frame_sent);
  // Credit for body bytes goes back only as they are read (consume()).
  nghttp2_option_set_no_auto_window_update(opt, 1);
  nghttp2_option_set_max_continuations(opt, o.max_continuations);
  nghttp2_option_set_max_settings(opt, o.max_settings);
  nghttp2_option_set_max_outbound_ack(opt, o.max_queued_control_frames);
  nghttp2_option_set_stream_reset_rate_limit(opt, o.reset_burst, o.resets_per_second);
  int rv = nghttp2_session_server_new2(&session_, cb, this, opt);
  nghttp2_session_callbacks_del(cb);
  nghttp2_option_del(opt);
  if (rv != 0) throw std::bad_alloc();
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, o.max_concurrent_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, o.stream_window},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
       static_cast<std::uint32_t>(owner.options().max_header_bytes)},
      {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, o.connection_window);
  server_counters::add(owner.counters().h2_connections);
}

h2_connection::~h2_connection() { nghttp2_session_del(session_); }

void h2_connection::start(std::list<h2_connection>::iterator self) {
  self_ = self;
  if (!input_.empty()) {
    std::string preread = std::move(input_);
    if (!take(reinterpret_cast<const std::uint8_t*>(preread.data()), preread.size())) return;
  }
  if (owner_.stopping()) drain();
  flush();
  do_read();
}

asio::any_io_executor h2_connection::executor() { return transport_->get_executor(); }

bool h2_connection::stopping() const noexcept { return draining_ || owner_.stopping(); }

h2_stream* h2_connection::find(std::int32_t id) noexcept {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

void h2_connection::do_read() {
  if (reading_ || closed_ || !nghttp2_session_want_read(session_)) return finish_if_done();
  reading_ = true;
  transport_->async_read_some(asio::buffer(read_buffer_.get(), h2_read_bytes),
                              [this](error_code ec, std::size_t n) { on_read(ec, n); });
}

void h2_connection::on_read(error_code ec, std::size_t n) {
  reading_ = false;
  if (closed_) return finish_if_done();
  if (ec) return close();  // end of stream or reset: the streams are cut
  server_counters::add(owner_.counters().bytes_received, n);
  if (!take(read_buffer_.get(), n)) return;
  flush();
  do_read();
}

// Feeds bytes to nghttp2. False when the connection ended (a fatal error: a bad preface, a
// flood nghttp2 detected); its GOAWAY, if any, is written first.
bool h2_connection::take(const std::uint8_t* data, std::size_t size) {
  ++holding_;  // nghttp2 must not be asked to send from inside its own callbacks
  ssize_t rv = nghttp2_session_mem_recv(session_, data, size);
  --holding_;
  if (rv >= 0) return true;
  if (rv == NGHTTP2_ERR_FLOODED) {
    server_counters::add(owner_.counters().h2_floods);
    notice_once(said_control_flood,
                "a client flooded control frames it did not read the answers of");
    // It does not read: a GOAWAY would wait behind the unread acknowledgements.
    close();
    return false;
  }
  if (rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS) {
    server_counters::add(owner_.counters().h2_floods);
    notice_once(said_continuations,
                "a client sent more CONTINUATION frames than its budget; its connection ended");
  } else {
    // A bad preface, a frame nghttp2 cannot take: its GOAWAY names the error.
    notice_once(said_bad_frames, std::string("a client's frames ended its connection: ") +
                                     nghttp2_strerror(static_cast<int>(rv)));
  }
  go_away(NGHTTP2_PROTOCOL_ERROR);
  return false;
}

// Writes the bytes nghttp2 has framed, a batch at a time; when there is nothing left to
// read or write, the connection ends.
void h2_connection::flush() {
  if (writing_ || closed_ || holding_ > 0) return;
  output_.clear();
  ++holding_;  // framing closes streams, whose handlers' cancellations may ask to flush
  ssize_t n = 1;
  while (output_.size() < h2_write_bytes) {
    const std::uint8_t* data = nullptr;
    n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) break;
    output_.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
  }
  --holding_;
  if (n < 0) {
    // Out of memory: nothing sensible can be framed. The socket closes; the operations
    // pending on it complete aborted and end the connection (never from inside here,
    // which callers still stand in).
    closed_ = hard_ = true;
    error_code ignored;
    transport_->close(ignored);
    return;
  }
  if (output_.empty()) {
    // Nothing was framed: chunk writers waiting on it have their bytes out already.
    std::vector<std::function<void()>> done = std::move(written_);
    written_.clear();
    for (auto& f : done) f();
    return finish_if_done();
  }
  writing_ = true;
  writing_callbacks_ = std::move(written_);
  written_.clear();
  write_deadline_ = clock::now() + owner_.options().write_timeout;
  asio::async_write(*transport_, asio::buffer(output_),
                    [this](error_code ec, std::size_t n) { on_write(ec, n); });
}

void h2_connection::on_write(error_code ec, std::size_t n) {
  writing_ = false;
  write_deadline_ = clock::time_point::max();
  server_counters::add(owner_.counters().bytes_sent, n);
  std::vector<std::function<void()>> done = std::move(writing_callbacks_);
  writing_callbacks_.clear();
  if (ec) return close();
  if (closed_) return finish_if_done();
  for (auto& f : done) f();
  if (closed_) return finish_if_done();
  flush();
  if (!closed_) do_read();
}

void h2_connection::after_write(std::function<void()> done) { written_.push_back(std::move(done)); }

bool h2_connection::submit_response(h2_stream& stream) {
  const response& res = stream.head();
  std::vector<nghttp2_nv>& nv = encode_fields(res.base());
  unsigned code = res.result_int();  // three digits: Beast's status range
  char status[3] = {char('0' + code / 100), char('0' + code / 10 % 10), char('0' + code % 10)};
  nv.insert(nv.begin(), field(":status", {status, 3}));
  nv.push_back(field("date", stream.date()));
  if (auto it = res.find(http::field::content_length); it != res.end())
    nv.push_back(field("content-length", it->value()));
  nghttp2_data_provider body{};
  body.read_callback = &callbacks::read_body;
  int rv = nghttp2_submit_response(session_, stream.id(), nv.data(), nv.size(),
                                   stream.head_only() ? nullptr : &body);
  if (rv != 0) {
    reset(stream, NGHTTP2_INTERNAL_ERROR);
    return false;
  }
  flush();
  return true;
}

void h2_connection::resume(h2_stream& stream) {
  nghttp2_session_resume_data(session_, stream.id());
  flush();
}

void h2_connection::reset(h2_stream& stream, std::uint32_t error_code) {
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream.id(), error_code);
  server_counters::add(owner_.counters().h2_resets_sent);
  flush();
}

void h2_connection::consume(h2_stream& stream, std::size_t bytes) {
  if (bytes == 0) return;
  nghttp2_session_consume(session_, stream.id(), bytes);
  flush();
}

void h2_connection::forget(h2_stream& stream) noexcept {
  erase(streams_.find(stream.id()));
  finish_if_done();
}

std::size_t h2_connection::held_body_bytes() const noexcept {
  std::size_t total = 0;
  for (const auto& [id, s] : streams_) total += s->held_body_bytes();
  return total;
}

// A stream goes: its body's share of the budget with it, and the connection's credit
// held back for the budget goes to the client once the bodies are within it again.
void h2_connection::erase(streams::iterator it) noexcept {
  streams_.erase(it);
  if (streams_.empty()) idle_since_ = clock::now();
  if (withheld_credit_ > 0 && held_body_bytes() <= owner_.options().http2.max_buffered_body_bytes &&
      !closed_) {
    nghttp2_session_consume_connection(session_, std::exchange(withheld_credit_, 0));
    flush();
  }
}

// The drain: a shutdown notice now (streams the client is opening still count), GOAWAY
// with the last stream taken once the notice has had a round trip's time, then the streams
// finish and the connection ends.
void h2_connection::drain() noexcept {
  if (draining_ || closed_) return;
  draining_ = true;
  nghttp2_submit_shutdown_notice(session_);
  goaway_timer_.expires_after(std::chrono::milliseconds(100));
  // Destroyed with the connection, the timer completes aborted: `this` is not touched then.
  goaway_timer_.async_wait([this](error_code ec) {
    if (!ec) send_final_goaway();
  });
  ++holding_;  // a stream's handler may answer from inside the walk
  for (auto& [id, s] : streams_) s->drain();
  --holding_;
  flush();
}

// A response the client's window holds (its stream's or the connection's) gets as long as
// a write the client does not read: write_timeout, then the stream is reset, so that what
// it holds (a file's descriptor, a chunk's writer) is let go.
void h2_connection::stall_check(h2_stream& s, clock::time_point now) noexcept {
  bool held =
      s.body_pending() && (nghttp2_session_get_stream_remote_window_size(session_, s.id()) <= 0 ||
                           nghttp2_session_get_remote_window_size(session_) <= 0);
  if (!held) {
    s.window_stalled_since = clock::time_point::max();
  } else if (s.window_stalled_since == clock::time_point::max()) {
    s.window_stalled_since = now;
  } else if (now - s.window_stalled_since >= owner_.options().write_timeout) {
    owner_.counters().timeout(timeout_kind::write);
    s.window_stalled_since = clock::time_point::max();
    reset(s, NGHTTP2_CANCEL);
  }
}

void h2_connection::send_final_goaway() {
  if (goaway_sent_ || closed_) return;
  goaway_sent_ = true;
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
  flush();
  if (!writing_) finish_if_done();
}

void h2_connection::on_deadline(clock::time_point now) noexcept {
  if (closed_) return;
  if (now >= write_deadline_) {
    owner_.counters().timeout(timeout_kind::write);
    return close();
  }
  bool header_late = false;
  ++holding_;
  for (auto& [id, s] : streams_) {
    header_late |= !s->on_deadline(now);
    stall_check(*s, now);
  }
  --holding_;
  if (header_late) return go_away(NGHTTP2_ENHANCE_YOUR_CALM);
  if (streams_.empty() && !writing_ && idle_since_ != clock::time_point::max() &&
      now >= idle_since_ + owner_.options().idle_timeout) {
    owner_.counters().timeout(timeout_kind::idle);
    return go_away(NGHTTP2_NO_ERROR);
  }
  flush();
}

// Ends the connection politely: GOAWAY naming the last stream taken (nghttp2 has queued
// it already for a protocol error), written, then the lingering close once nghttp2 wants
// nothing more.
void h2_connection::go_away(std::uint32_t error_code) {
  if (!goaway_sent_) {
    goaway_sent_ = true;
    nghttp2_session_terminate_session(session_, error_code);
  }
  flush();
}

// Once nghttp2 wants nothing more (GOAWAY went out and no stream is active, or the session
// ended) and the last bytes are written, the socket half-closes and lingers (so that the
// GOAWAY is not destroyed by a reset), then closes; the connection leaves its worker once
// no handler holds a stream's request or response.
void h2_connection::finish_if_done() {
  if (!closed_) {
    if (writing_ || nghttp2_session_want_read(session_) || nghttp2_session_want_write(session_))
      return;
    closed_ = true;
  }
  for (auto& [id, s] : streams_) s->cut();
  if (reading_ && !writing_) {
    error_code ignored;
    transport_->cancel(ignored);  // on_read comes back here
  }
  if (reading_ || writing_ || lingering_) return;
  if (!hard_ && !lingered_) {
    lingering_ = true;
    transport_->async_linger([this](error_code) {
      lingering_ = false;
      lingered_ = true;
      finish_if_done();
    });
    return;
  }
  error_code ignored;
  transport_->close(ignored);
  for (auto it = streams_.begin(); it != streams_.end();)
    it = it->second->holds_deferred() ? std::next(it) : streams_.erase(it);
  if (streams_.empty()) owner_.remove_h2(self_);  // deletes *this
}

// At once: the drain ran out, the client is gone, or a write failed or stalled.
void h2_connection::close() noexcept {
  closed_ = true;
  hard_ = true;
  error_code ignored;
  transport_->close(ignored);  // pending operations complete with operation_aborted
  finish_if_done();
}

}  // namespace waypoint::beast::detail
