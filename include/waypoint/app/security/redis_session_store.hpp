// Sessions in Redis, shared by every server that points at the same instance:
//
//   auto store = std::make_shared<waypoint::app::redis_session_store>(
//       waypoint::app::redis_session_store_options{
//           .connection = {.host = "10.0.0.5", .port = 6379}});
//   app.use(waypoint::app::sessions({.store = store}));
//
// Built as its own library, waypoint::app_redis, when Debian's libhiredis-dev is installed
// (`scripts/install-deps redis`), so that waypoint::app never needs hiredis.
//
// What it costs: hiredis's synchronous client, called from the thread serving the request.
// Each load, save and erase is one round trip during which that thread does nothing else:
// about 25 µs to a Redis on the same host (redis-benchmark, one client, on a shared 2-core
// machine: GET p50 23 µs, p99 63 µs), a network round trip (0.2-1 ms within one data
// centre) otherwise; a request that loads and changes its session makes two. A server with
// N threads then serves at most N such requests at once however fast Redis is, and a Redis
// that stops answering holds each thread up to `timeout` per call before the request is
// answered 500. Keep the timeout short and Redis close; where that is not enough, give the
// server more threads than cores (server_options::threads).
#pragma once

#include "waypoint/app/security/redis_connection.hpp"
#include "waypoint/app/security/sessions.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace waypoint::app {

struct redis_session_store_options {
  redis_connection_options connection;  // host, port, timeout, idle connections
  // Prefixed to every key, so that sessions share an instance with other data (and two
  // applications that must not share sessions use two prefixes).
  std::string key_prefix = "waypoint:session:";
};

// A session_store on Redis: GET, SET with PX (the session's time to live, so Redis drops
// abandoned sessions itself), DEL. Thread-safe: each call has a connection to itself, taken
// from a small pool under a mutex held only to take or give one back. A connection whose
// socket failed (a timeout, a reset) is closed, not reused; the next call opens another.
// Errors throw std::runtime_error naming the command and what Redis or the socket said.
class redis_session_store final : public session_store {
 public:
  // Connects once, so that a wrong address fails here rather than on the first request.
  // Throws std::runtime_error when it cannot, std::invalid_argument for an empty host.
  explicit redis_session_store(redis_session_store_options options = {});
  ~redis_session_store() override;
  redis_session_store(const redis_session_store&) = delete;
  redis_session_store& operator=(const redis_session_store&) = delete;

  std::optional<std::string> load(std::string_view key) override;
  void save(std::string_view key, std::string_view record, std::chrono::milliseconds ttl) override;
  void erase(std::string_view key) override;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace waypoint::app
