// waypoint-route: lint, explain, match and benchmark a waypoint route table from the command
// line. docs/route-tool.md is the manual; this file only dispatches to a command.
#include "commands.hpp"
#include "tool_error.hpp"

#include <exception>
#include <iostream>
#include <new>
#include <string_view>
#include <vector>

namespace {

using namespace waypoint::route_tool;

constexpr std::string_view usage = R"(usage: waypoint-route COMMAND ARGS...

Lint, explain, match and benchmark a waypoint route table: a file with one pattern per
line ([METHOD ][HOST]/PATH); blank lines and lines starting with '#' are ignored.

commands:
  check FILE                          report parse errors and conflicts (exit 1 if any)
  match FILE [--reference]            answer requests read from stdin, one JSON line each
  explain FILE METHOD TARGET [HOST]   show why a request gets its outcome
  bench FILE REQUESTS [--reference] [--min-time SECONDS]
                                      time registration and each request's match
  openapi FILE                        print an OpenAPI 3.1 skeleton of the table

Run 'waypoint-route COMMAND --help' for a command's details.
Exit status: 0 success, 1 problems found (check), 2 usage or I/O error.
)";

int dispatch(std::string_view command, std::span<const std::string_view> args, command_io io) {
  if (command == "check") return run_check(args, io);
  if (command == "match") return run_match(args, io);
  if (command == "explain") return run_explain(args, io);
  if (command == "bench") return run_bench(args, io);
  if (command == "openapi") return run_openapi(args, io);
  throw tool_error("unknown command \"" + std::string(command) +
                   "\" (run 'waypoint-route --help')");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  command_io io{std::cin, std::cout, std::cerr};
  if (args.empty()) {
    std::cerr << usage;
    return exit_error;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << usage;
    return exit_clean;
  }
  if (args[0] == "--version") {
    std::cout << "waypoint-route " << WAYPOINT_VERSION << '\n';
    return exit_clean;
  }
  try {
    return dispatch(args[0], std::span(args).subspan(1), io);
  } catch (const tool_error& e) {
    std::cout.flush();
    std::cerr << "waypoint-route: " << e.what() << '\n';
  } catch (const std::bad_alloc&) {
    std::cerr << "waypoint-route: out of memory\n";
  }
  return exit_error;
}
