#include <waypoint/pattern.hpp>
#include <gtest/gtest.h>
TEST(Pattern, ParsesMethodHostAndPath) {
  auto p = waypoint::parse_pattern("GET example.com/a/{id}");
  EXPECT_EQ(p.method(), "GET");
  EXPECT_EQ(p.host(), "example.com");
  ASSERT_EQ(p.segments().size(), 2u);
}
