// The session layer (waypoint/app/security/sessions.hpp): ids from RAND_bytes, records as JSON text
// keyed by the id's SHA-256, and the memory store (sharded maps with an expiry index).
#include "waypoint/app/security/sessions.hpp"

#include "waypoint/app/context.hpp"

#include "app/detail/base64url.hpp"
#include "app/detail/sha256.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace waypoint::app {
namespace {

using time_point = std::chrono::system_clock::time_point;
using std::chrono::milliseconds;

constexpr std::size_t id_bytes = 32;
constexpr std::size_t id_chars = 43;  // base64url of 32 bytes, unpadded
constexpr std::size_t shard_count = 64;

// Whether `text` has the shape of an id this layer issues. Anything else is not looked up:
// a store never sees client bytes of the client's choosing, only digests.
bool is_session_id(std::string_view text) noexcept {
  return text.size() == id_chars && std::all_of(text.begin(), text.end(), detail::is_base64url_character);
}

std::string new_session_id() { return detail::random_base64url(id_bytes); }

// The store's key for `id`: base64url of its SHA-256.
std::string store_key(std::string_view id) {
  detail::sha256_digest digest = detail::sha256(id);
  return detail::base64url_encode(digest.data(), digest.size());
}

std::int64_t epoch_ms(time_point t) {
  return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
}

time_point from_epoch_ms(std::int64_t ms) {
  return time_point(std::chrono::duration_cast<time_point::duration>(milliseconds(ms)));
}

// --- the memory store ----------------------------------------------------------------------

// One held session: its record and when it expires. The expiry index is ordered by deadline,
// so the soonest-expiring session is its first entry.
struct held_session {
  std::string record;
  std::multimap<std::int64_t, std::string_view>::iterator by_deadline;
};

struct alignas(64) store_shard {
  std::mutex mutex;
  std::unordered_map<std::string, held_session> sessions;
  std::multimap<std::int64_t, std::string_view> deadlines;  // views of the map's own keys
  std::size_t capacity = 0;

  void drop(std::unordered_map<std::string, held_session>::iterator it) {
    deadlines.erase(it->second.by_deadline);
    sessions.erase(it);
  }
};

}  // namespace

struct memory_session_store::state {
  memory_session_store_options options;
  std::array<store_shard, shard_count> shards;

  explicit state(memory_session_store_options o) : options(std::move(o)) {
    if (options.max_sessions == 0)
      throw std::invalid_argument("memory_session_store: max_sessions must be at least 1");
    // As rate_limit.cpp does: the remainder to the first shards, so the sum is max_sessions.
    for (std::size_t i = 0; i < shard_count; ++i)
      shards[i].capacity =
          options.max_sessions / shard_count + (i < options.max_sessions % shard_count ? 1 : 0);
  }

  std::int64_t now_ms() const {
    return epoch_ms(options.now ? options.now() : std::chrono::system_clock::now());
  }

  store_shard& shard_for(std::string_view key) {
    std::size_t i = std::hash<std::string_view>{}(key) % shard_count;
    if (shards[i].capacity == 0) i %= options.max_sessions;  // fewer sessions than shards
    return shards[i];
  }
};

memory_session_store::memory_session_store(memory_session_store_options options)
    : state_(std::make_unique<state>(std::move(options))) {}

memory_session_store::~memory_session_store() = default;

std::optional<std::string> memory_session_store::load(std::string_view key) {
  store_shard& s = state_->shard_for(key);
  std::int64_t now = state_->now_ms();
  std::lock_guard lock(s.mutex);
  auto it = s.sessions.find(std::string(key));
  if (it == s.sessions.end()) return std::nullopt;
  if (it->second.by_deadline->first <= now) {
    s.drop(it);
    return std::nullopt;
  }
  return it->second.record;
}

void memory_session_store::save(std::string_view key, std::string_view record, milliseconds ttl) {
  store_shard& s = state_->shard_for(key);
  std::int64_t deadline = state_->now_ms() + std::max<std::int64_t>(0, ttl.count());
  std::lock_guard lock(s.mutex);
  auto it = s.sessions.find(std::string(key));
  if (it != s.sessions.end()) {
    s.drop(it);
  } else if (s.sessions.size() >= s.capacity) {
    // The soonest-expiring goes: an expired one when there is any, else the session that
    // had the least time left.
    auto victim = s.sessions.find(std::string(s.deadlines.begin()->second));
    s.drop(victim);
  }
  auto [placed, inserted] = s.sessions.emplace(std::string(key), held_session{std::string(record), {}});
  (void)inserted;
  try {
    placed->second.by_deadline = s.deadlines.emplace(deadline, std::string_view(placed->first));
  } catch (...) {
    s.sessions.erase(placed);
    throw;
  }
}

void memory_session_store::erase(std::string_view key) {
  store_shard& s = state_->shard_for(key);
  std::lock_guard lock(s.mutex);
  auto it = s.sessions.find(std::string(key));
  if (it != s.sessions.end()) s.drop(it);
}

std::size_t memory_session_store::size() const {
  std::size_t n = 0;
  for (store_shard& s : state_->shards) {
    std::lock_guard lock(s.mutex);
    n += s.sessions.size();
  }
  return n;
}

// --- the session ------------------------------------------------------------------------------

std::optional<std::string_view> session::get(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return std::string_view(it->second);
}

void session::set(std::string_view key, std::string_view value) {
  auto it = values_.find(key);
  std::size_t old_bytes = it == values_.end() ? 0 : key.size() + it->second.size();
  std::size_t new_bytes = bytes_ - old_bytes + key.size() + value.size();
  if (new_bytes > max_bytes_)
    throw std::length_error("session: " + std::to_string(new_bytes) +
                            " bytes of keys and values would exceed max_data_bytes (" +
                            std::to_string(max_bytes_) + ")");
  if (it != values_.end()) {
    if (it->second == value) return;
    it->second.assign(value);
  } else {
    values_.emplace(std::string(key), std::string(value));
  }
  bytes_ = new_bytes;
  changed_ = true;
}

bool session::erase(std::string_view key) {
  auto it = values_.find(key);
  if (it == values_.end()) return false;
  bytes_ -= it->first.size() + it->second.size();
  values_.erase(it);
  changed_ = true;
  return true;
}

void session::destroy() noexcept {
  values_.clear();
  bytes_ = 0;
  destroyed_ = true;
  changed_ = true;
}

// The layer's access to a session's private state.
struct session_access {
  struct layer_state {
    session_options options;
    std::chrono::milliseconds touch_interval;

    explicit layer_state(session_options o) : options(std::move(o)) {
      if (options.idle_timeout.count() <= 0 || options.absolute_timeout.count() <= 0)
        throw std::invalid_argument("sessions: idle_timeout and absolute_timeout must be positive");
      if (options.absolute_timeout < options.idle_timeout)
        throw std::invalid_argument("sessions: absolute_timeout is shorter than idle_timeout");
      if (options.max_data_bytes == 0)
        throw std::invalid_argument("sessions: max_data_bytes must be at least 1");
      if (options.touch_interval.count() < 0)
        throw std::invalid_argument("sessions: touch_interval must not be negative");
      set_cookie probe = options.cookie;
      probe.value.assign(id_chars, 'A');
      (void)render(probe);  // refuses a bad name or attributes now, not on a request
      probe.max_age = std::chrono::seconds(0);
      (void)render(probe);
      touch_interval = std::min<std::chrono::milliseconds>(options.touch_interval, options.idle_timeout / 2);
      if (!options.store) options.store = std::make_shared<memory_session_store>();
    }

    time_point now() const { return options.now ? options.now() : std::chrono::system_clock::now(); }

    // The record's text: {"created":ms,"written":ms,"data":{...}}.
    static std::string encode(const session& s) {
      nlohmann::json data = nlohmann::json::object();
      for (const auto& [key, value] : s.values_) data[key] = value;
      nlohmann::json record = {{"created", epoch_ms(s.created_)},
                               {"written", epoch_ms(s.written_)},
                               {"data", std::move(data)}};
      // Replaces invalid UTF-8 rather than throwing: values are bytes the handler chose.
      return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }

    // Fills `s` from a record; false for a record that is not one this layer wrote (a store
    // shared with another program, a record cut short), treated as absent.
    bool decode(std::string_view text, session& s) const {
      nlohmann::json record = nlohmann::json::parse(text, nullptr, false);
      if (record.is_discarded() || !record.is_object()) return false;
      auto created = record.find("created");
      auto written = record.find("written");
      auto data = record.find("data");
      if (created == record.end() || !created->is_number_integer() || written == record.end() ||
          !written->is_number_integer() || data == record.end() || !data->is_object())
        return false;
      std::size_t bytes = 0;
      session::value_map values;
      for (const auto& [key, value] : data->items()) {
        if (!value.is_string()) return false;
        const std::string& text_value = value.get_ref<const std::string&>();
        bytes += key.size() + text_value.size();
        values.emplace(key, text_value);
      }
      s.values_ = std::move(values);
      s.bytes_ = bytes;
      s.created_ = from_epoch_ms(created->get<std::int64_t>());
      s.written_ = from_epoch_ms(written->get<std::int64_t>());
      return true;
    }

    // Whether a session created and last written at these times is over at `now`.
    bool expired(const session& s, time_point now) const {
      return now - s.written_ >= options.idle_timeout || now - s.created_ >= options.absolute_timeout;
    }

    // The before hook: the session the cookie names, when it is held and live; else a new one.
    bool load(context& ctx) {
      session& s = ctx.set<session>();
      s.max_bytes_ = options.max_data_bytes;
      time_point t = now();
      s.created_ = t;
      std::optional<std::string_view> sent = cookies(ctx.request()).find(options.cookie.name);
      if (!sent) return true;
      s.cookie_sent_ = true;
      if (!is_session_id(*sent)) return true;
      std::string key = store_key(*sent);
      std::optional<std::string> record = options.store->load(key);
      if (!record) return true;
      if (!decode(*record, s) || expired(s, t)) {
        options.store->erase(key);
        s.values_.clear();
        s.bytes_ = 0;
        s.created_ = t;
        s.written_ = {};
        return true;
      }
      s.id_.assign(*sent);
      s.loaded_ = true;
      return true;
    }

    // What is left of the session's life at `now`: to its idle or its absolute end.
    std::chrono::milliseconds ttl(const session& s, time_point now) const {
      auto left = std::min(s.written_ + options.idle_timeout, s.created_ + options.absolute_timeout) - now;
      return std::max(std::chrono::milliseconds(1), std::chrono::ceil<std::chrono::milliseconds>(left));
    }

    void save(session& s, std::string_view id, time_point now) {
      s.written_ = now;
      options.store->save(store_key(id), encode(s), ttl(s, now));
    }

    void send_cookie(context& ctx, std::string value, bool remove) const {
      set_cookie c = options.cookie;
      c.value = std::move(value);
      if (remove) {
        c.max_age = std::chrono::seconds(0);
        c.expires.reset();
      }
      add_cookie(ctx.response(), c);
    }

    // The after hook: what the handler did to the session, written back. A session left
    // empty is not kept; a new id goes out only for a new, rotated or destroyed session.
    void store_back(context& ctx, std::exception_ptr& error) {
      if (error) return;  // the handler failed: its changes are discarded
      session* s = ctx.find<session>();
      if (!s) return;
      time_point t = now();
      bool fresh_id = !s->loaded_ || s->rotate_ || s->destroyed_;
      if (fresh_id) {
        if (s->loaded_) options.store->erase(store_key(s->id_));
        if (!s->values_.empty()) {
          std::string id = new_session_id();
          if (s->destroyed_) s->created_ = t;  // values set after destroy(): a new session
          save(*s, id, t);
          send_cookie(ctx, std::move(id), false);
        } else if (s->loaded_ || (s->destroyed_ && s->cookie_sent_)) {
          send_cookie(ctx, std::string(), true);
        }
        return;
      }
      if (s->values_.empty()) {  // every value erased: as good as destroyed
        options.store->erase(store_key(s->id_));
        send_cookie(ctx, std::string(), true);
        return;
      }
      if (s->changed_ || t - s->written_ >= touch_interval) save(*s, s->id_, t);
    }
  };
};

middleware sessions(session_options options) {
  auto state = std::make_shared<session_access::layer_state>(std::move(options));
  return layer_hooks{[state](context& ctx) { return state->load(ctx); },
                     [state](context& ctx, std::exception_ptr& error) { state->store_back(ctx, error); }};
}

}  // namespace waypoint::app
