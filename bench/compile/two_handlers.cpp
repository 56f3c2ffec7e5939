// A translation unit that instantiates basic_router for two handler types and calls every
// member, for the compile-time and object-size figures of BENCHMARKS.md ("The cost of the
// template"): `bench/compile/measure` compiles it and reports both.
#include "waypoint/router.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace {

template <class Handler>
std::size_t exercise(Handler h) {
  waypoint::basic_router<Handler> r;
  r.add("GET /users/{id}", h);
  r.add("GET /users/me", h);
  r.freeze();
  auto m = r.match("GET", "/users/42");
  auto e = r.explain("GET", "/users/me");
  auto p = r.routes_by_precedence();
  auto a = r.methods_at("/users/7");
  return m.value_count() + e.candidates.size() + p.size() + a.any;
}

}  // namespace

std::size_t two_handlers() {
  return exercise<std::uint32_t>(7) + exercise<std::function<void()>>([] {});
}
