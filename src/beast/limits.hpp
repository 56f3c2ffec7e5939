// How many connections a server holds at once, and what happens past that: the limit
// (max_connections, or one derived from the descriptor limit), the 503s past it, and the
// count the acceptors and the workers share. The same limit is the descriptor budget:
// connections and the descriptors requests hold besides (exchange_host::acquire_descriptor)
// share it, so that the process stays below RLIMIT_NOFILE.
#pragma once

#include "waypoint/beast/resource_budget.hpp"
#include "waypoint/beast/server.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace waypoint::beast::detail {

// Connections past max_connections that still get their 503 (and the linger that lets the
// client read it); beyond these a connection is closed unanswered, so a flood cannot turn
// the refusals themselves into unbounded descriptors.
constexpr std::size_t refusal_reserve = 64;

struct connection_limits {
  std::size_t connections;  // served at once
  std::size_t refusals;     // answered 503 at once, past `connections`
};

// From the descriptor limit: an eighth of it (at least 128) is left for refusals, listeners,
// and the rest of the program; under a small limit, half serves and a quarter refuses. A
// max_connections above what the descriptor limit leaves is lowered to it, so that
// accept() never meets EMFILE: past the budget a client is answered 503, not dropped.
connection_limits limits_for(const server_options& o);

// Shared by the acceptors and the workers: how many connections are open, and the
// descriptor budget they share with the requests' own descriptors.
struct connection_count {
  connection_limits limits{};
  std::atomic<std::size_t> open{0};
  std::atomic<std::uint64_t> refused{0};
  // Limit limits.connections; each open connection holds one unit (a refused one holds
  // one of the allowance limits.refusals), each descriptor permit one more.
  resource_budget descriptors{0};

  // A connection goes: its unit goes back.
  void release_connection() noexcept {
    open.fetch_sub(1, std::memory_order_relaxed);
    descriptors.give_back(1);
  }
};

}  // namespace waypoint::beast::detail
