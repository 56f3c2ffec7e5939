// The router's index: a segment tree per host whose root's literal children are the
// first-segment buckets. docs/design.md draws it. Everything here is built at
// registration; matching only reads it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace waypoint {

// Most methods one router can tell apart: the Allow set is a 64-bit mask.
inline constexpr std::size_t max_methods = 64;

namespace detail {

inline constexpr std::uint32_t no_index = 0xFFFFFFFFu;
inline constexpr std::uint8_t no_method = 0xFF;

// A node with at most this many literal children scans them; more get a hash index.
// Eight std::string compares (length first) cost about one hash of a short segment.
inline constexpr std::size_t literal_scan_limit = 8;

struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

// Every method name the router has seen gets a bit. GET and HEAD have fixed bits
// because the match rules name them.
class method_table {
public:
  static constexpr std::uint8_t get = 0;
  static constexpr std::uint8_t head = 1;

  method_table() {
    for (std::string_view m : {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
                               "CONNECT", "TRACE"})
      intern(m);
  }

  // The bit of `method`, or no_method when no route names it.
  std::uint8_t find(std::string_view method) const noexcept {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == method) return static_cast<std::uint8_t>(i);
    return no_method;
  }

  std::uint8_t intern(std::string_view method) {
    if (std::uint8_t i = find(method); i != no_method) return i;
    if (names_.size() == max_methods)
      throw std::length_error("waypoint: more than 64 distinct methods in one router");
    names_.emplace_back(method);
    by_name_.insert(std::upper_bound(by_name_.begin(), by_name_.end(), method,
                                     [&](std::string_view m, std::uint8_t i) { return m < names_[i]; }),
                    static_cast<std::uint8_t>(names_.size() - 1));
    return static_cast<std::uint8_t>(names_.size() - 1);
  }

  std::string_view name(std::uint8_t i) const noexcept { return names_[i]; }
  // Bits in byte order of their names, the order of an Allow header.
  const std::vector<std::uint8_t>& by_name() const noexcept { return by_name_; }

private:
  std::vector<std::string> names_;
  std::vector<std::uint8_t> by_name_;
};

// Literal children of a node, keyed by the percent-decoded segment.
class literal_children {
public:
  bool empty() const noexcept { return list_.empty(); }

  std::uint32_t find(std::string_view key) const noexcept {
    if (index_.empty()) {
      for (const auto& [k, child] : list_)
        if (k == key) return child;
      return no_index;
    }
    auto it = index_.find(key);
    return it == index_.end() ? no_index : it->second;
  }

  void insert(std::string_view key, std::uint32_t child) {
    list_.emplace_back(std::string(key), child);
    if (list_.size() <= literal_scan_limit) return;
    if (index_.empty())
      for (const auto& [k, c] : list_) index_.emplace(k, c);
    else
      index_.emplace(std::string(key), child);
  }

  const std::vector<std::pair<std::string, std::uint32_t>>& entries() const noexcept { return list_; }

private:
  std::vector<std::pair<std::string, std::uint32_t>> list_;
  std::unordered_map<std::string, std::uint32_t, string_hash, std::equal_to<>> index_;
};

// One position in a host's segment tree. The path from the root spells a pattern's
// segments; routes whose pattern ends here hang off the node.
struct tree_node {
  literal_children literals;
  std::uint32_t wildcard = no_index;  // child for {name}
  std::uint32_t end = no_index;       // child for {$}
  std::uint32_t rest = no_index;      // child for {name...} and a trailing '/'
  // Routes whose pattern ends at this node: one per method, and one for any method.
  std::vector<std::pair<std::uint8_t, std::uint32_t>> method_routes;
  std::uint32_t any_route = no_index;
  // Bits of method_routes' methods: what a 405 would allow here.
  std::uint64_t methods = 0;
  // Method-less and GET routes at or below this node. Registration uses them to skip
  // subtrees that cannot conflict with a new rest pattern.
  std::uint32_t subtree_any = 0;
  std::uint32_t subtree_get = 0;
};

} // namespace detail
} // namespace waypoint
