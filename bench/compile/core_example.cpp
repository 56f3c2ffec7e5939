#include <waypoint/router.hpp>

#include <cstdio>
#include <string_view>

int main() {
  waypoint::basic_router<int> router;          // any movable handler type
  router.add("GET /v1/users/{id}", 1);
  router.add("GET /v1/users/me", 2);           // more specific than /v1/users/{id}
  router.add("/v1/files/{path...}", 3);        // any method, the rest of the path
  router.freeze();                             // immutable: match from any thread

  auto m = router.match("GET", "/v1/users/42", "api.example.com:443");
  if (m) {                                     // m.status() == waypoint::match_status::matched
    int handler = m.handler();                 // 1
    std::string_view id = m.value("id");       // "42", percent-decoded
    std::printf("route %d, id %.*s\n", handler, static_cast<int>(id.size()), id.data());
  }
}
