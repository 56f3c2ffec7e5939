// The rate limit layer (waypoint/app/security/rate_limit.hpp): GCRA buckets in sharded LRU maps (the
// default store, or any rate_limit_store), and the RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11 (May 2026).
#include "waypoint/app/security/rate_limit.hpp"

#include "waypoint/app/application.hpp"
#include "waypoint/app/context.hpp"
#include "waypoint/detail/hex.hpp"
#include "waypoint/pattern.hpp"

#include "app/detail/sha256.hpp"


#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cstring>
#include <cmath>
#include <list>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

namespace waypoint::app {
namespace {

constexpr std::size_t shard_count = 64;
// A key longer than this is held as its SHA-256 (64 hex digits, the same length).
constexpr std::size_t max_held_key_bytes = 64;
// On eviction, how many of the least recently used keys are looked at for a full bucket.
constexpr int eviction_scan = 8;
constexpr std::int64_t ns_per_second = 1'000'000'000;
// fail_open's log: at most one line per this many nanoseconds while a store keeps failing.
constexpr std::int64_t failure_log_interval_ns = 10 * ns_per_second;

std::string sha256_hex(std::string_view text) {
  std::string out = "#";  // no held key of 64 bytes or fewer is mistaken for a digest's
  waypoint::detail::append_hex(out, detail::sha256(text));
  return out;
}

// Whole seconds covering `ns` (Retry-After and the fields count in seconds: rounding down
// would ask a client to come back too early).
std::int64_t ceil_seconds(std::int64_t ns) { return ns <= 0 ? 0 : (ns + ns_per_second - 1) / ns_per_second; }

bool is_policy_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
  });
}

// One bucket: its key and when it will be full again (GCRA's "theoretical arrival time").
// A bucket whose time has passed is full, and means the same as no bucket at all.
struct bucket {
  std::string key;
  std::int64_t full_at;  // nanoseconds on the clock's scale
};

// A shard: its buckets most recently used first, and an index into them keyed by views of
// the buckets' own keys (list nodes never move), so a lookup allocates nothing.
struct alignas(64) shard {
  std::mutex mutex;
  std::list<bucket> recent;
  std::unordered_map<std::string_view, std::list<bucket>::iterator> index;
  std::size_t capacity = 0;
};

// The default store: a limiter's own buckets, in this process, at most max_keys of them.
// It serves one limiter, so it keys buckets by key alone (the policy's name is the same
// for every call).
class memory_store final : public rate_limit_store {
 public:
  using clock_function = std::function<std::chrono::steady_clock::time_point()>;

  memory_store(std::size_t max_keys, clock_function clock) : max_keys_(max_keys), clock_(std::move(clock)) {
    // max_keys spread over the shards, the remainder to the first ones: the sum is max_keys
    // exactly. Fewer keys than shards leaves some shards at 0: their keys go to a neighbour.
    for (std::size_t i = 0; i < shard_count; ++i)
      shards_[i].capacity = max_keys / shard_count + (i < max_keys % shard_count ? 1 : 0);
  }

  rate_limit_decision take(const rate_limit_policy& policy, std::string_view key) override {
    shard& s = shard_for(key);
    std::int64_t now = now_ns();
    std::int64_t interval_ns = policy.interval.count();
    std::int64_t capacity_ns = interval_ns * policy.burst;
    std::lock_guard lock(s.mutex);
    std::int64_t* full_at;
    if (auto found = s.index.find(key); found != s.index.end()) {
      s.recent.splice(s.recent.begin(), s.recent, found->second);
      full_at = &found->second->full_at;
    } else {
      if (s.index.size() >= s.capacity) evict(s, now);
      s.recent.push_front(bucket{std::string(key), now});
      try {
        s.index.emplace(std::string_view(s.recent.front().key), s.recent.begin());
      } catch (...) {
        s.recent.pop_front();
        throw;
      }
      full_at = &s.recent.front().full_at;
    }
    std::int64_t base = std::max(*full_at, now);
    std::int64_t next = base + interval_ns;
    rate_limit_decision d;
    if (next - now > capacity_ns) {
      d.retry_after = d.next_token = std::chrono::nanoseconds(next - now - capacity_ns);
      return d;
    }
    *full_at = next;
    d.allowed = true;
    std::int64_t spare = capacity_ns - (next - now);  // what the bucket holds, in time
    d.remaining = static_cast<std::uint32_t>(spare / interval_ns);
    d.next_token = std::chrono::nanoseconds(interval_ns - spare % interval_ns);
    return d;
  }

  std::size_t size() {
    std::size_t n = 0;
    for (shard& s : shards_) {
      std::lock_guard lock(s.mutex);
      n += s.index.size();
    }
    return n;
  }

 private:
  std::int64_t now_ns() const {
    auto t = clock_ ? clock_() : std::chrono::steady_clock::now();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }

  shard& shard_for(std::string_view key) {
    std::size_t h = std::hash<std::string_view>{}(key);
    std::size_t i = h % shard_count;
    // Fewer keys than shards: only the first max_keys shards hold any.
    if (shards_[i].capacity == 0) i %= max_keys_;
    return shards_[i];
  }

  // Makes room in a full shard: a full bucket among the least recently used goes first (no
  // client's answer changes), else the least recently used bucket (its client starts again
  // with a full bucket: the cost of bounding memory, paid by the quietest client).
  static void evict(shard& s, std::int64_t now) {
    auto victim = std::prev(s.recent.end());
    auto it = victim;
    for (int looked = 0; looked < eviction_scan; ++looked) {
      if (it->full_at <= now) {
        victim = it;
        break;
      }
      if (it == s.recent.begin()) break;
      --it;
    }
    s.index.erase(std::string_view(victim->key));
    s.recent.erase(victim);
  }

  std::size_t max_keys_;
  clock_function clock_;
  std::array<shard, shard_count> shards_;
};

}  // namespace

struct rate_limiter::state {
  rate_limit_options options;
  rate_limit_policy policy;  // its name views options.policy_name
  std::string policy_field;  // RateLimit-Policy's value, the same for every answer
  std::string current_prefix;  // RateLimit's value up to r's number: "\"default\";r="
  std::shared_ptr<rate_limit_store> store;  // options.store, or own
  memory_store* own = nullptr;  // the in-process buckets, when options.store is empty
  // fail_open's log: when the next line may be written (steady_clock ns), and the requests
  // let through uncounted since the last one.
  std::atomic<std::int64_t> next_failure_line{0};
  std::atomic<std::uint64_t> uncounted{0};

  explicit state(rate_limit_options o) : options(std::move(o)) {
    if (!std::isfinite(options.rate) || options.rate <= 0)
      throw std::invalid_argument("rate_limit: rate must be a positive number of tokens a second");
    if (options.burst == 0) throw std::invalid_argument("rate_limit: burst must be at least 1");
    if (options.max_keys == 0) throw std::invalid_argument("rate_limit: max_keys must be at least 1");
    if (!is_policy_name(options.policy_name))
      throw std::invalid_argument("rate_limit: policy_name must be 1..64 bytes of [A-Za-z0-9_.-]");
    if (options.key == rate_limit_key::custom && !options.key_function)
      throw std::invalid_argument("rate_limit: rate_limit_key::custom needs a key_function");
    if (options.key == rate_limit_key::api_key && options.api_key_header.empty())
      throw std::invalid_argument("rate_limit: rate_limit_key::api_key needs an api_key_header");
    double interval = 1e9 / options.rate;
    // A year of debt is far beyond any sensible policy, and keeps the arithmetic in range.
    if (interval * options.burst > 365.0 * 86400 * 1e9)
      throw std::invalid_argument("rate_limit: burst / rate is longer than a year");
    std::int64_t interval_ns = std::max<std::int64_t>(1, std::llround(interval));
    policy = {options.policy_name, std::chrono::nanoseconds(interval_ns), options.burst};
    std::string quoted_name = "\"" + options.policy_name + "\"";
    current_prefix = quoted_name + ";r=";
    policy_field = quoted_name + ";q=" + std::to_string(options.burst) +
                   ";w=" + std::to_string(std::max<std::int64_t>(1, ceil_seconds(interval_ns * options.burst)));
    if (options.store) {
      store = options.store;
    } else {
      auto buckets = std::make_shared<memory_store>(options.max_keys, options.clock);
      own = buckets.get();
      store = std::move(buckets);
    }
  }

  rate_limit_decision take(std::string_view key) {
    std::string digest;
    if (key.size() > max_held_key_bytes) {
      digest = sha256_hex(key);
      key = digest;
    }
    return store->take(policy, key);
  }

  std::string key_of(context& ctx) const {
    switch (options.key) {
      case rate_limit_key::client_address:
        return client_address(ctx, options.proxies);
      case rate_limit_key::api_key: {
        std::string_view value = ctx.header(options.api_key_header);
        std::string key;
        if (!value.empty()) {
          key.reserve(2 + value.size());
          key.append("k:").append(value);
        } else {
          key = client_address(ctx, options.proxies);
          key.insert(0, "a:");
        }
        return key;
      }
      case rate_limit_key::route:
        return std::string(ctx.route_pattern().text());
      case rate_limit_key::custom:
        return options.key_function(ctx);
    }
    return {};
  }

  // The layer's before hook: counts the request, sets the fields, answers 429 when empty.
  // RateLimit's t is draft -11's "effective window", the seconds within which the client
  // can use no more than r: until the next token. Rounded up to whole seconds (the draft has
  // no finer unit), so a client keeping to it is, above one token a second, more cautious
  // than it needs to be, never less. On a 429 it equals Retry-After, which the draft (§6)
  // asks not to end before the window does.
  bool admit(context& ctx) {
    std::string key = key_of(ctx);
    if (key.empty() && options.key == rate_limit_key::custom) return true;
    rate_limit_decision d;
    try {
      d = take(key);
    } catch (const std::exception& e) {
      return store_failed(ctx, e);
    }
    response_builder& res = ctx.response();
    res.header("RateLimit-Policy", policy_field);
    // Written on the stack: the quoted name and ";r=" are at most 69 bytes, each number at
    // most 20 digits.
    char current[128];
    std::size_t prefix = std::min<std::size_t>(current_prefix.size(), 69);
    std::memcpy(current, current_prefix.data(), prefix);
    char* end = std::to_chars(current + prefix, current + prefix + 20, d.remaining).ptr;
    std::memcpy(end, ";t=", 3);
    end = std::to_chars(end + 3, end + 23, ceil_seconds(d.next_token.count())).ptr;
    res.header("RateLimit", std::string_view(current, static_cast<std::size_t>(end - current)));
    if (d.allowed) return true;
    std::string seconds = std::to_string(std::max<std::int64_t>(1, ceil_seconds(d.retry_after.count())));
    res.header("Retry-After", seconds);
    res.problem(429, "rate limit exceeded: retry after " + seconds + " s");
    return false;
  }

  // A store that could not answer: fail_open lets the request through uncounted, and logs
  // the first failure and then at most one line every failure_log_interval (a store that is
  // down fails every request: a line each would bury the log); fail closed answers 503.
  bool store_failed(context& ctx, const std::exception& e) {
    if (!options.fail_open) {
      response_builder& res = ctx.response();
      res.header("Retry-After", "1");
      res.problem(503, "rate limit unavailable: its store did not answer");
      return false;
    }
    std::uint64_t passed = uncounted.fetch_add(1, std::memory_order_relaxed) + 1;
    std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now().time_since_epoch()).count();
    std::int64_t due = next_failure_line.load(std::memory_order_relaxed);
    if (now >= due && next_failure_line.compare_exchange_strong(due, now + failure_log_interval_ns)) {
      passed = uncounted.exchange(0, std::memory_order_relaxed);
      ctx.app().log("rate_limit \"" + options.policy_name + "\": the store failed (" + e.what() +
                    "); " + std::to_string(passed) + " request(s) let through uncounted (fail_open)");
    }
    return true;
  }

  std::size_t size() const { return own ? own->size() : 0; }
};

rate_limiter::rate_limiter(rate_limit_options options)
    : state_(std::make_shared<state>(std::move(options))) {}

rate_limiter::~rate_limiter() = default;

rate_limit_decision rate_limiter::take(std::string_view key) { return state_->take(key); }

std::string rate_limiter::key_of(context& ctx) const { return state_->key_of(ctx); }

std::size_t rate_limiter::size() const { return state_->size(); }

const rate_limit_options& rate_limiter::options() const noexcept { return state_->options; }

// The document lists what the layer answers in the handler's place: 429, and the 503 of a
// store that fails closed.
middleware rate_limiter::layer() {
  middleware layer = layer_hooks{[state = state_](context& ctx) { return state->admit(ctx); }, {}};
  layer.may_answer(429);
  if (state_->options.store && !state_->options.fail_open) layer.may_answer(503);
  return layer;
}

middleware rate_limit(rate_limit_options options) {
  rate_limiter limiter(std::move(options));
  return limiter.layer();
}

}  // namespace waypoint::app
