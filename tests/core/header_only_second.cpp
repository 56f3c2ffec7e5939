// The second translation unit of header_only_test.cpp: every core header again, so that
// a definition the headers include without `inline` is defined twice and fails the link.
#include <waypoint/json_string.hpp>
#include <waypoint/openapi_paths.hpp>
#include <waypoint/pattern.hpp>
#include <waypoint/router.hpp>
#include <waypoint/url_for.hpp>

#include <string>

std::string second_unit_match(std::string_view path) {
  waypoint::basic_router<int> r;
  r.add("/a/{x}", 1);
  auto m = r.match("GET", path);
  return std::string(m.value("x"));
}
