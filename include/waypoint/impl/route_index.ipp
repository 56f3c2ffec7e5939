// The definitions of waypoint/detail/route_index.hpp: compiled once by
// src/core/route_index.cpp, or included by the header with WAYPOINT_HEADER_ONLY
// (detail/config.hpp). What only this file calls (the literal table, the steps of
// registration and of the walk) stays `inline` in both modes, and the scans the walk calls
// (detail/escape.hpp) are inline too, so the compiler still inlines them into match() as
// when everything was in the header; what the header's users call is WAYPOINT_INLINE.
#pragma once

#include "waypoint/detail/route_index.hpp"

#include "waypoint/detail/escape.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <tuple>

namespace waypoint {
namespace detail {

// ---- the literal table --------------------------------------------------------------------

inline std::uint32_t literal_table::find(std::uint32_t owner, std::string_view key,
                                         const char* arena) const noexcept {
  if (slots_.empty()) return no_index;
  std::uint32_t h = hash(owner, key);
  for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
    const slot& s = slots_[i];
    if (s.owner == no_index) return no_index;
    if (s.hash == h && s.owner == owner && s.length == key.size() &&
        same_segment({arena + s.text, s.length}, key))
      return s.value;
  }
}

inline void literal_table::insert(std::uint32_t owner, std::string_view key, std::uint32_t text,
                                  std::uint32_t value) {
  if (2 * (used_ + 1) > slots_.size()) grow();
  place({owner, hash(owner, key), text, static_cast<std::uint32_t>(key.size()), value});
  ++used_;
}

inline std::uint32_t literal_table::hash(std::uint32_t owner, std::string_view key) noexcept {
  return segment_hash(key) ^ (owner * 0x9E3779B9u);
}

inline void literal_table::place(const slot& entry) noexcept {
  std::size_t i = entry.hash & mask_;
  while (slots_[i].owner != no_index) i = (i + 1) & mask_;
  slots_[i] = entry;
}

inline void literal_table::grow() {
  std::vector<slot> old = std::move(slots_);
  slots_.assign(std::max<std::size_t>(64, 2 * old.size()), slot{});
  mask_ = slots_.size() - 1;
  for (const slot& s : old)
    if (s.owner != no_index) place(s);
}

// ---- construction --------------------------------------------------------------------------

WAYPOINT_INLINE route_index::route_index() { nodes_.emplace_back(); }
WAYPOINT_INLINE route_index::route_index(const route_index&) = default;
WAYPOINT_INLINE route_index::route_index(route_index&&) noexcept = default;
WAYPOINT_INLINE route_index& route_index::operator=(const route_index&) = default;
WAYPOINT_INLINE route_index& route_index::operator=(route_index&&) noexcept = default;
WAYPOINT_INLINE route_index::~route_index() = default;

// ---- lookup ------------------------------------------------------------------------------

WAYPOINT_INLINE std::uint32_t route_index::find_literal(std::uint32_t id,
                                                        std::string_view key) const noexcept {
  return find_literal(nodes_[id], id, key);
}

// The word is computed only for a node that scans: a wide node hashes the key instead.
[[gnu::always_inline]] inline std::uint32_t route_index::find_literal(const tree_node& n, std::uint32_t id,
                                               std::string_view key) const noexcept {
  if (n.edge_count > literal_scan_limit) return wide_.find(id, key, arena());
  std::uint64_t word = segment_word(key);
  const literal_edge* e = edges_of(n);
  for (std::uint32_t i = 0; i < n.edge_count; ++i) {
    if (e[i].word != word || e[i].length != key.size()) continue;
    // Below eight bytes the word holds the whole segment.
    if (e[i].length < 8 || same_segment(edge_text(e[i]), key)) return e[i].child;
  }
  return no_index;
}

inline std::uint32_t route_index::root_for(std::string_view host) const noexcept {
  if (host.empty()) return 0;
  auto it = host_roots_.find(host);
  return it == host_roots_.end() ? no_index : it->second;
}

// ---- registration ------------------------------------------------------------------------

WAYPOINT_INLINE void route_index::insert(const pattern& p, std::uint8_t method) {
  auto route = static_cast<std::uint32_t>(patterns_.size());
  patterns_.push_back(&p);
  rest_value_.push_back(p.ends_in_rest() && !p.last().text.empty());
  std::uint32_t root = tree_for(p.host());
  if (root == 0 && p.segments().front().type == segment::kind::literal)
    first_segments_.add(segment_fingerprint(p.segments().front().text));
  std::uint32_t id = root;
  std::uint32_t depth = 0;
  count_route(id, p, depth);
  for (const segment& s : p.segments()) {
    id = child_for(id, s);
    count_route(id, p, ++depth);
  }
  add_terminal(id, method, route);
  add_static(root, p, id);
}

inline std::uint32_t route_index::tree_for(std::string_view host) {
  if (host.empty()) return 0;
  auto it = host_roots_.find(host);
  if (it != host_roots_.end()) return it->second;
  nodes_.emplace_back();
  auto id = static_cast<std::uint32_t>(nodes_.size() - 1);
  host_roots_.emplace(std::string(host), id);
  return id;
}

// The child of `id` for `s`, made when missing. May reallocate nodes_.
inline std::uint32_t route_index::child_for(std::uint32_t id, const segment& s) {
  if (s.type == segment::kind::literal) {
    std::uint32_t child = find_literal(id, s.text);
    return child != no_index ? child : add_literal(id, s.text);
  }
  auto member = s.type == segment::kind::wildcard ? &tree_node::wildcard
                : s.type == segment::kind::end    ? &tree_node::end
                                                  : &tree_node::rest;
  if (nodes_[id].*member == no_index) {
    nodes_.emplace_back();
    nodes_[id].*member = static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  return nodes_[id].*member;
}

inline std::uint32_t route_index::add_literal(std::uint32_t id, std::string_view text) {
  nodes_.emplace_back();
  auto child = static_cast<std::uint32_t>(nodes_.size() - 1);
  tree_node& n = nodes_[id];
  if (n.edge_count == n.edge_capacity) {
    // Move the edges to the end with twice the room; the hole left behind is at most
    // as large as what stays in use.
    std::uint32_t capacity = std::max<std::uint32_t>(2, 2 * n.edge_capacity);
    auto moved = static_cast<std::uint32_t>(edges_.size());
    edges_.resize(edges_.size() + capacity);
    std::copy_n(edges_.begin() + n.edges, n.edge_count, edges_.begin() + moved);
    n.edges = moved;
    n.edge_capacity = capacity;
  }
  std::uint32_t offset = store_text(text);
  edges_[n.edges + n.edge_count++] = {segment_word(text), static_cast<std::uint32_t>(text.size()),
                                      offset, child};
  if (n.edge_count == literal_scan_limit + 1) {
    for (std::uint32_t i = 0; i < n.edge_count; ++i) {
      const literal_edge& e = edges_[n.edges + i];
      wide_.insert(id, edge_text(e), e.text, e.child);
    }
  } else if (n.edge_count > literal_scan_limit) {
    wide_.insert(id, text, offset, child);
  }
  return child;
}

inline std::uint32_t route_index::store_text(std::string_view text) {
  auto offset = static_cast<std::uint32_t>(text_.size());
  text_.insert(text_.end(), text.begin(), text.end());
  return offset;
}

inline void route_index::count_route(std::uint32_t id, const pattern& p, std::uint32_t depth) {
  tree_node& n = nodes_[id];
  n.subtree_any += p.method().empty();
  n.subtree_get += p.method() == "GET";
  std::uint32_t reach = reach_of(p);
  n.reach = reach == unbounded_reach ? reach : std::max(n.reach, reach - depth);
}

inline void route_index::add_terminal(std::uint32_t id, std::uint8_t method, std::uint32_t route) {
  tree_node& n = nodes_[id];
  if (method == no_method) {
    n.any_route = route;
    return;
  }
  n.methods |= std::uint64_t{1} << method;
  if (n.method_route == no_index) {
    n.method = method;
    n.method_route = route;
    return;
  }
  method_links_.push_back({method, route, n.more_routes});
  n.more_routes = static_cast<std::uint32_t>(method_links_.size() - 1);
}

inline void route_index::add_static(std::uint32_t root, const pattern& p, std::uint32_t id) {
  thread_local std::string key;  // reused: a static path is built on every registration
  if (!static_key(p, key) || statics_.find(root, key, arena()) != no_index) return;
  statics_.insert(root, key, store_text(key), id);
  static_lengths_ |= length_bit(key.size());
}

inline std::uint64_t route_index::length_bit(std::size_t n) noexcept {
  return std::uint64_t{1} << std::min<std::size_t>(n, 63);
}

// The request path that a literal-only pattern matches (in its host's tree), when an
// unescaped request path can spell it: no literal may hold '/' or a byte that needs escaping.
inline bool route_index::static_key(const pattern& p, std::string& key) {
  key.clear();
  for (const segment& s : p.segments()) {
    if (s.type == segment::kind::end) {
      key += '/';
      return true;
    }
    if (s.type != segment::kind::literal) return false;
    for (char c : s.text)
      if (!is_path_byte(c)) return false;
    key += '/';
    key += s.text;
  }
  return true;
}

// How many segments a request path has when `p` matches it; unbounded for a rest.
inline std::uint32_t route_index::reach_of(const pattern& p) noexcept {
  if (p.ends_in_rest()) return unbounded_reach;
  return static_cast<std::uint32_t>(p.segments().size());
}

// ---- the conflict search -----------------------------------------------------------------

// Walks the new pattern's host tree along every branch whose routes' paths could overlap
// it, so it costs the pattern's depth plus the overlapping routes, not the size of the
// table. Every candidate is compared exactly with conflicts().
struct route_index::conflict_search {
  const route_index& index;
  const pattern& p;
  const std::vector<segment>& segments = p.segments();
  bool method_less = p.method().empty();
  bool head = p.method() == "HEAD";
  std::uint32_t hit = no_index;

  // Whether a route ending at `n` conflicts with p; records the first that does.
  bool routes_at(const tree_node& n) {
    auto check = [&](std::uint8_t, std::uint32_t r) {
      if (hit == no_index && conflicts(p, *index.patterns_[r])) hit = r;
    };
    index.for_each_route(n, check);
    if (n.any_route != no_index) check(no_method, n.any_route);
    return hit != no_index;
  }

  // A rest pattern is more general in path than every route below it, unless the walk
  // took a {x} child for one of its literals (`narrower`: it is then narrower at that
  // segment). Otherwise only a route more general in method can conflict: a method-less
  // one, or GET against HEAD, and the per-node counters skip subtrees without one.
  bool may_conflict_below(const tree_node& n, bool narrower) const {
    return narrower || (!method_less && (n.subtree_any > 0 || (head && n.subtree_get > 0)));
  }

  // Every route at or below `id`, for a rest pattern that ended above it.
  bool below(std::uint32_t id, bool narrower) {
    const tree_node& n = index.nodes_[id];
    if (!may_conflict_below(n, narrower)) return false;
    if (routes_at(n)) return true;
    return any_child(n, [&](std::uint32_t child) { return below(child, narrower); });
  }

  template <class F>
  bool any_child(const tree_node& n, F&& f) const {
    const literal_edge* e = index.edges_of(n);
    for (std::uint32_t i = 0; i < n.edge_count; ++i)
      if (f(e[i].child)) return true;
    for (std::uint32_t child : {n.wildcard, n.end, n.rest})
      if (child != no_index && f(child)) return true;
    return false;
  }

  template <class F>
  bool any_literal_child(const tree_node& n, F&& f) const {
    const literal_edge* e = index.edges_of(n);
    for (std::uint32_t i = 0; i < n.edge_count; ++i)
      if (f(e[i].child)) return true;
    return false;
  }

  // The routes that pattern segments [i, end) meet below `id`.
  bool along(std::uint32_t id, std::size_t i, bool narrower) {
    const tree_node& n = index.nodes_[id];
    if (i == segments.size()) return routes_at(n);
    if (n.rest != no_index && routes_at(index.nodes_[n.rest])) return true;
    switch (segments[i].type) {
      case segment::kind::literal:
        return along_literal(id, n, i, narrower);
      case segment::kind::wildcard:
        return along_wildcard(n, i, narrower);
      case segment::kind::end:
        return n.end != no_index && routes_at(index.nodes_[n.end]);
      case segment::kind::rest:
        return along_rest(n, narrower);
    }
    return false;
  }

  // A literal meets the same literal and the {x} child (narrower from there on).
  bool along_literal(std::uint32_t id, const tree_node& n, std::size_t i, bool narrower) {
    std::uint32_t child = index.find_literal(id, segments[i].text);
    if (child != no_index && along(child, i + 1, narrower)) return true;
    return n.wildcard != no_index && along(n.wildcard, i + 1, true);
  }

  // A {x} meets every literal child and the {x} child.
  bool along_wildcard(const tree_node& n, std::size_t i, bool narrower) {
    if (any_literal_child(n, [&](std::uint32_t c) { return along(c, i + 1, narrower); }))
      return true;
    return n.wildcard != no_index && along(n.wildcard, i + 1, narrower);
  }

  // A rest meets everything below but the rest child, checked by along() already.
  bool along_rest(const tree_node& n, bool narrower) {
    if (any_literal_child(n, [&](std::uint32_t c) { return below(c, narrower); })) return true;
    return (n.wildcard != no_index && below(n.wildcard, narrower)) ||
           (n.end != no_index && below(n.end, narrower));
  }
};

WAYPOINT_INLINE std::uint32_t route_index::find_conflict(const pattern& p) const {
  std::uint32_t root = root_for(p.host());
  if (root == no_index) return no_index;
  conflict_search search{*this, p};
  search.along(root, 0, false);
  return search.hit;
}

// ---- the match walk ----------------------------------------------------------------------

// One depth-first walk of a host's tree, literal children first, then the one-segment
// wildcard, then the rest wildcard: the first route found that serves the method is the
// most specific one (registration guarantees it). The same walk records
//   - the first route that would serve the path with '/' appended (the trailing-slash
//     redirect), which differs only where the path ends at a node, and
//   - the methods of every route whose path matches (the Allow set of a 405),
// so no outcome needs a second traversal.
struct route_index::walk {
  const route_index& index;
  std::string_view path;  // clean, escaped, begins with '/'
  std::uint8_t method;
  bool escaped;           // some segment holds a %XX escape
  std::uint64_t slashes;  // slash_map(path)
  char* scratch;          // room to decode one segment
  std::array<std::string_view, max_wildcards>& values;
  std::uint8_t count = 0;
  std::uint32_t found = no_index;
  bool found_exact = false;  // false when a rest wildcard took a non-empty remainder
  std::uint32_t slash = no_index;
  bool slash_exact = false;
  std::uint64_t allowed = 0;

  const tree_node& node(std::uint32_t id) const noexcept { return index.nodes_[id]; }
  std::uint32_t serve(const tree_node& n) const noexcept { return index.serve(n, method); }

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
    return {scratch, percent_decode(raw, scratch)};
  }

  // Walks the subtree of `id` for the path from `pos` (path[pos] == '/', or pos ==
  // path.size()), which holds `left` segments. Returns true once `found` is set; on false
  // the captured values are as on entry.
  //
  // A child that is the node's last alternative is entered by looping, not by a call: most
  // nodes have one way down, and a call per segment cost a fifth of a parameter match.
  bool descend(std::uint32_t id, std::size_t pos, std::size_t left) noexcept {
    std::uint8_t entry_count = count;
    for (;;) {
      const tree_node& n = node(id);
      if (left > n.reach) break;  // with '/' appended the path is longer still
      if (pos == path.size()) return at_path_end(n) || restore(entry_count);
      if (pos + 1 == path.size()) return at_trailing_slash(n) || restore(entry_count);
      std::size_t begin = pos + 1;
      std::size_t end = segment_end(begin);
      std::string_view raw = segment(begin, end);
      bool wildcard = n.wildcard != no_index;
      bool rest = n.rest != no_index;
      if (n.edge_count != 0) {
        std::uint32_t child = index.find_literal(n, id, decoded(raw));
        if (child != no_index) {
          if (!wildcard && !rest) {
            std::tie(id, pos, left) = std::tuple(child, end, left - 1);
            continue;
          }
          if (descend(child, end, left - 1)) return true;
        }
      }
      if (wildcard) {
        values[count++] = raw;
        if (!rest) {
          std::tie(id, pos, left) = std::tuple(n.wildcard, end, left - 1);
          continue;
        }
        if (descend(n.wildcard, end, left - 1)) return true;
        --count;
      }
      if (rest) return take_rest(n.rest, segment(begin, path.size()), false) || restore(entry_count);
      break;
    }
    return restore(entry_count);
  }

  bool restore(std::uint8_t entry_count) noexcept {
    count = entry_count;
    return false;
  }

  // The path ends exactly at `n`. With '/' appended it would reach {$} or an empty rest.
  bool at_path_end(const tree_node& n) noexcept {
    allowed |= n.methods;
    if (std::uint32_t r = serve(n); r != no_index) return take(r, true);
    for (std::uint32_t child : {n.end, n.rest}) {
      if (child == no_index) continue;
      allowed |= node(child).methods;
      if (slash != no_index) continue;
      if (std::uint32_t r = serve(node(child)); r != no_index) {
        slash = r;
        slash_exact = true;
      }
    }
    return false;
  }

  // The path ends in '/' right after `n`: only {$} and an empty rest match; a one-segment
  // wildcard never matches an empty segment.
  bool at_trailing_slash(const tree_node& n) noexcept {
    if (n.end != no_index) {
      const tree_node& end = node(n.end);
      allowed |= end.methods;
      if (std::uint32_t r = serve(end); r != no_index) return take(r, true);
    }
    if (n.rest != no_index) return take_rest(n.rest, {}, true);
    return false;
  }

  bool take_rest(std::uint32_t id, std::string_view rest, bool exact) noexcept {
    const tree_node& n = node(id);
    allowed |= n.methods;
    std::uint32_t r = serve(n);
    if (r == no_index) return false;
    if (index.rest_value_[r]) values[count++] = rest;
    if (slash == no_index) {
      slash = r;
      slash_exact = exact;
    }
    return take(r, exact);
  }

  bool take(std::uint32_t r, bool exact) noexcept {
    found = r;
    found_exact = exact;
    return true;
  }
};

// A path too long or not valid is answered before any lookup.
inline bool route_index::refuse_path(std::string_view path, const path_scan& scan,
                                     match_record& out) noexcept {
  const char* error = path.size() > max_path_length ? "the path is longer than the router accepts"
                      : out.storage.empty() ? "the match result was lent no storage"
                      : out.storage.size() < match_storage_bytes(path.size())
                          ? "the path is longer than the match result holds"
                          : scan.error;
  if (!error) return false;
  out.error = error;
  out.status = match_status::bad_request;
  return true;
}

inline std::uint32_t route_index::host_root(std::string_view host) const noexcept {
  if (host_roots_.empty() || host.empty()) return no_index;
  return root_for(strip_port(host));
}

// The route at `n` that serves the method: the exact method, then GET for a HEAD
// request, then the method-less route.
inline std::uint32_t route_index::serve(const tree_node& n, std::uint8_t method) const noexcept {
  if (n.method == method) return n.method_route;
  if (n.more_routes == no_index) {
    if (method == method_table::head && n.method == method_table::get) return n.method_route;
    return n.any_route;
  }
  return serve_among_many(n, method);
}

inline std::uint32_t route_index::serve_among_many(const tree_node& n,
                                                   std::uint8_t method) const noexcept {
  std::uint32_t get = n.method == method_table::get ? n.method_route : no_index;
  for (std::uint32_t l = n.more_routes; l != no_index; l = method_links_[l].next) {
    const method_link& link = method_links_[l];
    if (link.method == method) return link.route;
    if (link.method == method_table::get) get = link.route;
  }
  return method == method_table::head && get != no_index ? get : n.any_route;
}

// A literal-only route whose path equals the (clean, unescaped) request path is the most
// specific in the tree walked first; when it serves the method that is the answer, before
// any walk is set up, since a static hit is the cheapest and most common match.
inline bool route_index::answer_static(std::uint32_t root, std::uint8_t method,
                                       std::string_view path, match_record& out) const noexcept {
  if (!(static_lengths_ & length_bit(path.size()))) return false;
  std::uint32_t id = statics_.find(root, path, arena());
  if (id == no_index) return false;
  std::uint32_t r = serve(nodes_[id], method);
  if (r == no_index) return false;
  out.route = r;
  out.status = match_status::matched;
  return true;
}

// The hostless walk's first step, taken here when the root has only literal children: a
// first segment that none of them spells is the common miss (a scanner's probe, a typo at
// the top), answered without entering the walk, and a hit enters it one level down. A
// hashed root asks the filter of first segments before hashing, which costs more than the
// filter; a root that scans its few children is asked directly. Returns false when the
// tree cannot match; otherwise the walk starts at `id`, `pos`, `left`.
inline bool route_index::first_step(walk& w, std::uint32_t& id, std::size_t& pos,
                                    std::size_t& left) const noexcept {
  const tree_node& root = nodes_[0];
  if (w.path.size() <= 1 || root.wildcard != no_index || root.rest != no_index) return true;
  if (left > root.reach) return false;  // descend would stop here too
  std::size_t end = w.segment_end(1);
  std::string_view first = w.decoded(w.segment(1, end));
  if (root.edge_count > literal_scan_limit &&
      !first_segments_.may_contain(segment_fingerprint(first)))
    return false;
  std::uint32_t child = find_literal(root, 0, first);
  if (child == no_index) return false;
  std::tie(id, pos, left) = std::tuple(child, end, left - 1);
  return true;
}

WAYPOINT_INLINE void route_index::match(std::uint8_t method, std::string_view path,
                                        std::string_view host, match_record& out) const noexcept {
  out.route = no_index;
  out.value_count = 0;
  out.allowed = 0;
  out.methods = &methods_;
  path_scan scan = path.size() > max_path_length ? path_scan{} : scan_path(path);
  if (refuse_path(path, scan, out)) return;
  std::uint32_t host_tree = host_root(host);
  if (scan.clean && !scan.escaped &&
      answer_static(host_tree != no_index ? host_tree : 0, method, path, out))
    return;
  char* storage = out.storage.data();
  std::string_view walked = path;
  if (!scan.clean) walked = {storage, clean_path(path, storage)};
  walk w{*this, walked, method, scan.escaped, scan.clean ? scan.slashes : slash_map(walked),
         storage + walked.size() + 1, out.values};
  std::size_t segments = scan.clean ? scan.segments
                                    : static_cast<std::size_t>(
                                          std::count(walked.begin(), walked.end(), '/'));
  if (w.found == no_index && host_tree != no_index) w.descend(host_tree, 0, segments);
  std::uint32_t start = 0;
  std::size_t pos = 0;
  if (w.found == no_index && first_step(w, start, pos, segments)) w.descend(start, pos, segments);
  finish(w, path, scan, out);
}

// Turns what the walk found into the outcome: a redirect (to the path with '/' appended,
// or to the clean path), a 404 or 405, or the match with its values decoded.
inline void route_index::finish(walk& w, std::string_view path, const path_scan& scan,
                                match_record& out) const noexcept {
  char* storage = out.storage.data();
  // An exact slash route is recorded only where the path ends at a node, so never for a
  // path that already ends in '/'.
  bool slash_redirect = !w.found_exact && w.slash != no_index && w.slash_exact;
  if (slash_redirect || !scan.clean) {
    if (slash_redirect) {
      if (scan.clean) std::memcpy(storage, path.data(), path.size());
      storage[w.path.size()] = '/';
    }
    out.location = {storage, w.path.size() + slash_redirect};
    out.redirect_status = redirect_status_;
    out.status = match_status::redirect;
    return;
  }
  if (w.found == no_index) {
    if (w.allowed >> method_table::get & 1u) w.allowed |= std::uint64_t{1} << method_table::head;
    out.allowed = w.allowed;
    out.status = w.allowed ? match_status::method_not_allowed : match_status::not_found;
    return;
  }
  // Decode the values that need it, now that the walk no longer needs the scratch.
  char* cursor = storage;
  for (std::uint8_t i = 0; scan.escaped && i < w.count; ++i) {
    std::string_view v = out.values[i];
    if (v.find('%') == std::string_view::npos) continue;
    std::size_t n = percent_decode(v, cursor);
    out.values[i] = {cursor, n};
    cursor += n;
  }
  out.value_count = w.count;
  out.route = w.found;
  out.status = match_status::matched;
}

// ---- introspection -----------------------------------------------------------------------

WAYPOINT_INLINE std::vector<std::uint32_t> route_index::by_precedence() const {
  std::vector<std::uint32_t> out;
  out.reserve(patterns_.size());
  auto visit = [&](auto& self, std::uint32_t id) -> void {
    const tree_node& n = nodes_[id];
    // HEAD is the only method more specific than another (GET); then any method last.
    std::vector<std::pair<std::uint8_t, std::uint32_t>> terminal;
    for_each_route(n, [&](std::uint8_t m, std::uint32_t r) { terminal.emplace_back(m, r); });
    std::sort(terminal.begin(), terminal.end(), [](auto a, auto b) {
      bool ah = a.first == method_table::head, bh = b.first == method_table::head;
      return ah != bh ? ah : a.second < b.second;
    });
    for (auto [m, r] : terminal) out.push_back(r);
    if (n.any_route != no_index) out.push_back(n.any_route);
    std::vector<std::pair<std::string_view, std::uint32_t>> literals;
    for (std::uint32_t i = 0; i < n.edge_count; ++i)
      literals.emplace_back(edge_text(edges_of(n)[i]), edges_of(n)[i].child);
    std::sort(literals.begin(), literals.end());
    for (const auto& [key, child] : literals) self(self, child);
    for (std::uint32_t child : {n.wildcard, n.end, n.rest})
      if (child != no_index) self(self, child);
  };
  std::vector<std::pair<std::string_view, std::uint32_t>> hosts(host_roots_.begin(),
                                                                host_roots_.end());
  std::sort(hosts.begin(), hosts.end());
  for (auto [host, root] : hosts) visit(visit, root);
  visit(visit, 0);
  return out;
}

// The outcome of `matched`, then every route that matches the request: the winner, and
// each loser with the reason the winner is more specific.
WAYPOINT_INLINE explanation_core route_index::explain(std::string_view method,
                                                      std::string_view path,
                                                      std::string_view host,
                                                      const match_record& matched) const {
  explanation_core e;
  e.status = matched.status;
  if (e.status == match_status::bad_request) {
    e.error = std::string(matched.error);
    return e;
  }
  if (e.status == match_status::redirect) e.location = std::string(matched.location);
  if (e.status == match_status::method_not_allowed) {
    for (std::uint8_t i : methods_.by_name())
      if (matched.allowed >> i & 1u) e.allow += (e.allow.empty() ? "" : ", ") + std::string(methods_.name(i));
  }
  std::string clean(path.size() + 1, '\0');
  clean.resize(clean_path(path, clean.data()));
  std::string_view bare_host = strip_port(host);
  std::uint32_t winner = matched.status == match_status::matched ? matched.route : no_index;
  if (winner != no_index) e.candidates.push_back({winner, true, {}});
  for (std::uint32_t r : by_precedence()) {
    if (r == winner || !matches(*patterns_[r], bare_host, method, clean)) continue;
    std::string reason =
        winner != no_index ? describe_precedence(*patterns_[winner], *patterns_[r]) : std::string();
    e.candidates.push_back({r, false, std::move(reason)});
  }
  return e;
}

}  // namespace detail
}  // namespace waypoint
