// `waypoint-route openapi FILE`: an OpenAPI 3.1 skeleton for an untyped route table, as
// waypoint/openapi_paths.hpp reads patterns (the framework's generated document starts from
// the same operations and adds schemas).
#include "commands.hpp"
#include "json.hpp"
#include "registration.hpp"
#include "tool_error.hpp"

#include <waypoint/detail/http_grammar.hpp>
#include <waypoint/openapi_paths.hpp>
#include <waypoint/router.hpp>

#include <ostream>

namespace waypoint::route_tool {
namespace {

constexpr std::string_view help = R"(usage: waypoint-route openapi FILE

Prints an OpenAPI 3.1 document (JSON) for the patterns of FILE: one operation per route
and method, path parameters for wildcards, the matching rule of {name...}, trailing-slash
and {$} patterns in each operation's description and "x-waypoint-match", hosts as a path's
"servers". Responses are a placeholder: a route table does not say what a handler answers;
waypoint::app's openapi(app, info) documents typed routes fully.
Lines the router refuses are reported on stderr, as by `match`, and left out.

Exit status: 0 with the document printed, 2 on usage or I/O error.
)";

}  // namespace

int run_openapi(std::span<const std::string_view> args, command_io io) {
  arguments a = parse_arguments("openapi", args, {});
  if (a.help) {
    io.out << help;
    return exit_clean;
  }
  expect_positional("openapi", a, 1, 1);
  const std::string& file = a.positional[0];
  std::vector<source_line> lines = read_content_file(file);
  basic_router<std::size_t> router;
  for (const registration_problem& p : register_lines(router, lines))
    io.err << json_report(p) << '\n';
  openapi_path_writer paths;
  for (const auto& route : router.routes()) {
    std::string method = waypoint::detail::ascii_lowercase(
        route.pattern.method().empty() ? "any" : route.pattern.method());
    openapi_place place = openapi_place_of(route.pattern);
    paths.add(route.pattern, openapi_operation_id(method, place),
              [](std::string_view op_method, const openapi_place& where) {
                return openapi_untyped_operation(op_method, where);
              });
  }
  std::string title = "the routes of " + file;
  io.out << R"({"openapi":"3.1.0","info":{"title":)" << json_string(title)
         << R"(,"version":"0.0.0"},"servers":[{"url":"/"}],"security":[],"paths":)"
         << paths.paths_text();
  if (std::string unplaced = paths.unplaced_text(); unplaced != "[]")
    io.out << R"(,"x-waypoint-unplaced":)" << unplaced;
  io.out << "}\n";
  return exit_clean;
}

}  // namespace waypoint::route_tool
