// Match cost per request shape, and per route of a whole table.
//
//   match/TABLE/REQUEST/ROUTER   one request of bench/tables/TABLE.requests (gateway,
//                                mix1000 and the Go router benchmarks' github, parse,
//                                gplus and static), matched repeatedly with one reused result
//   sweep/TABLE/ROUTER           every route of TABLE matched once per iteration, each by
//                                a request built from its own pattern (items = requests);
//                                for unique10k every 10th route, so that one pass of
//                                RESTinio's linear regex scan stays near a second
//
// A label "disagrees: ..." marks a router that answers the request differently from
// waypoint; bench/agreement.md lists every such case.
#include "support/suites.hpp"

#include <string>
#include <vector>

namespace waypoint::bench {
namespace {

const std::vector<std::string> shape_tables = {"gateway", "mix1000", "github",
                                               "parse",   "gplus",   "static"};
const std::vector<std::string> sweep_tables = {"gateway", "rest200", "mix1000", "unique10k",
                                               "github",  "parse",   "gplus",   "static"};
constexpr std::size_t large_table = 5000;  // sweep every sweep_stride-th route above this
constexpr std::size_t sweep_stride = 10;

std::vector<request> sample(std::vector<request> all) {
  if (all.size() <= large_table) return all;
  std::vector<request> out;
  for (std::size_t i = 0; i < all.size(); i += sweep_stride) out.push_back(std::move(all[i]));
  return out;
}

struct loaded {
  route_table table;
  std::vector<request> requests;
  std::vector<request> sweep;
};

// Tables live for the whole run: the registered benchmarks refer to them.
std::vector<loaded>& load_all() {
  static std::vector<loaded> all;
  for (const std::string& name : sweep_tables) {
    loaded l{load_table(name), load_requests(name), {}};
    l.sweep = sweep_requests(l.table);
    verify_or_exit(l.table, l.requests);
    verify_or_exit(l.table, l.sweep);
    l.sweep = sample(std::move(l.sweep));
    all.push_back(std::move(l));
  }
  return all;
}

}  // namespace

void register_benchmarks() {
  for (const loaded& l : load_all()) {
    bool shapes = false;
    for (const std::string& name : shape_tables) shapes |= name == l.table.name;
    if (shapes) {
      for (const request& r : l.requests) {
        for_each_router([&]<class Impl>() {
          std::string name = "match/" + l.table.name + "/" + r.name + "/" + std::string(Impl::name);
          benchmark::RegisterBenchmark(name.c_str(), [&l, &r](benchmark::State& state) {
            match_one<Impl>(state, l.table, r);
          });
        });
      }
    }
    for_each_router([&]<class Impl>() {
      std::string name = "sweep/" + l.table.name + "/" + std::string(Impl::name);
      benchmark::RegisterBenchmark(name.c_str(), [&l](benchmark::State& state) {
        match_all<Impl>(state, l.table, l.sweep);
      });
    });
  }
}

}  // namespace waypoint::bench
