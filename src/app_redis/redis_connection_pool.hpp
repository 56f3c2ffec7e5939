// The connections of waypoint::app_redis's stores (redis_session_store, redis_rate_limit_store):
// hiredis's synchronous client, a small pool, one command per call, with the timeout on
// connecting and on every command. Private to src/app_redis/.
#pragma once

#include "waypoint/app/security/redis_connection.hpp"

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app::detail {

struct redis_reply_deleter {
  void operator()(redisReply* r) const noexcept { freeReplyObject(r); }
};
using redis_reply = std::unique_ptr<redisReply, redis_reply_deleter>;

// Thread-safe: each call has a connection to itself, taken from the idle ones under a mutex
// held only to take or give one back (or opened, outside the lock). A connection whose
// command failed on the socket (a timeout, a reset) is closed, since hiredis leaves it
// unusable, and so are the idle ones: a Redis that restarted or went away took them all,
// and each would otherwise fail one more call. One whose reply was a Redis error is whole
// and goes back to the pool.
class redis_connection_pool {
 public:

  // `owner` names the store in messages ("redis_session_store"). Throws
  // std::invalid_argument for an empty host or a timeout that is not positive. Connects
  // nowhere (connect_once() does).
  redis_connection_pool(std::string owner, redis_connection_options options);
  ~redis_connection_pool();
  redis_connection_pool(const redis_connection_pool&) = delete;
  redis_connection_pool& operator=(const redis_connection_pool&) = delete;

  // Opens a connection and keeps it idle, so that a wrong address fails when the store is
  // made. Throws std::runtime_error when it cannot.
  void connect_once();

  // Runs one command given as its words (binary-safe). Throws std::runtime_error naming the
  // command and the address when the socket fails; a reply that is an error comes back as
  // one (REDIS_REPLY_ERROR), for the caller to read (NOSCRIPT) or refuse (checked()).
  redis_reply run(std::initializer_list<std::string_view> words);

  // run(), and an error reply thrown as std::runtime_error with Redis's text.
  redis_reply checked(std::initializer_list<std::string_view> words);

  // Runs `commands` (each its words, binary-safe) on one connection, all written before any
  // reply is read: one round trip for the lot (redis_topic_broker's batches of PUBLISH).
  // Returns the replies in order; throws as run() does when the socket fails, whatever part
  // of the batch Redis ran.
  std::vector<redis_reply> pipelined(const std::vector<std::vector<std::string_view>>& commands);

  // "owner: COMMAND on host:port" for messages.
  std::string where(std::string_view command) const;

 private:
  struct context_deleter {
    void operator()(redisContext* c) const noexcept { redisFree(c); }
  };
  using connection = std::unique_ptr<redisContext, context_deleter>;

  connection open() const;
  connection take();
  void give_back(connection c);
  void drop_idle();

  std::string owner_;
  redis_connection_options options_;
  std::mutex mutex_;
  std::vector<connection> idle_;  // guarded by mutex_
};

}  // namespace waypoint::app::detail
