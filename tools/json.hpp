// Just enough JSON for waypoint-route's output: string escaping and number formatting.
// The tool depends on nothing but waypoint::core, so it writes its one-line objects by hand.
#pragma once

#include <waypoint/json_string.hpp>

#include <string>
#include <string_view>

namespace waypoint::route_tool {

using waypoint::append_json_string;

std::string json_string(std::string_view text);

// A finite number with `decimals` digits after the point ("23.4"); an integral value with
// decimals == 0 prints without a point ("0").
std::string json_number(double value, int decimals);

}  // namespace waypoint::route_tool
