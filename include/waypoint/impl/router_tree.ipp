// The definitions of waypoint/detail/router_tree.hpp: compiled once by
// src/core/router_tree.cpp, or included by the header with WAYPOINT_HEADER_ONLY
// (detail/config.hpp).
#pragma once

#include "waypoint/detail/router_tree.hpp"

#include <algorithm>
#include <stdexcept>

namespace waypoint::detail {

WAYPOINT_INLINE method_table::method_table() {
  for (std::string_view m :
       {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"})
    intern(m);
}

WAYPOINT_INLINE std::uint8_t method_table::intern(std::string_view method) {
  if (std::uint8_t i = find(method); i != no_method) return i;
  if (names_.size() == max_methods)
    throw std::length_error("waypoint: more than 64 distinct methods in one router");
  names_.emplace_back(method);
  keys_.push_back({segment_word(method), method.size()});
  by_name_.insert(
      std::upper_bound(by_name_.begin(), by_name_.end(), method,
                       [&](std::string_view m, std::uint8_t i) { return m < names_[i]; }),
      static_cast<std::uint8_t>(names_.size() - 1));
  return static_cast<std::uint8_t>(names_.size() - 1);
}

}  // namespace waypoint::detail
