// The parse loop behind http_session.hpp.
//
// Beast's parser takes a request line as soon as it is complete, before the header is, and
// keeps the rest of an unfinished header (or chunk-size line, or trailer section) in our
// input until its end arrives. So: checks that read a request line run only while nothing
// of the request has been consumed (the input then begins with it); every limit is checked
// on what was consumed plus what waits in the input; and the parser stops at the header's
// end (eager off) so that the header's own size is known exactly.
#include "http_session.hpp"

#include "response_writer.hpp"
#include "waypoint/beast/adapter.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <charconv>

namespace waypoint::beast::detail {
namespace {

using error_code = boost::system::error_code;

std::string_view view_of(boost::asio::const_buffer b) noexcept {
  return {static_cast<const char*>(b.data()), b.size()};
}

// The request line of a request whose header is not complete yet: its target is longer
// than `limit` when more than `limit` bytes follow the method without a space or line end.
bool target_too_long(std::string_view request_start, std::size_t limit) noexcept {
  std::size_t space = request_start.find(' ');
  if (space == std::string_view::npos) return false;
  std::string_view rest = request_start.substr(space + 1);
  std::size_t end = rest.find_first_of(" \r\n");
  return (end == std::string_view::npos ? rest.size() : end) > limit;
}

// A request line whose method holds a byte no token may hold is not HTTP: answer it now
// rather than wait for a header end that may never come (a TLS handshake, for one).
bool method_is_garbage(std::string_view request_start) noexcept {
  for (char c : request_start) {
    if (c == ' ') return false;
    if (!waypoint::detail::is_token_byte(c)) return true;
  }
  return false;
}

// Where the header in `pending` ends (past its empty line), or npos. A bare "\n\n" counts
// as an end too, so that a header with bare line feeds is refused at once rather than
// waited for. The search resumes at `from`, where the last one stopped.
std::size_t find_header_end(std::string_view pending, std::size_t from) noexcept {
  for (std::size_t at = from >= 3 ? from - 3 : 0;; ++at) {
    at = pending.find('\n', at);
    if (at == std::string_view::npos) return at;
    if (at + 1 < pending.size() && pending[at + 1] == '\n') return at + 2;
    if (at + 2 < pending.size() && pending[at + 1] == '\r' && pending[at + 2] == '\n' &&
        at >= 1 && pending[at - 1] == '\r')
      return at + 3;
  }
}

// RFC 9112 §2.2: empty lines before a request line are to be ignored (some clients send
// CRLF after a body).
void skip_empty_lines(boost::beast::flat_buffer& input) {
  std::string_view data = view_of(input.data());
  input.consume(std::min(data.find_first_not_of("\r\n"), data.size()));
}

}  // namespace

http_session::http_session(const session_environment& environment, exchange_host& host) noexcept
    : env_(environment), host_(host) {}

void http_session::process() {
  if (exchange_ == exchange_state::deferred) {
    if (!response_ready_) return;
    send_response();
  }
  while (!closing() && exchange_ != exchange_state::deferred && !pending_file_ && !upgraded_ &&
         output_.size() < flush_threshold) {
    if (parse_step() == step::need_more) break;
  }
}

http_session::step http_session::parse_step() {
  if (exchange_ == exchange_state::idle) skip_empty_lines(input_);
  if (input_.size() == 0) return step::need_more;
  if (exchange_ == exchange_state::idle) {
    exchange_ = exchange_state::reading;
    deadline_ = clock::now() + env_.options.header_timeout;
  }
  if (!parser_) begin_request();
  return parser_->is_header_done() ? parse_body() : parse_header();
}

void http_session::begin_request() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(env_.options.max_header_bytes));
  // With a planner the limit is the plan's, checked once the header is in.
  if (env_.options.plan_body)
    parser_->body_limit(boost::none);
  else
    parser_->body_limit(env_.options.max_body_bytes);
  parser_->eager(false);  // stop at the header's end
  header_scan_ = 0;
  body_bytes_ = 0;
  chunk_scan_ = 0;
}

// The header goes to Beast only once it is all here. Beast would take a request line
// early and find a bad field either at once or at the header's end, depending on the
// reads; given whole headers it answers the same however they arrived.
http_session::step http_session::parse_header() {
  const server_options& limits = env_.options;
  std::string_view pending = view_of(input_.data());
  if (pending.size() > limits.max_target_bytes &&
      target_too_long(pending, limits.max_target_bytes)) {
    answer_error(http::status::uri_too_long,
                 "the request target is longer than the server accepts");
    return step::progress;
  }
  if (method_is_garbage(pending)) {
    answer_error(http::status::bad_request, "the request is not HTTP");
    return step::progress;
  }
  std::size_t end = find_header_end(pending, header_scan_);
  if (std::min(end, pending.size()) > limits.max_header_bytes) {
    answer_error(http::status::request_header_fields_too_large,
                 "the header block is larger than the server accepts");
    return step::progress;
  }
  if (end == std::string_view::npos) {
    header_scan_ = pending.size();
    return step::need_more;
  }
  error_code ec;
  std::size_t used = parser_->put(boost::asio::buffer(pending.data(), end), ec);
  input_.consume(used);
  if (ec == http::error::body_limit) {
    answer_error(http::status::payload_too_large, "the body is larger than the server accepts");
    return step::progress;
  }
  if (ec || !parser_->is_header_done()) {
    answer_error(http::status::bad_request, "the request is not valid HTTP/1.1");
    return step::progress;
  }
  if (!check_header()) return step::progress;
  if (parser_->is_done()) {
    answer_request();
  } else {
    plan_body();
  }
  return step::progress;
}

// A body follows the header: its limit, and whether the dispatch reads it. Returns false
// when it answered (413).
bool http_session::plan_body() {
  const request& req = parser_->get();
  body_plan plan{env_.options.max_body_bytes, false};
  if (env_.options.plan_body) {
    try {
      plan = env_.options.plan_body(req);
    } catch (...) {
      plan = {env_.options.max_body_bytes, false};  // a planner that fails plans nothing
    }
  }
  planned_ = std::move(plan.planned);  // dropped with the request, whatever ends it
  if (parser_->content_length().value_or(0) > plan.max_bytes) {
    answer_error(http::status::payload_too_large, "the body is larger than the server accepts");
    return false;
  }
  parser_->body_limit(plan.max_bytes);
  parser_->eager(true);
  body_start_ = clock::now();
  body_waited_ = {};
  note_body_progress(0);
  if (!plan.streamed) {
    send_continue();
    return true;
  }
  // The same parser reads on, into the reader's buffer (poll_body) instead of the request.
  parser_->stream_body();
  body_ = body_state::streamed;
  answer_request();
  return true;
}

void http_session::send_continue() {
  if (!continue_pending_) return;
  continue_pending_ = false;
  // Once the final response's head is out (a handler that streams before it reads), a 1xx
  // may not follow it, and the output may be under a write: the client sends the body
  // when its own wait for the 100 ends (RFC 9110 §10.1.1).
  if (response_streaming()) return;
  output_ += "HTTP/1.1 100 Continue\r\n\r\n";
}

// A body that cannot be read on: answered now, or, when the dispatch reads it, the
// reader's error (the dispatch answers; the connection closes after it).
void http_session::body_fault(http::status status, std::string_view why, error_code ec) {
  if (!body_streamed()) return answer_error(status, why);
  if (!body_fault_) body_fault_ = ec;
}

http_session::step http_session::parse_body() {
  if (parser_->chunked()) return parse_chunked();
  error_code ec;
  std::size_t used = parser_->put(input_.data(), ec);
  input_.consume(used);
  note_body_progress(used);
  return finish_put(ec, used);
}

// After a put of body bytes: the error, the end of the request, or on with the rest.
http_session::step http_session::finish_put(error_code ec, std::size_t used) {
  if (ec == http::error::need_more) return step::need_more;
  if (ec == http::error::need_buffer) return step::progress;  // the reader's buffer is full
  if (ec == http::error::body_limit) {
    body_fault(http::status::payload_too_large, "the body is larger than the server accepts", ec);
  } else if (ec && parser_->trailer_host()) {
    body_fault(http::status::bad_request,
               "the trailer section carries Host, which only the header section may", ec);
  } else if (ec) {
    body_fault(http::status::bad_request, "the body is not valid HTTP/1.1 framing", ec);
  } else if (parser_->is_done()) {
    if (!body_streamed()) answer_request();
  } else {
    return used > 0 ? step::progress : step::need_more;
  }
  return step::progress;
}

// A chunked body is handed to Beast one framing element at a time: chunk data up to the
// chunk's end, a chunk-size line once it is complete, the last chunk with its trailers once
// they are. So Beast never parses a line or a trailer section we have not measured, and the
// limits hold exactly, however the bytes were split.
http_session::step http_session::parse_chunked() {
  std::string_view pending = view_of(input_.data());
  std::size_t give = pending.size();
  if (parser_->chunk_left() > 0) {
    give = static_cast<std::size_t>(std::min<std::uint64_t>(parser_->chunk_left(), give));
  } else {
    chunk_frame frame = measure_chunk_frame(pending);
    if (frame.error) return step::progress;
    if (frame.length == 0) return step::need_more;
    give = frame.length;
  }
  error_code ec;
  std::size_t used = parser_->put(boost::asio::buffer(pending.data(), give), ec);
  input_.consume(used);
  note_body_progress(used);
  chunk_scan_ = 0;
  return finish_put(ec, used);
}

// At a chunk's start `pending` holds: the previous chunk's CRLF (after the first chunk),
// the chunk-size line, and for the last chunk its trailer section up to the empty line.
// Returns the bytes that make the complete element (0: not all here yet), or answers
// (error set) when an element is over its limit.
http_session::chunk_frame http_session::measure_chunk_frame(std::string_view pending) {
  std::size_t line_start = parser_->chunk_seen() ? std::min<std::size_t>(2, pending.size()) : 0;
  std::size_t line_end = pending.find('\n', line_start);
  std::size_t line_length = (line_end == std::string_view::npos ? pending.size() : line_end + 1) -
                            line_start;
  if (line_length > max_chunk_line_bytes) {
    body_fault(http::status::bad_request,
               "a chunk-size line with its extensions is longer than 4096 bytes",
               http::error::bad_chunk);
    return {0, true};
  }
  if (line_end == std::string_view::npos) return {0, false};
  std::string_view line = pending.substr(line_start, line_end - line_start);
  std::size_t digits = std::min(line.find_first_not_of("0123456789abcdefABCDEF"), line.size());
  bool last = digits > 0 && line.substr(0, digits).find_first_not_of('0') == std::string_view::npos;
  if (!last) return {line_end + 1, false};
  // The trailer section ends at the first empty line: CRLF CRLF counting the line's own.
  std::size_t from = std::max(line_end - 1, chunk_scan_);
  std::size_t end = pending.find("\r\n\r\n", from);
  std::size_t section = (end == std::string_view::npos ? pending.size() : end + 4) - (line_end + 1);
  if (section > env_.options.max_header_bytes) {
    body_fault(http::status::request_header_fields_too_large,
               "the trailer section is larger than the server accepts", http::error::header_limit);
    return {0, true};
  }
  if (end == std::string_view::npos) {
    chunk_scan_ = pending.size() >= 3 ? pending.size() - 3 : 0;
    return {0, false};
  }
  return {end + 4, false};
}

// The header is in: framing and expectations, before any of the body. Returns false when
// it answered.
bool http_session::check_header() {
  const request& req = parser_->get();
  return check_framing(req) && check_expectation(req);
}

// RFC 9112 §6.1 and §6.3. Beast refuses Content-Length with Transfer-Encoding itself.
bool http_session::check_framing(const request& req) {
  auto codings = req.equal_range(http::field::transfer_encoding);
  if (codings.first == codings.second) return true;
  if (req.version() < 11) {
    // An HTTP/1.0 peer cannot have meant chunked framing; guessing would desynchronise.
    answer_error(http::status::bad_request, "HTTP/1.0 requests cannot use Transfer-Encoding");
    return false;
  }
  std::size_t count = 0;
  bool only_chunked = true;
  for (auto it = codings.first; it != codings.second; ++it) {
    waypoint::detail::for_each_list_element(it->value(), [&](std::string_view coding) {
      ++count;
      only_chunked = only_chunked && waypoint::detail::iequals(coding, "chunked");
    });
  }
  if (count == 1 && only_chunked) return true;
  // A coding the server does not apply would reach the handler still coded.
  answer_error(http::status::not_implemented,
               "the only Transfer-Encoding served is a single chunked");
  return false;
}

// `Expect`: 100-continue is answered at the header's end whenever a body is to follow, so
// whether the body came with the header or later makes no difference to the output
// (RFC 9110 §10.1.1 lets a server send it either way); for a streamed body, when the
// dispatch first reads it, so that a request refused before that is not sent.
bool http_session::check_expectation(const request& req) {
  auto expect = req.find(http::field::expect);
  if (expect == req.end()) return true;
  if (!waypoint::detail::iequals(expect->value(), "100-continue")) {
    answer_error(http::status::expectation_failed, "the only expectation served is 100-continue");
    return false;
  }
  bool body_follows = parser_->chunked() || parser_->content_length().value_or(0) > 0;
  continue_pending_ = req.version() >= 11 && body_follows;
  return true;
}

// A body must keep arriving: no wait longer than body_timeout, and, past that grace from
// the header's end, an average of at least min_body_rate bytes per second.
void http_session::note_body_progress(std::size_t bytes) {
  const server_options& o = env_.options;
  body_bytes_ += bytes;
  clock::time_point now = clock::now();
  if (bytes > 0) body_progress_at_ = now;
  clock::time_point stall = now + o.body_timeout;
  if (o.min_body_rate == 0) {
    deadline_ = stall;
    return;
  }
  auto earned = std::chrono::microseconds(body_bytes_ * 1'000'000 / o.min_body_rate);
  deadline_ = std::min(stall, body_start_ + o.body_timeout + earned);
}

void http_session::answer_request() {
  const request& req = parser_->get();
  framing_ = {req.version(), req.method() == http::verb::head, req.keep_alive(), {}, false, 0};
  response_.base() = response::header_type();
  response_.body().clear();
  response_.version(req.version());
  attached_.reset();
  exchange x(host_, req, response_, &planned_);
  exchange_ = exchange_state::dispatching;
  try {
    env_.dispatch(x);
  } catch (...) {
    // Once deferred, the response is the handle's to finish (its destructor answers 500).
    if (!x.deferred()) {
      upgrade_.reset();
      response_.base() = response::header_type();
      response_.result(http::status::internal_server_error);
      response_.body() = "Internal Server Error: the handler failed\n";
      attached_.reset();
    }
  }
  // Not deferred: answered now, and end_request() makes the state idle.
  exchange_ = x.deferred() ? exchange_state::deferred : exchange_state::reading;
  if (exchange_ != exchange_state::deferred || response_ready_) send_response();
}

// The response to the request in parser_, dispatched and (if deferred) done.
void http_session::send_response() {
  response_ready_ = false;
  if (upgrade_) return hand_over_upgrade();
  if (writing_ != writing_state::head) {
    if (writing_ == writing_state::chunks && framing_.version >= 11 && !aborted_) {
      output_ += "0\r\n";
      output_ += trailers_;
      output_ += "\r\n";
    }
  } else {
    framing_.keep_alive = head_keeps_alive() && !body_left();
    framing_.date = env_.date.get();
    // A layer that wrote a body after the file was attached (an error page) replaced it.
    framing_.file_body = attached_ && response_.body().empty();
    framing_.file_length = attached_.length();
    if (append_response(response_, framing_, output_)) pending_file_ = std::move(attached_);
    attached_.reset();
  }
  // A streamed response's head went out before the body was read to its end.
  if (!framing_.keep_alive || body_left() || aborted_) keep_alive_ = keep_alive::disabled;
  end_request();
}

// The one keep-alive decision, made when a response's head is written (so that the head
// says `Connection: close`): the request asked to keep the connection (framing_.keep_alive,
// from its version and Connection field), the server is not stopping, the response does
// not say close, and its body does not end where the connection does (a streamed body to
// an HTTP/1.0 client). A request body left unread closes the connection too (body_left()),
// checked at the head and again at the response's end.
bool http_session::head_keeps_alive() const {
  if (!framing_.keep_alive || env_.stop_requested.load(std::memory_order_relaxed)) return false;
  if (framing_.streamed && framing_.version < 11) return false;
  return !waypoint::detail::list_has_token(response_[http::field::connection], "close");
}

// A streamed request body not read to its end (or unreadable) leaves the next request's
// start unknown.
bool http_session::body_left() const noexcept {
  return body_streamed() && (body_fault_ || !parser_->is_done());
}

// The upgraded request's answer is the WebSocket handshake, written by Beast: the request
// and the response's fields go with the socket, as do the bytes read past the request.
void http_session::hand_over_upgrade() {
  attached_.reset();
  upgraded_.emplace(websocket_handoff{parser_->release(), std::move(response_),
                                      std::move(*upgrade_), {}, {}});
  upgrade_.reset();
  std::string_view unread = view_of(input_.data());
  upgraded_->unread.assign(unread.data(), unread.size());
  input_.clear();
  response_ = response();
  end_request();
}

bool http_session::accept_upgrade(websocket_upgrade& upgrade) noexcept {
  if (!answering() || !parser_ || upgrade_) return false;
  if (!is_websocket_upgrade(parser_->get())) return false;
  try {
    upgrade_.emplace(std::move(upgrade));
  } catch (...) {
    return false;
  }
  return true;
}

websocket_handoff http_session::take_upgrade() {
  websocket_handoff handoff = std::move(*upgraded_);
  upgraded_.reset();
  return handoff;
}

// Answers a request that could not be read; the connection closes after it, since where
// the next request would start is unknown.
void http_session::answer_error(http::status status, std::string_view why) {
  env_.counters.error(static_cast<unsigned>(status));
  attached_.reset();
  response_.base() = response::header_type();
  response_.body().clear();
  response_.result(status);
  try {
    env_.render_error(status, why, response_);
  } catch (...) {
    response_.base() = response::header_type();
    write_plain_error(status, why, response_);
  }
  append_response(response_, {11, false, false, env_.date.get(), false, 0}, output_);
  input_.clear();
  keep_alive_ = keep_alive::disabled;
  end_request();
}

void http_session::end_request() noexcept {
  auto& answered = env_.requests_answered;  // one writer: no locked instruction
  answered.store(answered.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  planned_.reset();  // a plan the dispatch did not take, or a request refused before it
  parser_.reset();
  body_fault_ = {};
  trailers_.clear();
  aborted_ = false;
  exchange_ = exchange_state::idle;
  response_ready_ = false;
  body_ = body_state::whole;
  continue_pending_ = false;
  writing_ = writing_state::head;
}

// --- a streamed request body ----------------------------------------------------------

http_session::body_read http_session::read_body(boost::asio::mutable_buffer into) {
  if (body_ != body_state::streamed || exchange_ != exchange_state::deferred || into.size() == 0)
    return {true, boost::asio::error::invalid_argument, 0};
  send_continue();
  body_ = body_state::streamed_reading;
  body_wait_start_ = clock::now();
  body_into_ = into;
  body_filled_ = 0;
  return poll_body();
}

clock::time_point http_session::body_read_deadline() const noexcept {
  const server_options& o = env_.options;
  clock::time_point stall = std::max(body_wait_start_, body_progress_at_) + o.body_timeout;
  if (o.min_body_rate == 0) return stall;
  auto earned = std::chrono::microseconds(body_bytes_ * 1'000'000 / o.min_body_rate);
  clock::duration allowed = o.body_timeout + earned - body_waited_;  // may be spent already
  return std::min(stall, body_wait_start_ + allowed);
}

// Parses as much of the body as the input holds and the buffer has room for. Bytes go
// nowhere but the buffer, and the input is parsed no further than the buffer takes, so a
// reader that stops reading stops the connection's reads too (the connection reads while
// the input is under read_chunk).
http_session::body_read http_session::poll_body() {
  if (body_ != body_state::streamed_reading) return {};
  for (;;) {
    body_read done{true, body_fault_, body_filled_};
    if (body_fault_ || body_filled_ > 0 || parser_->is_done()) {
      body_waited_ += clock::now() - body_wait_start_;  // the client's time ends here
      body_ = body_state::streamed;
      body_into_ = {};
      if (body_fault_) done.bytes = 0;
      return done;
    }
    if (input_.size() == 0) return {};
    boost::asio::mutable_buffer& sink = parser_->body_sink();
    sink = body_into_ + body_filled_;
    step s = parse_body();
    body_filled_ = body_into_.size() - sink.size();
    sink = {};
    if (s == step::need_more && body_filled_ == 0 && !body_fault_ && !parser_->is_done())
      return {};
  }
}

http_session::body_read http_session::fail_body_read(error_code ec) {
  if (body_ != body_state::streamed_reading) return {};
  if (!body_fault_) body_fault_ = ec;
  if (ec == boost::asio::error::timed_out) env_.counters.timeout(timeout_kind::body);
  return poll_body();
}

// --- a streamed response ----------------------------------------------------------------

boost::system::error_code http_session::write_chunk(std::string_view data) {
  if (exchange_ != exchange_state::deferred || response_ready_)
    return boost::asio::error::in_progress;
  if (writing_ == writing_state::head) start_stream();
  if (writing_ == writing_state::head_only) return exchange_error::body_not_allowed;
  if (data.empty()) return {};  // an empty chunk would end the body
  if (framing_.version >= 11) {
    char digits[16];
    auto r = std::to_chars(digits, digits + sizeof digits, data.size(), 16);
    output_.append(digits, r.ptr);
    output_ += "\r\n";
    output_ += data;
    output_ += "\r\n";
  } else {
    output_ += data;  // HTTP/1.0: the body ends where the connection does
  }
  return {};
}

void http_session::start_stream() {
  framing_.streamed = true;
  framing_.keep_alive = head_keeps_alive();
  framing_.date = env_.date.get();
  writing_ = append_response(response_, framing_, output_) ? writing_state::chunks
                                                           : writing_state::head_only;
}

void http_session::set_trailers(const http::fields& trailers) {
  trailers_.clear();
  for (const auto& f : trailers) {
    std::string_view name = f.name_string();
    std::string_view value = f.value();
    if (name.find_first_of(std::string_view("\r\n\0:", 4)) != std::string_view::npos ||
        value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos)
      continue;  // it could split the trailer section
    trailers_.append(name);
    trailers_ += ": ";
    trailers_.append(value);
    trailers_ += "\r\n";
  }
}

bool http_session::attach_file(file_payload& file) noexcept {
  if (!answering()) return false;
  attached_ = std::move(file);
  return true;
}

void http_session::expire() {
  // A handler's time is the handler's.
  if (exchange_ == exchange_state::idle || closing() || exchange_ == exchange_state::deferred)
    return;
  bool in_body = parser_ && parser_->is_header_done();
  env_.counters.timeout(in_body ? timeout_kind::body : timeout_kind::header);
  answer_error(http::status::request_timeout,
               in_body ? "the body stalled or arrived slower than the server's minimum rate"
                       : "the request header did not arrive in time");
}

void http_session::refuse(http::status status, std::string_view why) {
  exchange_ = exchange_state::reading;
  answer_error(status, why);
}

}  // namespace waypoint::beast::detail
