// The Redis rate limit store (waypoint/app/security/redis_rate_limit_store.hpp): GCRA in one Lua
// script, run by EVALSHA on the pool shared with the other Redis stores.
#include "waypoint/app/security/redis_rate_limit_store.hpp"

#include "redis_connection_pool.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <stdexcept>
#include <utility>

namespace waypoint::app {
namespace {

// GCRA on Redis's clock, in microseconds (a double holds them exactly: now is about 2^51).
// KEYS[1]: the bucket, holding when it will be full again; absent: full.
// ARGV[1]: microseconds between two tokens; ARGV[2]: the burst.
// Returns {allowed 0/1, tokens left, µs until a request would pass, µs until the next token}.
// TIME before a write is allowed since Redis 5 (scripts replicate their effects, not
// themselves); string.format('%d') because Lua prints a number of 16 digits as %.14g.
constexpr std::string_view gcra_script = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local capacity = interval * tonumber(ARGV[2])
local full_at = tonumber(redis.call('GET', KEYS[1]) or now) or now
if full_at < now then full_at = now end
local next = full_at + interval
if next - now > capacity then
  local wait = next - now - capacity
  return {0, 0, wait, wait}
end
redis.call('SET', KEYS[1], string.format('%d', next), 'PX', math.ceil((next - now) / 1000))
local spare = capacity - (next - now)
return {1, math.floor(spare / interval), 0, interval - spare % interval}
)lua";

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::int64_t integer_at(const redisReply* r, std::size_t i) {
  if (r->element[i]->type != REDIS_REPLY_INTEGER)
    throw std::runtime_error("redis_rate_limit_store: the script answered something other than integers");
  return r->element[i]->integer;
}

}  // namespace

struct redis_rate_limit_store::state {
  std::string key_prefix;
  std::int64_t retry_after_failure_ns;
  detail::redis_connection_pool pool;
  std::string script_sha;  // set once, by the constructor
  // Until when (steady_clock ns) calls fail without trying, after a socket failure.
  std::atomic<std::int64_t> failing_until{0};

  explicit state(redis_rate_limit_store_options o)
      : key_prefix(std::move(o.key_prefix)),
        retry_after_failure_ns(std::chrono::nanoseconds(o.retry_after_failure).count()),
        pool("redis_rate_limit_store", std::move(o.connection)) {
    pool.connect_once();
    detail::redis_reply r = pool.checked({"SCRIPT", "LOAD", gcra_script});
    if (r->type != REDIS_REPLY_STRING)
      throw std::runtime_error("redis_rate_limit_store: SCRIPT LOAD answered something other than a digest");
    script_sha.assign(r->str, r->len);
  }

  // EVALSHA, or EVAL when Redis no longer has the script. A socket failure starts the spell
  // in which calls fail at once.
  detail::redis_reply run_script(std::string_view key, std::string_view interval, std::string_view burst) {
    try {
      detail::redis_reply r = pool.run({"EVALSHA", script_sha, "1", key, interval, burst});
      if (r->type == REDIS_REPLY_ERROR && std::string_view(r->str, r->len).starts_with("NOSCRIPT"))
        r = pool.run({"EVAL", gcra_script, "1", key, interval, burst});
      return r;
    } catch (const std::runtime_error&) {
      failing_until.store(steady_ns() + retry_after_failure_ns, std::memory_order_relaxed);
      throw;
    }
  }

  rate_limit_decision take(const rate_limit_policy& policy, std::string_view key) {
    if (steady_ns() < failing_until.load(std::memory_order_relaxed))
      throw std::runtime_error(pool.where("EVALSHA") + ": not tried, a call failed less than " +
                               std::to_string(retry_after_failure_ns / 1'000'000) + " ms ago");
    std::string full_key;
    full_key.reserve(key_prefix.size() + policy.name.size() + 1 + key.size());
    full_key.append(key_prefix).append(policy.name).append(":").append(key);
    std::int64_t interval_us = std::max<std::int64_t>(1, (policy.interval.count() + 500) / 1000);
    char interval[24], burst[24];
    auto interval_end = std::to_chars(interval, interval + sizeof interval, interval_us).ptr;
    auto burst_end = std::to_chars(burst, burst + sizeof burst, policy.burst).ptr;
    detail::redis_reply r = run_script(full_key, std::string_view(interval, static_cast<std::size_t>(interval_end - interval)),
                                       std::string_view(burst, static_cast<std::size_t>(burst_end - burst)));
    if (r->type == REDIS_REPLY_ERROR)
      throw std::runtime_error(pool.where("EVALSHA") + ": " + std::string(r->str, r->len));
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 4)
      throw std::runtime_error("redis_rate_limit_store: the script answered something other than four integers");
    rate_limit_decision d;
    d.allowed = integer_at(r.get(), 0) == 1;
    d.remaining = static_cast<std::uint32_t>(std::clamp<std::int64_t>(integer_at(r.get(), 1), 0, policy.burst));
    d.retry_after = std::chrono::microseconds(integer_at(r.get(), 2));
    d.next_token = std::chrono::microseconds(integer_at(r.get(), 3));
    return d;
  }
};

redis_rate_limit_store::redis_rate_limit_store(redis_rate_limit_store_options options)
    : state_(std::make_unique<state>(std::move(options))) {}

redis_rate_limit_store::~redis_rate_limit_store() = default;

rate_limit_decision redis_rate_limit_store::take(const rate_limit_policy& policy, std::string_view key) {
  return state_->take(policy, key);
}

}  // namespace waypoint::app
