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
  auto shortest = std::min({o.idle_timeout, o.header_timeout, o.body_timeout, o.write_timeout});
  return std::clamp(shortest / 4, min_sweep_interval, max_sweep_interval);
}

}  // namespace

thread_local bool on_server_thread = false;

worker::worker(const server_options& options, const dispatch_function& dispatch,
               const std::atomic<bool>& stop_requested, connection_count& count)
    : options_(options),
      render_error_(options.render_error ? options.render_error : error_renderer(write_plain_error)),
      environment_{options_, dispatch, render_error_, date_, stop_requested, requests_},
      count_(count),
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

}  // namespace waypoint::beast::detail
