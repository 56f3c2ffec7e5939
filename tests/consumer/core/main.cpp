// A consumer's program: two overlapping routes, and the more specific one must win; the
// version header agrees with the CMake package.
#include <waypoint/router.hpp>
#include <waypoint/version.hpp>

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
#if defined(CONSUMER_EXPECTED_VERSION)
  std::string version = std::to_string(WAYPOINT_VERSION_MAJOR) + "." +
                        std::to_string(WAYPOINT_VERSION_MINOR) + "." +
                        std::to_string(WAYPOINT_VERSION_PATCH);
  if (version != CONSUMER_EXPECTED_VERSION) {
    std::printf("FAIL: waypoint/version.hpp says %s, the package %s\n", version.c_str(),
                CONSUMER_EXPECTED_VERSION);
    return 1;
  }
#endif
  std::puts("ok: the more specific route won");
  return 0;
}
