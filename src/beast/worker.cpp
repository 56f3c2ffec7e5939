// The worker's construction and its thread's loop.
#include "worker.hpp"

#include "waypoint/beast/adapter.hpp"

#include <algorithm>
#include <cstdio>

namespace waypoint::beast::detail {
namespace {

// The sweep runs at a quarter of the shortest timeout, so a connection outlives its
// deadline by at most 25%, but never more often than every 10 ms nor less than once a second.
constexpr std::chrono::milliseconds min_sweep_interval{10};
constexpr std::chrono::milliseconds max_sweep_interval{1000};

std::chrono::milliseconds sweep_interval(const server_options& o) {
  auto shortest = std::min({o.idle_timeout, o.header_timeout, o.body_timeout, o.write_timeout,
                            o.tls_handshake_timeout});
  return std::clamp(shortest / 4, min_sweep_interval, max_sweep_interval);
}

}  // namespace

thread_local bool on_server_thread = false;

worker::worker(asio::io_context* context, const server_options& options,
               const exchange_function& dispatch, const std::atomic<bool>& stop_requested,
               connection_count& count, tls_state& tls)
    : options_(options),
      render_error_(options.render_error ? options.render_error : error_renderer(write_plain_error)),
      environment_{options_, dispatch, render_error_, date_, stop_requested, requests_, counters_},
      count_(count),
      tls_(tls),
      // Concurrency hint 1: one thread runs it, so Asio can skip its locks.
      own_context_(context ? nullptr : std::make_unique<asio::io_context>(1)),
      context_(context ? *context : *own_context_),
      sweep_(context_),
      sweep_every_(sweep_interval(options)) {}

void worker::run() {
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

void worker::start_on_caller_context(std::function<void()> finished) {
  finished_ = std::move(finished);
  arm_sweep();
}

}  // namespace waypoint::beast::detail
