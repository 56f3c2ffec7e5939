// Tests of waypoint/source_location.hpp: a defaulted source_location::current() names the
// caller's line, with or without std::source_location, and a route's registration site is
// the line of its add call.
#include <waypoint/router.hpp>
#include <waypoint/source_location.hpp>

#include <gtest/gtest.h>

#include <string_view>

namespace {

waypoint::source_location called_from(
    waypoint::source_location where = waypoint::source_location::current()) {
  return where;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

TEST(SourceLocation, DefaultedArgumentNamesTheCaller) {
  unsigned line = __LINE__ + 1;
  waypoint::source_location where = called_from();
  EXPECT_EQ(where.line(), line);
  EXPECT_TRUE(ends_with(where.file_name(), "source_location_test.cpp")) << where.file_name();
  EXPECT_NE(std::string_view(where.function_name()).find("TestBody"), std::string_view::npos)
      << where.function_name();
}

TEST(SourceLocation, DefaultConstructedIsEmptyNotNull) {
  waypoint::source_location where;
  EXPECT_STREQ(where.file_name(), "");
  EXPECT_STREQ(where.function_name(), "");
  EXPECT_EQ(where.line(), 0u);
}

#if defined(__cpp_lib_source_location)
TEST(SourceLocation, AcceptsStdSourceLocation) {
  std::source_location std_where = std::source_location::current();
  waypoint::source_location where = called_from(std_where);
  EXPECT_EQ(where.line(), std_where.line());
  EXPECT_STREQ(where.file_name(), std_where.file_name());
}
#endif

TEST(SourceLocation, RegistrationSiteIsTheAddCall) {
  waypoint::basic_router<int> router;
  unsigned line = __LINE__ + 1;
  const auto& route = router.add("GET /a", 1);
  EXPECT_EQ(route.site.line, line);
  EXPECT_TRUE(ends_with(route.site.file, "source_location_test.cpp")) << route.site.file;
}

}  // namespace
