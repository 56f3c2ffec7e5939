// Tests of the header-only mode (WAYPOINT_HEADER_ONLY, waypoint/detail/config.hpp): this
// binary is built from the headers alone, without the waypoint_core library, from two
// translation units that both include every core header. It links only if every
// definition the headers include is inline, and runs only if they are the library's.
#ifndef WAYPOINT_HEADER_ONLY
#error "tests/core/CMakeLists.txt builds this test with WAYPOINT_HEADER_ONLY"
#endif

#include <waypoint/json_string.hpp>
#include <waypoint/openapi_paths.hpp>
#include <waypoint/pattern.hpp>
#include <waypoint/router.hpp>
#include <waypoint/url_for.hpp>

#include <gtest/gtest.h>

#include <string>

// header_only_second.cpp: the same headers in a second translation unit.
std::string second_unit_match(std::string_view path);

namespace {

TEST(HeaderOnly, EveryCoreHeaderLinksFromTwoUnits) {
  waypoint::basic_router<int> r;
  const auto& user = r.add("GET /users/{id}", 1);
  r.add("GET /users/me", 2);
  EXPECT_THROW(r.add("GET /users/{name}", 3), waypoint::conflict_error);
  r.freeze();
  auto m = r.match("GET", "/users/42");
  ASSERT_TRUE(m);
  EXPECT_EQ(m.value("id"), "42");
  EXPECT_EQ(r.match("POST", "/users/42").allowed().to_string(), "GET, HEAD");

  waypoint::route_names names;
  names.add("user", user.pattern);
  EXPECT_EQ(names.url_for("user", {{"id", "a b"}}), "/users/a%20b");

  std::string json;
  waypoint::append_json_string(json, "a\"b");
  EXPECT_EQ(json, R"("a\"b")");

  waypoint::openapi_path_writer paths;
  paths.add(user.pattern, "user", [](std::string_view, const waypoint::openapi_place&) {
    return std::string("{}");
  });
  EXPECT_EQ(paths.paths_text(),
            R"({"/users/{id}":{"get":{"operationId":"user","x-waypoint-pattern":"GET /users/{id}"}}})");

  EXPECT_EQ(second_unit_match("/a/b"), "b");
}

}  // namespace
