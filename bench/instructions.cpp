// Instructions per match, counted exactly: wall-clock time on a shared two-CPU machine
// moves with the neighbours, instruction counts do not. `bench/instructions` runs this
// binary under callgrind, collecting only inside count_loop(), and divides by the calls.
//
//   waypoint_bench_instructions TABLE REQUEST [CALLS]   the request named REQUEST of
//                                                       TABLE.requests, matched CALLS times
//                                                       (default 1000) after one warm-up
#include "support/tables.hpp"

#include "waypoint/router.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

using router_type = waypoint::basic_router<std::uint32_t>;

// Everything callgrind counts happens in here; it is never inlined, so --toggle-collect
// can name it.
[[gnu::noinline]] void count_loop(const router_type& router, const waypoint::bench::request& r,
                                  router_type::match_result& result, int calls) {
  for (int i = 0; i < calls; ++i) {
    router.match(r.method, r.path, r.host, result);
    asm volatile("" : : "r"(&result) : "memory");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: waypoint_bench_instructions TABLE REQUEST [CALLS]\n");
    return 2;
  }
  int calls = argc > 3 ? std::atoi(argv[3]) : 1000;
  auto table = waypoint::bench::load_table(argv[1]);
  auto requests = waypoint::bench::load_requests(argv[1]);
  waypoint::bench::verify_or_exit(table, requests);
  router_type router;
  for (std::size_t i = 0; i < table.patterns.size(); ++i)
    router.add(table.patterns[i], static_cast<std::uint32_t>(i));
  router.freeze();
  auto result = std::make_unique<router_type::match_result>();
  for (const auto& r : requests) {
    if (r.name != argv[2]) continue;
    router.match(r.method, r.path, r.host, *result);  // warm-up, outside the count
    count_loop(router, r, *result, calls);
    return 0;
  }
  std::fprintf(stderr, "waypoint_bench_instructions: no request %s in %s\n", argv[2], argv[1]);
  return 2;
}
