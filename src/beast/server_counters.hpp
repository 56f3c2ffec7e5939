// What a worker counts for server_stats beyond connections and requests: bytes on the
// wire, the server's own error answers by status and timeouts by kind. Each worker owns
// one and only its thread writes it, so a count is a relaxed load and store, no locked
// instruction; stats() reads them from any thread.
#pragma once

#include "waypoint/beast/server.hpp"

#include <array>
#include <atomic>
#include <cstdint>

namespace waypoint::beast::detail {

enum class timeout_kind : std::uint8_t { idle, header, body, write, tls_handshake };
enum class tls_event : std::uint8_t { handshake, handshake_failure, plaintext_on_tls, tls_on_plaintext };

struct server_counters {
  std::atomic<std::uint64_t> bytes_received{0};
  std::atomic<std::uint64_t> bytes_sent{0};
  std::array<std::atomic<std::uint64_t>, server_stats::error_statuses.size()> errors{};
  std::array<std::atomic<std::uint64_t>, 5> timeouts{};
  std::array<std::atomic<std::uint64_t>, 4> tls{};
  std::atomic<std::uint64_t> h2_connections{0};
  std::atomic<std::uint64_t> h2_streams{0};
  std::atomic<std::uint64_t> h2_resets_received{0};
  std::atomic<std::uint64_t> h2_resets_sent{0};
  std::atomic<std::uint64_t> h2_floods{0};

  static void add(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void error(unsigned status) noexcept {
    for (std::size_t i = 0; i < server_stats::error_statuses.size(); ++i)
      if (server_stats::error_statuses[i] == status) return add(errors[i]);
  }
  void timeout(timeout_kind kind) noexcept { add(timeouts[static_cast<std::size_t>(kind)]); }
  void count(tls_event event) noexcept { add(tls[static_cast<std::size_t>(event)]); }

  // Adds this worker's counts to `total`.
  void sum_into(server_stats& total) const noexcept {
    auto read = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
    total.bytes_received += read(bytes_received);
    total.bytes_sent += read(bytes_sent);
    for (std::size_t i = 0; i < errors.size(); ++i) total.errors[i] += read(errors[i]);
    total.timeouts.idle += read(timeouts[0]);
    total.timeouts.header += read(timeouts[1]);
    total.timeouts.body += read(timeouts[2]);
    total.timeouts.write += read(timeouts[3]);
    total.timeouts.tls_handshake += read(timeouts[4]);
    total.tls.handshakes += read(tls[0]);
    total.tls.handshake_failures += read(tls[1]);
    total.tls.plaintext_on_tls += read(tls[2]);
    total.tls.tls_on_plaintext += read(tls[3]);
    total.http2.connections += read(h2_connections);
    total.http2.streams += read(h2_streams);
    total.http2.resets_received += read(h2_resets_received);
    total.http2.resets_sent += read(h2_resets_sent);
    total.http2.floods += read(h2_floods);
  }
};

}  // namespace waypoint::beast::detail
