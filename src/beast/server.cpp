// The server behind server.hpp: binding, accepting, signals, stop and wait. Its parts, one
// concept a file: listener (binding), limits (how many connections), worker (a thread and
// its connections), connection (a socket's reads and writes), http_session (what the bytes
// mean, no socket), response_writer (the bytes of a response).
//
// TLS (tls_context, transport): a TLS listener's connections handshake before their first
// read, and every later step goes through the same connection code as a plaintext one.
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

#include "limits.hpp"
#include "listener.hpp"
#include "socket_address.hpp"
#include "tls_context.hpp"
#include "worker.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace waypoint::beast {

using namespace detail;

struct server::impl {
  server_options options;
  exchange_function dispatch;
  std::vector<asio::io_context*> caller_contexts;  // empty: the server runs its own threads
  std::optional<asio::io_context> own_control;
  asio::io_context* control = nullptr;  // accepts (unless reuse_port) and handles signals
  std::optional<asio::executor_work_guard<executor>> control_guard;
  std::optional<asio::signal_set> signals;
  std::optional<asio::steady_timer> grace;  // drain_grace, on the control thread
  std::vector<std::unique_ptr<worker>> workers;
  std::list<listener> listeners;
  std::vector<listen_address> bound;
  std::vector<std::thread> threads;
  std::size_t next_worker = 0;
  connection_count count;
  std::unique_ptr<tls_state> tls;  // made by check_options(), which reads the files
  std::atomic<std::size_t> running_workers{0};

  std::mutex mutex;
  std::condition_variable listeners_closed_cv;
  bool started = false;
  // Written under `mutex`; the workers read it without.
  std::atomic<bool> stop_requested{false};
  std::size_t open_listeners = 0;
  std::mutex wait_mutex;
  std::condition_variable drained_cv;  // caller contexts: running_workers reached 0
  bool drained = false;

  impl(server_options o, exchange_function d, std::vector<asio::io_context*> contexts)
      : options(std::move(o)), dispatch(std::move(d)), caller_contexts(std::move(contexts)) {
    if (caller_contexts.empty()) {
      control = &own_control.emplace(1);
    } else {
      control = caller_contexts.front();
    }
  }

  // Whether the calling thread runs one of the server's io_contexts.
  bool on_own_thread() const {
    if (caller_contexts.empty()) return on_server_thread;
    return std::any_of(caller_contexts.begin(), caller_contexts.end(), [](asio::io_context* c) {
      return c->get_executor().running_in_this_thread();
    });
  }

  void make_workers();
  void bind_all();
  void listen_for_signals();
  void run_workers();
  void start_accepting(listener& l);
  void accept_failed(listener& l, error_code ec);
  void hand_over(listener& l, worker& target, socket_type socket);
  void wait_for_signals();
  void begin_stop();
  void close_listeners();
  void end_grace_now();
  void close_everything();
  void listener_closed();
  void worker_finished();
  void stop();
  void check_options();
  void reload_tls_on_signal();
};

// Unix and inherited listeners are one socket each, accepted on by the control thread;
// a TCP address is one socket per worker under reuse_port.
void server::impl::bind_all() {
  std::vector<std::optional<tcp::endpoint>> endpoints;
  bool any_v4 = false;
  for (const listen_address& a : options.listen) {
    if (a.inherited_fd >= 0 || a.is_unix_socket()) {
      endpoints.emplace_back();
      continue;
    }
    endpoints.push_back(endpoint_of(a));
    any_v4 |= endpoints.back()->address().is_v4();
  }
  // "::" and "0.0.0.0" on one port can only coexist when the IPv6 socket is IPv6-only;
  // alone, "::" keeps the system's default and usually serves IPv4 too.
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const listen_address& a = options.listen[i];
    bool tls = a.tls;
    if (!endpoints[i]) {
      opened_listener o = a.inherited_fd >= 0 ? adopt_listener(*control, a)
                                              : open_unix_listener(*control, a);
      bool tcp = !o.bound.is_unix_socket();
      listeners.push_back(
          {std::move(o.acceptor), nullptr, {}, {tls, tcp, a.http2}, std::move(o.file)});
      o.bound.tls = tls;
      o.bound.http2 = a.http2;
      bound.push_back(std::move(o.bound));
      continue;
    }
    tcp::endpoint at = *endpoints[i];
    if (!options.reuse_port) {
      listeners.push_back(
          {open_listener(*control, at, false, any_v4), nullptr, {}, {tls, true, a.http2}});
      at = to_tcp(listeners.back().acceptor.local_endpoint());
    } else {
      for (auto& w : workers) {
        listeners.push_back(
            {open_listener(w->context(), at, true, any_v4), w.get(), {}, {tls, true, a.http2}});
        at = to_tcp(listeners.back().acceptor.local_endpoint());  // port 0: the others share it
      }
    }
    bound.push_back({at.address().to_string(), at.port(), tls, a.http2});
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

// Counts the connection, and gives it to its worker to serve or, past the descriptor
// budget (max_connections, shared with the requests' descriptor permits), to refuse with a
// 503; past the refusal reserve too, it is closed here.
void server::impl::hand_over(listener& l, worker& target, socket_type socket) {
  bool over_limit = !count.descriptors.try_take(1);
  if (over_limit && !count.descriptors.try_take(1, count.limits.refusals)) {
    count.refused.fetch_add(1, std::memory_order_relaxed);
    return;  // the socket closes as it goes out of scope
  }
  count.open.fetch_add(1, std::memory_order_relaxed);
  if (l.owner) return target.adopt(std::move(socket), over_limit, l.kind);
  asio::post(target.context(),
             [&target, over_limit, kind = l.kind, s = std::move(socket)]() mutable {
               target.adopt(std::move(s), over_limit, kind);
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

// SIGINT/SIGTERM: the first starts the graceful stop, a second ends the drain at once;
// SIGHUP reloads the TLS files, if any, and calls on_reload. The wait is cancelled when the last
// worker has finished (see start()).
void server::impl::wait_for_signals() {
  signals->async_wait([this](error_code ec, int signal) {
    if (ec) return;
    if (signal == SIGHUP) {
      if (tls->enabled()) reload_tls_on_signal();
      if (options.on_reload) options.on_reload();
      return wait_for_signals();
    }
    bool first;
    {
      std::lock_guard lock(mutex);
      first = !stop_requested;
      stop_requested = true;
    }
    if (first) {
      begin_stop();
    } else {
      end_grace_now();
      close_everything();
    }
    wait_for_signals();
  });
}

// The last worker to finish ends the signal wait, the control thread's last work.
void server::impl::worker_finished() {
  if (running_workers.fetch_sub(1) != 1) return;
  if (signals) {
    asio::post(*control, [this] {
      error_code ignored;
      signals->cancel(ignored);
    });
  }
  std::lock_guard lock(mutex);
  drained = true;
  drained_cv.notify_all();
}

void server::impl::close_everything() {
  for (auto& w : workers) asio::post(w->context(), [w = w.get()] { w->close_all(); });
}

// On the control thread: tells on_drain, then lets drain_grace pass before the listeners
// close, so that readiness has said 503 for that long while everything still works.
void server::impl::begin_stop() {
  if (options.on_drain) options.on_drain();
  if (options.drain_grace <= std::chrono::milliseconds::zero()) return close_listeners();
  grace.emplace(*control, options.drain_grace);
  grace->async_wait([this](error_code) { close_listeners(); });
}

// A second signal during the grace: the listeners close now (the timer's handler runs
// once, cancelled or not).
void server::impl::end_grace_now() {
  if (grace) grace->cancel();
}

// On the control thread. Each listener is closed by the thread that owns it.
void server::impl::close_listeners() {
  for (listener& l : listeners) {
    if (l.owner) continue;
    close_listener(l);
    listener_closed();
  }
  for (auto& w : workers) {
    asio::post(w->context(), [this, w = w.get()] {
      for (listener& l : listeners) {
        if (l.owner != w) continue;
        close_listener(l);
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
      asio::post(*control, [this] { begin_stop(); });
    }
    if (on_own_thread()) return;
    listeners_closed_cv.wait(lock, [&] { return open_listeners == 0; });
  }
}

// A reload that fails leaves the context in use; the operator reads why on stderr.
void server::impl::reload_tls_on_signal() {
  try {
    tls->reload();
    std::fprintf(stderr, "waypoint: SIGHUP: TLS certificate reloaded\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "waypoint: SIGHUP: TLS reload failed, the old certificate stays: %s\n",
                 e.what());
  }
}

void server::impl::check_options() {
  const server_options& o = options;
  if (!dispatch) throw std::invalid_argument("waypoint: the server needs a dispatch function");
  if (o.listen.empty())
    throw std::invalid_argument("waypoint: the server needs an address to listen on");
  if (o.max_header_bytes == 0 || o.max_target_bytes == 0)
    throw std::invalid_argument("waypoint: header and target limits must be positive");
  using std::chrono::milliseconds;
  for (milliseconds t : {o.idle_timeout, o.header_timeout, o.body_timeout, o.write_timeout,
                         o.tls_handshake_timeout})
    if (t <= milliseconds::zero())
      throw std::invalid_argument("waypoint: timeouts must be positive");
  for (asio::io_context* c : caller_contexts)
    if (!c) throw std::invalid_argument("waypoint: a null io_context");
  for (const listen_address& a : o.listen) {
    if (a.inherited_fd >= 0 || !a.is_unix_socket()) continue;
    unix_address at = parse_unix_address(a.address);  // throws for a path that does not fit
    if (at.abstract() && (a.unix_file.mode != 0 || !a.unix_file.group.empty()))
      throw std::invalid_argument("waypoint: the abstract unix socket \"" + a.address +
                                  "\" has no file to give a mode or group");
    if (a.unix_file.mode > 07777)
      throw std::invalid_argument("waypoint: the unix socket \"" + a.address +
                                  "\" has a mode past 07777");
  }
  bool any_tls = std::any_of(o.listen.begin(), o.listen.end(),
                             [](const listen_address& a) { return a.tls; });
  tls = std::make_unique<tls_state>(o.tls, any_tls);
}

namespace {
exchange_function from_dispatch(dispatch_function dispatch) {
  if (!dispatch) return {};
  return [f = std::move(dispatch)](exchange& x) { f(x.request(), x.response()); };
}
}  // namespace

server::server(server_options options, dispatch_function dispatch)
    : server(std::move(options), from_dispatch(std::move(dispatch))) {}

server::server(server_options options, exchange_function dispatch)
    : impl_(std::make_unique<impl>(std::move(options), std::move(dispatch),
                                   std::vector<asio::io_context*>{})) {
  impl_->check_options();
}

server::server(std::vector<asio::io_context*> contexts, server_options options,
               exchange_function dispatch) {
  if (contexts.empty()) throw std::invalid_argument("waypoint: the server needs an io_context");
  impl_ = std::make_unique<impl>(std::move(options), std::move(dispatch), std::move(contexts));
  impl_->check_options();
}

server::~server() {
  stop();
  wait();
}

// The workers, one per caller context or per thread (options.threads, else one a core),
// with the limits and descriptor budget they share.
void server::impl::make_workers() {
  bool own_threads = caller_contexts.empty();
  unsigned n = !own_threads      ? static_cast<unsigned>(caller_contexts.size())
               : options.threads ? options.threads
                                 : std::max(1u, std::thread::hardware_concurrency());
  count.limits = limits_for(options);
  count.descriptors = resource_budget(count.limits.connections);
  for (unsigned i = 0; i < n; ++i)
    workers.push_back(std::make_unique<worker>(own_threads ? nullptr : caller_contexts[i], options,
                                               dispatch, stop_requested, count, *tls));
}

// SIGINT and SIGTERM stop the server; SIGHUP reloads TLS files or calls on_reload.
void server::impl::listen_for_signals() {
  signals.emplace(*control, SIGINT, SIGTERM);
  if (tls->enabled() || options.on_reload) signals->add(SIGHUP);
  wait_for_signals();
}

// Each worker runs on the caller's context it was made for, or on a thread of its own,
// and the control context on one more.
void server::impl::run_workers() {
  running_workers = workers.size();
  if (!caller_contexts.empty()) {
    for (auto& w : workers)
      asio::post(w->context(), [this, w = w.get()] {
        w->start_on_caller_context([this] { worker_finished(); });
      });
    return;
  }
  for (auto& w : workers)
    threads.emplace_back([this, w = w.get()] {
      w->run();
      worker_finished();
    });
  threads.emplace_back([this] {
    on_server_thread = true;
    control->run();
  });
}

void server::start() {
  impl& s = *impl_;
  {
    std::lock_guard lock(s.mutex);
    if (s.started || s.stop_requested)
      throw std::logic_error("waypoint: start() called twice or after stop()");
  }
  s.make_workers();
  s.bind_all();
  for (listener& l : s.listeners) {
    asio::post(l.owner ? l.owner->context() : *s.control, [&s, &l] { s.start_accepting(l); });
  }
  if (s.caller_contexts.empty()) s.control_guard.emplace(s.control->get_executor());
  if (s.options.handle_signals) s.listen_for_signals();
  {
    std::lock_guard lock(s.mutex);
    s.started = true;
  }
  s.run_workers();
}

void server::run() {
  start();
  wait();
}

void server::stop() { impl_->stop(); }

void server::wait() {
  impl& s = *impl_;
  if (!s.caller_contexts.empty()) {
    std::unique_lock lock(s.mutex);
    if (!s.started) return;
    if (s.on_own_thread())
      throw std::logic_error("waypoint: wait() on a thread that runs the server's io_context");
    s.drained_cv.wait(lock, [&] { return s.drained; });
    return;
  }
  std::lock_guard lock(s.wait_mutex);
  for (std::thread& t : s.threads)
    if (t.joinable()) t.join();
}

std::vector<listen_address> server::endpoints() const { return impl_->bound; }

bool server::draining() const noexcept {
  return impl_->stop_requested.load(std::memory_order_relaxed);
}

void server::reload_tls() { impl_->tls->reload(); }

server_stats server::stats() const {
  server_stats total;
  for (const auto& w : impl_->workers) {
    w->add_stats(total);
  }
  total.open = impl_->count.open.load(std::memory_order_relaxed);
  total.refused = impl_->count.refused.load(std::memory_order_relaxed);
  total.descriptors = impl_->count.descriptors.in_use();
  return total;
}

resource_budget server::descriptor_budget() const { return impl_->count.descriptors; }

}  // namespace waypoint::beast
