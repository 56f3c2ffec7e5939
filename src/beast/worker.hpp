// A worker: one thread, its io_context, the connections it owns and the sweep that acts on
// their deadlines. A connection is touched by its worker's thread only: no strand, no lock.
#pragma once

#include "asio_types.hpp"
#include "connection.hpp"
#include "h2_connection.hpp"
#include "limits.hpp"
#include "tls_context.hpp"
#include "websocket_session.hpp"

#include <atomic>
#include <functional>
#include <list>
#include <memory>

namespace waypoint::beast::detail {

// Whether the current thread is one of a server's; stop() must not wait for itself.
extern thread_local bool on_server_thread;

// A thread, its io_context and the connections it owns. The io_context is the worker's own
// (run by run()) or one the server's caller owns and runs.
class worker {
 public:
  // `context` null: the worker makes its own.
  worker(asio::io_context* context, const server_options& options,
         const exchange_function& dispatch, const std::atomic<bool>& stop_requested,
         connection_count& count, tls_state& tls);

  asio::io_context& context() noexcept { return context_; }
  const server_options& options() const noexcept { return options_; }
  const session_environment& environment() const noexcept { return environment_; }
  bool stopping() const noexcept { return stopping_; }
  tls_state& tls() noexcept { return tls_; }
  // The budget shared by connections and the descriptors requests hold.
  resource_budget& descriptors() noexcept { return count_.descriptors; }

  // Runs the io_context until it has no work left (the sweep is its last): after a stop.
  void run();
  // On a context the caller runs: arms the sweep; `finished` runs on the context's thread
  // once a stop has drained every connection.
  void start_on_caller_context(std::function<void()> finished);

  // On this worker's thread, with the connection already counted in count_.open; `kind`:
  // the listener's.
  void adopt(socket_type socket, bool over_limit, listener_kind kind) {
    auto [tls, tcp, http2] = kind;
    if (stopping_) {  // the socket closes as it goes out of scope
      count_.release_connection();
      return;
    }
    error_code ignored;
    if (tcp) socket.set_option(detail::tcp::no_delay(true), ignored);
    socket.non_blocking(true, ignored);  // write_now() must never block the thread
    connections_.emplace_front(*this, std::move(socket), tls ? tls_.current() : nullptr, http2);
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
    for (connection& c : connections_) c.drain();
    for (websocket_session& w : websockets_) w.going_away();
    for (auto it = h2_.begin(); it != h2_.end();) (it++)->drain();  // may erase itself
    finish_if_drained();
  }

  // A second signal: the drain is over now.
  void close_all() {
    stopping_ = true;
    drain_deadline_ = clock::now();
    for (connection& c : connections_) c.close();
    for (websocket_session& w : websockets_) w.close();
    for (auto it = h2_.begin(); it != h2_.end();) (it++)->close();  // may erase itself
  }

  void remove(std::list<connection>::iterator it) noexcept {
    connections_.erase(it);
    count_.release_connection();
    finish_if_drained();
  }

  // A connection whose request upgraded: its transport (TLS or not) goes on as a websocket_session, still
  // counted in count_.open. Deletes the connection at `from`.
  void adopt_websocket(std::list<connection>::iterator from, std::unique_ptr<transport> stream,
                       websocket_handoff handoff) {
    connections_.erase(from);
    websockets_.emplace_front(*this, std::move(stream), std::move(handoff));
    websockets_.front().start(websockets_.begin());
  }

  // A connection that speaks HTTP/2 (ALPN chose h2, or its first bytes were the h2c
  // preface): its transport goes on as an h2_connection, still counted in count_.open, with
  // what was read of it. Deletes the connection at `from`.
  void adopt_h2(std::list<connection>::iterator from, std::unique_ptr<transport> stream,
                std::string preread, connection_endpoints endpoints) {
    connections_.erase(from);
    h2_.emplace_front(*this, std::move(stream), std::move(preread), std::move(endpoints));
    h2_.front().start(h2_.begin());
  }

  void remove_h2(std::list<h2_connection>::iterator it) noexcept {
    h2_.erase(it);
    count_.release_connection();
    finish_if_drained();
  }

  void remove_websocket(std::list<websocket_session>::iterator it) noexcept {
    websockets_.erase(it);
    count_.release_connection();
    finish_if_drained();
  }

  // Adds this worker's counts to `total`.
  void add_stats(server_stats& total) const noexcept {
    total.connections += connections_accepted_.load(std::memory_order_relaxed);
    total.requests += requests_.load(std::memory_order_relaxed);
    counters_.sum_into(total);
  }
  server_counters& counters() noexcept { return counters_; }

 private:
  // Single writer: a plain load and store, no locked instruction on the request path.
  static void bump(std::atomic<std::uint64_t>& counter) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  bool drained() const noexcept {
    return connections_.empty() && websockets_.empty() && h2_.empty();
  }

  // The sweep timer is the worker's last work: cancelling it lets run() return.
  void finish_if_drained() noexcept {
    if (stopping_ && drained()) sweep_.cancel();
  }

  void arm_sweep() {
    sweep_.expires_after(sweep_every_);
    sweep_.async_wait([this](error_code ec) {
      if (!ec) return sweep();
      if (finished_ && stopping_ && drained()) finished_();
    });
  }

  // Acts on the connections past their deadline (closes all of them once a drain has run
  // out). Once stopping and empty, it stops re-arming, and with no work left run() returns.
  void sweep() {
    auto now = clock::now();
    bool out_of_time = stopping_ && now >= drain_deadline_;
    for (connection& c : connections_) {
      if (out_of_time) {
        c.close();
      } else {
        c.on_deadline(now);
      }
    }
    // A WebSocket's deadlines are Beast's own (websocket_options); only the drain's is ours.
    if (out_of_time)
      for (websocket_session& w : websockets_) w.close();
    for (auto it = h2_.begin(); it != h2_.end();) {
      h2_connection& h = *it++;  // may erase itself
      if (out_of_time) {
        h.close();
      } else {
        h.on_deadline(now);
      }
    }
    if (stopping_ && drained()) {
      if (finished_) finished_();
      return;
    }
    arm_sweep();
  }

  const server_options& options_;
  error_renderer render_error_;
  date_cache date_;
  std::atomic<std::uint64_t> requests_{0};
  server_counters counters_;
  session_environment environment_;
  connection_count& count_;
  tls_state& tls_;
  std::unique_ptr<asio::io_context> own_context_;
  asio::io_context& context_;
  timer_type sweep_;
  std::function<void()> finished_;
  std::chrono::milliseconds sweep_every_;
  std::list<connection> connections_;
  std::list<websocket_session> websockets_;
  std::list<h2_connection> h2_;
  bool stopping_ = false;
  clock::time_point drain_deadline_;
  std::atomic<std::uint64_t> connections_accepted_{0};
};

}  // namespace waypoint::beast::detail
