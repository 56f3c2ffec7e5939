// The route tool's JSON helpers; string escaping lives in waypoint/json_string.hpp.
#include "json.hpp"

#include <waypoint/json_string.hpp>

#include <cmath>
#include <cstddef>
#include <cstdio>

namespace waypoint::route_tool {

std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string json_number(double value, int decimals) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace waypoint::route_tool
