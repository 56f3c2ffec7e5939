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

#include "waypoint/detail/escape.hpp"
#include "waypoint/detail/router_tree.hpp"
#include "waypoint/pattern.hpp"
#include "waypoint/route.hpp"
#include "waypoint/source_location.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace waypoint {

// Longest request path (escaped, without the query) a router accepts; longer ones are
// bad_request. Servers usually cap the whole request line lower (8 KiB is common).
inline constexpr std::size_t max_path_length = 8192;

// Most wildcards in one pattern; registration refuses more. No route in the gateway,
// rest200 or mix1000 tables has more than three.
inline constexpr std::size_t max_wildcards = 16;

enum class match_status : std::uint8_t {
  matched,             // handler() and the values are set
  not_found,           // 404
  method_not_allowed,  // 405: allowed() lists what other methods would match
  redirect,            // redirect_status() to location_path() (append the request's query)
  bad_request,         // 400: error() says what is wrong with the path
};

constexpr std::string_view to_string(match_status s) noexcept {
  switch (s) {
    case match_status::matched:
      return "match";
    case match_status::not_found:
      return "not_found";
    case match_status::method_not_allowed:
      return "method_not_allowed";
    case match_status::redirect:
      return "redirect";
    case match_status::bad_request:
      return "bad_request";
  }
  return "?";
}

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
  void append_to(std::string& out, std::string_view extra = {}) const {
    std::size_t start = out.size();
    auto add = [&](std::string_view m) {
      if (out.size() != start) out += ", ";
      out.append(m);
    };
    bool placed = extra.empty();
    for_each([&](std::string_view m) {
      if (!placed && m >= extra) {
        if (m != extra) add(extra);
        placed = true;
      }
      add(m);
    });
    if (!placed) add(extra);
  }

  std::string to_string() const {
    std::string out;
    append_to(out);
    return out;
  }

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

namespace detail {
// The redirect statuses a router may use: 307 and 308 keep the method and body, 301 is
// what older clients expect. Shared with the reference matcher.
inline int checked_redirect_status(int status) {
  if (status != 301 && status != 307 && status != 308)
    throw std::invalid_argument("waypoint: redirect status must be 301, 307 or 308");
  return status;
}
}  // namespace detail

// The outcome of one match. Values are views into the request path, or, for values that
// needed percent-decoding, into this object's own storage: keep both alive while you use
// them. Copying a result is allowed but its views then point into the original.
template <class Handler>
class basic_match_result {
 public:
  using route_type = basic_route<Handler>;

  match_status status() const noexcept { return status_; }
  explicit operator bool() const noexcept { return status_ == match_status::matched; }

  // The matched route (status() == matched), nullptr otherwise.
  const route_type* route() const noexcept { return route_; }
  const Handler& handler() const noexcept { return route_->handler; }

  std::size_t value_count() const noexcept { return value_count_; }
  // The i-th wildcard's value, in pattern order, percent-decoded.
  std::string_view value(std::size_t i) const noexcept {
    return i < value_count_ ? values_[i] : std::string_view();
  }
  // The value of the wildcard called `name`; empty when the route has no such wildcard.
  std::string_view value(std::string_view name) const noexcept {
    if (!route_) return {};
    const auto& names = route_->pattern.wildcard_names();
    for (std::size_t i = 0; i < names.size() && i < value_count_; ++i)
      if (names[i] == name) return values_[i];
    return {};
  }
  bool has_value(std::string_view name) const noexcept {
    if (!route_) return false;
    for (const auto& n : route_->pattern.wildcard_names())
      if (n == name) return true;
    return false;
  }

  // status() == method_not_allowed: the methods that would have matched.
  method_set allowed() const noexcept { return {allowed_, methods_}; }

  // status() == redirect: 307 unless the router says otherwise, and the escaped path to
  // send in Location (the caller appends "?" and the query when there is one).
  int redirect_status() const noexcept { return redirect_status_; }
  std::string_view location_path() const noexcept { return location_; }

  // status() == bad_request: why.
  std::string_view error() const noexcept { return error_; }

 private:
  friend class basic_router<Handler>;

  match_status status_ = match_status::not_found;
  std::uint8_t value_count_ = 0;
  int redirect_status_ = 0;
  const route_type* route_ = nullptr;
  std::uint64_t allowed_ = 0;
  const detail::method_table* methods_ = nullptr;
  std::string_view location_;
  std::string_view error_;
  std::array<std::string_view, max_wildcards> values_;
  // Holds the cleaned path of a redirect plus scratch for decoding one segment, or the
  // decoded values; each is no longer than the path, so twice its maximum suffices.
  std::array<char, 2 * max_path_length + 2> storage_;
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

template <class Handler>
class basic_router {
 public:
  using handler_type = Handler;
  using route_type = basic_route<Handler>;
  using match_result = basic_match_result<Handler>;

  basic_router() { nodes_.emplace_back(); }  // node 0: the root for patterns with no host

  // Registers `pattern_text`. Throws pattern_error when it does not parse,
  // conflict_error when it conflicts with (or repeats) a registered pattern,
  // std::logic_error after freeze().
  const route_type& add(std::string_view pattern_text, Handler handler,
                        source_location where = source_location::current()) {
    if (frozen_) throw std::logic_error("waypoint: add() after freeze()");
    pattern p = parse_pattern(pattern_text);
    if (p.wildcard_names().size() > max_wildcards)
      throw pattern_error(pattern_errc::too_many_wildcards, 0, pattern_text,
                          "more than " + std::to_string(max_wildcards) + " wildcards");
    auto site = registration_site::from(where);
    if (const route_type* other = find_conflict(p))
      throw conflict_error(p, site, other->pattern, other->site);
    std::uint8_t method = p.method().empty() ? detail::no_method : methods_.intern(p.method());
    auto index = static_cast<std::uint32_t>(routes_.size());
    routes_.push_back(route_type{std::move(p), std::move(handler), index, std::move(site)});
    attach(index, method);
    return routes_.back();
  }

  // After freeze() the router is immutable and may be matched from many threads.
  void freeze() noexcept { frozen_ = true; }
  bool frozen() const noexcept { return frozen_; }

  // 307 (the default), 308 or 301.
  void set_redirect_status(int status) {
    redirect_status_ = detail::checked_redirect_status(status);
  }

  std::size_t size() const noexcept { return routes_.size(); }
  // Routes in registration order, indexed by position; references stay valid.
  const std::deque<route_type>& routes() const noexcept { return routes_; }

  // Matches a request. `path` is the escaped path as on the request line, without the
  // query; `host` may carry a port. Allocates nothing.
  void match(std::string_view method, std::string_view path, std::string_view host,
             match_result& out) const noexcept;

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
                          match_result& scratch) const noexcept;
  // The same with a match result on the stack (~16 KiB).
  path_methods methods_at(std::string_view path, std::string_view host = {}) const noexcept {
    match_result scratch;
    return methods_at(path, host, scratch);
  }

  // Routes in precedence order: the order in which a request that several match is
  // offered to them (host routes first, then deeper and more literal paths first).
  std::vector<const route_type*> routes_by_precedence() const;

  // Every route that matches the request, the winner first, each loser with the reason
  // the winner is more specific. For people and tools; allocates freely.
  basic_explanation<Handler> explain(std::string_view method, std::string_view path,
                                     std::string_view host = {}) const;

 private:
  struct walk;

  std::uint32_t new_node() {
    nodes_.emplace_back();
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }

  std::uint32_t root_for(std::string_view host) const noexcept {
    if (host.empty()) return 0;
    auto it = host_roots_.find(host);
    return it == host_roots_.end() ? detail::no_index : it->second;
  }

  // match() for an interned method bit (detail::no_method: a method no route names).
  void match_method(std::uint8_t method, std::string_view path, std::string_view host,
                    match_result& out) const noexcept;
  void attach(std::uint32_t index, std::uint8_t method);
  static bool static_key(const pattern& p, std::string& key);
  static std::uint32_t reach_of(const pattern& p) noexcept;
  const route_type* find_conflict(const pattern& p) const;

  std::vector<detail::tree_node> nodes_;
  std::unordered_map<std::string, std::uint32_t, detail::string_hash, std::equal_to<>> host_roots_;
  // The hostless root's literal children, for the walk-free answer to an unknown first segment.
  detail::segment_filter first_segments_;
  // Per tree (tree_node::statics on its root), the literal-only routes by request path:
  // the walk-free fast path of a static hit.
  std::vector<detail::literal_children> statics_;
  std::deque<route_type> routes_;
  std::vector<const route_type*> route_index_;  // routes_[i], without the deque's indirection
  detail::method_table methods_;
  int redirect_status_ = 307;
  bool frozen_ = false;
};

using router = basic_router<std::function<void()>>;

}  // namespace waypoint

#include "waypoint/detail/router_impl.hpp"
