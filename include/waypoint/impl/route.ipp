// The definitions of waypoint/route.hpp: compiled once by src/core/route.cpp, or included
// by the header with WAYPOINT_HEADER_ONLY (detail/config.hpp).
#pragma once

#include "waypoint/route.hpp"

#include <string>
#include <utility>

namespace waypoint {

WAYPOINT_INLINE std::string registration_site::to_string() const {
  return std::string(file) + ":" + std::to_string(line);
}

WAYPOINT_INLINE conflict_error::conflict_error(const pattern& added,
                                               const registration_site& added_at,
                                               const pattern& existing,
                                               const registration_site& existing_at)
    : conflict_error(added, added_at, existing, existing_at, example_path(added, existing),
                     compare(added, existing) == relation::equivalent) {}

WAYPOINT_INLINE conflict_error::conflict_error(const pattern& added,
                                               const registration_site& added_at,
                                               const pattern& existing,
                                               const registration_site& existing_at,
                                               std::string example, bool equivalent)
    : std::invalid_argument(format(added, added_at, existing, existing_at, example, equivalent)),
      added_(added.text()),
      existing_(existing.text()),
      example_(std::move(example)),
      equivalent_(equivalent) {}

WAYPOINT_INLINE std::string conflict_error::format(const pattern& added,
                                                   const registration_site& added_at,
                                                   const pattern& existing,
                                                   const registration_site& existing_at,
                                                   const std::string& example, bool equivalent) {
  std::string m = "pattern \"";
  m.append(added.text());
  m += "\" (registered at " + added_at.to_string() + ") ";
  m += equivalent ? "matches the same requests as" : "conflicts with";
  m += " pattern \"";
  m.append(existing.text());
  m += "\" (registered at " + existing_at.to_string() + "): ";
  m += equivalent ? "both match exactly the same requests, e.g. path \""
                  : "both match some requests, e.g. path \"";
  m += example;
  m += equivalent ? "\"" : "\", and neither is more specific";
  return m;
}

}  // namespace waypoint
