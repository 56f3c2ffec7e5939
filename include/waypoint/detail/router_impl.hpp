// basic_router's member definitions: the match walk, registration and introspection.
// Included by router.hpp only.
#pragma once

#include <algorithm>
#include <bit>
#include <memory>

namespace waypoint {

// One depth-first walk of a host's tree, literal children first, then the one-segment
// wildcard, then the rest wildcard: the first route found that serves the method is the
// most specific one (registration guarantees it). The same walk records
//   - the first route that would serve the path with '/' appended (the trailing-slash
//     redirect), which differs only where the path ends at a node, and
//   - the methods of every route whose path matches (the Allow set of a 405),
// so no outcome needs a second traversal.
template <class Handler>
struct basic_router<Handler>::walk {
  const basic_router& router;
  std::string_view path;  // clean, escaped, begins with '/'
  std::uint8_t method;
  bool head;
  bool escaped;           // some segment holds a %XX escape
  std::uint64_t slashes;  // detail::slash_map(path)
  char* scratch;          // room to decode one segment
  std::array<std::string_view, max_wildcards>& values;
  std::uint8_t count = 0;
  std::uint32_t found = detail::no_index;
  bool found_exact = false;  // false when a rest wildcard took a non-empty remainder
  std::uint32_t slash = detail::no_index;
  bool slash_exact = false;
  std::uint64_t allowed = 0;

  std::uint32_t serve(const detail::tree_node& n) const noexcept {
    return detail::serving_route(n, method, head);
  }

  const detail::tree_node& node(std::uint32_t id) const noexcept { return router.nodes_[id]; }

  // Where the segment that begins at `begin` ends: the next '/' or the path's end.
  std::size_t segment_end(std::size_t begin) const noexcept {
    if (begin < 64) {
      if (std::uint64_t later = slashes >> begin)
        return begin + static_cast<std::size_t>(std::countr_zero(later));
      if (path.size() <= 64) return path.size();
      begin = 64;
    }
    while (begin < path.size() && path[begin] != '/') ++begin;
    return begin;
  }

  // path[begin, end), without substr's bounds check: the walk's offsets are in the path.
  std::string_view segment(std::size_t begin, std::size_t end) const noexcept {
    return {path.data() + begin, end - begin};
  }

  std::string_view decoded(std::string_view raw) const noexcept {
    if (!escaped || raw.find('%') == std::string_view::npos) return raw;
    return {scratch, detail::percent_decode(raw, scratch)};
  }

  // Walks the subtree of `id` for the path from `pos` (path[pos] == '/', or pos ==
  // path.size()), which holds `left` segments. Returns true once `found` is set.
  bool descend(std::uint32_t id, std::size_t pos, std::size_t left) noexcept {
    const detail::tree_node& n = node(id);
    if (left > n.reach) return false;  // with '/' appended the path is longer still
    if (pos == path.size()) return at_path_end(n);
    if (pos + 1 == path.size()) return at_trailing_slash(n);
    std::size_t begin = pos + 1;
    std::size_t end = segment_end(begin);
    std::string_view raw = segment(begin, end);
    if (!n.literals.empty()) {
      std::uint32_t child = n.literals.find(decoded(raw));
      if (child != detail::no_index && descend(child, end, left - 1)) return true;
    }
    if (n.wildcard != detail::no_index) {
      values[count++] = raw;
      if (descend(n.wildcard, end, left - 1)) return true;
      --count;
    }
    if (n.rest != detail::no_index)
      return take_rest(node(n.rest), segment(begin, path.size()), false);
    return false;
  }

  // The path ends exactly at `n`. With '/' appended it would reach {$} or an empty rest.
  bool at_path_end(const detail::tree_node& n) noexcept {
    allowed |= n.methods;
    if (std::uint32_t r = serve(n); r != detail::no_index) {
      found = r;
      found_exact = true;
      return true;
    }
    for (std::uint32_t child : {n.end, n.rest}) {
      if (child == detail::no_index) continue;
      allowed |= node(child).methods;
      if (slash != detail::no_index) continue;
      if (std::uint32_t r = serve(node(child)); r != detail::no_index) {
        slash = r;
        slash_exact = true;
      }
    }
    return false;
  }

  // The path ends in '/' right after `n`: only {$} and an empty rest match; a one-segment
  // wildcard never matches an empty segment.
  bool at_trailing_slash(const detail::tree_node& n) noexcept {
    if (n.end != detail::no_index) {
      const detail::tree_node& end = node(n.end);
      allowed |= end.methods;
      if (std::uint32_t r = serve(end); r != detail::no_index) {
        found = r;
        found_exact = true;
        return true;
      }
    }
    if (n.rest != detail::no_index) return take_rest(node(n.rest), {}, true);
    return false;
  }

  bool take_rest(const detail::tree_node& rest_node, std::string_view rest, bool exact) noexcept {
    allowed |= rest_node.methods;
    std::uint32_t r = serve(rest_node);
    if (r == detail::no_index) return false;
    if (!router.route_index_[r]->pattern.last().text.empty()) values[count++] = rest;
    found = r;
    found_exact = exact;
    if (slash == detail::no_index) {
      slash = r;
      slash_exact = exact;
    }
    return true;
  }
};

template <class Handler>
void basic_router<Handler>::match(std::string_view method, std::string_view path,
                                  std::string_view host, match_result& out) const noexcept {
  match_method(methods_.find(method), path, host, out);
}

// No route names detail::no_method, so the walk finds only a method-less route and
// otherwise collects the methods of every route whose path matches: what a 405 lists.
template <class Handler>
path_methods basic_router<Handler>::methods_at(std::string_view path, std::string_view host,
                                               match_result& scratch) const noexcept {
  match_method(detail::no_method, path, host, scratch);
  path_methods served;
  if (scratch.status() == match_status::matched)
    served.any = true;
  else if (scratch.status() == match_status::method_not_allowed)
    served.named = scratch.allowed();
  return served;
}

template <class Handler>
void basic_router<Handler>::match_method(std::uint8_t method_bit, std::string_view path,
                                         std::string_view host,
                                         match_result& out) const noexcept {
  out.route_ = nullptr;
  out.value_count_ = 0;
  out.allowed_ = 0;
  out.methods_ = &methods_;
  auto finish = [&](match_status s) { out.status_ = s; };

  if (path.size() > max_path_length) {
    out.error_ = "the path is longer than the router accepts";
    return finish(match_status::bad_request);
  }
  detail::path_scan scan = detail::scan_path(path);
  if (scan.error) {
    out.error_ = scan.error;
    return finish(match_status::bad_request);
  }

  char* storage = out.storage_.data();
  bool clean = scan.clean;
  std::string_view walked = path;
  if (!clean) walked = {storage, detail::clean_path(path, storage)};

  walk w{*this,
         walked,
         method_bit,
         method_bit == detail::method_table::head,
         scan.escaped,
         clean ? scan.slashes : detail::slash_map(walked),
         storage + walked.size() + 1,
         out.values_};
  std::uint32_t host_root = detail::no_index;
  if (!host_roots_.empty() && !host.empty()) host_root = root_for(detail::strip_port(host));
  if (clean && !scan.escaped) {
    // A literal-only route whose path equals the request path is the most specific in
    // the tree walked first; when it serves the method no walk is needed.
    const detail::tree_node& tree = nodes_[host_root != detail::no_index ? host_root : 0];
    if (tree.statics != detail::no_index) {
      std::uint32_t id = statics_[tree.statics].find(path);
      if (id != detail::no_index) w.found = w.serve(nodes_[id]);
      w.found_exact = w.found != detail::no_index;
    }
  }
  std::size_t segments =
      clean ? scan.segments
            : static_cast<std::size_t>(std::count(walked.begin(), walked.end(), '/'));
  if (w.found == detail::no_index && host_root != detail::no_index)
    w.descend(host_root, 0, segments);
  if (w.found == detail::no_index) {
    // A first segment that no hostless literal route has is the common miss (a scanner's
    // probe, a typo at the top): the hostless tree can then match only through a
    // wildcard or rest child of its root, and without one it is not walked at all.
    const detail::tree_node& root = nodes_[0];
    bool unknown_first = false;
    if (walked.size() > 1 && root.wildcard == detail::no_index && root.rest == detail::no_index) {
      std::string_view first = w.segment(1, w.segment_end(1));
      unknown_first = !first_segments_.may_contain(detail::segment_fingerprint(w.decoded(first)));
    }
    if (!unknown_first) w.descend(0, 0, segments);
  }

  // An exact slash route is recorded only where the path ends at a node, so never for a
  // path that already ends in '/'.
  if (!w.found_exact && w.slash != detail::no_index && w.slash_exact) {
    if (clean) std::memcpy(storage, path.data(), path.size());
    storage[walked.size()] = '/';
    out.location_ = {storage, walked.size() + 1};
    out.redirect_status_ = redirect_status_;
    return finish(match_status::redirect);
  }
  if (!clean) {
    out.location_ = walked;
    out.redirect_status_ = redirect_status_;
    return finish(match_status::redirect);
  }
  if (w.found == detail::no_index) {
    if (w.allowed >> detail::method_table::get & 1u)
      w.allowed |= std::uint64_t{1} << detail::method_table::head;
    out.allowed_ = w.allowed;
    return finish(w.allowed ? match_status::method_not_allowed : match_status::not_found);
  }
  // Decode the values that need it, now that the walk no longer needs the scratch.
  char* cursor = storage;
  for (std::uint8_t i = 0; scan.escaped && i < w.count; ++i) {
    std::string_view v = out.values_[i];
    if (v.find('%') == std::string_view::npos) continue;
    std::size_t n = detail::percent_decode(v, cursor);
    out.values_[i] = {cursor, n};
    cursor += n;
  }
  out.value_count_ = w.count;
  out.route_ = route_index_[w.found];
  finish(match_status::matched);
}

template <class Handler>
void basic_router<Handler>::attach(std::uint32_t index, std::uint8_t method) {
  const pattern& p = routes_[index].pattern;
  std::uint32_t id = 0;  // the root of the pattern's tree, then the node it ends at
  if (!p.host().empty()) {
    auto it = host_roots_.find(p.host());
    if (it != host_roots_.end()) {
      id = it->second;
    } else {
      id = new_node();
      host_roots_.emplace(std::string(p.host()), id);
    }
  }
  if (p.host().empty() && !p.segments().empty() &&
      p.segments().front().type == segment::kind::literal)
    first_segments_.add(detail::segment_fingerprint(p.segments().front().text));
  std::uint32_t root = id;
  bool any = p.method().empty();
  bool get = p.method() == "GET";
  std::uint32_t reach = reach_of(p);
  std::uint32_t depth = 0;
  auto count_route = [&](std::uint32_t at) {
    detail::tree_node& n = nodes_[at];
    n.subtree_any += any;
    n.subtree_get += get;
    n.reach = reach == detail::unbounded_reach ? reach : std::max(n.reach, reach - depth);
  };
  count_route(id);
  for (const segment& s : p.segments()) {
    std::uint32_t child = detail::no_index;
    switch (s.type) {
      case segment::kind::literal:
        child = nodes_[id].literals.find(s.text);
        break;
      case segment::kind::wildcard:
        child = nodes_[id].wildcard;
        break;
      case segment::kind::end:
        child = nodes_[id].end;
        break;
      case segment::kind::rest:
        child = nodes_[id].rest;
        break;
    }
    if (child == detail::no_index) {
      child = new_node();  // may reallocate nodes_: index again below
      detail::tree_node& parent = nodes_[id];
      switch (s.type) {
        case segment::kind::literal:
          parent.literals.insert(s.text, child);
          break;
        case segment::kind::wildcard:
          parent.wildcard = child;
          break;
        case segment::kind::end:
          parent.end = child;
          break;
        case segment::kind::rest:
          parent.rest = child;
          break;
      }
    }
    id = child;
    ++depth;
    count_route(id);
  }
  detail::tree_node& terminal = nodes_[id];
  if (method == detail::no_method) {
    terminal.any_route = index;
  } else {
    terminal.method_routes.emplace_back(method, index);
    terminal.methods |= std::uint64_t{1} << method;
  }
  route_index_.push_back(&routes_[index]);
  if (std::string key; static_key(p, key)) {
    if (nodes_[root].statics == detail::no_index) {
      nodes_[root].statics = static_cast<std::uint32_t>(statics_.size());
      statics_.emplace_back();
    }
    detail::literal_children& table = statics_[nodes_[root].statics];
    if (table.find(key) == detail::no_index) table.insert(key, id);
  }
}

// The request path that a literal-only pattern matches (in its host's tree), when an
// unescaped request path can spell it: no literal may hold '/' or a byte that needs escaping.
template <class Handler>
bool basic_router<Handler>::static_key(const pattern& p, std::string& key) {
  key.clear();
  for (const segment& s : p.segments()) {
    if (s.type == segment::kind::end) {
      key += '/';
      return true;
    }
    if (s.type != segment::kind::literal) return false;
    for (char c : s.text)
      if (!detail::is_path_byte(c)) return false;
    key += '/';
    key += s.text;
  }
  return true;
}

// How many segments a request path has when `p` matches it; unbounded for a rest.
template <class Handler>
std::uint32_t basic_router<Handler>::reach_of(const pattern& p) noexcept {
  const auto& segments = p.segments();
  if (!segments.empty() && segments.back().type == segment::kind::rest)
    return detail::unbounded_reach;
  return static_cast<std::uint32_t>(segments.size());
}

// Conflict detection walks the new pattern's host tree along every branch whose routes'
// paths could overlap it, so it costs the pattern's depth plus the overlapping routes,
// not the size of the table. Every candidate is then compared exactly.
template <class Handler>
auto basic_router<Handler>::find_conflict(const pattern& p) const -> const route_type* {
  std::uint32_t root = root_for(p.host());
  if (root == detail::no_index) return nullptr;
  const route_type* hit = nullptr;
  auto at = [&](const detail::tree_node& n) {
    auto check = [&](std::uint32_t r) {
      if (r != detail::no_index && !hit && conflicts(p, routes_[r].pattern)) hit = &routes_[r];
    };
    for (auto [m, r] : n.method_routes) check(r);
    check(n.any_route);
    return hit != nullptr;
  };
  // A rest pattern is more general in path than every route below it, unless the walk
  // took a {x} child for one of its literals (it is then narrower at that segment). In
  // the first case only a route more general in method can conflict: a method-less one,
  // or GET against HEAD, and the per-node counters skip subtrees without one.
  bool method_less = p.method().empty();
  bool head = p.method() == "HEAD";
  auto may_conflict_below = [&](const detail::tree_node& n, bool narrower) {
    return narrower || (!method_less && (n.subtree_any > 0 || (head && n.subtree_get > 0)));
  };
  auto below = [&](auto& self, std::uint32_t id, bool narrower) -> bool {
    const detail::tree_node& n = nodes_[id];
    if (!may_conflict_below(n, narrower)) return false;
    if (at(n)) return true;
    for (const auto& [key, child] : n.literals.entries())
      if (self(self, child, narrower)) return true;
    for (std::uint32_t child : {n.wildcard, n.end, n.rest})
      if (child != detail::no_index && self(self, child, narrower)) return true;
    return false;
  };
  const auto& segments = p.segments();
  auto along = [&](auto& self, std::uint32_t id, std::size_t i, bool narrower) -> bool {
    const detail::tree_node& n = nodes_[id];
    if (i == segments.size()) return at(n);
    if (n.rest != detail::no_index && at(nodes_[n.rest])) return true;
    const segment& s = segments[i];
    switch (s.type) {
      case segment::kind::literal: {
        std::uint32_t child = n.literals.find(s.text);
        if (child != detail::no_index && self(self, child, i + 1, narrower)) return true;
        return n.wildcard != detail::no_index && self(self, n.wildcard, i + 1, true);
      }
      case segment::kind::wildcard:
        for (const auto& [key, child] : n.literals.entries())
          if (self(self, child, i + 1, narrower)) return true;
        return n.wildcard != detail::no_index && self(self, n.wildcard, i + 1, narrower);
      case segment::kind::end:
        return n.end != detail::no_index && at(nodes_[n.end]);
      case segment::kind::rest:
        for (const auto& [key, child] : n.literals.entries())
          if (below(below, child, narrower)) return true;
        return (n.wildcard != detail::no_index && below(below, n.wildcard, narrower)) ||
               (n.end != detail::no_index && below(below, n.end, narrower));
    }
    return false;
  };
  along(along, root, 0, false);
  return hit;
}

template <class Handler>
auto basic_router<Handler>::routes_by_precedence() const -> std::vector<const route_type*> {
  std::vector<const route_type*> out;
  out.reserve(routes_.size());
  auto visit = [&](auto& self, std::uint32_t id) -> void {
    const detail::tree_node& n = nodes_[id];
    // HEAD is the only method more specific than another (GET); then any method last.
    auto terminal = n.method_routes;
    std::stable_sort(terminal.begin(), terminal.end(), [](auto a, auto b) {
      return (a.first == detail::method_table::head) > (b.first == detail::method_table::head);
    });
    for (auto [m, r] : terminal) out.push_back(&routes_[r]);
    if (n.any_route != detail::no_index) out.push_back(&routes_[n.any_route]);
    auto literals = n.literals.entries();
    std::sort(literals.begin(), literals.end());
    for (const auto& [key, child] : literals) self(self, child);
    for (std::uint32_t child : {n.wildcard, n.end, n.rest})
      if (child != detail::no_index) self(self, child);
  };
  std::vector<std::pair<std::string_view, std::uint32_t>> hosts(host_roots_.begin(),
                                                                host_roots_.end());
  std::sort(hosts.begin(), hosts.end());
  for (auto [host, root] : hosts) visit(visit, root);
  visit(visit, 0);
  return out;
}

template <class Handler>
auto basic_router<Handler>::explain(std::string_view method, std::string_view path,
                                    std::string_view host) const -> basic_explanation<Handler> {
  basic_explanation<Handler> e;
  auto result = std::make_unique<match_result>();
  match(method, path, host, *result);
  e.status = result->status();
  switch (e.status) {
    case match_status::method_not_allowed:
      e.allow = result->allowed().to_string();
      break;
    case match_status::redirect:
      e.location = std::string(result->location_path());
      break;
    case match_status::bad_request:
      e.error = std::string(result->error());
      return e;
    default:
      break;
  }
  std::string clean(path.size() + 1, '\0');
  clean.resize(detail::clean_path(path, clean.data()));
  std::string_view bare_host = detail::strip_port(host);
  const route_type* winner = result->route();
  if (winner) e.candidates.push_back({winner, true, {}});
  for (const route_type* r : routes_by_precedence()) {
    if (r == winner || !matches(r->pattern, bare_host, method, clean)) continue;
    e.candidates.push_back(
        {r, false, winner ? describe_precedence(winner->pattern, r->pattern) : std::string()});
  }
  return e;
}

}  // namespace waypoint
