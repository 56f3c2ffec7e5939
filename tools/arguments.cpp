// Command-line options shared by the commands.
#include "commands.hpp"
#include "tool_error.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace waypoint::route_tool {
namespace {

// Longest --min-time accepted: a typo such as "20" instead of "0.20" should not keep a
// benchmark busy for hours.
constexpr double max_min_time = 60;

double parse_seconds(std::string_view command, std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !std::isfinite(value) ||
      value <= 0 || value > max_min_time)
    throw tool_error(std::string(command) + ": --min-time wants seconds in (0, 60], got \"" + s +
                     "\"");
  return value;
}

}  // namespace

arguments parse_arguments(std::string_view command, std::span<const std::string_view> args,
                          option_set accepted) {
  arguments a;
  // --help wins over everything else on the line, mistakes included.
  for (std::string_view arg : args)
    if (arg == "--help" || arg == "-h") a.help = true;
  if (a.help) return a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--reference" && accepted.reference) {
      a.reference = true;
    } else if (arg == "--min-time" && accepted.min_time) {
      if (i + 1 == args.size())
        throw tool_error(std::string(command) + ": --min-time needs a value");
      a.min_time = parse_seconds(command, args[++i]);
    } else if (arg.size() > 1 && arg.front() == '-') {
      throw tool_error(std::string(command) + ": unknown option \"" + std::string(arg) +
                       "\" (run 'waypoint-route " + std::string(command) + " --help')");
    } else {
      a.positional.emplace_back(arg);
    }
  }
  return a;
}

void expect_positional(std::string_view command, const arguments& a, std::size_t least,
                       std::size_t most) {
  std::size_t n = a.positional.size();
  if (n >= least && n <= most) return;
  throw tool_error(std::string(command) + ": " + (n < least ? "missing" : "too many") +
                   " arguments (run 'waypoint-route " + std::string(command) + " --help')");
}

}  // namespace waypoint::route_tool
