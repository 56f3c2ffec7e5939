// Server-side sessions: an unguessable id in a cookie, a small map of strings per id in a
// store, loaded before the handler and saved after it, as one layer.
//
//   app.use(waypoint::app::sessions({.idle_timeout = 30min, .absolute_timeout = 12h}));
//   app.post("/login", [](waypoint::app::context& ctx) {
//     auto& s = ctx.get<waypoint::app::session>();
//     s.rotate();                     // a new id for the same data: defeats session fixation
//     s.set("user", "u-42");
//   });
//   app.get("/me", [](waypoint::app::context& ctx) {
//     auto user = ctx.get<waypoint::app::session>().get("user");   // nullopt: not logged in
//   });
//   app.post("/logout", [](waypoint::app::context& ctx) {
//     ctx.get<waypoint::app::session>().destroy();   // erased, and the cookie deleted
//   });
//
// The cookie carries only the id (32 bytes from RAND_bytes, base64url): what a session
// holds never leaves the server, and a stolen id is worth nothing once rotated, destroyed or
// expired. A store is keyed by the id's SHA-256, so a dump of the store (or a Redis MONITOR)
// names no live session. docs/framework.md, "Sessions", says when a cookie is sent, when a
// session is written, and what a store costs.
#pragma once

#include "waypoint/app/security/cookies.hpp"
#include "waypoint/app/handler.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace waypoint::app {

// Where sessions are kept, by the digest of their id (an opaque key of 1..64 bytes of
// base64url), as text the layer writes and reads back (the store does not look inside).
// Called from the threads serving requests, concurrently: implementations are thread-safe.
// A store that cannot answer (a server down) throws; the request is then answered 500.
class session_store {
 public:
  virtual ~session_store() = default;
  // The record saved under `key`, nullopt when none is (or it has expired in the store).
  virtual std::optional<std::string> load(std::string_view key) = 0;
  // Saves `record` under `key`, replacing any earlier one; the store may forget it after
  // `ttl` (the layer checks the timeouts itself on load: expiry here only frees space).
  virtual void save(std::string_view key, std::string_view record, std::chrono::milliseconds ttl) = 0;
  // Forgets `key`; no error when it is not held.
  virtual void erase(std::string_view key) = 0;
};

struct memory_session_store_options {
  // The most sessions held (at least 1). A new one beyond it evicts the session closest to
  // its expiry (an expired one first): the session with the least time left loses it.
  std::size_t max_sessions = 100'000;
  // The time source; empty: std::chrono::system_clock::now. Tests pass a fake one.
  std::function<std::chrono::system_clock::time_point()> now{};
};

// Sessions in this process's memory: lost on restart and not shared between servers (a
// fleet needs a shared store). Thread-safe: keys are spread over 64 shards, each behind its
// own mutex held for one lookup or update. A held session costs its record, its key and
// two index nodes: about 200 bytes beyond the record (bounded by session_options's
// max_data_bytes).
class memory_session_store final : public session_store {
 public:
  // Throws std::invalid_argument for max_sessions of 0.
  explicit memory_session_store(memory_session_store_options options = {});
  ~memory_session_store() override;
  memory_session_store(const memory_session_store&) = delete;
  memory_session_store& operator=(const memory_session_store&) = delete;

  std::optional<std::string> load(std::string_view key) override;
  void save(std::string_view key, std::string_view record, std::chrono::milliseconds ttl) override;
  void erase(std::string_view key) override;
  // The sessions held now, expired ones not yet dropped included: never above max_sessions.
  std::size_t size() const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

struct session_options {
  // Where sessions are kept; null: a memory_session_store with its defaults, owned by the layer.
  std::shared_ptr<session_store> store{};
  // The cookie's name and attributes; the layer fills in the value (and Max-Age=0 to delete
  // it). __Host- binds it to this host alone: Secure, Path=/, no Domain, so neither plain
  // HTTP nor a sibling subdomain can plant or read it. Without max_age it lasts until the
  // browser closes; the server's timeouts apply either way.
  set_cookie cookie{.name = "__Host-session", .value = {}};
  // A session not used for this long is gone (OWASP suggests 15-30 min for most applications).
  std::chrono::seconds idle_timeout{std::chrono::minutes(30)};
  // A session older than this is gone, however busy: bounds what a stolen id is worth.
  std::chrono::seconds absolute_timeout{std::chrono::hours(12)};
  // An unchanged session is written back (to move its idle deadline) only when its last
  // write is older than this, so a busy client costs a store write a minute, not one a
  // request. Capped at half the idle timeout. Idle time is thus measured to within it.
  std::chrono::seconds touch_interval{std::chrono::minutes(1)};
  // The most bytes of keys and values a session holds (each pair counts its key and
  // value): set() beyond it throws std::length_error. Bounds what one client costs a store.
  std::size_t max_data_bytes = 4096;
  // The current time; empty: std::chrono::system_clock::now. Tests pass a fake one. A
  // shared store needs the servers' clocks to agree (NTP) within a small part of the
  // idle timeout.
  std::function<std::chrono::system_clock::time_point()> now{};
};

// One request's session: what sessions() leaves for the handler, ctx.get<session>().
// Changes are saved when the handler returns; an exception passing through the layer
// discards them (no write, no cookie), like a transaction rolled back.
class session {
 public:
  using value_map = std::map<std::string, std::string, std::less<>>;

  // The value under `key`, nullopt when none.
  std::optional<std::string_view> get(std::string_view key) const;
  // Sets `key` to `value`. Throws std::length_error when the session would hold more than
  // max_data_bytes.
  void set(std::string_view key, std::string_view value);
  // Removes `key`; false when it was not there.
  bool erase(std::string_view key);
  const value_map& values() const noexcept { return values_; }
  bool empty() const noexcept { return values_.empty(); }

  // A new id for the same values, the old id forgotten: call it when the privilege level
  // changes (login, sudo), so that an id an attacker planted or saw before is worth nothing
  // after (session fixation, OWASP ASVS 3.2.1).
  void rotate() noexcept { rotate_ = true; }
  // Forgets the session: its values cleared now, its record erased and the cookie deleted
  // (Max-Age=0) when the handler returns. Values set after it start a new session.
  void destroy() noexcept;

  // Whether no session was loaded for this request (no cookie, an unknown, tampered or
  // expired id): a new one, saved only if something is set in it.
  bool is_new() const noexcept { return !loaded_; }
  // When the session was created (for a new one: this request's time).
  std::chrono::system_clock::time_point created() const noexcept { return created_; }

 private:
  friend struct session_access;  // src/app/security/sessions.cpp

  value_map values_;
  std::string id_;   // the id the client sent and the store knew; empty when new
  std::size_t bytes_ = 0;
  std::size_t max_bytes_ = 0;
  std::chrono::system_clock::time_point created_{};
  std::chrono::system_clock::time_point written_{};  // when the record was last saved
  bool loaded_ = false;
  bool cookie_sent_ = false;  // the request carried the session cookie, known or not
  bool changed_ = false;
  bool rotate_ = false;
  bool destroyed_ = false;
};

// The layer: layer_hooks, no coroutine. Throws std::invalid_argument for a timeout that is
// not positive, an absolute timeout shorter than the idle one, a max_data_bytes of 0, or a
// cookie render() refuses.
middleware sessions(session_options options = {});

}  // namespace waypoint::app
