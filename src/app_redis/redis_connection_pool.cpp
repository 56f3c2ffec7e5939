// The connection pool of waypoint::app_redis (redis_connection_pool.hpp).
#include "redis_connection_pool.hpp"

#include <stdexcept>
#include <utility>

namespace waypoint::app::detail {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms.count() % 1000) * 1000);
  return tv;
}

// Commands have a handful of words: on the stack, no allocation for the argument arrays.
constexpr std::size_t max_words = 16;

}  // namespace

redis_connection_pool::redis_connection_pool(std::string owner, redis_connection_options options)
    : owner_(std::move(owner)), options_(std::move(options)) {
  if (options_.host.empty()) throw std::invalid_argument(owner_ + ": host is empty");
  if (options_.timeout.count() <= 0) throw std::invalid_argument(owner_ + ": timeout must be positive");
}

redis_connection_pool::~redis_connection_pool() = default;

std::string redis_connection_pool::where(std::string_view command) const {
  std::string text = owner_;
  text.append(": ").append(command).append(" on ").append(options_.host);
  text.append(":").append(std::to_string(options_.port));
  return text;
}

redis_connection_pool::connection redis_connection_pool::open() const {
  timeval tv = to_timeval(options_.timeout);
  connection c(redisConnectWithTimeout(options_.host.c_str(), options_.port, tv));
  if (!c) throw std::runtime_error(where("connect") + ": cannot allocate a connection");
  if (c->err) throw std::runtime_error(where("connect") + ": " + c->errstr);
  if (redisSetTimeout(c.get(), tv) != REDIS_OK)
    throw std::runtime_error(where("connect") + ": cannot set the timeout");
  return c;
}

void redis_connection_pool::connect_once() { give_back(open()); }

redis_connection_pool::connection redis_connection_pool::take() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      connection c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return open();  // outside the lock: a slow connect holds up no other call
}

void redis_connection_pool::give_back(connection c) {
  std::lock_guard lock(mutex_);
  if (idle_.size() < options_.max_idle_connections) idle_.push_back(std::move(c));
}

void redis_connection_pool::drop_idle() {
  std::vector<connection> stale;
  {
    std::lock_guard lock(mutex_);
    stale.swap(idle_);
  }  // closed outside the lock
}

redis_reply redis_connection_pool::run(std::initializer_list<std::string_view> words) {
  if (words.size() == 0 || words.size() > max_words) throw std::logic_error(owner_ + ": a command of 1..16 words");
  const char* argv[max_words];
  std::size_t lengths[max_words];
  std::size_t n = 0;
  for (std::string_view w : words) {
    argv[n] = w.empty() ? "" : w.data();  // never a null pointer for hiredis's memcpy
    lengths[n++] = w.size();
  }
  connection c = take();
  redis_reply r(static_cast<redisReply*>(redisCommandArgv(c.get(), static_cast<int>(n), argv, lengths)));
  if (!r) {
    drop_idle();
    throw std::runtime_error(where(*words.begin()) + " failed: " + c->errstr);
  }
  give_back(std::move(c));
  return r;
}

std::vector<redis_reply> redis_connection_pool::pipelined(
    const std::vector<std::vector<std::string_view>>& commands) {
  std::vector<redis_reply> replies;
  if (commands.empty()) return replies;
  std::string_view first = commands.front().empty() ? "pipeline" : commands.front().front();
  connection c = take();
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const std::vector<std::string_view>& words : commands) {
    if (words.empty()) throw std::logic_error(owner_ + ": a command of no words");
    argv.clear();
    lengths.clear();
    for (std::string_view w : words) {
      argv.push_back(w.empty() ? "" : w.data());
      lengths.push_back(w.size());
    }
    int n = static_cast<int>(argv.size());
    if (redisAppendCommandArgv(c.get(), n, argv.data(), lengths.data()) != REDIS_OK)
      throw std::runtime_error(where(first) + " failed: " + c->errstr);
  }
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* reply = nullptr;
    // The first call writes the whole batch (hiredis flushes before it reads).
    if (redisGetReply(c.get(), &reply) != REDIS_OK || !reply) {
      drop_idle();
      throw std::runtime_error(where(first) + " failed: " + c->errstr);
    }
    replies.emplace_back(static_cast<redisReply*>(reply));
  }
  give_back(std::move(c));
  return replies;
}

redis_reply redis_connection_pool::checked(std::initializer_list<std::string_view> words) {
  redis_reply r = run(words);
  if (r->type == REDIS_REPLY_ERROR)
    throw std::runtime_error(where(*words.begin()) + ": " + std::string(r->str, r->len));
  return r;
}

}  // namespace waypoint::app::detail
