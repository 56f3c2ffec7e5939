// The commands of waypoint-route. Each takes the arguments that follow its name and returns
// the process exit status (tool_error.hpp); a tool_error escaping one is a usage or I/O error.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::route_tool {

// The standard streams, passed in so a command never reaches for globals.
struct command_io {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

// A command's arguments: positional ones in order, and the options it accepts.
struct arguments {
  std::vector<std::string> positional;
  bool help = false;
  bool reference = false;  // --reference
  double min_time = 0.2;   // --min-time SECONDS (bench)
};

// Which options a command accepts.
struct option_set {
  bool reference = false;
  bool min_time = false;
};

// Parses `args` for `command`; throws tool_error on an unknown or malformed option.
arguments parse_arguments(std::string_view command, std::span<const std::string_view> args,
                          option_set accepted);

// Throws tool_error unless there are between `least` and `most` positional arguments.
void expect_positional(std::string_view command, const arguments& a, std::size_t least,
                       std::size_t most);

int run_check(std::span<const std::string_view> args, command_io io);
int run_match(std::span<const std::string_view> args, command_io io);
int run_explain(std::span<const std::string_view> args, command_io io);
int run_bench(std::span<const std::string_view> args, command_io io);
int run_openapi(std::span<const std::string_view> args, command_io io);

}  // namespace waypoint::route_tool
