// The non-template definitions of waypoint/router.hpp: compiled once by src/core/router.cpp,
// or included by the header with WAYPOINT_HEADER_ONLY (detail/config.hpp).
#pragma once

#include "waypoint/router.hpp"

namespace waypoint {

WAYPOINT_INLINE void method_set::append_to(std::string& out, std::string_view extra) const {
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

WAYPOINT_INLINE std::string method_set::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

}  // namespace waypoint
