// One HTTP/2 stream as an exchange: RFC 9113 §8's request semantics, the same planner,
// limits and error answers as an HTTP/1.1 request, and the response's body as a source the
// connection's framing pulls from.
#include "h2_stream.hpp"

#include "h2_connection.hpp"
#include "response_writer.hpp"
#include "waypoint/beast/adapter.hpp"
#include "worker.hpp"

#include <boost/asio/post.hpp>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace waypoint::beast::detail {
namespace {

// RFC 9113 §8.2.3 splits a Cookie field into crumbs; an HTTP/1.1 application sees one.
constexpr std::string_view cookie_separator = "; ";

// RFC 7541 §4.1: a field's share of the header list size.
constexpr std::size_t field_overhead = 32;

}  // namespace

h2_stream::h2_stream(h2_connection& connection, std::int32_t id)
    : connection_(connection),
      id_(id),
      header_deadline_(clock::now() + connection.owner().options().header_timeout) {}

h2_stream::~h2_stream() = default;

// --- the request ---------------------------------------------------------------------

void h2_stream::add_field(std::string_view name, std::string_view value) {
  header_bytes_ += name.size() + value.size() + field_overhead;
  if (header_bytes_ > connection_.owner().options().max_header_bytes) {
    over_header_limit_ = true;  // nothing more is kept: 431 (or, in trailers, header_limit)
    if (in_trailers_ && !fault_) fault_ = http::error::header_limit;
    return;
  }
  if (in_trailers_) {
    // A trailer of a body read whole joins the request's fields, as over HTTP/1.1; one
    // that would say where the request goes is refused there too.
    if (name == "host") {
      bad_request_ = true;
      bad_reason_ = "the trailer section carries Host, which only the header section may";
      if (!fault_) fault_ = http::error::bad_field;
    } else if (!streamed_) {
      req_.insert(name, value);
    }
    return;
  }
  if (name == ":method") return req_.method_string(value);
  if (name == ":path") return req_.target(value);
  if (name == ":authority") {
    authority_.assign(value);
    return;
  }
  if (name.starts_with(':')) return;  // :scheme, :protocol
  if (name == "cookie") {
    if (!cookie_.empty()) cookie_ += cookie_separator;
    cookie_ += value;
    return;
  }
  req_.insert(name, value);
}

void h2_stream::header_done(bool end_stream) {
  if (state_ != state::headers) return;
  in_trailers_ = true;
  header_bytes_ = 0;  // the trailer section has the same budget
  const server_options& o = connection_.owner().options();
  req_.version(20);
  if (over_header_limit_)
    return answer_error(http::status::request_header_fields_too_large,
                        "the header block is larger than the server accepts");
  if (req_.target().size() > o.max_target_bytes)
    return answer_error(http::status::uri_too_long,
                        "the request target is longer than the server accepts");
  // RFC 9113 §8.3.1: :authority is the Host an HTTP/1.1 router matches; a Host that names
  // another is malformed.
  if (!authority_.empty()) {
    auto host = req_.find(http::field::host);
    if (host != req_.end() && host->value() != authority_)
      return answer_error(http::status::bad_request,
                          "the Host field names another authority than :authority");
    req_.set(http::field::host, authority_);
  }
  if (!cookie_.empty()) req_.set(http::field::cookie, cookie_);
  if (end_stream) {
    request_complete_ = true;
    return dispatch();
  }
  body_plan plan{o.max_body_bytes, false};
  if (o.plan_body) {
    try {
      plan = o.plan_body(req_);
    } catch (...) {
      plan = {o.max_body_bytes, false};  // a planner that fails plans nothing
    }
  }
  planned_ = std::move(plan.planned);
  max_body_ = plan.max_bytes;
  auto length = req_.find(http::field::content_length);
  std::uint64_t declared = 0;
  if (length != req_.end()) {
    std::string_view v = length->value();
    std::from_chars(v.data(), v.data() + v.size(), declared);
  }
  if (declared > max_body_)
    return answer_error(http::status::payload_too_large,
                        "the body is larger than the server accepts");
  body_deadline_ = clock::now() + o.body_timeout;
  if (plan.streamed) {
    streamed_ = true;
    return dispatch();
  }
  state_ = state::body;
}

std::size_t h2_stream::body_data(const std::uint8_t* data, std::size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  body_bytes_ += size;
  body_deadline_ = clock::now() + connection_.owner().options().body_timeout;
  if (state_ == state::body) {
    if (body_bytes_ > max_body_) {
      answer_error(http::status::payload_too_large, "the body is larger than the server accepts");
      return size;
    }
    req_.body().append(bytes, size);
    return size;
  }
  if (!streamed_ || !holds_deferred() || closed_ || fault_) return size;  // nobody reads it
  if (body_bytes_ > max_body_) {
    fault_ = http::error::body_limit;  // the handler's next read says so (it answers 413)
    deliver_body();
    return size;
  }
  unread_buffer_.append(bytes, size);
  unread_ += size;
  deliver_body();
  return 0;  // credited as the handler reads it
}

void h2_stream::request_done() {
  request_complete_ = true;
  body_deadline_ = clock::time_point::max();
  if (state_ == state::body && over_header_limit_)
    return answer_error(http::status::request_header_fields_too_large,
                        "the trailer section is larger than the server accepts");
  if (bad_request_ && state_ == state::body)
    return answer_error(http::status::bad_request, bad_reason_);
  if (state_ == state::body) return dispatch();
  if (streamed_) deliver_body();  // its end, or fault_
}

bool h2_stream::on_deadline(clock::time_point now) noexcept {
  if (state_ == state::headers && now >= header_deadline_) {
    connection_.owner().counters().timeout(timeout_kind::header);
    return false;
  }
  if (now < body_deadline_ || request_complete_) return true;
  body_deadline_ = clock::time_point::max();
  if (state_ == state::body) {
    connection_.owner().counters().timeout(timeout_kind::body);
    answer_error(http::status::request_timeout, "the request body did not arrive in time");
  } else if (read_done_) {
    connection_.owner().counters().timeout(timeout_kind::body);
    fail_read(asio::error::timed_out);
  }
  return true;
}

// --- the dispatch --------------------------------------------------------------------

void h2_stream::dispatch() {
  const session_environment& env = connection_.owner().environment();
  state_ = state::dispatching;
  res_ = response(http::status::ok, req_.version());
  exchange x(*this, req_, res_, &planned_);
  try {
    env.dispatch(x);
  } catch (...) {
    if (!x.deferred()) {
      res_ = response(http::status::internal_server_error, req_.version());
      res_.body() = "Internal Server Error: the handler failed\n";
      file_.reset();
    }
  }
  planned_.reset();
  if (x.deferred() && !ready_) {
    state_ = state::deferred;
    return;
  }
  if (!x.deferred()) {
    // Answered in the call: a body read or chunk it started has no exchange left to serve.
    fail_read(asio::error::operation_aborted);
    release_chunk(asio::error::operation_aborted);
  }
  respond();
}

// A request the server answers itself, as over HTTP/1.1 (answer_error there); the stream
// stays, the connection goes on.
void h2_stream::answer_error(http::status status, std::string_view why) {
  const session_environment& env = connection_.owner().environment();
  env.counters.error(static_cast<unsigned>(status));
  planned_.reset();
  file_.reset();
  res_ = response(status, 20);
  try {
    env.render_error(status, why, res_);
  } catch (...) {
    res_ = response(status, 20);
    write_plain_error(status, why, res_);
  }
  respond();
}

// Always by a posted step, but during the dispatch call: a handler may send from inside a
// cancellation this stream emitted, while the connection walks its streams.
void h2_stream::deferred_done() noexcept {
  asio::io_context& context = connection_.owner().context();
  if (context.get_executor().running_in_this_thread() && state_ == state::dispatching) {
    ready_ = true;  // dispatch() responds once the call returns
    return;
  }
  asio::post(context, [this] { on_deferred_done(); });
}

void h2_stream::on_deferred_done() noexcept {
  if (state_ == state::dispatching) {
    ready_ = true;
    return;
  }
  if (state_ != state::deferred) return;
  if (closed_) {
    state_ = state::finished;
    return connection_.forget(*this);  // deletes *this
  }
  respond();
}

// The response is complete (or, streamed, its end has come): its head goes to the
// framing, or its end to the body source.
void h2_stream::respond() {
  state_ = state::responding;
  auto& answered = connection_.owner().environment().requests_answered;
  answered.store(answered.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (closed_) return;  // reset meanwhile: nothing to send
  if (!request_complete_) {
    // Answered before the body ended: what is buffered is not wanted, and its window goes
    // back to the client (the stream is reset once the response is out).
    connection_.consume(*this, unread_);
    unread_buffer_.clear();
    unread_ = 0;
    fault_ = asio::error::operation_aborted;
    fail_read(fault_);
  }
  if (streaming_) {
    ended_ = true;
    if (aborted_) return connection_.reset(*this, 2 /* INTERNAL_ERROR */);
    return connection_.resume(*this);
  }
  if (!valid_fields(res_)) {
    res_ = response(http::status::internal_server_error, 20);
    res_.body() = "Internal Server Error: the handler set an invalid header field\n";
    file_.reset();
  }
  unsigned status = res_.result_int();
  head_only_ = req_.method() == http::verb::head || !carries_content(status);
  // A layer that wrote a body after the file was attached (an error page) replaced it.
  if (file_ && res_.body().empty()) {
    source_ = source::file;
    res_.content_length(file_.length());
  } else {
    file_.reset();
    bool keep_head_length = req_.method() == http::verb::head && res_.body().empty() &&
                            res_.find(http::field::content_length) != res_.end();
    if (!keep_head_length) res_.content_length(res_.body().size());
  }
  if (!carries_content(status)) res_.erase(http::field::content_length);
  connection_.submit_response(*this);
}

std::string_view h2_stream::date() const { return connection_.owner().environment().date.get(); }

// --- the response's body, pulled by the framing ---------------------------------------

h2_body_piece h2_stream::next_piece(std::uint8_t* into, std::size_t size) {
  switch (source_) {
    case source::string: {
      std::string_view body(res_.body());
      std::size_t n = std::min(size, body.size() - sent_);
      std::memcpy(into, body.data() + sent_, n);
      sent_ += n;
      return {n, false, sent_ == body.size(), false};
    }
    case source::file: {
      std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size, file_.length()));
      if (want == 0) return {0, false, true, false};
      ssize_t n = ::pread(file_.fd(), into, want, static_cast<off_t>(file_.offset()));
      if (n <= 0) return {0, false, false, true};  // the file shrank or failed: reset
      file_.advance(static_cast<std::uint64_t>(n));
      return {static_cast<std::size_t>(n), false, file_.length() == 0, false};
    }
    case source::chunks: {
      if (aborted_) return {0, false, false, true};
      if (chunk_.empty()) return {0, !ended_, ended_, false};
      std::size_t n = std::min(size, chunk_.size());
      std::memcpy(into, chunk_.data(), n);
      chunk_.remove_prefix(n);
      if (chunk_.empty()) {
        // The writer hears back once these bytes are with the kernel.
        connection_.after_write([c = &connection_, id = id_] {
          if (h2_stream* s = c->find(id)) s->release_chunk({});
        });
      }
      return {n, false, false, false};
    }
  }
  return {0, false, true, false};
}

// --- exchange_host -------------------------------------------------------------------

asio::any_io_executor h2_stream::executor() { return connection_.executor(); }

const connection_endpoints& h2_stream::endpoints() { return connection_.endpoints(); }

resource_permit h2_stream::acquire_descriptor() noexcept {
  return connection_.owner().descriptors().try_acquire(1);
}

bool h2_stream::attach_file(file_payload& file) noexcept {
  if (!holds_deferred() || streaming_) return false;
  file_ = std::move(file);
  return true;
}

void h2_stream::read_body(boost::asio::mutable_buffer into, body_read_handler done) {
  if (!streamed_ || !holds_deferred() || read_done_ || into.size() == 0) {
    asio::post(executor(), [done = std::move(done)] { done(asio::error::invalid_argument, 0); });
    return;
  }
  read_into_ = into;
  read_done_ = std::move(done);
  deliver_body();
}

// A pending read gets what has arrived, the body's end, or its fault.
void h2_stream::deliver_body() {
  if (!read_done_) return;
  if (fault_) return fail_read(fault_);
  if (closed_ && unread_buffer_.empty() && !request_complete_)
    return fail_read(asio::error::connection_aborted);
  std::size_t n = std::min(read_into_.size(), unread_buffer_.size());
  if (n == 0 && !request_complete_) {
    // Waits for DATA: the client has body_timeout from now, however long the handler took
    // to ask (its window may have been full meanwhile).
    // (the last DATA's deadline is never later than this).
    body_deadline_ = clock::now() + connection_.owner().options().body_timeout;
    return;
  }
  std::memcpy(read_into_.data(), unread_buffer_.data(), n);
  unread_buffer_.erase(0, n);
  unread_ -= n;
  if (!closed_) connection_.consume(*this, n);
  body_read_handler done = std::move(read_done_);
  read_done_ = nullptr;
  asio::post(executor(), [done = std::move(done), n] { done({}, n); });
}

void h2_stream::fail_read(boost::system::error_code ec) {
  if (!read_done_) return;
  body_read_handler done = std::move(read_done_);
  read_done_ = nullptr;
  asio::post(executor(), [done = std::move(done), ec] { done(ec, 0); });
}

void h2_stream::write_chunk(std::string_view data, chunk_write_handler done) {
  auto fail = [&](boost::system::error_code ec) {
    asio::post(executor(), [done = std::move(done), ec] { done(ec); });
  };
  if (!holds_deferred() || closed_ || chunk_done_) return fail(asio::error::connection_aborted);
  if (stopping_) return fail(exchange_error::server_stopping);
  if (!streaming_) {
    streaming_ = true;
    source_ = source::chunks;
    file_.reset();
    head_only_ = req_.method() == http::verb::head || !carries_content(res_.result_int());
    res_.erase(http::field::content_length);
    if (!valid_fields(res_)) {
      res_ = response(http::status::internal_server_error, 20);
      head_only_ = true;
      aborted_ = true;
    }
    if (!connection_.submit_response(*this)) return fail(asio::error::connection_aborted);
    // A stream whose head goes out during the drain is told to end as the others were.
    if (connection_.stopping())
      asio::post(executor(), [c = &connection_, id = id_] {
        if (h2_stream* s = c->find(id)) s->drain();
      });
  }
  if (head_only_) return fail(exchange_error::body_not_allowed);
  if (data.empty()) return fail({});
  chunk_ = data;
  chunk_done_ = std::move(done);
  connection_.resume(*this);
}

void h2_stream::release_chunk(boost::system::error_code ec) {
  if (!chunk_done_) return;
  chunk_ = {};
  chunk_write_handler done = std::move(chunk_done_);
  chunk_done_ = nullptr;
  asio::post(executor(), [done = std::move(done), ec] { done(ec); });
}

void h2_stream::set_trailers(const http::fields& trailers) {
  trailers_.clear();
  for (const auto& f : trailers)
    if (!holds_line_break(f.name_string()) && !holds_line_break(f.value()) &&
        !f.name_string().starts_with(':') && !connection_specific(f.name()))
      trailers_.insert(f.name_string(), f.value());
}

bool h2_stream::body_pending() const noexcept {
  if (state_ != state::responding || head_only_) return false;
  switch (source_) {
    case source::string:
      return sent_ < res_.body().size();
    case source::file:
      return file_.length() > 0;
    case source::chunks:
      return !chunk_.empty();
  }
  return false;
}

void h2_stream::abort_response() noexcept {
  if (streaming_) aborted_ = true;
}

// --- the stream's end ----------------------------------------------------------------

bool h2_stream::closed() noexcept {
  closed_ = true;
  cut();
  return !holds_deferred();
}

void h2_stream::cut() noexcept {
  closed_ = true;  // the connection is gone: nothing more goes out or comes in
  if (holds_deferred() && !cancelled_) {
    cancelled_ = true;
    cancel_.emit(asio::cancellation_type::terminal);
  }
  fail_read(asio::error::connection_aborted);
  release_chunk(asio::error::connection_aborted);
}

void h2_stream::drain() noexcept {
  if (!streaming_ || ended_ || stopping_) return;
  stopping_ = true;
  if (!cancelled_) {
    cancelled_ = true;
    cancel_.emit(asio::cancellation_type::terminal);
  }
}

}  // namespace waypoint::beast::detail
