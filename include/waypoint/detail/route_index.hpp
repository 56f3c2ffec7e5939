// The router's index, compiled once whatever the handler type: basic_router<Handler> keeps
// its routes and handlers and hands this class route numbers and patterns only (the thin
// template over a non-template core of Boost.URL's router). The segment trees, the
// literal-only fast path, the match walk, registration, the conflict search and the
// precedence order all live here; docs/design.md draws the tree and says why each part is
// shaped as it is.
//
// Storage is flat so that registering a route costs few allocations: nodes, literal edges
// and extra method routes are elements of a handful of vectors, literal texts are bytes of
// one arena, and the wide nodes' hash indexes and the literal-only routes share two
// open-addressing tables keyed by (owner node, text).
#pragma once

#include "waypoint/detail/config.hpp"
#include "waypoint/detail/router_tree.hpp"
#include "waypoint/match_status.hpp"
#include "waypoint/pattern.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace waypoint {

// Longest request path (escaped, without the query) a router accepts; longer ones are
// bad_request. Servers usually cap the whole request line lower (8 KiB is common).
inline constexpr std::size_t max_path_length = 8192;

// The bytes a match may write for a path of `length`: the cleaned path of a redirect plus
// scratch for decoding one segment, or the decoded values; each is no longer than the path,
// so twice it suffices. What a match result holds (basic_match_result) or is lent.
constexpr std::size_t match_storage_bytes(std::size_t path_length) noexcept {
  return 2 * path_length + 2;
}

namespace detail {

struct path_scan;  // detail/escape.hpp: what one scan of a request path found

// What one match produces, whatever the handler type; basic_match_result wraps it.
struct match_record {
  match_status status = match_status::not_found;
  std::uint8_t value_count = 0;
  int redirect_status = 0;
  std::uint32_t route = no_index;  // the matched route's number
  std::uint64_t allowed = 0;
  const method_table* methods = nullptr;
  std::string_view location;
  std::string_view error;
  std::array<std::string_view, max_wildcards> values;
  // Where the match writes what is not a view of the path (match_storage_bytes), set by
  // the result that owns this record; a path that needs more is refused as bad_request.
  std::span<char> storage;
};

// A literal child of a node. Invariant: word == segment_word(the literal).
struct literal_edge {
  std::uint64_t word;
  std::uint32_t length;
  std::uint32_t text;  // offset of the decoded literal in route_index's text arena
  std::uint32_t child;
};

// Open-addressing table (linear probing, at most half full) from (owner node, text) to a
// node, for the nodes with more than literal_scan_limit literal children and for each
// tree's literal-only routes by path. The texts live in the caller's arena.
class literal_table {
 public:
  std::uint32_t find(std::uint32_t owner, std::string_view key, const char* arena) const noexcept;
  void insert(std::uint32_t owner, std::string_view key, std::uint32_t text, std::uint32_t value);

 private:
  struct slot {
    std::uint32_t owner = no_index;  // no_index marks an empty slot
    std::uint32_t hash = 0;
    std::uint32_t text = 0;
    std::uint32_t length = 0;
    std::uint32_t value = 0;
  };

  static std::uint32_t hash(std::uint32_t owner, std::string_view key) noexcept;
  void place(const slot& entry) noexcept;
  void grow();

  std::vector<slot> slots_;
  std::size_t used_ = 0;
  std::size_t mask_ = 0;
};

// The method of a node's inline route before it has one: neither a method bit nor
// no_method, which a request for a method no route names carries.
inline constexpr std::uint8_t no_route_method = 0xFE;

// One position in a host's segment tree. The path from the root spells a pattern's
// segments; the routes whose pattern ends here hang off the node.
struct tree_node {
  // Literal children: edge_count edges from edges_[edges]; a node outgrowing its capacity
  // moves its edges to the end of edges_ (so no node owns an allocation).
  std::uint32_t edges = 0;
  std::uint32_t edge_count = 0;
  std::uint32_t edge_capacity = 0;
  std::uint32_t wildcard = no_index;  // child for {name}
  std::uint32_t end = no_index;       // child for {$}
  std::uint32_t rest = no_index;      // child for {name...} and a trailing '/'
  // The most segments a route at or below this node matches past it (unbounded_reach
  // when a rest wildcard is below): a path with more left cannot match here.
  std::uint32_t reach = 0;
  // Routes ending here: the first one naming a method inline (most nodes have one), the
  // others in route_index::method_links_, and the method-less one. `method` is
  // no_route_method, which no request has, until a route naming a method ends here.
  std::uint8_t method = no_route_method;
  std::uint32_t method_route = no_index;
  std::uint32_t more_routes = no_index;
  std::uint32_t any_route = no_index;
  // Bits of the methods of the routes ending here: what a 405 would allow.
  std::uint64_t methods = 0;
  // Method-less and GET routes at or below this node. Registration uses them to skip
  // subtrees that cannot conflict with a new rest pattern.
  std::uint32_t subtree_any = 0;
  std::uint32_t subtree_get = 0;
};
static_assert(sizeof(tree_node) == 64, "a node is one cache line; see static_lengths_");

inline constexpr std::uint32_t unbounded_reach = no_index;

// basic_explanation without the handler type: candidates by route number.
struct explanation_core {
  struct candidate {
    std::uint32_t route;
    bool winner;
    std::string reason;
  };
  match_status status = match_status::not_found;
  std::string allow;
  std::string location;
  std::string error;
  std::vector<candidate> candidates;
};

class route_index {
 public:
  route_index();  // node 0: the root for patterns with no host
  // Out of line, so that a unit holding a router does not instantiate the containers'
  // copies and destructors (compile time: BENCHMARKS.md §15).
  route_index(const route_index&);
  route_index(route_index&&) noexcept;
  route_index& operator=(const route_index&);
  route_index& operator=(route_index&&) noexcept;
  ~route_index();

  // The number of the registered route `p` conflicts with (or repeats), or no_index.
  std::uint32_t find_conflict(const pattern& p) const;
  // Adds route number size() with pattern `p`, which must outlive the index and not
  // conflict with a registered route.
  void insert(const pattern& p, std::uint8_t method);
  std::size_t size() const noexcept { return patterns_.size(); }

  method_table& methods() noexcept { return methods_; }
  const method_table& methods() const noexcept { return methods_; }
  void set_redirect_status(int status) noexcept { redirect_status_ = status; }

  // Matches `path` (escaped, without the query) on `host` for the interned `method`
  // (no_method: a method no route names). Allocates nothing.
  void match(std::uint8_t method, std::string_view path, std::string_view host,
             match_record& out) const noexcept;

  // Route numbers in precedence order (basic_router::routes_by_precedence).
  std::vector<std::uint32_t> by_precedence() const;
  // basic_router::explain for a request whose match is `matched`.
  explanation_core explain(std::string_view method, std::string_view path, std::string_view host,
                           const match_record& matched) const;

  // The literal child of `id` spelled `key` (decoded), or no_index.
  std::uint32_t find_literal(std::uint32_t id, std::string_view key) const noexcept;

 private:
  struct walk;
  struct conflict_search;

  // find_literal for the node `n` with number `id`: the walk's step, inlined into it.
  std::uint32_t find_literal(const tree_node& n, std::uint32_t id,
                             std::string_view key) const noexcept;

  const char* arena() const noexcept { return text_.data(); }
  std::string_view edge_text(const literal_edge& e) const noexcept {
    return {text_.data() + e.text, e.length};
  }
  const literal_edge* edges_of(const tree_node& n) const noexcept {
    return edges_.data() + n.edges;
  }
  std::uint32_t root_for(std::string_view host) const noexcept;

  // Registration, step by step (insert).
  std::uint32_t tree_for(std::string_view host);
  std::uint32_t child_for(std::uint32_t id, const segment& s);
  std::uint32_t add_literal(std::uint32_t id, std::string_view text);
  std::uint32_t store_text(std::string_view text);
  void count_route(std::uint32_t id, const pattern& p, std::uint32_t depth);
  void add_terminal(std::uint32_t id, std::uint8_t method, std::uint32_t route);
  void add_static(std::uint32_t root, const pattern& p, std::uint32_t id);
  static bool static_key(const pattern& p, std::string& key);
  static std::uint32_t reach_of(const pattern& p) noexcept;
  static std::uint64_t length_bit(std::size_t n) noexcept;

  // Matching, step by step (match).
  static bool refuse_path(std::string_view path, const path_scan& scan,
                          match_record& out) noexcept;
  std::uint32_t host_root(std::string_view host) const noexcept;
  std::uint32_t serve(const tree_node& n, std::uint8_t method) const noexcept;
  std::uint32_t serve_among_many(const tree_node& n, std::uint8_t method) const noexcept;
  bool answer_static(std::uint32_t root, std::uint8_t method, std::string_view path,
                     match_record& out) const noexcept;
  bool first_step(walk& w, std::uint32_t& id, std::size_t& pos,
                  std::size_t& left) const noexcept;
  void finish(walk& w, std::string_view path, const path_scan& scan, match_record& out) const noexcept;

  template <class F>
  void for_each_route(const tree_node& n, F&& f) const {
    if (n.method_route != no_index) f(n.method, n.method_route);
    for (std::uint32_t l = n.more_routes; l != no_index; l = method_links_[l].next)
      f(method_links_[l].method, method_links_[l].route);
  }

  struct method_link {
    std::uint8_t method;
    std::uint32_t route;
    std::uint32_t next;
  };

  std::vector<tree_node> nodes_;
  std::vector<literal_edge> edges_;
  std::vector<method_link> method_links_;
  std::vector<char> text_;  // the decoded literals and static paths, back to back
  literal_table wide_;      // literal children of nodes with more than literal_scan_limit
  literal_table statics_;   // per tree root, its literal-only routes by request path
  // Bit min(length, 63) for the length of every path in statics_, whatever its tree: most
  // parameter paths have a length no static path has, and skip the probe's hash. (One
  // mask rather than one per root keeps a node at 64 bytes, one cache line.)
  std::uint64_t static_lengths_ = 0;
  std::unordered_map<std::string, std::uint32_t, string_hash, std::equal_to<>> host_roots_;
  // The hostless root's literal children, for the walk-free answer to an unknown first
  // segment under a hashed root (first_step).
  segment_filter first_segments_;
  std::vector<const pattern*> patterns_;  // by route number
  // Per route: its pattern ends in a named rest wildcard, whose value the match reports.
  std::vector<bool> rest_value_;
  method_table methods_;
  int redirect_status_ = 307;
};

}  // namespace detail
}  // namespace waypoint

#ifdef WAYPOINT_HEADER_ONLY
#include "waypoint/impl/route_index.ipp"
#endif
