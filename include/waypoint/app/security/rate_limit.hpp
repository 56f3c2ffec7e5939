// Rate limits: a token bucket per client (or API key, or route), as one layer.
//
//   app.use(waypoint::app::rate_limit({.rate = 5, .burst = 20}));   // per client address
//   app.use(waypoint::app::rate_limit({.rate = 100, .burst = 200,
//                                      .key = waypoint::app::rate_limit_key::api_key}));
//   auto login = app.group("/login", waypoint::app::rate_limit({
//       .rate = 0.2, .burst = 5, .key = waypoint::app::rate_limit_key::route}));
//
// A request takes one token from its key's bucket; a bucket holds `burst` tokens and gains
// `rate` a second. A request finding the bucket empty is answered 429 with Retry-After.
// Every answer the layer lets through, and every 429, carries the RateLimit-Policy and
// RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11 (May 2026; the structured-field
// form the draft has had since -08): `RateLimit-Policy: "default";q=20;w=4`, the burst and
// the seconds an empty bucket takes to fill, and `RateLimit: "default";r=19;t=1`, the tokens
// left and the seconds until the next one (-11's "effective window": within it the client
// can use no more than r). The older RateLimit-Limit/-Remaining/-Reset trio is not sent.
//
// By default the buckets live in this process: each server of a fleet limits on its own, and
// at most max_keys are held. With `store` set they live there instead, and every limiter
// using it with the same policy_name shares them: redis_rate_limit_store
// (redis_rate_limit_store.hpp, the library waypoint::app_redis) keeps them in Redis, so N
// servers behind a load balancer enforce one limit together. A store that cannot answer is
// `fail_open`'s decision. docs/framework.md, "Rate limits", says what is held and what
// happens when there are more clients than max_keys.
#pragma once

#include "waypoint/app/operations/forwarded.hpp"
#include "waypoint/app/handler.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace waypoint::app {

class context;

// What a bucket belongs to.
enum class rate_limit_key : std::uint8_t {
  // The client's address: the socket's peer, or with `proxies` set the address the trusted
  // proxies in front name (forwarded.hpp's client_address()).
  client_address,
  // The value of the `api_key_header` field; a request without it is keyed by its client
  // address (as above), in a separate space, so that no key value can share an address's
  // bucket.
  api_key,
  // The matched route's pattern ("GET /v1/users/{id}"): one bucket per route, shared by all
  // clients, to protect an expensive endpoint. Unrouted requests share one bucket.
  route,
  // `key_function`'s result.
  custom,
};

// One request's outcome.
struct rate_limit_decision {
  bool allowed = false;
  std::uint32_t remaining = 0;  // tokens left after this request
  // Until a request would be let through (zero when this one was).
  std::chrono::nanoseconds retry_after{0};
  // Until the bucket gains its next token: the window in which at most `remaining` more
  // requests get through (the RateLimit field's t).
  std::chrono::nanoseconds next_token{0};
};

// What a limiter's options come to, as a store receives them with each key.
struct rate_limit_policy {
  std::string_view name;                 // options.policy_name
  std::chrono::nanoseconds interval{1};  // between two tokens: 1 / rate, at least 1 ns
  std::uint32_t burst = 1;               // the bucket's size, at least 1
};

// Where buckets are kept: a bucket per (policy name, key), taken from atomically. The
// default, when rate_limit_options::store is empty, is the limiter's own in-process shards;
// redis_rate_limit_store is the shared one. take() is called from the threads serving
// requests, concurrently, with keys of at most 65 bytes (the limiter hashes longer ones).
// It throws (any std::exception) when it cannot answer; the layer then does what
// rate_limit_options::fail_open says.
class rate_limit_store {
 public:
  virtual ~rate_limit_store() = default;
  // Takes one token from the bucket, GCRA's way: a bucket holding `burst` tokens that gains
  // one every `interval`, a request finding it empty refused without taking anything.
  virtual rate_limit_decision take(const rate_limit_policy& policy, std::string_view key) = 0;
};

struct rate_limit_options {
  // Tokens added per second (0.5: one every two seconds). Must be positive.
  double rate = 10;
  // The bucket's size: the most requests let through at once after a quiet spell. At least 1.
  std::uint32_t burst = 20;
  rate_limit_key key = rate_limit_key::client_address;
  // For client_address (and api_key without the header): the proxies whose Forwarded and
  // X-Forwarded-For are believed. Empty: the socket's peer, headers ignored.
  trusted_proxies proxies{};
  std::string api_key_header = "X-API-Key";
  // For rate_limit_key::custom: the request's key. An empty key lets the request through
  // uncounted and without RateLimit fields (an exemption: health checks, internal callers).
  std::function<std::string(context&)> key_function{};
  // The most keys held at once in this process (at least 1), when `store` is empty. Memory
  // never grows past it: a new key beyond it evicts a held one, a full bucket first (it holds
  // no state), else the least recently used.
  std::size_t max_keys = 100'000;
  // The policy's name in the RateLimit fields: 1..64 bytes of [A-Za-z0-9_.-].
  std::string policy_name = "default";
  // The time source of the in-process buckets, called from the threads serving requests;
  // empty: std::chrono::steady_clock::now. Tests pass a fake one. A store keeps its own time
  // (Redis's clock, so that servers with skewed clocks agree).
  std::function<std::chrono::steady_clock::time_point()> clock{};
  // Where the buckets are kept; empty: in this process (max_keys, clock). Limiters sharing a
  // store share the buckets of a policy_name: give the same layer on N servers the same
  // name, and two layers of one application that share a store different names.
  std::shared_ptr<rate_limit_store> store{};
  // When the store throws (Redis down or slow past its timeout). true: the request is let
  // through without RateLimit fields, and the application's log gets a line naming the
  // error (the first failure, then at most one every 10 s with the number let through
  // since), what most gateways do, since a limit is there to protect the service, not to
  // take it down with its store. false: the request is answered 503 with Retry-After: 1.
  bool fail_open = true;
};

// A limit, shared by the layers made from it (and inspectable by tests and metrics).
// Thread-safe. Its in-process buckets (no `store`) are spread over 64 shards, each behind
// its own mutex held only for one lookup and update, so requests for different keys rarely
// wait on one another.
//
// A bucket is kept as one time stamp (GCRA, the token bucket's equivalent form: the time at
// which the bucket will be full again), so a held key costs its text, the stamp and the
// list's and index's nodes: about 150 bytes, and the key's bytes past 15. Keys longer than
// 64 bytes (an API key of 8 KiB) are held, here or in a store, as "#" and their SHA-256 in
// hex, so that a held key costs at most that much.
class rate_limiter {
 public:
  // Throws std::invalid_argument for a rate that is not a positive finite number, a burst or
  // max_keys of 0, a bad policy name, rate_limit_key::custom without key_function, or an
  // empty api_key_header with rate_limit_key::api_key.
  explicit rate_limiter(rate_limit_options options);
  ~rate_limiter();
  rate_limiter(const rate_limiter&) = delete;
  rate_limiter& operator=(const rate_limiter&) = delete;

  // Takes a token from `key`'s bucket, at the clock's time (or the store's). Throws what
  // the store throws.
  rate_limit_decision take(std::string_view key);
  // The key a request is counted under (empty: not counted).
  std::string key_of(context& ctx) const;
  // The keys held in this process now: never more than max_keys; 0 with a store.
  std::size_t size() const;
  // The layer: layer_hooks, no coroutine. It counts the request before the inner layers run.
  middleware layer();

  const rate_limit_options& options() const noexcept;

 private:
  struct state;
  std::shared_ptr<state> state_;
};

// A layer with its own buckets: rate_limiter(options).layer(), the limiter kept alive by
// the layer. Throws as rate_limiter's constructor does.
middleware rate_limit(rate_limit_options options = {});

}  // namespace waypoint::app
