// How match and registration costs scale with the size of the table.
//
//   growth/REQUEST/N/ROUTER     one request of bench/tables/growth.requests against the
//                               first N routes of unique10k (N = 10, 100, 1,000, 10,000);
//                               each request has the same outcome at every N
//   register/N/ROUTER           building a router from the first N routes of unique10k
//                               (manual time: construction only, teardown excluded)
//   literal/N/hit|miss          one lookup in waypoint's literal-children index of a node
//                               with N children (a linear scan up to
//                               detail::literal_scan_limit, a hash index above): where the
//                               growth of a literal path's cost comes from
#include "support/suites.hpp"

#include "waypoint/detail/route_index.hpp"

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace waypoint::bench {
namespace {

const std::vector<std::size_t> sizes = {10, 100, 1000, 10000};

struct scale_inputs {
  std::vector<route_table> tables;  // one per size
  std::vector<request> requests;
};

scale_inputs& load_inputs() {
  static scale_inputs in;
  route_table full = load_table("unique10k");
  in.requests = load_requests("growth");
  for (std::size_t n : sizes) {
    in.tables.push_back(full.prefix(n));
    verify_or_exit(in.tables.back(), in.requests);
  }
  return in;
}

// Child segment names shaped like the tables' (5 to 10 bytes, a shared alphabet).
std::vector<std::string> segment_names(std::size_t n) {
  static const char* stems[] = {"accounts", "orders",  "deals",  "metrics", "users",
                                "reports",  "summary", "weekly", "tickets", "assets"};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(std::string(stems[i % 10]) + std::to_string(i / 10));
  return out;
}

// hit: the last child inserted (a scan's worst case); miss: a name no child has. Each
// lookup's key depends on the previous result, as in a tree walk, so the time is the
// latency of one lookup, not the throughput of independent ones.
void literal_lookup(benchmark::State& state, std::size_t n, bool hit) {
  auto names = segment_names(n);
  std::deque<waypoint::pattern> patterns;  // the index keeps pointers to them
  waypoint::detail::route_index index;
  for (const std::string& name : names) {
    patterns.push_back(waypoint::parse_pattern("GET /" + name));
    index.insert(patterns.back(), index.methods().intern("GET"));
  }
  std::string keys[2] = {hit ? names.back() : std::string("profiles9"), ""};
  std::uint32_t zero = 0;
  benchmark::DoNotOptimize(zero);
  std::uint32_t found = 0;
  for (auto _ : state) {
    found = index.find_literal(0, keys[found & zero]);
    benchmark::DoNotOptimize(found);
  }
}

}  // namespace

void register_benchmarks() {
  for (std::size_t n : {1, 2, 4, 8, 9, 16, 128}) {
    for (bool hit : {true, false}) {
      std::string name = "literal/" + std::to_string(n) + (hit ? "/hit" : "/miss");
      benchmark::RegisterBenchmark(
          name.c_str(), [n, hit](benchmark::State& state) { literal_lookup(state, n, hit); });
    }
  }
  scale_inputs& in = load_inputs();
  for (const request& r : in.requests) {
    for (const route_table& table : in.tables) {
      for_each_router([&]<class Impl>() {
        std::string name = "growth/" + r.name + "/" + std::to_string(table.patterns.size()) + "/" +
                           std::string(Impl::name);
        benchmark::RegisterBenchmark(name.c_str(), [&table, &r](benchmark::State& state) {
          match_one<Impl>(state, table, r);
        });
      });
    }
  }
  for (const route_table& table : in.tables) {
    for_each_router([&]<class Impl>() {
      std::string name =
          "register/" + std::to_string(table.patterns.size()) + "/" + std::string(Impl::name);
      benchmark::RegisterBenchmark(name.c_str(), [&table](benchmark::State& state) {
        register_all<Impl>(state, table);
      })->UseManualTime();
    });
  }
}

}  // namespace waypoint::bench
