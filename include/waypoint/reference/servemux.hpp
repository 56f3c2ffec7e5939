// waypoint::reference::servemux: Go 1.22's net/http.ServeMux routing written for clarity,
// not speed, as the oracle that basic_router is tested against (tests/reference, fuzz/) and
// that `waypoint-route --reference` consults. It shares only the pattern parser, the relation
// functions and the byte helpers of detail/escape.hpp with the router, never its index:
//
//   - the tree is Go's routing_tree.go: keyed by host, then method, then path segments, and
//     walked literal child first, then the one-segment wildcard, then the rest wildcard;
//   - the outcome is Go's server.go: findHandler, matchOrRedirect, exactMatch and
//     matchingMethods, each below as a function of the same name;
//   - a new pattern is checked against every registered one with waypoint::conflicts().
//
// Where waypoint departs from Go on purpose, the reference follows waypoint so the two
// stay comparable (docs/precedence.md lists the departures):
//   - a request segment "%2F" is data: it matches {x} and the literal "%2F", never {$}
//     (Go decodes it to "/" and mistakes it for the trailing slash);
//   - a path that is invalid, or longer than reference::max_path_length (the router's
//     limit), is bad_request;
//   - a request segment is "." or ".." by what it decodes to: "%2e%2e" is cleaned like ".."
//     (Go cleans the escaped path, then hands the handler ".."), and a segment whose
//     escaped slash joins a dot piece ("a%2F..%2Fb") is bad_request;
//   - a pattern with more than waypoint::max_wildcards wildcards is refused (by the parser);
//   - a redirect location is the cleaned escaped path (Go re-escapes the decoded one), and
//     CONNECT is cleaned like every other method.
#pragma once

#include "waypoint/detail/escape.hpp"
#include "waypoint/match_status.hpp"
#include "waypoint/pattern.hpp"
#include "waypoint/route.hpp"
#include "waypoint/source_location.hpp"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waypoint::reference {

// waypoint::max_path_length, restated: the oracle checks the router's limit rather than
// reading it (tests/reference/servemux_test.cpp holds the two equal).
inline constexpr std::size_t max_path_length = 8192;

template <class Handler>
class servemux {
 public:
  using route_type = waypoint::basic_route<Handler>;

  // Same contract as basic_router::add: throws waypoint::pattern_error when the pattern
  // does not parse (too many wildcards among the reasons), waypoint::conflict_error when it
  // conflicts with (or repeats) a registered one.
  const route_type& add(std::string_view pattern_text, Handler handler,
                        source_location where = source_location::current()) {
    pattern p = parse_pattern(pattern_text);
    auto site = registration_site::from(where);
    for (const route_type& existing : routes_)
      if (conflicts(p, existing.pattern))
        throw conflict_error(p, site, existing.pattern, existing.site);
    routes_.push_back(
        route_type{std::move(p), std::move(handler), routes_.size(), std::move(site)});
    insert(routes_.back());
    return routes_.back();
  }

  // 307 (the default), 308 or 301.
  void set_redirect_status(int status) {
    redirect_status_ = waypoint::detail::checked_redirect_status(status);
  }

  std::size_t size() const noexcept { return routes_.size(); }
  // Routes in registration order, indexed by position; references stay valid.
  const std::deque<route_type>& routes() const noexcept { return routes_; }

  struct result {
    waypoint::match_status status = waypoint::match_status::not_found;
    const route_type* route = nullptr;  // when matched
    // When matched: wildcard name -> decoded value, in pattern order.
    std::vector<std::pair<std::string, std::string>> values;
    std::string allow;        // method_not_allowed: the Allow header value, e.g. "GET, HEAD"
    int redirect_status = 0;  // redirect
    std::string location;     // redirect: escaped path only (caller appends "?query")
    std::string error;        // bad_request
  };

  // Go's findHandler. `path` is the escaped path without the query; `host` may carry a port.
  result match(std::string_view method, std::string_view path, std::string_view host = {}) const {
    if (path.size() > max_path_length)
      return bad_request("the path is longer than the router accepts");
    if (const char* error = detail::path_error(path)) return bad_request(error);
    if (escaped_slash_joins_dot_segment(path)) return bad_request(detail::path_dot_join_error);

    std::string cleaned = clean_path(path);
    std::string_view bare_host = detail::strip_port(host);

    found hit = match_or_redirect(bare_host, method, cleaned);
    if (hit.redirect) return redirect(cleaned + "/");
    if (cleaned != path) return redirect(cleaned);
    result out;
    if (!hit.route) {
      out.allow = matching_methods(bare_host, cleaned);
      out.status = out.allow.empty() ? match_status::not_found : match_status::method_not_allowed;
      return out;
    }
    out.status = match_status::matched;
    out.route = hit.route;
    // Invariant: one value per name. Were it broken, a "?" name or an empty value shows it.
    const auto& names = hit.route->pattern.wildcard_names();
    for (std::size_t i = 0; i < names.size() || i < hit.values.size(); ++i)
      out.values.emplace_back(i < names.size() ? names[i] : "?",
                              i < hit.values.size() ? hit.values[i] : "");
    return out;
  }

 private:
  // A position in one (host, method) tree. Invariant: a node's route, when set, is the
  // only pattern whose segments spell the path from the tree's root to it.
  struct node {
    const route_type* route = nullptr;
    // Children by the next segment: a literal (keyed by its decoded text), {name}, {$},
    // and {name...} or a trailing '/', which is always a leaf.
    std::map<std::string, std::unique_ptr<node>, std::less<>> literals;
    std::unique_ptr<node> wildcard;
    std::unique_ptr<node> end;
    std::unique_ptr<node> rest;
  };
  // Method ("" for every method) -> the path tree of the patterns with that method.
  using method_trees = std::map<std::string, node, std::less<>>;

  // What a tree walk found: the route and its wildcard values, decoded, in pattern order.
  struct found {
    const route_type* route = nullptr;
    std::vector<std::string> values;
    bool redirect = false;  // match_or_redirect only: redirect to the path plus '/'
  };

  static node& child(std::unique_ptr<node>& slot) {
    if (!slot) slot = std::make_unique<node>();
    return *slot;
  }

  void insert(const route_type& route) {
    const pattern& p = route.pattern;
    node* n = &hosts_[std::string(p.host())][std::string(p.method())];
    for (const segment& s : p.segments()) {
      switch (s.type) {
        case segment::kind::literal:
          n = &child(n->literals[s.text]);
          break;
        case segment::kind::wildcard:
          n = &child(n->wildcard);
          break;
        case segment::kind::end:
          n = &child(n->end);
          break;
        case segment::kind::rest:
          n = &child(n->rest);
          break;
      }
    }
    // Equivalent patterns conflict, so registration never reaches a taken leaf.
    if (n->route) throw std::logic_error("waypoint::reference: two routes on one leaf");
    n->route = &route;
  }

  static std::string decoded(std::string_view raw) {
    std::string out(raw.size(), '\0');
    out.resize(detail::percent_decode(raw, out.data()));
    return out;
  }

  // The segments of `path` (which begins with '/'), escaped, split on the real slashes.
  static std::vector<std::string_view> segments_of(std::string_view path) {
    std::vector<std::string_view> out;
    for (std::size_t start = 1; start <= path.size();) {
      std::size_t end = std::min(path.find('/', start), path.size());
      out.push_back(path.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }

  // Go's cleanPath, but a segment is "." or ".." by what it decodes to. The segments
  // that stay are kept as escaped; a trailing slash stays.
  static std::string clean_path(std::string_view path) {
    std::vector<std::string_view> kept;
    for (std::string_view segment : segments_of(path)) {
      std::string name = decoded(segment);
      if (segment.empty() || name == ".") continue;
      if (name == "..") {
        if (!kept.empty()) kept.pop_back();
        continue;
      }
      kept.push_back(segment);
    }
    std::string out;
    for (std::string_view segment : kept) {
      out += '/';
      out += segment;
    }
    if (out.empty() || path.back() == '/') out += '/';
    return out;
  }

  // A segment holds an escaped slash, and one of the pieces it separates, decoded, is "."
  // or "..": decoded it would climb, and cleaning cannot remove it without changing which
  // segments the path has.
  static bool escaped_slash_joins_dot_segment(std::string_view path) {
    for (std::string_view segment : segments_of(path)) {
      std::string name = decoded(segment);
      if (name.find('/') == std::string::npos) continue;
      std::string pieces = '/' + name;
      for (std::string_view piece : segments_of(pieces))
        if (piece == "." || piece == "..") return true;
    }
    return false;
  }

  // Go's matchPath: the first route under `n` that matches `path` (empty, or beginning
  // with '/'), trying the literal child, then the wildcard, then the rest wildcard, and
  // backtracking. Registration guarantees that this order is the precedence order. On a
  // miss `values` is left as it was.
  static const route_type* match_path(const node* n, std::string_view path,
                                      std::vector<std::string>& values) {
    if (!n) return nullptr;
    if (path.empty()) return n->route;
    if (path == "/") {
      // A trailing slash: {$}, or a rest wildcard taking nothing; never {name}, which
      // needs a non-empty segment.
      if (const route_type* r = match_path(n->end.get(), {}, values)) return r;
      return take_rest(*n, path, values);
    }
    std::size_t slash = path.find('/', 1);
    if (slash == std::string_view::npos) slash = path.size();
    std::string segment = decoded(path.substr(1, slash - 1));
    std::string_view remainder = path.substr(slash);
    if (auto it = n->literals.find(segment); it != n->literals.end())
      if (const route_type* r = match_path(it->second.get(), remainder, values)) return r;
    if (n->wildcard) {
      values.push_back(segment);
      if (const route_type* r = match_path(n->wildcard.get(), remainder, values)) return r;
      values.pop_back();
    }
    return take_rest(*n, path, values);
  }

  // The rest wildcard below `n` takes all of `path` but its leading '/'. A trailing
  // slash in a pattern is an anonymous rest wildcard and records no value.
  static const route_type* take_rest(const node& n, std::string_view path,
                                     std::vector<std::string>& values) {
    if (!n.rest) return nullptr;
    const route_type* r = n.rest->route;
    if (!r->pattern.last().text.empty()) values.push_back(decoded(path.substr(1)));
    return r;
  }

  // Go's matchMethodAndPath: the exact method, then GET for HEAD, then any method.
  static found match_method_and_path(const method_trees& trees, std::string_view method,
                                     std::string_view path) {
    found out;
    auto attempt = [&](std::string_view m) {
      auto it = trees.find(m);
      if (it != trees.end()) out.route = match_path(&it->second, path, out.values);
      return out.route != nullptr;
    };
    if (attempt(method)) return out;
    if (method == "HEAD" && attempt("GET")) return out;
    attempt("");
    return out;
  }

  // Go's routingNode.match: the request host's patterns first, then the host-less ones.
  found tree_match(std::string_view host, std::string_view method, std::string_view path) const {
    if (!host.empty()) {
      if (auto it = hosts_.find(host); it != hosts_.end()) {
        found hit = match_method_and_path(it->second, method, path);
        if (hit.route) return hit;
      }
    }
    if (auto it = hosts_.find(std::string_view()); it != hosts_.end())
      return match_method_and_path(it->second, method, path);
    return {};
  }

  // Go's exactMatch: a match is inexact when a rest wildcard took a non-empty remainder,
  // which Go reads off the path: it then does not end in '/', or has more slashes than
  // the pattern has segments.
  static bool exact_match(const route_type* route, std::string_view path) {
    if (!route) return false;
    if (!route->pattern.ends_in_rest()) return true;
    if (!path.empty() && path.back() != '/') return false;
    std::size_t slashes = 0;
    for (char c : path) slashes += c == '/';
    return route->pattern.segments().size() == slashes;
  }

  // Go's matchOrRedirect: the match for `path`, unless it is not exact and `path` plus
  // '/' has an exact one, in which case the request is redirected there.
  found match_or_redirect(std::string_view host, std::string_view method,
                          std::string_view path) const {
    found hit = tree_match(host, method, path);
    if (!exact_match(hit.route, path) && path.back() != '/') {
      std::string with_slash = std::string(path) + "/";
      if (exact_match(tree_match(host, method, with_slash).route, with_slash))
        return {nullptr, {}, true};
    }
    return hit;
  }

  // Go's matchingMethods: every method of a pattern that matches `path`, or `path` plus
  // '/', on the request host or on any host; GET implies HEAD. Byte order, ", "-joined.
  std::string matching_methods(std::string_view host, std::string_view path) const {
    std::set<std::string, std::less<>> methods;
    auto collect_tree = [&](std::string_view tree_host, std::string_view p) {
      auto it = hosts_.find(tree_host);
      if (it == hosts_.end()) return;
      for (const auto& [method, root] : it->second) {
        std::vector<std::string> ignored;
        if (!method.empty() && match_path(&root, p, ignored)) methods.insert(method);
      }
    };
    auto collect = [&](std::string_view p) {
      if (!host.empty()) collect_tree(host, p);
      collect_tree({}, p);
    };
    collect(path);
    if (path.back() != '/') collect(std::string(path) + "/");
    if (methods.count("GET")) methods.insert("HEAD");
    std::string allow;
    for (const std::string& m : methods) {
      if (!allow.empty()) allow += ", ";
      allow += m;
    }
    return allow;
  }

  static result bad_request(std::string_view why) {
    result out;
    out.status = match_status::bad_request;
    out.error = std::string(why);
    return out;
  }

  result redirect(std::string location) const {
    result out;
    out.status = match_status::redirect;
    out.redirect_status = redirect_status_;
    out.location = std::move(location);
    return out;
  }

  // Host ("" for every host) -> method -> path tree.
  std::map<std::string, method_trees, std::less<>> hosts_;
  std::deque<route_type> routes_;
  int redirect_status_ = 307;
};

}  // namespace waypoint::reference
