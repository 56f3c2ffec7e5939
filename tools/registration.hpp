// Registering a route table, line by line, into a router or the reference matcher, and
// describing each line that is refused. Handlers are line numbers, so a matched route names
// its line, and a conflict names the line of the pattern it conflicts with.
#pragma once

#include "source_lines.hpp"

#include <waypoint/pattern.hpp>
#include <waypoint/route.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace waypoint::route_tool {

// A line the matcher refused.
struct registration_problem {
  enum class kind { parse_error, conflict, rejected };

  kind type = kind::rejected;
  std::size_t line = 0;
  std::size_t indent = 0;
  std::string pattern;
  std::string message;  // one line, naming both patterns and both lines; no file name
  // parse_error: where, and what is wrong, without the quoted pattern in front.
  std::size_t offset = 0;
  std::string problem;
  // conflict: the registered pattern it clashes with, and a path both match.
  std::size_t existing_line = 0;
  std::string existing_pattern;
  std::string example;
  bool equivalent = false;
};

registration_problem parse_problem(const source_line& line, const pattern_error& e);
// A line holding a NUL byte is refused before it reaches the matcher: a route table is text,
// and an exception message, read through what(), would end at the NUL.
registration_problem nul_problem(const source_line& line, std::size_t offset);
registration_problem conflict_problem(const source_line& line, const conflict_error& e,
                                      std::size_t existing_line);
registration_problem rejected_problem(const source_line& line, const std::exception& e);

// {"line":3,"pattern":"GET /a/{x","error":"..."}: the report match and bench write to stderr.
std::string json_report(const registration_problem& p);

// Adds each line to `matcher` (anything with add(text, line_number)), in file order, and
// returns the lines it refused. A refused line is skipped: later lines are checked against
// the ones that were registered.
template <class Matcher>
std::vector<registration_problem> register_lines(Matcher& matcher,
                                                 const std::vector<source_line>& lines) {
  std::vector<registration_problem> problems;
  // conflict_error names the other pattern by its text, and two registered patterns never
  // share a text (they would be equivalent), so the text finds the line.
  std::unordered_map<std::string, std::size_t> line_of;
  for (const source_line& line : lines) {
    if (std::size_t nul = line.text.find('\0'); nul != std::string::npos) {
      problems.push_back(nul_problem(line, nul));
      continue;
    }
    try {
      matcher.add(line.text, line.number);
      line_of.emplace(line.text, line.number);
    } catch (const pattern_error& e) {
      problems.push_back(parse_problem(line, e));
    } catch (const conflict_error& e) {
      auto it = line_of.find(e.existing());
      problems.push_back(conflict_problem(line, e, it == line_of.end() ? 0 : it->second));
    } catch (const std::length_error& e) {  // the router's 64-method limit
      problems.push_back(rejected_problem(line, e));
    }
  }
  return problems;
}

}  // namespace waypoint::route_tool
