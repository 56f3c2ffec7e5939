// Just enough JSON for waypoint-route's output: string escaping and number formatting.
// The tool depends on nothing but waypoint::core, so it writes its one-line objects by hand.
#pragma once

#include <string>
#include <string_view>

namespace waypoint::route_tool {

// Appends `text` as a JSON string literal, quotes included. JSON text must be UTF-8, but a
// decoded path value may hold any bytes: each byte that does not belong to a well-formed
// UTF-8 sequence is written as U+FFFD, so the output always parses.
void append_json_string(std::string& out, std::string_view text);

std::string json_string(std::string_view text);

// A finite number with `decimals` digits after the point ("23.4"); an integral value with
// decimals == 0 prints without a point ("0").
std::string json_number(double value, int decimals);

}  // namespace waypoint::route_tool
