// The server behind server.hpp, the one translation unit that compiles Asio.
//
// Threads: one control thread owns the listeners (unless reuse_port) and the signal set;
// every worker thread runs its own io_context and owns the connections handed to it, so a
// connection's state is touched by one thread only and needs no strand or lock.
//
// A connection reads into a flat buffer, feeds Beast's parser directly (no composed read,
// so requests already buffered are answered without another read: pipelining), serializes
// responses into one output string and writes them in one go, synchronously when the
// socket takes it all (an asynchronous write only for what does not fit). Timeouts cost no
// timer per read: each connection keeps one deadline, moved at phase changes (waiting for a
// request, reading one, writing), and a sweep timer per worker closes the connections past
// theirs.
#include "waypoint/beast/server.hpp"

#include <waypoint/pattern.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/rfc7230.hpp>

#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace waypoint::beast {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using clock = std::chrono::steady_clock;
using executor = asio::io_context::executor_type;
using socket_type = asio::basic_stream_socket<tcp, executor>;
using acceptor_type = asio::basic_socket_acceptor<tcp, executor>;
using timer_type = asio::basic_waitable_timer<clock, asio::wait_traits<clock>, executor>;
using request_parser = http::request_parser<http::string_body>;

// Bytes asked of one read. Large enough for a burst of pipelined requests (wrk's are ~100
// bytes each); the buffer only grows past it for a request larger than this.
constexpr std::size_t read_chunk = 16 * 1024;

// Responses are batched while pipelined requests are buffered; past this many bytes the
// batch is written before parsing on, which bounds a connection's output memory.
constexpr std::size_t flush_threshold = 64 * 1024;

// After a response that closes the connection, its unread input is drained this long at
// most, so closing does not reset the connection (an RST can destroy the response in the
// client's receive buffer before it is read).
constexpr std::chrono::milliseconds linger_timeout{1000};

// The sweep runs at a quarter of the shortest timeout, so a connection outlives its
// deadline by at most 25%, but never more often than every 10 ms nor less than once a second.
constexpr std::chrono::milliseconds min_sweep_interval{10};
constexpr std::chrono::milliseconds max_sweep_interval{1000};

// Whether the current thread is one of a server's; stop() must not wait for itself.
thread_local bool on_server_thread = false;

struct reuse_port_option {
  int value;
  template <class Protocol>
  int level(const Protocol&) const {
    return SOL_SOCKET;
  }
  template <class Protocol>
  int name(const Protocol&) const {
    return SO_REUSEPORT;
  }
  template <class Protocol>
  const int* data(const Protocol&) const {
    return &value;
  }
  template <class Protocol>
  std::size_t size(const Protocol&) const {
    return sizeof(value);
  }
};

std::chrono::milliseconds sweep_interval(const server_options& o) {
  auto shortest = std::min({o.idle_timeout, o.read_timeout, o.write_timeout});
  return std::clamp(shortest / 4, min_sweep_interval, max_sweep_interval);
}

// The IMF-fixdate for the Date field, recomputed when the second changes.
class date_cache {
 public:
  std::string_view get() noexcept {
    timespec now{};
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (now.tv_sec != second_) format(now.tv_sec);
    return {text_, length_};
  }

 private:
  void format(time_t second) noexcept {
    tm parts{};
    gmtime_r(&second, &parts);
    length_ = std::strftime(text_, sizeof text_, "%a, %d %b %Y %H:%M:%S GMT", &parts);
    second_ = second;
  }

  time_t second_ = -1;
  char text_[40] = {};
  std::size_t length_ = 0;
};

bool holds_line_break(std::string_view s) noexcept {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// The request line of a request whose header is not complete yet: its target is longer
// than `limit` when more than `limit` bytes follow the method without a space or line end.
bool target_too_long(std::string_view buffered, std::size_t limit) noexcept {
  std::size_t space = buffered.find(' ');
  if (space == std::string_view::npos) return false;
  std::string_view rest = buffered.substr(space + 1);
  std::size_t end = rest.find_first_of(" \r\n");
  return (end == std::string_view::npos ? rest.size() : end) > limit;
}

// A request line whose method holds a byte no token may hold is not HTTP: answer it now
// rather than wait for a header end that may never come (a TLS handshake, for one).
bool method_is_garbage(std::string_view buffered) noexcept {
  for (char c : buffered) {
    if (c == ' ') return false;
    if (!waypoint::detail::is_token_byte(c)) return true;
  }
  return false;
}

void append_number(std::string& out, std::uint64_t n) {
  char digits[24];
  auto r = std::to_chars(digits, digits + sizeof digits, n);
  out.append(digits, r.ptr);
}

class worker;

// One accepted socket and the requests on it. Exactly one asynchronous operation is
// pending at any time (a read, a write or a lingering read), so whoever closes the socket
// knows that the operation's completion will destroy the connection.
class connection {
 public:
  connection(worker& owner, socket_type socket);
  void start(std::list<connection>::iterator self);

  // For the worker's sweep and shutdown, on the connection's thread.
  void close_if_expired(clock::time_point now) noexcept;
  void close_if_idle() noexcept;
  void close() noexcept;

 private:
  enum class phase : std::uint8_t { idle, reading, writing, lingering };
  enum class step : std::uint8_t { need_more, progress };

  void do_read();
  void on_read(error_code ec, std::size_t n);
  void process();
  step parse_step();
  void begin_request();
  bool answer_framing(const request& req);
  bool answer_expectation(const request& req);
  void answer_request();
  void answer_error(http::status status, std::string_view why);
  void serialize(const response& res, unsigned version, bool head, bool keep_alive);
  bool write_head(const response& res, unsigned version, bool head, bool keep_alive);
  bool write_now();
  void do_write();
  void on_write(error_code ec);
  void do_linger();
  void on_linger(error_code ec);
  void destroy() noexcept;

  worker& owner_;
  socket_type socket_;
  std::list<connection>::iterator self_;
  boost::beast::flat_buffer input_;
  std::string output_;                    // serialized responses not yet written
  std::optional<request_parser> parser_;  // engaged while a request is being read
  response response_;                     // reused: keeps its body's capacity
  clock::time_point deadline_;
  clock::time_point request_deadline_;  // deadline_ while a request is being read
  phase phase_ = phase::idle;
  bool in_request_ = false;      // bytes of the next request have arrived
  bool continue_sent_ = false;   // "100 Continue" already sent for this request
  bool header_checked_ = false;  // the framing of this request's header was checked
  bool close_after_write_ = false;
};

// A thread, its io_context and the connections it owns.
class worker {
 public:
  worker(const server_options& options, const dispatch_function& dispatch,
         const std::atomic<bool>& stop_requested)
      : options_(options),
        dispatch_(dispatch),
        stop_requested_(stop_requested),
        sweep_(context_),
        sweep_every_(sweep_interval(options)) {}

  asio::io_context& context() noexcept { return context_; }
  const server_options& options() const noexcept { return options_; }
  const dispatch_function& dispatch() const noexcept { return dispatch_; }
  bool stopping() const noexcept { return stopping_; }
  // Set by stop() on any thread, before this worker hears of it: a response finished in
  // between already says `Connection: close`.
  bool stop_requested() const noexcept { return stop_requested_.load(std::memory_order_relaxed); }
  std::string_view date() noexcept { return date_.get(); }

  void run() {
    on_server_thread = true;
    arm_sweep();
    for (;;) {
      try {
        context_.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "waypoint: server thread: %s\n", e.what());
      }
    }
  }

  // On this worker's thread.
  void adopt(socket_type socket) {
    if (stopping_) return;  // the socket closes as it goes out of scope
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    socket.non_blocking(true, ignored);  // write_now() must never block the thread
    connections_.emplace_front(*this, std::move(socket));
    bump(connections_accepted_);
    connections_.front().start(connections_.begin());
  }

  void begin_shutdown() {
    stopping_ = true;
    drain_deadline_ = clock::now() + options_.drain_timeout;
    for (connection& c : connections_) c.close_if_idle();
    finish_if_drained();
  }

  void remove(std::list<connection>::iterator it) noexcept {
    connections_.erase(it);
    finish_if_drained();
  }
  void count_request() noexcept { bump(requests_); }

  server_stats stats() const noexcept {
    return {connections_accepted_.load(std::memory_order_relaxed),
            requests_.load(std::memory_order_relaxed)};
  }

 private:
  // Single writer: a plain load and store, no locked instruction on the request path.
  static void bump(std::atomic<std::uint64_t>& counter) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  // The sweep timer is the worker's last work: cancelling it lets run() return.
  void finish_if_drained() noexcept {
    if (stopping_ && connections_.empty()) sweep_.cancel();
  }

  void arm_sweep() {
    sweep_.expires_after(sweep_every_);
    sweep_.async_wait([this](error_code ec) {
      if (!ec) sweep();
    });
  }

  // Closes the connections past their deadline (all of them once a drain has run out).
  // Once stopping and empty, it stops re-arming, and with no work left run() returns.
  void sweep() {
    auto now = clock::now();
    bool drained = stopping_ && now >= drain_deadline_;
    for (connection& c : connections_) {
      if (drained) {
        c.close();
      } else {
        c.close_if_expired(now);
      }
    }
    if (stopping_ && connections_.empty()) return;
    arm_sweep();
  }

  const server_options& options_;
  const dispatch_function& dispatch_;
  const std::atomic<bool>& stop_requested_;
  asio::io_context context_{1};
  timer_type sweep_;
  std::chrono::milliseconds sweep_every_;
  std::list<connection> connections_;
  date_cache date_;
  bool stopping_ = false;
  clock::time_point drain_deadline_;
  std::atomic<std::uint64_t> connections_accepted_{0};
  std::atomic<std::uint64_t> requests_{0};
};

connection::connection(worker& owner, socket_type socket)
    : owner_(owner), socket_(std::move(socket)) {}

void connection::start(std::list<connection>::iterator self) {
  self_ = self;
  do_read();
}

void connection::close() noexcept {
  error_code ignored;
  socket_.close(ignored);
}

void connection::close_if_expired(clock::time_point now) noexcept {
  if (now >= deadline_) close();
}

void connection::close_if_idle() noexcept {
  if (phase_ == phase::idle) close();
}

// The completion of the pending operation, after the socket closed, lands here.
void connection::destroy() noexcept {
  close();
  owner_.remove(self_);  // deletes *this: nothing may follow
}

void connection::do_read() {
  if (!in_request_ && owner_.stopping()) return destroy();
  phase_ = in_request_ ? phase::reading : phase::idle;
  deadline_ = in_request_ ? request_deadline_ : clock::now() + owner_.options().idle_timeout;
  socket_.async_read_some(input_.prepare(read_chunk),
                          [this](error_code ec, std::size_t n) { on_read(ec, n); });
}

void connection::on_read(error_code ec, std::size_t n) {
  if (ec) return destroy();  // end of stream, reset, or closed by the sweep
  input_.commit(n);
  try {
    process();
  } catch (const std::exception&) {
    destroy();
  }
}

// Answers every complete request in the input, then writes the answers or reads more.
void connection::process() {
  for (;;) {
    while (!close_after_write_ && output_.size() < flush_threshold) {
      if (parse_step() == step::need_more) break;
    }
    if (output_.empty()) break;
    if (!write_now()) return;  // an asynchronous write continues, or the connection is gone
  }
  if (close_after_write_) return do_linger();
  do_read();
}

void connection::begin_request() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(owner_.options().max_header_bytes));
  parser_->body_limit(owner_.options().max_body_bytes);
  parser_->eager(true);
  continue_sent_ = false;
  header_checked_ = false;
}

// RFC 9112 section 2.2: empty lines before a request line are to be ignored (some clients
// send CRLF after a body). Only before the parser has taken any byte of the request.
void skip_empty_lines(boost::beast::flat_buffer& input) {
  auto data = input.data();
  const char* bytes = static_cast<const char*>(data.data());
  std::size_t n = 0;
  while (n < data.size() && (bytes[n] == '\r' || bytes[n] == '\n')) ++n;
  input.consume(n);
}

connection::step connection::parse_step() {
  auto data = input_.data();
  if (data.size() == 0) return step::need_more;
  if (!in_request_) {
    in_request_ = true;
    request_deadline_ = clock::now() + owner_.options().read_timeout;
  }
  if (!parser_) begin_request();
  if (!parser_->got_some()) {
    skip_empty_lines(input_);
    data = input_.data();
    if (data.size() == 0) return step::need_more;
  }
  const auto& limits = owner_.options();
  std::string_view buffered(static_cast<const char*>(data.data()), data.size());
  if (!parser_->is_header_done() && buffered.size() > limits.max_target_bytes &&
      target_too_long(buffered, limits.max_target_bytes)) {
    answer_error(http::status::uri_too_long,
                 "the request target is longer than the server accepts");
    return step::progress;
  }
  error_code ec;
  std::size_t used = parser_->put(data, ec);
  input_.consume(used);
  if (ec && ec != http::error::need_more) {
    if (ec == http::error::header_limit) {
      answer_error(http::status::request_header_fields_too_large,
                   "the header block is larger than the server accepts");
    } else if (ec == http::error::body_limit) {
      answer_error(http::status::payload_too_large, "the body is larger than the server accepts");
    } else {
      answer_error(http::status::bad_request, "the request is not valid HTTP/1.1");
    }
    return step::progress;
  }
  if (parser_->is_header_done() && !header_checked_) {
    header_checked_ = true;
    if (!answer_framing(parser_->get())) return step::progress;
  }
  if (parser_->is_done()) {
    answer_request();
    return step::progress;
  }
  if (!parser_->is_header_done() && method_is_garbage(buffered)) {
    answer_error(http::status::bad_request, "the request is not HTTP");
    return step::progress;
  }
  if (parser_->is_header_done() && !answer_expectation(parser_->get())) return step::progress;
  return step::need_more;
}

// RFC 9112 section 6.3: a request whose Transfer-Encoding does not end in chunked has no
// knowable length; guessing one would let the rest of it pass as the next request. Beast
// reads such a body as empty, so refuse it here. Returns false when it answered.
bool connection::answer_framing(const request& req) {
  if (req.find(http::field::transfer_encoding) == req.end() || parser_->chunked()) return true;
  answer_error(http::status::bad_request, "the Transfer-Encoding does not end in chunked");
  return false;
}

// A header is in and its body is not: honour `Expect`. Returns false when it answered.
bool connection::answer_expectation(const request& req) {
  auto expect = req.find(http::field::expect);
  if (expect == req.end() || continue_sent_) return true;
  if (!boost::beast::iequals(expect->value(), "100-continue")) {
    answer_error(http::status::expectation_failed, "the only expectation served is 100-continue");
    return false;
  }
  if (req.version() >= 11) output_ += "HTTP/1.1 100 Continue\r\n\r\n";
  continue_sent_ = true;
  return true;
}

void connection::answer_request() {
  const request& req = parser_->get();
  bool head = req.method() == http::verb::head;
  bool keep_alive = req.keep_alive();
  response_.base() = response::header_type();
  response_.body().clear();
  response_.version(req.version());
  try {
    owner_.dispatch()(req, response_);
  } catch (...) {
    response_.base() = response::header_type();
    response_.result(http::status::internal_server_error);
    response_.body() = "Internal Server Error: the handler failed\n";
  }
  if (owner_.stop_requested() ||
      http::token_list(response_[http::field::connection]).exists("close"))
    keep_alive = false;
  serialize(response_, req.version(), head, keep_alive);
  owner_.count_request();
  parser_.reset();
  in_request_ = false;
  if (!keep_alive) close_after_write_ = true;
}

// Answers a request that could not be read; the connection closes after it, since where
// the next request would start is unknown.
void connection::answer_error(http::status status, std::string_view why) {
  response_.base() = response::header_type();
  response_.result(status);
  response_.set(http::field::content_type, "text/plain; charset=utf-8");
  std::string& body = response_.body();
  body.assign(http::obsolete_reason(status));
  body += ": ";
  body.append(why);
  body += '\n';
  serialize(response_, 11, false, false);
  owner_.count_request();
  parser_.reset();
  input_.clear();
  in_request_ = false;
  close_after_write_ = true;
}

void connection::serialize(const response& res, unsigned version, bool head, bool keep_alive) {
  std::size_t mark = output_.size();
  if (write_head(res, version, head, keep_alive)) return;
  // A field that could split the header is a handler bug; answer 500 rather than send it.
  output_.resize(mark);
  response fallback{http::status::internal_server_error, version};
  fallback.body() = "Internal Server Error: the handler set an invalid header field\n";
  write_head(fallback, version, head, keep_alive);
}

// Appends the status line, the fields, the server's own fields and the body. Returns false
// (having written a partial head) when a field or the reason holds CR, LF or NUL.
bool connection::write_head(const response& res, unsigned version, bool head, bool keep_alive) {
  unsigned status = res.result_int();
  output_ += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  append_number(output_, status);
  output_ += ' ';
  std::string_view reason = res.reason();
  if (holds_line_break(reason)) return false;
  output_.append(reason);
  output_ += "\r\n";
  std::string_view head_length;
  for (const auto& f : res) {
    switch (f.name()) {
      case http::field::content_length:
        head_length = f.value();
        continue;
      case http::field::transfer_encoding:
      case http::field::connection:
      case http::field::date:
        continue;
      default:
        break;
    }
    if (holds_line_break(f.name_string()) || holds_line_break(f.value())) return false;
    output_.append(f.name_string());
    output_ += ": ";
    output_.append(f.value());
    output_ += "\r\n";
  }
  output_ += "Date: ";
  output_.append(owner_.date());
  output_ += "\r\n";
  if (!keep_alive) {
    output_ += "Connection: close\r\n";
  } else if (version == 10) {
    output_ += "Connection: keep-alive\r\n";
  }
  bool may_have_body = status >= 200 && status != 204 && status != 304;
  const std::string& body = res.body();
  if (may_have_body) {
    output_ += "Content-Length: ";
    // HEAD: a length the handler set for the GET body it did not produce is the truth.
    bool keep_given = head && body.empty() && !head_length.empty() &&
                      head_length.find_first_not_of("0123456789") == std::string_view::npos;
    if (keep_given) {
      output_.append(head_length);
    } else {
      append_number(output_, body.size());
    }
    output_ += "\r\n";
  }
  output_ += "\r\n";
  if (may_have_body && !head) output_ += body;
  return true;
}

// Writes the batch at once when the socket takes it all, the usual case for responses
// that fit in the send buffer: no completion to post and no trip through the reactor.
// Returns true when output_ is written; false when an asynchronous write of the rest was
// started or the connection was destroyed (then `this` is gone).
bool connection::write_now() {
  error_code ec;
  std::size_t n = socket_.write_some(asio::buffer(output_), ec);
  if (!ec && n == output_.size()) {
    output_.clear();
    return true;
  }
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
    destroy();
    return false;
  }
  output_.erase(0, n);
  do_write();
  return false;
}

void connection::do_write() {
  phase_ = phase::writing;
  deadline_ = clock::now() + owner_.options().write_timeout;
  asio::async_write(socket_, asio::buffer(output_),
                    [this](error_code ec, std::size_t) { on_write(ec); });
}

void connection::on_write(error_code ec) {
  if (ec) return destroy();
  output_.clear();
  try {
    process();
  } catch (const std::exception&) {
    destroy();
  }
}

// Half-closes, then reads and drops what the client still sends until it closes too.
void connection::do_linger() {
  if (phase_ != phase::lingering) {
    phase_ = phase::lingering;
    deadline_ =
        clock::now() + std::min<clock::duration>(linger_timeout, owner_.options().read_timeout);
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    input_.clear();
  }
  socket_.async_read_some(input_.prepare(read_chunk),
                          [this](error_code ec, std::size_t) { on_linger(ec); });
}

void connection::on_linger(error_code ec) {
  if (ec) return destroy();
  do_linger();
}

// A listening socket and the worker whose thread accepts on it (null: the control thread).
struct listener {
  acceptor_type acceptor;
  worker* owner;
  std::optional<timer_type> retry;  // after EMFILE and the like, wait before accepting again
};

tcp::endpoint endpoint_of(const listen_address& a) {
  error_code ec;
  auto address = asio::ip::make_address(a.address, ec);
  if (ec) throw std::invalid_argument("waypoint: \"" + a.address + "\" is not an IP address");
  return {address, a.port};
}

std::string describe(const tcp::endpoint& e) {
  std::string host = e.address().to_string();
  if (e.address().is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(e.port());
}

acceptor_type open_listener(asio::io_context& context, const tcp::endpoint& at, bool reuse_port,
                            bool v6_only) {
  acceptor_type a(context);
  error_code ec;
  auto fail = [&](const char* step) {
    throw std::system_error(
        ec, std::string("waypoint: cannot listen on ") + describe(at) + " (" + step + ")");
  };
  if (a.open(at.protocol(), ec)) fail("open");
  if (a.set_option(asio::socket_base::reuse_address(true), ec)) fail("SO_REUSEADDR");
  if (reuse_port && a.set_option(reuse_port_option{1}, ec)) fail("SO_REUSEPORT");
  if (at.address().is_v6() && v6_only && a.set_option(asio::ip::v6_only(true), ec))
    fail("IPV6_V6ONLY");
  if (a.bind(at, ec)) fail("bind");
  if (a.listen(asio::socket_base::max_listen_connections, ec)) fail("listen");
  return a;
}

}  // namespace

struct server::impl {
  server_options options;
  dispatch_function dispatch;
  asio::io_context control{1};
  std::optional<asio::executor_work_guard<executor>> control_guard;
  std::optional<asio::signal_set> signals;
  std::vector<std::unique_ptr<worker>> workers;
  std::list<listener> listeners;
  std::vector<listen_address> bound;
  std::vector<std::thread> threads;
  std::size_t next_worker = 0;

  std::mutex mutex;
  std::condition_variable listeners_closed_cv;
  bool started = false;
  // Written under `mutex`; the workers read it without.
  std::atomic<bool> stop_requested{false};
  std::size_t open_listeners = 0;
  std::mutex wait_mutex;

  impl(server_options o, dispatch_function d) : options(std::move(o)), dispatch(std::move(d)) {}

  void bind_all();
  void start_accepting(listener& l);
  void accept_failed(listener& l, error_code ec);
  void begin_stop();
  void listener_closed();
  void stop();
};

void server::impl::bind_all() {
  std::vector<tcp::endpoint> endpoints;
  bool any_v4 = false;
  for (const listen_address& a : options.listen) {
    endpoints.push_back(endpoint_of(a));
    any_v4 |= endpoints.back().address().is_v4();
  }
  // "::" and "0.0.0.0" on one port can only coexist when the IPv6 socket is IPv6-only;
  // alone, "::" keeps the system's default and usually serves IPv4 too.
  for (tcp::endpoint at : endpoints) {
    if (!options.reuse_port) {
      listeners.push_back({open_listener(control, at, false, any_v4), nullptr, {}});
      at = listeners.back().acceptor.local_endpoint();
    } else {
      for (auto& w : workers) {
        listeners.push_back({open_listener(w->context(), at, true, any_v4), w.get(), {}});
        at = listeners.back().acceptor.local_endpoint();  // port 0: the others share it
      }
    }
    bound.push_back({at.address().to_string(), at.port()});
  }
  open_listeners = listeners.size();
}

void server::impl::start_accepting(listener& l) {
  worker* target = l.owner;
  if (!target) target = workers[next_worker++ % workers.size()].get();
  l.acceptor.async_accept(target->context(), [this, &l, target](error_code ec, socket_type s) {
    if (ec == asio::error::operation_aborted || !l.acceptor.is_open()) return;
    if (ec) return accept_failed(l, ec);
    if (l.owner) {
      l.owner->adopt(std::move(s));
    } else {
      asio::post(target->context(),
                 [target, s = std::move(s)]() mutable { target->adopt(std::move(s)); });
    }
    start_accepting(l);
  });
}

// Out of descriptors or memory: accepting again at once would spin, so wait a little.
void server::impl::accept_failed(listener& l, error_code) {
  if (!l.retry) l.retry.emplace(l.acceptor.get_executor());
  l.retry->expires_after(std::chrono::milliseconds(50));
  l.retry->async_wait([this, &l](error_code ec) {
    if (!ec && l.acceptor.is_open()) start_accepting(l);
  });
}

void server::impl::listener_closed() {
  std::lock_guard lock(mutex);
  if (--open_listeners == 0) listeners_closed_cv.notify_all();
}

// On the control thread. Each listener is closed by the thread that owns it.
void server::impl::begin_stop() {
  if (signals) {
    error_code ignored;
    signals->cancel(ignored);
  }
  for (listener& l : listeners) {
    if (l.owner) continue;
    error_code ignored;
    l.acceptor.close(ignored);
    if (l.retry) l.retry->cancel();
    listener_closed();
  }
  for (auto& w : workers) {
    asio::post(w->context(), [this, w = w.get()] {
      for (listener& l : listeners) {
        if (l.owner != w) continue;
        error_code ignored;
        l.acceptor.close(ignored);
        if (l.retry) l.retry->cancel();
        listener_closed();
      }
      w->begin_shutdown();
    });
  }
  control_guard.reset();
}

void server::impl::stop() {
  {
    std::unique_lock lock(mutex);
    if (!started) {
      stop_requested = true;
      return;
    }
    if (!stop_requested) {
      stop_requested = true;
      asio::post(control, [this] { begin_stop(); });
    }
    if (on_server_thread) return;
    listeners_closed_cv.wait(lock, [&] { return open_listeners == 0; });
  }
}

server::server(server_options options, dispatch_function dispatch)
    : impl_(std::make_unique<impl>(std::move(options), std::move(dispatch))) {
  const server_options& o = impl_->options;
  if (!impl_->dispatch)
    throw std::invalid_argument("waypoint: the server needs a dispatch function");
  if (o.listen.empty())
    throw std::invalid_argument("waypoint: the server needs an address to listen on");
  if (o.max_header_bytes == 0 || o.max_target_bytes == 0)
    throw std::invalid_argument("waypoint: header and target limits must be positive");
  using std::chrono::milliseconds;
  for (milliseconds t : {o.idle_timeout, o.read_timeout, o.write_timeout})
    if (t <= milliseconds::zero())
      throw std::invalid_argument("waypoint: timeouts must be positive");
}

server::~server() {
  stop();
  wait();
}

void server::start() {
  impl& s = *impl_;
  {
    std::lock_guard lock(s.mutex);
    if (s.started || s.stop_requested)
      throw std::logic_error("waypoint: start() called twice or after stop()");
  }
  unsigned n =
      s.options.threads ? s.options.threads : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < n; ++i)
    s.workers.push_back(std::make_unique<worker>(s.options, s.dispatch, s.stop_requested));
  s.bind_all();
  for (listener& l : s.listeners) {
    if (l.owner) {
      asio::post(l.owner->context(), [&s, &l] { s.start_accepting(l); });
    } else {
      s.start_accepting(l);
    }
  }
  s.control_guard.emplace(s.control.get_executor());
  if (s.options.handle_signals) {
    s.signals.emplace(s.control, SIGINT, SIGTERM);
    s.signals->async_wait([&s](error_code ec, int) {
      if (ec) return;
      {
        std::lock_guard lock(s.mutex);
        if (s.stop_requested) return;
        s.stop_requested = true;
      }
      s.begin_stop();
    });
  }
  {
    std::lock_guard lock(s.mutex);
    s.started = true;
  }
  for (auto& w : s.workers) s.threads.emplace_back([w = w.get()] { w->run(); });
  s.threads.emplace_back([&s] {
    on_server_thread = true;
    s.control.run();
  });
}

void server::run() {
  start();
  wait();
}

void server::stop() { impl_->stop(); }

void server::wait() {
  std::lock_guard lock(impl_->wait_mutex);
  for (std::thread& t : impl_->threads)
    if (t.joinable()) t.join();
}

std::vector<listen_address> server::endpoints() const { return impl_->bound; }

server_stats server::stats() const {
  server_stats total;
  for (const auto& w : impl_->workers) {
    server_stats s = w->stats();
    total.connections += s.connections;
    total.requests += s.requests;
  }
  return total;
}

}  // namespace waypoint::beast
