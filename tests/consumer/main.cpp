// A consumer's program: two overlapping routes, and the more specific one must win.
#include <waypoint/router.hpp>

#include <cstdio>
#include <string>

int main() {
  waypoint::basic_router<std::string> router;
  router.add("GET /docs/{page}", "page");
  router.add("GET /docs/index", "index");
  router.freeze();
  auto m = router.match("GET", "/docs/index");
  if (!m || m.handler() != "index") {
    std::puts("FAIL: /docs/index did not reach the more specific route");
    return 1;
  }
  std::puts("ok: the more specific route won");
  return 0;
}
