// The Redis session store (waypoint/app/redis_session_store.hpp): hiredis's synchronous
// client, a small pool of connections, one command per call.
#include "waypoint/app/redis_session_store.hpp"

#include <hiredis/hiredis.h>

#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace waypoint::app {
namespace {

struct context_deleter {
  void operator()(redisContext* c) const noexcept { redisFree(c); }
};
using connection = std::unique_ptr<redisContext, context_deleter>;

struct reply_deleter {
  void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

struct redis_session_store::state {
  redis_session_store_options options;
  std::mutex mutex;
  std::vector<connection> idle;  // guarded by mutex

  explicit state(redis_session_store_options o) : options(std::move(o)) {
    if (options.host.empty()) throw std::invalid_argument("redis_session_store: host is empty");
    if (options.timeout.count() <= 0)
      throw std::invalid_argument("redis_session_store: timeout must be positive");
  }

  std::string where() const { return options.host + ":" + std::to_string(options.port); }

  connection open() const {
    timeval tv = to_timeval(options.timeout);
    connection c(redisConnectWithTimeout(options.host.c_str(), options.port, tv));
    if (!c) throw std::runtime_error("redis_session_store: cannot allocate a connection to " + where());
    if (c->err) {
      std::string why = c->errstr;
      throw std::runtime_error("redis_session_store: cannot connect to " + where() + ": " + why);
    }
    if (redisSetTimeout(c.get(), tv) != REDIS_OK)
      throw std::runtime_error("redis_session_store: cannot set the timeout on " + where());
    return c;
  }

  connection take() {
    {
      std::lock_guard lock(mutex);
      if (!idle.empty()) {
        connection c = std::move(idle.back());
        idle.pop_back();
        return c;
      }
    }
    return open();  // outside the lock: a slow connect holds up no other call
  }

  void give_back(connection c) {
    std::lock_guard lock(mutex);
    if (idle.size() < options.max_idle_connections) idle.push_back(std::move(c));
  }

  // Runs one command on a pooled connection. A connection whose command failed is closed,
  // since hiredis leaves it unusable after an I/O error or a timeout.
  template <class... Args>
  reply_ptr command(const char* name, const char* format, Args... args) {
    connection c = take();
    reply_ptr r(static_cast<redisReply*>(redisCommand(c.get(), format, args...)));
    if (!r) {
      std::string why = c->errstr;
      throw std::runtime_error(std::string("redis_session_store: ") + name + " on " + where() + " failed: " + why);
    }
    if (r->type == REDIS_REPLY_ERROR) {
      std::string why(r->str, r->len);
      throw std::runtime_error(std::string("redis_session_store: ") + name + " on " + where() + ": " + why);
    }
    give_back(std::move(c));
    return r;
  }

  std::string full_key(std::string_view key) const {
    std::string k;
    k.reserve(options.key_prefix.size() + key.size());
    k.append(options.key_prefix).append(key);
    return k;
  }
};

redis_session_store::redis_session_store(redis_session_store_options options)
    : state_(std::make_unique<state>(std::move(options))) {
  state_->give_back(state_->open());
}

redis_session_store::~redis_session_store() = default;

std::optional<std::string> redis_session_store::load(std::string_view key) {
  std::string k = state_->full_key(key);
  reply_ptr r = state_->command("GET", "GET %b", k.data(), k.size());
  if (r->type == REDIS_REPLY_NIL) return std::nullopt;
  if (r->type != REDIS_REPLY_STRING)
    throw std::runtime_error("redis_session_store: GET answered something other than a string");
  return std::string(r->str, r->len);
}

void redis_session_store::save(std::string_view key, std::string_view record, std::chrono::milliseconds ttl) {
  std::string k = state_->full_key(key);
  long long px = ttl.count() < 1 ? 1 : static_cast<long long>(ttl.count());  // PX must be positive
  state_->command("SET", "SET %b %b PX %lld", k.data(), k.size(), record.data(), record.size(), px);
}

void redis_session_store::erase(std::string_view key) {
  std::string k = state_->full_key(key);
  state_->command("DEL", "DEL %b", k.data(), k.size());
}

}  // namespace waypoint::app
