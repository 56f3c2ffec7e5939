// basic_router: registration with conflict detection, and an allocation-free match whose
// outcomes are those of Go's net/http.ServeMux (match, 404, 405 with Allow, redirect),
// plus bad_request for a path that is not a valid request path. A segment that decodes to
// "." or ".." ("%2e%2e") is cleaned like the plain one, and one whose %2F joins a dot
// ("a%2F..%2Fb") is bad_request, so no value ever holds a dot segment (docs/precedence.md,
// difference 8).
//
//   waypoint::router r;                        // handlers are std::function<void()>
//   r.add("GET /users/{id}", show_user);
//   r.add("GET /users/me", show_me);           // more specific: wins for /users/me
//   r.freeze();                                // immutable: match from any thread
//   auto m = r.match("GET", "/users/42");      // m.status() == match_status::matched
//   m.value("id");                             // "42"
//
// docs/design.md describes the index; docs/precedence.md the rule.
#pragma once

#include "waypoint/detail/config.hpp"
#include "waypoint/detail/route_index.hpp"
#include "waypoint/detail/router_tree.hpp"
#include "waypoint/detail/stable_list.hpp"
#include "waypoint/match_status.hpp"
#include "waypoint/pattern.hpp"
#include "waypoint/route.hpp"
#include "waypoint/source_location.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint {

// The methods a 405 allows, in byte order, GET implying HEAD.
class method_set {
 public:
  method_set() = default;
  method_set(std::uint64_t mask, const detail::method_table* table) noexcept
      : mask_(mask), table_(table) {}

  bool empty() const noexcept { return mask_ == 0; }
  bool contains(std::string_view method) const noexcept {
    std::uint8_t i = table_ ? table_->find(method) : detail::no_method;
    return i != detail::no_method && (mask_ >> i & 1u);
  }

  template <class F>
  void for_each(F&& f) const {
    if (!table_) return;
    for (std::uint8_t i : table_->by_name())
      if (mask_ >> i & 1u) f(table_->name(i));
  }

  // Appends the Allow header value (e.g. "GET, HEAD, POST") to `out`, with `extra` merged
  // in byte order when the set lacks it (an application's automatic OPTIONS).
  void append_to(std::string& out, std::string_view extra = {}) const;
  std::string to_string() const;

 private:
  std::uint64_t mask_ = 0;
  const detail::method_table* table_ = nullptr;
};

// What serves a path whatever the request's method (basic_router::methods_at).
struct path_methods {
  // A method-less route matches the path, so every method is served there.
  bool any = false;
  // Otherwise the methods the path's routes name, GET implying HEAD: the allowed() of a
  // 405 at this path. Empty when no route serves the path, and for a path that is not clean
  // or not valid (a request to it is redirected or refused).
  method_set named;
};

template <class Handler>
class basic_router;

// The outcome of one match. Values are views into the request path, or, for values that
// needed percent-decoding, into this object's storage: keep both alive while you use them.
// Copying a result is allowed but its views then point into the original.
//
// `StorageBytes` is that storage (match_storage_bytes of the longest path to match): by
// default enough for any path the router accepts, about 16 KiB. With 0 the result holds
// none and its owner lends it (lend_storage), sized to the requests it sees: the
// framework's pooled contexts do, so that each keeps what its requests use.
template <class Handler, std::size_t StorageBytes = match_storage_bytes(max_path_length)>
class basic_match_result {
 public:
  using route_type = basic_route<Handler>;

  basic_match_result() noexcept { own_storage(); }
  basic_match_result(const basic_match_result& other) noexcept
      : record_(other.record_), route_(other.route_) {
    own_storage();
  }
  basic_match_result& operator=(const basic_match_result& other) noexcept {
    record_ = other.record_;
    route_ = other.route_;
    own_storage();
    return *this;
  }

  // Where the next match writes (StorageBytes 0 only); a path that needs more than
  // `storage` holds (match_storage_bytes) is answered bad_request.
  void lend_storage(std::span<char> storage) noexcept requires(StorageBytes == 0) {
    record_.storage = storage;
  }

  match_status status() const noexcept { return record_.status; }
  explicit operator bool() const noexcept { return record_.status == match_status::matched; }

  // The matched route (status() == matched), nullptr otherwise.
  const route_type* route() const noexcept { return route_; }
  const Handler& handler() const noexcept { return route_->handler; }

  std::size_t value_count() const noexcept { return record_.value_count; }
  // The i-th wildcard's value, in pattern order, percent-decoded.
  std::string_view value(std::size_t i) const noexcept {
    return i < record_.value_count ? record_.values[i] : std::string_view();
  }
  // The value of the wildcard called `name`; empty when the route has no such wildcard.
  std::string_view value(std::string_view name) const noexcept {
    if (!route_) return {};
    const auto& names = route_->pattern.wildcard_names();
    for (std::size_t i = 0; i < names.size() && i < record_.value_count; ++i)
      if (names[i] == name) return record_.values[i];
    return {};
  }
  bool has_value(std::string_view name) const noexcept {
    if (!route_) return false;
    for (const auto& n : route_->pattern.wildcard_names())
      if (n == name) return true;
    return false;
  }

  // status() == method_not_allowed: the methods that would have matched.
  method_set allowed() const noexcept { return {record_.allowed, record_.methods}; }

  // status() == redirect: 307 unless the router says otherwise, and the escaped path to
  // send in Location (the caller appends "?" and the query when there is one).
  int redirect_status() const noexcept { return record_.redirect_status; }
  std::string_view location_path() const noexcept { return record_.location; }

  // status() == bad_request: why.
  std::string_view error() const noexcept { return record_.error; }

 private:
  friend class basic_router<Handler>;

  // A copy writes into storage of its own, or, lent none, into none until lent some
  // (two results writing the same bytes would overwrite each other's values).
  void own_storage() noexcept {
    if constexpr (StorageBytes != 0)
      record_.storage = storage_;
    else
      record_.storage = {};
  }

  detail::match_record record_;
  const route_type* route_ = nullptr;
  [[no_unique_address]] std::array<char, StorageBytes> storage_;
};

// Why a route that matches a request lost to the winner (router::explain).
template <class Handler>
struct basic_explanation {
  struct candidate {
    const basic_route<Handler>* route;
    bool winner;
    std::string reason;  // empty for the winner
  };
  match_status status = match_status::not_found;
  std::string allow;                  // method_not_allowed
  std::string location;               // redirect
  std::string error;                  // bad_request
  std::vector<candidate> candidates;  // every route that matches, winner first
};

// Routes bound to handlers over a detail::route_index, which does everything that does not
// depend on the handler type once per program.
template <class Handler>
class basic_router {
 public:
  using handler_type = Handler;
  using route_type = basic_route<Handler>;
  using match_result = basic_match_result<Handler>;

  // Registers `pattern_text`. Throws pattern_error when it does not parse,
  // conflict_error when it conflicts with (or repeats) a registered pattern,
  // std::logic_error after freeze().
  const route_type& add(std::string_view pattern_text, Handler handler,
                        source_location where = source_location::current()) {
    if (frozen_) throw std::logic_error("waypoint: add() after freeze()");
    pattern p = parse_pattern(pattern_text);
    auto site = registration_site::from(where);
    if (std::uint32_t other = index_.find_conflict(p); other != detail::no_index)
      throw conflict_error(p, site, routes_[other].pattern, routes_[other].site);
    std::uint8_t method =
        p.method().empty() ? detail::no_method : index_.methods().intern(p.method());
    auto position = routes_.size();
    routes_.push_back(route_type{std::move(p), std::move(handler), position, std::move(site)});
    index_.insert(routes_.back().pattern, method);
    by_number_.push_back(&routes_.back());
    return routes_.back();
  }

  // After freeze() the router is immutable and may be matched from many threads.
  void freeze() noexcept { frozen_ = true; }
  bool frozen() const noexcept { return frozen_; }

  // 307 (the default), 308 or 301.
  void set_redirect_status(int status) {
    index_.set_redirect_status(detail::checked_redirect_status(status));
  }

  std::size_t size() const noexcept { return routes_.size(); }
  // Routes in registration order, indexed by position; references stay valid.
  const detail::stable_list<route_type>& routes() const noexcept { return routes_; }

  // Matches a request. `path` is the escaped path as on the request line, without the
  // query; `host` may carry a port. Allocates nothing.
  template <std::size_t StorageBytes>
  void match(std::string_view method, std::string_view path, std::string_view host,
             basic_match_result<Handler, StorageBytes>& out) const noexcept {
    index_.match(index_.methods().find(method), path, host, out.record_);
    out.route_ = out.record_.route != detail::no_index ? by_number_[out.record_.route] : nullptr;
  }

  match_result match(std::string_view method, std::string_view path,
                     std::string_view host = {}) const noexcept {
    match_result out;
    match(method, path, host, out);
    return out;
  }

  // The methods `path` (on `host`) is served with, for an Allow list or a CORS preflight:
  // match()'s walk for a method no route names, so `any` is that match's matched() and
  // `named` its 405's allowed(). Allocates nothing; `scratch` holds the walk's storage and
  // is left holding that match.
  path_methods methods_at(std::string_view path, std::string_view host,
                          match_result& scratch) const noexcept {
    index_.match(detail::no_method, path, host, scratch.record_);
    scratch.route_ =
        scratch.record_.route != detail::no_index ? by_number_[scratch.record_.route] : nullptr;
    path_methods served;
    if (scratch.status() == match_status::matched)
      served.any = true;
    else if (scratch.status() == match_status::method_not_allowed)
      served.named = scratch.allowed();
    return served;
  }
  // The same with a match result on the stack (~16 KiB).
  path_methods methods_at(std::string_view path, std::string_view host = {}) const noexcept {
    match_result scratch;
    return methods_at(path, host, scratch);
  }

  // Routes in precedence order: the order in which a request that several match is
  // offered to them (host routes first, then deeper and more literal paths first).
  std::vector<const route_type*> routes_by_precedence() const {
    std::vector<const route_type*> out;
    for (std::uint32_t r : index_.by_precedence()) out.push_back(by_number_[r]);
    return out;
  }

  // Every route that matches the request, the winner first, each loser with the reason
  // the winner is more specific. For people and tools; allocates freely.
  basic_explanation<Handler> explain(std::string_view method, std::string_view path,
                                     std::string_view host = {}) const {
    auto result = std::make_unique<match_result>();
    match(method, path, host, *result);
    detail::explanation_core core = index_.explain(method, path, host, result->record_);
    basic_explanation<Handler> e{core.status, std::move(core.allow), std::move(core.location),
                                 std::move(core.error), {}};
    for (auto& [r, winner, reason] : core.candidates)
      e.candidates.push_back({by_number_[r], winner, std::move(reason)});
    return e;
  }

 private:
  detail::route_index index_;
  detail::stable_list<route_type> routes_;
  std::vector<const route_type*> by_number_;  // routes_[i], without the chunk's indirection
  bool frozen_ = false;
};

using router = basic_router<std::function<void()>>;

}  // namespace waypoint

#ifdef WAYPOINT_HEADER_ONLY
#include "waypoint/impl/router.ipp"
#endif
