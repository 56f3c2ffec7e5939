// url_for.hpp: building a path from a pattern and values, escaping per segment, refusing
// what could not route back, route names, and the round trip through the router for every
// route of the mix1000 table.
#include <waypoint/url_for.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using waypoint::build_path;
using waypoint::parse_pattern;
using waypoint::url_error;
using waypoint::url_param;

struct good_row {
  const char* rule;
  const char* pattern;
  std::vector<url_param> values;
  std::vector<url_param> query;
  const char* expected;
};

class Builds : public ::testing::TestWithParam<good_row> {};

TEST_P(Builds, TheEscapedPath) {
  const good_row& row = GetParam();
  EXPECT_EQ(build_path(parse_pattern(row.pattern), row.values, row.query), row.expected)
      << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Builds,
    ::testing::Values(
        good_row{"literals only", "GET /a/b", {}, {}, "/a/b"},
        good_row{"a wildcard value", "GET /users/{id}", {{"id", "42"}}, {}, "/users/42"},
        good_row{"a wildcard value's '/' is escaped", "/users/{id}", {{"id", "a/b"}}, {},
                 "/users/a%2Fb"},
        good_row{"space, percent and non-ASCII are escaped", "/u/{id}", {{"id", "a b%\xC3\xA9"}},
                 {}, "/u/a%20b%25%C3%A9"},
        good_row{"sub-delims and ':' '@' stay", "/u/{id}", {{"id", "a:b@c!$&'()*+,;="}}, {},
                 "/u/a:b@c!$&'()*+,;="},
        good_row{"values are placed by name, not order", "/{a}/{b}", {{"b", "2"}, {"a", "1"}}, {},
                 "/1/2"},
        good_row{"a rest value keeps its slashes", "/files/{path...}",
                 {{"path", "docs/a b/c.txt"}}, {}, "/files/docs/a%20b/c.txt"},
        good_row{"an empty rest value", "/files/{path...}", {{"path", ""}}, {}, "/files/"},
        good_row{"a rest value ending in '/'", "/files/{path...}", {{"path", "a/"}}, {},
                 "/files/a/"},
        good_row{"a trailing slash builds the prefix", "/static/", {}, {}, "/static/"},
        good_row{"{$} builds the trailing slash", "/dir/{$}", {}, {}, "/dir/"},
        good_row{"an escaped literal stays escaped", "/a%2Fb/{x}", {{"x", "1"}}, {},
                 "/a%2Fb/1"},
        good_row{"the host is not part of the path", "api.example.com/v1/{x}", {{"x", "1"}}, {},
                 "/v1/1"},
        good_row{"a query is added, escaped", "/s", {}, {{"q", "a b&c=d+e"}, {"page", "2"}},
                 "/s?q=a%20b%26c%3Dd%2Be&page=2"}));

struct bad_row {
  const char* rule;
  const char* pattern;
  std::vector<url_param> values;
  const char* message;  // a substring of what()
};

class Refuses : public ::testing::TestWithParam<bad_row> {};

TEST_P(Refuses, WhatCouldNotRouteBack) {
  const bad_row& row = GetParam();
  try {
    build_path(parse_pattern(row.pattern), row.values);
    FAIL() << row.rule << ": built a path";
  } catch (const url_error& e) {
    EXPECT_NE(std::string(e.what()).find(row.message), std::string::npos)
        << row.rule << ": " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Refuses,
    ::testing::Values(
        bad_row{"a missing value", "/users/{id}", {}, "no value for {id}"},
        bad_row{"an extra value", "/users/{id}", {{"id", "1"}, {"name", "x"}},
                "no wildcard {name} (extra value)"},
        bad_row{"a value given twice", "/users/{id}", {{"id", "1"}, {"id", "2"}}, "given twice"},
        bad_row{"an empty wildcard value", "/users/{id}", {{"id", ""}}, "is empty"},
        bad_row{"a dot segment", "/users/{id}", {{"id", ".."}}, "dot segment"},
        bad_row{"an escaped slash joining a dot", "/users/{id}", {{"id", "a/../b"}},
                "dot segment"},
        bad_row{"a dot piece in a rest value", "/files/{p...}", {{"p", "a/../b"}}, "dot segment"},
        bad_row{"an empty piece in a rest value", "/files/{p...}", {{"p", "a//b"}}, "is empty"},
        bad_row{"a rest value starting with '/'", "/files/{p...}", {{"p", "/a"}}, "is empty"}));

TEST(Refuses, APathLongerThanTheRouterAccepts) {
  std::string value(waypoint::max_path_length, 'x');
  EXPECT_THROW(build_path(parse_pattern("/u/{id}"), {{"id", value}}), url_error);
}

TEST(RouteNames, NameIsUniqueAndTheErrorNamesBothRoutesAndSites) {
  waypoint::basic_router<int> r;
  waypoint::route_names names;
  names.add("user", r.add("GET /users/{id}", 1).pattern);
  try {
    names.add("user", r.add("GET /people/{id}", 2).pattern);
    FAIL() << "a second route took the name";
  } catch (const waypoint::route_name_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("\"GET /people/{id}\" (at "), std::string::npos) << m;
    EXPECT_NE(m.find("already names \"GET /users/{id}\" (at "), std::string::npos) << m;
    EXPECT_NE(m.find("url_for_test.cpp:"), std::string::npos) << m;
  }
  EXPECT_EQ(names.url_for("user", {{"id", "7"}}), "/users/7");
  EXPECT_EQ(names.url_for("user", {{"id", "7"}}, {{"tab", "a"}}), "/users/7?tab=a");
  EXPECT_THROW(names.url_for("nobody"), url_error);
  EXPECT_THROW(names.add("", r.routes().front().pattern), waypoint::route_name_error);
}

// --- the round trip -----------------------------------------------------------------

std::vector<std::string> table_lines() {
  std::ifstream in(WAYPOINT_MIX1000_ROUTES);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

// A value no literal of the table equals: it always holds a byte that needs escaping, so
// the route that wins is the one it was built for. Rest values get slashes too.
std::string random_value(std::mt19937& rng, bool rest) {
  static constexpr std::string_view alphabet = "abcXYZ019-._~!$&'()*+,;=:@% ?#[]\"<>^`{|}";
  static constexpr std::string_view escaped = " ?#%\"<>";
  std::uniform_int_distribution<std::size_t> length(1, 12), pick(0, alphabet.size() - 1);
  std::string out;
  std::size_t pieces = rest ? std::uniform_int_distribution<std::size_t>(1, 3)(rng) : 1;
  for (std::size_t p = 0; p < pieces; ++p) {
    if (p != 0) out += '/';
    std::size_t n = length(rng);
    for (std::size_t i = 0; i < n; ++i) out += alphabet[pick(rng)];
    out += escaped[std::uniform_int_distribution<std::size_t>(0, escaped.size() - 1)(rng)];
    if (!rest && std::bernoulli_distribution(0.2)(rng)) out += "/\xC3\xA9";  // '/' escaped
  }
  return out;
}

TEST(RoundTrip, EveryMix1000RouteMatchesItsBuiltPathWithTheSameValues) {
  std::vector<std::string> lines = table_lines();
  ASSERT_GT(lines.size(), 900u);
  waypoint::basic_router<std::size_t> r;
  for (std::size_t i = 0; i < lines.size(); ++i) r.add(lines[i], i);
  r.freeze();
  std::mt19937 rng(17);
  std::size_t checked = 0;
  for (int round = 0; round < 5; ++round) {
    for (const auto& route : r.routes()) {
      const waypoint::pattern& p = route.pattern;
      std::vector<std::string> storage;
      for (const auto& segment : p.segments())
        if (!segment.text.empty() && segment.type != waypoint::segment::kind::literal)
          storage.push_back(random_value(rng, segment.type == waypoint::segment::kind::rest));
      std::vector<url_param> values;
      for (std::size_t i = 0; i < storage.size(); ++i)
        values.push_back({p.wildcard_names()[i], storage[i]});
      std::string path = build_path(p, values);
      std::string method = p.method().empty() ? "GET" : std::string(p.method());
      auto m = r.match(method, path, p.host());
      ASSERT_EQ(m.status(), waypoint::match_status::matched) << p.text() << " -> " << path;
      ASSERT_EQ(m.route(), &route) << p.text() << " -> " << path << " matched "
                                   << m.route()->pattern.text();
      for (std::size_t i = 0; i < storage.size(); ++i)
        EXPECT_EQ(m.value(p.wildcard_names()[i]), storage[i]) << p.text() << " -> " << path;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5 * lines.size());
}

}  // namespace
