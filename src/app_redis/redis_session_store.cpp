// The Redis session store (waypoint/app/security/redis_session_store.hpp): one command per call on
// the pool shared with the other Redis stores (redis_connection_pool.hpp).
#include "waypoint/app/security/redis_session_store.hpp"

#include "redis_connection_pool.hpp"

#include <stdexcept>
#include <utility>

namespace waypoint::app {

struct redis_session_store::state {
  std::string key_prefix;
  detail::redis_connection_pool pool;

  explicit state(redis_session_store_options o)
      : key_prefix(std::move(o.key_prefix)),
        pool("redis_session_store", std::move(o.connection)) {}

  std::string full_key(std::string_view key) const {
    std::string k;
    k.reserve(key_prefix.size() + key.size());
    k.append(key_prefix).append(key);
    return k;
  }
};

redis_session_store::redis_session_store(redis_session_store_options options)
    : state_(std::make_unique<state>(std::move(options))) {
  state_->pool.connect_once();
}

redis_session_store::~redis_session_store() = default;

std::optional<std::string> redis_session_store::load(std::string_view key) {
  detail::redis_reply r = state_->pool.checked({"GET", state_->full_key(key)});
  if (r->type == REDIS_REPLY_NIL) return std::nullopt;
  if (r->type != REDIS_REPLY_STRING)
    throw std::runtime_error("redis_session_store: GET answered something other than a string");
  return std::string(r->str, r->len);
}

void redis_session_store::save(std::string_view key, std::string_view record, std::chrono::milliseconds ttl) {
  std::string px = std::to_string(ttl.count() < 1 ? 1 : ttl.count());  // PX must be positive
  state_->pool.checked({"SET", state_->full_key(key), record, "PX", px});
}

void redis_session_store::erase(std::string_view key) {
  state_->pool.checked({"DEL", state_->full_key(key)});
}

}  // namespace waypoint::app
