// The oracle stands alone: the reference headers include nothing of the router they check.
// Were waypoint/router.hpp included, the class below would redefine basic_router and this
// file would not compile; and the reference restates the router's limits instead of
// reading them, so the two are held equal here.
#include <waypoint/reference/outcome.hpp>
#include <waypoint/reference/servemux.hpp>

#include <gtest/gtest.h>

#include <string>

namespace waypoint {
template <class Handler>
class basic_router {
 public:
  int marker = 19;
};
}  // namespace waypoint

#include <waypoint/detail/route_index.hpp>  // the router's constants, without the router

namespace {

TEST(ReferenceStandsAlone, IncludesNoRouterHeader) {
  waypoint::basic_router<int> not_the_router;
  EXPECT_EQ(not_the_router.marker, 19);
  waypoint::reference::servemux<int> mux;
  mux.add("GET /a/{x}", 1);
  EXPECT_EQ(mux.match("GET", "/a/b").status, waypoint::match_status::matched);
}

TEST(ReferenceStandsAlone, RestatesTheRoutersPathLimit) {
  EXPECT_EQ(waypoint::reference::max_path_length, waypoint::max_path_length);
}

}  // namespace
