// waypoint::reference::outcome: the common form of a router result and a reference result.
#include <waypoint/reference/outcome.hpp>
#include <waypoint/reference/servemux.hpp>
#include <waypoint/router.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using waypoint::reference::outcome_of;

struct row {
  const char* rule;
  const char* method;
  const char* path;
  std::string expected;
};

// One table for both sides: the same words must come out of each.
const row rows[] = {
    {"MatchListsPatternAndValues", "GET", "/u/7/f/a%20b",
     R"(match "GET /u/{id}/f/{p...}" id="7" p="a b")"},
    {"NotFoundIs404", "GET", "/nothing", "404"},
    {"MethodNotAllowedGivesAllow", "POST", "/u/7/f/x", R"(405 Allow: "GET, HEAD")"},
    {"RedirectGivesStatusAndLocation", "GET", "/u//7/f/x", R"(redirect 307 "/u/7/f/x")"},
    {"BadRequestIs400", "GET", "/%", "400"},
};

class Outcome : public ::testing::TestWithParam<row> {};

TEST_P(Outcome, OfRouter) {
  waypoint::basic_router<int> router;
  router.add("GET /u/{id}/f/{p...}", 1);
  EXPECT_EQ(outcome_of(router.match(GetParam().method, GetParam().path)).to_string(),
            GetParam().expected);
}

TEST_P(Outcome, OfReference) {
  waypoint::reference::servemux<int> mux;
  mux.add("GET /u/{id}/f/{p...}", 1);
  EXPECT_EQ(outcome_of(mux.match(GetParam().method, GetParam().path)).to_string(),
            GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Rows, Outcome, ::testing::ValuesIn(rows),
                         [](const auto& info) { return std::string(info.param.rule); });

TEST(Outcome, ComparesValuesNotJustStatus) {
  waypoint::reference::outcome a{waypoint::match_status::matched, "/{x}", {{"x", "1"}}, "", 0, ""};
  auto b = a;
  b.values[0].second = "2";
  EXPECT_NE(a, b);
}

}  // namespace
