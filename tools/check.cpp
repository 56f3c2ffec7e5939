// `waypoint-route check FILE`: registers a route table and reports, for people, every line
// the router refuses, in the FILE:LINE[:COLUMN] form that editors and CI logs link.
#include "commands.hpp"
#include "outcome.hpp"
#include "printable.hpp"
#include "registration.hpp"
#include "tool_error.hpp"

#include <ostream>

namespace waypoint::route_tool {
namespace {

constexpr std::string_view help = R"(usage: waypoint-route check FILE

Registers the patterns of FILE in file order, as an application would, and prints every
problem: a pattern that does not parse (with a caret under the offending byte), or one that
conflicts with an earlier line (both lines, both patterns, and a path both match). A refused
line is skipped, so later lines are checked against the ones that were registered.

Exit status: 0 no problems, 1 problems found, 2 usage or I/O error.
)";

std::string plural(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

// "    line 7: " before a pattern, so two patterns line up under each other.
std::string pattern_label(std::size_t line) { return "    line " + std::to_string(line) + ": "; }

void print_parse_error(std::ostream& out, const std::string& file, const registration_problem& p) {
  out << file << ':' << p.line << ':' << p.indent + p.offset + 1
      << ": error: " << printable(p.problem) << '\n';
  std::string label = pattern_label(p.line);
  out << label << printable(p.pattern) << '\n';
  out << std::string(label.size(), ' ') << caret_indent(p.pattern, p.offset) << "^\n";
}

void print_conflict(std::ostream& out, const std::string& file, const registration_problem& p) {
  out << file << ':' << p.line << ": conflict: ";
  if (p.equivalent)
    out << "both patterns match exactly the same requests, e.g. path \"" << printable(p.example)
        << "\"\n";
  else
    out << "both patterns match some requests, e.g. path \"" << printable(p.example)
        << "\", and neither is more specific\n";
  out << pattern_label(p.line) << printable(p.pattern) << '\n';
  if (p.existing_line != 0)
    out << pattern_label(p.existing_line) << printable(p.existing_pattern) << '\n';
  else
    out << "    registered earlier: " << printable(p.existing_pattern) << '\n';
}

void print_problem(std::ostream& out, const std::string& file, const registration_problem& p) {
  switch (p.type) {
    case registration_problem::kind::parse_error:
      return print_parse_error(out, file, p);
    case registration_problem::kind::conflict:
      return print_conflict(out, file, p);
    case registration_problem::kind::rejected:
      out << file << ':' << p.line << ": error: " << printable(p.problem) << '\n';
      return;
  }
}

}  // namespace

int run_check(std::span<const std::string_view> args, command_io io) {
  arguments a = parse_arguments("check", args, {});
  if (a.help) {
    io.out << help;
    return exit_clean;
  }
  expect_positional("check", a, 1, 1);
  const std::string& file = a.positional[0];
  std::vector<source_line> lines = read_content_file(file);
  line_router router;
  std::vector<registration_problem> problems = register_lines(router, lines);
  for (const registration_problem& p : problems) print_problem(io.out, file, p);
  io.out << file << ": " << plural(lines.size(), "pattern") << ", "
         << (problems.empty() ? std::string("no problems") : plural(problems.size(), "problem"))
         << '\n';
  return problems.empty() ? exit_clean : exit_problems;
}

}  // namespace waypoint::route_tool
