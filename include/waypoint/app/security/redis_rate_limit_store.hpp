// Rate limits in Redis, shared by every server that points at the same instance:
//
//   auto buckets = std::make_shared<waypoint::app::redis_rate_limit_store>(
//       waypoint::app::redis_rate_limit_store_options{
//           .connection = {.host = "10.0.0.5", .port = 6379}});
//   app.use(waypoint::app::rate_limit({.rate = 5, .burst = 20, .store = buckets}));
//
// N servers with that layer let a client through `burst` times at once and `rate` a second
// between them, all together, not each. Built as part of waypoint::app_redis, with
// redis_session_store, when Debian's libhiredis-dev is installed (`scripts/install-deps redis`).
//
// How: each take() is one EVALSHA of a small Lua script (EVAL when Redis answers NOSCRIPT,
// after a restart or SCRIPT FLUSH) that does GCRA atomically inside Redis: read the bucket's
// "full again at" time, compare it with Redis's own TIME (so servers whose clocks disagree
// still agree on every bucket), and write it back with PEXPIRE equal to the time the bucket
// takes to fill again, after which a missing key means the same as a full bucket. Redis
// therefore holds only buckets that are not full: its memory is bounded by the clients
// active within one refill time, never by every client seen. A bucket's key is
// key_prefix + policy name + ":" + the limiter's key (at most 65 bytes). Times are
// microseconds: a rate above 1,000,000 a second is counted as 1,000,000.
//
// What it costs: one round trip per request that the layer counts, made by hiredis's
// synchronous client on the thread serving the request (redis_session_store.hpp says what
// that means for a server's threads); BENCHMARKS.md §20 gives the number.
//
// When Redis cannot answer (down, or slower than `timeout`), take() throws and the layer
// does what rate_limit_options::fail_open says (by default, lets the request through and
// logs). So that a Redis that has stopped answering does not cost every request `timeout`,
// a failed call makes the store fail the calls of the next `retry_after_failure` at once,
// without trying; the first call after that tries again.
#pragma once

#include "waypoint/app/security/rate_limit.hpp"
#include "waypoint/app/security/redis_connection.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace waypoint::app {

struct redis_rate_limit_store_options {
  redis_connection_options connection;  // host, port, timeout, idle connections
  // Prefixed to every key, so that limits share an instance with other data.
  std::string key_prefix = "waypoint:ratelimit:";
  // After a call fails on the socket, calls fail at once for this long (see above). Zero:
  // every call tries.
  std::chrono::milliseconds retry_after_failure{1000};
};

// A rate_limit_store in Redis. Thread-safe. take() throws std::runtime_error naming the
// address and what Redis or the socket said.
class redis_rate_limit_store final : public rate_limit_store {
 public:
  // Connects and loads the script, so that a wrong address fails here rather than on the
  // first request. Throws std::runtime_error when it cannot, std::invalid_argument for an
  // empty host or a timeout that is not positive.
  explicit redis_rate_limit_store(redis_rate_limit_store_options options = {});
  ~redis_rate_limit_store() override;
  redis_rate_limit_store(const redis_rate_limit_store&) = delete;
  redis_rate_limit_store& operator=(const redis_rate_limit_store&) = delete;

  rate_limit_decision take(const rate_limit_policy& policy, std::string_view key) override;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace waypoint::app
