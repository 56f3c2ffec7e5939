// Server-sent events: the wire format, and a wait that keeps the connection alive.
#include "waypoint/app/content/event_stream.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace waypoint::app {

namespace asio = boost::asio;

namespace {

void append_field(std::string& out, std::string_view name, std::string_view value) {
  if (value.find_first_of("\r\n") != std::string_view::npos)
    throw std::invalid_argument("waypoint::app: a server-sent event's " + std::string(name) +
                                " holds a line break");
  out.append(name);
  out += ": ";
  out.append(value);
  out += '\n';
}

// Every line of `data` (split at CRLF, LF or CR, as the client splits) as a data: line.
void append_data(std::string& out, std::string_view data) {
  for (;;) {
    std::size_t end = data.find_first_of("\r\n");
    out += "data: ";
    out.append(data.substr(0, end));
    out += '\n';
    if (end == std::string_view::npos) return;
    std::size_t next = end + 1;
    if (data[end] == '\r' && next < data.size() && data[next] == '\n') ++next;
    data.remove_prefix(next);
  }
}

// Whether the server has cancelled the handler's coroutine (open() made that a state to
// look at rather than an exception).
awaitable<bool> cancelled() {
  asio::cancellation_type type = (co_await asio::this_coro::cancellation_state).cancelled();
  co_return type != asio::cancellation_type::none;
}

}  // namespace

awaitable<event_stream> event_stream::open(context& ctx, event_stream_options options) {
  if (options.heartbeat <= std::chrono::milliseconds::zero())
    throw std::invalid_argument("waypoint::app: an event stream's heartbeat must be positive");
  response_builder& res = ctx.response();
  res.status(200);
  res.header(http::field::content_type, "text/event-stream");
  res.header(http::field::cache_control, "no-cache");
  res.header("X-Accel-Buffering", "no");
  event_stream stream(ctx, options);
  // The server's cancellation (the client gone, or the drain telling the stream to end) is
  // seen by send() and wait() returning false, not thrown from whichever co_await comes
  // next: thrown, it would fail the handler, and a drain would then cut the stream without
  // its last chunk, depending only on whether it came during a write or a wait.
  co_await asio::this_coro::throw_if_cancelled(false);
  co_await stream.comment("stream open");  // false already says the client left
  co_return stream;
}

awaitable<bool> event_stream::send(const server_event& e) {
  std::string text;
  text.reserve(e.data.size() + e.event.size() + e.id.size() + 32);
  if (!e.event.empty()) append_field(text, "event", e.event);
  if (!e.id.empty()) append_field(text, "id", e.id);
  if (e.retry) append_field(text, "retry", std::to_string(e.retry->count()));
  append_data(text, e.data);
  text += '\n';
  co_return co_await write(text);
}

awaitable<bool> event_stream::comment(std::string_view text) {
  std::string line = ":";
  if (!text.empty()) {
    line += ' ';
    line.append(text.substr(0, text.find_first_of("\r\n")));
  }
  line += "\n\n";
  co_return co_await write(line);
}

// The write fails when the client has gone: write_chunk's error, or, once the connection's
// close has cancelled the handler's coroutine, Asio's operation_aborted.
awaitable<bool> event_stream::write(std::string_view text) {
  if (!connected_) co_return false;
  // Awaited into a variable: GCC 12 compiled `if (co_await cancelled()) co_return ...;` to
  // an illegal instruction (cancelled() completes without suspending; /tmp-sized repro in
  // the commit message).
  bool ended = co_await cancelled();
  if (ended) co_return connected_ = false;
  try {
    co_await ctx_->write_chunk(text);
  } catch (...) {
    connected_ = false;
  }
  co_return connected_;
}

// The connection's close cancels the handler's coroutine (its cancellation slot is the
// connection's), which ends the timer's wait at once; a client whose connection is still
// open but who reads nothing is found by the heartbeat's write timing out.
awaitable<bool> event_stream::wait(std::chrono::milliseconds duration) {
  using clock = std::chrono::steady_clock;
  clock::time_point end = clock::now() + duration;
  try {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    while (connected_) {
      bool ended = co_await cancelled();
      if (ended) break;
      clock::time_point now = clock::now();
      if (now >= end) co_return true;
      clock::time_point beat = now + options_.heartbeat;
      timer.expires_at(std::min(end, beat));
      auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      if (ec) break;
      if (beat <= end && !co_await comment({})) break;
    }
  } catch (...) {
    // A write that failed, or a wait cut by the connection's close.
  }
  connected_ = false;
  co_return false;
}

}  // namespace waypoint::app
