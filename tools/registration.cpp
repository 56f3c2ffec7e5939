// Messages for refused route-table lines. Conflict messages are composed here rather than
// taken from conflict_error::what(), which names the source location of the add() call:
// inside this tool that is the tool's own source file, while the line in the route table is
// what the reader needs.
#include "registration.hpp"

#include "json.hpp"

namespace waypoint::route_tool {
namespace {

// Built by appending: at -O3, GCC 12 warns falsely (-Wrestrict, GCC bug 105329) about
// `"\"" + std::string(text)`, and -Werror makes that fatal in the release build.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  out.append(text);
  out += '"';
  return out;
}

// pattern_error::what() is `"<pattern>": at offset <n>: <problem>`; the problem alone reads
// better next to a caret under the offset. Falls back to the whole message.
std::string problem_part(const pattern_error& e, std::string_view pattern) {
  std::string prefix = quoted(pattern) + ": at offset " + std::to_string(e.offset()) + ": ";
  std::string_view what = e.what();
  if (what.starts_with(prefix)) what.remove_prefix(prefix.size());
  return std::string(what);
}

std::string line_reference(std::size_t line) {
  return line == 0 ? "(line unknown)" : "(line " + std::to_string(line) + ")";
}

}  // namespace

registration_problem parse_problem(const source_line& line, const pattern_error& e) {
  registration_problem p;
  p.type = registration_problem::kind::parse_error;
  p.line = line.number;
  p.indent = line.indent;
  p.pattern = line.text;
  p.message = e.what();
  p.offset = e.offset();
  p.problem = problem_part(e, line.text);
  return p;
}

registration_problem nul_problem(const source_line& line, std::size_t offset) {
  registration_problem p;
  p.type = registration_problem::kind::parse_error;
  p.line = line.number;
  p.indent = line.indent;
  p.pattern = line.text;
  p.offset = offset;
  p.problem = "the line holds a NUL byte";
  p.message = quoted(line.text) + ": at offset " + std::to_string(offset) + ": " + p.problem;
  return p;
}

registration_problem conflict_problem(const source_line& line, const conflict_error& e,
                                      std::size_t existing_line) {
  registration_problem p;
  p.type = registration_problem::kind::conflict;
  p.line = line.number;
  p.indent = line.indent;
  p.pattern = line.text;
  p.existing_line = existing_line;
  p.existing_pattern = e.existing();
  p.example = e.example();
  p.equivalent = e.equivalent();
  std::string other = quoted(p.existing_pattern) + " " + line_reference(existing_line);
  if (p.equivalent) {
    p.message = quoted(p.pattern) + " matches exactly the same requests as " + other +
                ", e.g. path " + quoted(p.example);
  } else {
    p.message = quoted(p.pattern) + " conflicts with " + other +
                ": both match some requests, e.g. path " + quoted(p.example) +
                ", and neither is more specific";
  }
  return p;
}

registration_problem rejected_problem(const source_line& line, const std::exception& e) {
  registration_problem p;
  p.line = line.number;
  p.indent = line.indent;
  p.pattern = line.text;
  p.message = e.what();
  p.problem = e.what();
  return p;
}

std::string json_report(const registration_problem& p) {
  std::string out = "{\"line\":" + std::to_string(p.line) + ",\"pattern\":";
  append_json_string(out, p.pattern);
  out += ",\"error\":";
  append_json_string(out, p.message);
  out += '}';
  return out;
}

}  // namespace waypoint::route_tool
