// The error that ends a waypoint-route command with exit status 2: a usage mistake or a file
// that cannot be read. Problems found *in* a route table are results, not tool errors.
#pragma once

#include <stdexcept>
#include <string>

namespace waypoint::route_tool {

// Exit statuses, shared by every command.
inline constexpr int exit_clean = 0;
inline constexpr int exit_problems = 1;  // check found parse errors or conflicts
inline constexpr int exit_error = 2;     // usage or I/O error

class tool_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace waypoint::route_tool
