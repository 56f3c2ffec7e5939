#include <waypoint/router.hpp>
#include <gtest/gtest.h>
TEST(Router, MoreSpecificLiteralWins) {
  waypoint::basic_router<int> r;
  r.add("GET /a/{x}", 1);
  r.add("GET /a/b", 2);
  EXPECT_EQ(r.match("GET", "/a/b").handler(), 2);
}
