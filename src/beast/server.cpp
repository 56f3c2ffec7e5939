// The server behind server.hpp: sockets, threads, deadlines and shutdown. What a
// connection's bytes mean is http_session's business (http_session.hpp); this file moves
// the bytes and the time.
//
// Threads: one control thread owns the listeners (unless reuse_port) and the signal set;
// every worker thread runs its own io_context and owns the connections handed to it, so a
// connection's state is touched by one thread only and needs no strand or lock.
//
// A connection reads into its session's buffer, lets the session answer every complete
// request there (pipelining without another read), and writes the batched responses in one
// go, synchronously when the socket takes it all (an asynchronous write only for what does
// not fit). Timeouts cost no timer per read: each connection keeps one deadline, moved at
// phase changes and by body progress, and a sweep timer per worker acts on the connections
// past theirs: a request being read gets a 408, anything else is closed.
#include "waypoint/beast/server.hpp"

#include "http_session.hpp"
#include "waypoint/beast/adapter.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
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
using detail::clock;
using executor = asio::io_context::executor_type;
using socket_type = asio::basic_stream_socket<tcp, executor>;
using acceptor_type = asio::basic_socket_acceptor<tcp, executor>;
using timer_type = asio::basic_waitable_timer<clock, asio::wait_traits<clock>, executor>;

// After a response that closes the connection, its unread input is drained this long at
// most, so closing does not reset the connection (an RST can destroy the response in the
// client's receive buffer before it is read).
constexpr std::chrono::milliseconds linger_timeout{1000};

// The sweep runs at a quarter of the shortest timeout, so a connection outlives its
// deadline by at most 25%, but never more often than every 10 ms nor less than once a second.
constexpr std::chrono::milliseconds min_sweep_interval{10};
constexpr std::chrono::milliseconds max_sweep_interval{1000};

// Connections past max_connections that still get their 503 (and the linger that lets the
// client read it); beyond these a connection is closed unanswered, so a flood cannot turn
// the refusals themselves into unbounded descriptors.
constexpr std::size_t refusal_reserve = 64;

struct connection_limits {
  std::size_t connections;  // served at once
  std::size_t refusals;     // answered 503 at once, past `connections`
};

// From the descriptor limit: an eighth of it (at least 128) is left for refusals, listeners,
// files and the rest of the program; under a small limit, half serves and a quarter refuses.
connection_limits limits_for(const server_options& o) {
  if (o.max_connections) return {o.max_connections, refusal_reserve};
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return {std::size_t{1} << 20, refusal_reserve};
  auto descriptors = static_cast<std::size_t>(limit.rlim_cur);
  std::size_t reserve = std::max<std::size_t>(descriptors / 8, 2 * refusal_reserve);
  if (descriptors > 2 * reserve) return {descriptors - reserve, refusal_reserve};
  return {std::max<std::size_t>(1, descriptors / 2), descriptors / 4};
}

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
  auto shortest = std::min({o.idle_timeout, o.header_timeout, o.body_timeout, o.write_timeout});
  return std::clamp(shortest / 4, min_sweep_interval, max_sweep_interval);
}

// Shared by the acceptors and the workers: how many connections are open.
struct connection_count {
  connection_limits limits{};
  std::atomic<std::size_t> open{0};
  std::atomic<std::uint64_t> refused{0};
};

class worker;

// One accepted socket and its session. Exactly one asynchronous operation is pending at
// any time (a read, a write or a lingering read), so whoever closes the socket knows that
// the operation's completion will destroy the connection.
class connection {
 public:
  connection(worker& owner, socket_type socket);
  void start(std::list<connection>::iterator self);
  // Answers 503 without reading a request, then closes.
  void refuse(std::list<connection>::iterator self);

  // For the worker's sweep and shutdown, on the connection's thread.
  void on_deadline(clock::time_point now) noexcept;
  void close_if_idle() noexcept;
  void close() noexcept;

 private:
  enum class phase : std::uint8_t { idle, reading, writing, lingering };

  void do_read();
  void on_read(error_code ec, std::size_t n);
  void answer();
  bool write_now();
  void do_write();
  void on_write(error_code ec);
  void do_linger();
  void on_linger(error_code ec);
  void destroy() noexcept;

  worker& owner_;
  socket_type socket_;
  std::list<connection>::iterator self_;
  detail::http_session session_;
  clock::time_point deadline_;
  phase phase_ = phase::idle;
  bool expired_ = false;  // the read was cancelled because the request ran out of time
};

// A thread, its io_context and the connections it owns.
class worker {
 public:
  worker(const server_options& options, const dispatch_function& dispatch,
         const std::atomic<bool>& stop_requested, connection_count& count)
      : options_(options),
        render_error_(options.render_error ? options.render_error : error_renderer(write_plain_error)),
        environment_{options_, dispatch, render_error_, date_, stop_requested, requests_},
        count_(count),
        sweep_(context_),
        sweep_every_(sweep_interval(options)) {}

  asio::io_context& context() noexcept { return context_; }
  const server_options& options() const noexcept { return options_; }
  const detail::session_environment& environment() const noexcept { return environment_; }
  bool stopping() const noexcept { return stopping_; }

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

  // On this worker's thread, with the connection already counted in count_.open.
  void adopt(socket_type socket, bool over_limit) {
    if (stopping_) {  // the socket closes as it goes out of scope
      count_.open.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    socket.non_blocking(true, ignored);  // write_now() must never block the thread
    connections_.emplace_front(*this, std::move(socket));
    if (over_limit) {
      count_.refused.fetch_add(1, std::memory_order_relaxed);
      connections_.front().refuse(connections_.begin());
      return;
    }
    bump(connections_accepted_);
    connections_.front().start(connections_.begin());
  }

  void begin_shutdown() {
    stopping_ = true;
    drain_deadline_ = clock::now() + options_.drain_timeout;
    for (connection& c : connections_) c.close_if_idle();
    finish_if_drained();
  }

  // A second signal: the drain is over now.
  void close_all() {
    stopping_ = true;
    drain_deadline_ = clock::now();
    for (connection& c : connections_) c.close();
  }

  void remove(std::list<connection>::iterator it) noexcept {
    connections_.erase(it);
    count_.open.fetch_sub(1, std::memory_order_relaxed);
    finish_if_drained();
  }

  server_stats stats() const noexcept {
    return {connections_accepted_.load(std::memory_order_relaxed),
            requests_.load(std::memory_order_relaxed), 0};
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

  // Acts on the connections past their deadline (closes all of them once a drain has run
  // out). Once stopping and empty, it stops re-arming, and with no work left run() returns.
  void sweep() {
    auto now = clock::now();
    bool drained = stopping_ && now >= drain_deadline_;
    for (connection& c : connections_) {
      if (drained) {
        c.close();
      } else {
        c.on_deadline(now);
      }
    }
    if (stopping_ && connections_.empty()) return;
    arm_sweep();
  }

  const server_options& options_;
  error_renderer render_error_;
  detail::date_cache date_;
  std::atomic<std::uint64_t> requests_{0};
  detail::session_environment environment_;
  connection_count& count_;
  asio::io_context context_{1};
  timer_type sweep_;
  std::chrono::milliseconds sweep_every_;
  std::list<connection> connections_;
  bool stopping_ = false;
  clock::time_point drain_deadline_;
  std::atomic<std::uint64_t> connections_accepted_{0};
};

connection::connection(worker& owner, socket_type socket)
    : owner_(owner), socket_(std::move(socket)), session_(owner.environment()) {}

void connection::start(std::list<connection>::iterator self) {
  self_ = self;
  do_read();
}

void connection::refuse(std::list<connection>::iterator self) {
  self_ = self;
  session_.refuse(http::status::service_unavailable,
                  "the server is at its connection limit; try again later");
  answer();
}

void connection::close() noexcept {
  error_code ignored;
  socket_.close(ignored);
}

// A request being read gets its 408: the read is cancelled and its completion answers.
// Anything else past its deadline (idle, a stalled write, a linger) is closed.
void connection::on_deadline(clock::time_point now) noexcept {
  if (now < deadline_) return;
  if (phase_ == phase::reading && !expired_) {
    expired_ = true;
    error_code ignored;
    socket_.cancel(ignored);
    return;
  }
  close();
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
  if (!session_.in_request() && owner_.stopping()) return destroy();
  phase_ = session_.in_request() ? phase::reading : phase::idle;
  deadline_ = session_.in_request() ? session_.deadline()
                                    : clock::now() + owner_.options().idle_timeout;
  socket_.async_read_some(session_.prepare(),
                          [this](error_code ec, std::size_t n) { on_read(ec, n); });
}

void connection::on_read(error_code ec, std::size_t n) {
  if (ec && !expired_) return destroy();  // end of stream, reset, or closed by the sweep
  if (!ec) session_.commit(n);
  try {
    if (expired_) {
      session_.process();  // what did arrive in time is still answered
      session_.expire();
    }
    answer();
  } catch (const std::exception&) {
    destroy();
  }
}

// Answers every complete request in the input, writes the answers, then reads more (or,
// when the connection is to close, lingers).
void connection::answer() {
  for (;;) {
    session_.process();
    if (session_.output().empty()) break;
    if (!write_now()) return;  // an asynchronous write continues, or the connection is gone
  }
  if (session_.closing()) return do_linger();
  do_read();
}

// Writes the batch at once when the socket takes it all, the usual case for responses
// that fit in the send buffer: no completion to post and no trip through the reactor.
// Returns true when the output is written; false when an asynchronous write of the rest was
// started or the connection was destroyed (then `this` is gone).
bool connection::write_now() {
  std::string& output = session_.output();
  error_code ec;
  std::size_t n = socket_.write_some(asio::buffer(output), ec);
  if (!ec && n == output.size()) {
    output.clear();
    return true;
  }
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
    destroy();
    return false;
  }
  output.erase(0, n);
  do_write();
  return false;
}

void connection::do_write() {
  phase_ = phase::writing;
  deadline_ = clock::now() + owner_.options().write_timeout;
  asio::async_write(socket_, asio::buffer(session_.output()),
                    [this](error_code ec, std::size_t) { on_write(ec); });
}

void connection::on_write(error_code ec) {
  if (ec) return destroy();
  session_.output().clear();
  try {
    answer();
  } catch (const std::exception&) {
    destroy();
  }
}

// Half-closes, then reads and drops what the client still sends until it closes too.
void connection::do_linger() {
  if (phase_ != phase::lingering) {
    phase_ = phase::lingering;
    deadline_ = clock::now() + linger_timeout;
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
  }
  socket_.async_read_some(session_.discard_and_prepare(),
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
  connection_count count;
  std::atomic<std::size_t> running_workers{0};

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
  void hand_over(listener& l, worker& target, socket_type socket);
  void wait_for_signals();
  void begin_stop();
  void close_everything();
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
    hand_over(l, *target, std::move(s));
    start_accepting(l);
  });
}

// Counts the connection, and gives it to its worker to serve or, past max_connections, to
// refuse with a 503; past the refusal reserve too, it is closed here.
void server::impl::hand_over(listener& l, worker& target, socket_type socket) {
  std::size_t open = count.open.fetch_add(1, std::memory_order_relaxed);
  bool over_limit = open >= count.limits.connections;
  if (over_limit && open >= count.limits.connections + count.limits.refusals) {
    count.open.fetch_sub(1, std::memory_order_relaxed);
    count.refused.fetch_add(1, std::memory_order_relaxed);
    return;  // the socket closes as it goes out of scope
  }
  if (l.owner) return target.adopt(std::move(socket), over_limit);
  asio::post(target.context(), [&target, over_limit, s = std::move(socket)]() mutable {
    target.adopt(std::move(s), over_limit);
  });
}

// Out of descriptors (EMFILE, ENFILE) or memory: accepting again at once would spin, so
// wait a little; the pending connections wait in the backlog meanwhile.
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

// SIGINT/SIGTERM: the first starts the graceful stop, a second ends the drain at once. The
// wait is cancelled when the last worker has finished (see start()).
void server::impl::wait_for_signals() {
  signals->async_wait([this](error_code ec, int) {
    if (ec) return;
    bool first;
    {
      std::lock_guard lock(mutex);
      first = !stop_requested;
      stop_requested = true;
    }
    if (first) {
      begin_stop();
    } else {
      close_everything();
    }
    wait_for_signals();
  });
}

void server::impl::close_everything() {
  for (auto& w : workers) asio::post(w->context(), [w = w.get()] { w->close_all(); });
}

// On the control thread. Each listener is closed by the thread that owns it.
void server::impl::begin_stop() {
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
  for (milliseconds t : {o.idle_timeout, o.header_timeout, o.body_timeout, o.write_timeout})
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
  s.count.limits = limits_for(s.options);
  for (unsigned i = 0; i < n; ++i)
    s.workers.push_back(
        std::make_unique<worker>(s.options, s.dispatch, s.stop_requested, s.count));
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
    s.wait_for_signals();
  }
  {
    std::lock_guard lock(s.mutex);
    s.started = true;
  }
  s.running_workers = s.workers.size();
  for (auto& w : s.workers) {
    s.threads.emplace_back([&s, w = w.get()] {
      w->run();
      if (s.running_workers.fetch_sub(1) != 1 || !s.signals) return;
      asio::post(s.control, [&s] {  // the control thread's last work
        error_code ignored;
        s.signals->cancel(ignored);
      });
    });
  }
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
  total.refused = impl_->count.refused.load(std::memory_order_relaxed);
  return total;
}

}  // namespace waypoint::beast
