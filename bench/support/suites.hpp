// What the benchmark binaries share: the list of routers, a cache of built routers (a
// 10,000-route RESTinio table takes a while to build and is needed by many benchmarks),
// and the benchmark bodies for one match, a sweep and a registration. Every body reports
// allocations: `allocs` per match, `allocs_per_route` per registered route, counted by
// support/malloc_counter.cpp outside the timed loop.
#pragma once

#include "alloc_counter.hpp"
#include "implementations.hpp"
#include "peers.hpp"
#include "tables.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace waypoint::bench {

// Registers the binary's suites; defined once per benchmark binary, called by main.cpp.
void register_benchmarks();

// Calls f.template operator()<Impl>() for every router built into this binary, waypoint
// first: benchmarks of one request are registered next to each other so that a drift in
// machine load hits all routers alike.
template <class F>
void for_each_router(F&& f) {
  f.template operator()<waypoint_impl>();
  f.template operator()<reference_impl>();
#if defined(WAYPOINT_BENCH_HAVE_R3)
  f.template operator()<r3_impl>();
#endif
#if defined(WAYPOINT_BENCH_HAVE_RESTINIO)
  f.template operator()<restinio_impl>();
#endif
}

// A router built from a table, kept for the whole run with the translation it points into.
template <class Impl>
struct built_router {
  typename Impl::prepared prepared;
  std::unique_ptr<Impl> impl;
};

template <class Impl>
built_router<Impl>& cached(const route_table& table) {
  static std::map<std::string, std::unique_ptr<built_router<Impl>>> cache;
  auto& slot = cache[table.name];
  if (!slot) {
    slot = std::make_unique<built_router<Impl>>();
    slot->prepared = Impl::prepare(table);
    slot->impl = std::make_unique<Impl>(slot->prepared);
  }
  return *slot;
}

// "" when `Impl` answers `r` as waypoint does; otherwise what it answers instead.
template <class Impl>
std::string disagreement(const route_table& table, const request& r) {
  if constexpr (std::is_same_v<Impl, waypoint_impl>) {
    return {};
  } else {
    outcome mine = cached<Impl>(table).impl->answer(r);
    outcome theirs = cached<waypoint_impl>(table).impl->answer(r);
    return mine == theirs ? std::string() : mine.to_string();
  }
}

// Why `impl` cannot serve its table at all, or "" when it can (R3 refuses some tables).
template <class Impl>
std::string unusable_reason(const Impl& impl) {
  if constexpr (requires { impl.usable(); }) {
    if (!impl.usable()) return "refused the table: " + impl.rejected().back().reason;
  }
  return {};
}

// What a benchmark learns once, before its first repetition, and reports on every one:
// repetitions are interleaved with other benchmarks, and for the slow routers this setup
// costs as much as a repetition.
struct setup_facts {
  double allocations = 0;
  std::string label;
  std::string unusable;
};

template <class F>
const setup_facts& once(const std::string& key, F&& learn) {
  static std::map<std::string, setup_facts> facts;
  auto it = facts.find(key);
  if (it == facts.end()) it = facts.emplace(key, learn()).first;
  return it->second;
}

// One request against a table, matched over and over with the same result object.
template <class Impl>
void match_one(benchmark::State& state, const route_table& table, const request& r) {
  Impl& impl = *cached<Impl>(table).impl;
  auto query = impl.compile(r);
  const setup_facts& facts = once(table.name + "|" + r.name + "|" + std::string(Impl::name), [&] {
    setup_facts f;
    f.unusable = unusable_reason(impl);
    if (!f.unusable.empty()) return f;
    f.allocations = testing::allocations_per_call([&] { impl.run(query); });
    std::string differs = disagreement<Impl>(table, r);
    if (!differs.empty()) f.label = "disagrees: " + differs;
    return f;
  });
  if (!facts.unusable.empty()) return state.SkipWithError(facts.unusable.c_str());
  if (!facts.label.empty()) state.SetLabel(facts.label);
  for (auto _ : state) impl.run(query);
  state.counters["allocs"] = facts.allocations;
}

// Every request of `requests` once per iteration; items are requests, so items/s is
// matches per second and time / items is the mean cost of one.
template <class Impl>
void match_all(benchmark::State& state, const route_table& table,
               const std::vector<request>& requests) {
  Impl& impl = *cached<Impl>(table).impl;
  std::vector<decltype(impl.compile(requests.front()))> queries;
  queries.reserve(requests.size());
  for (const request& r : requests) queries.push_back(impl.compile(r));
  auto pass = [&] {
    for (const auto& q : queries) impl.run(q);
  };
  auto n = static_cast<double>(requests.size());
  const setup_facts& facts = once(table.name + "|sweep|" + std::string(Impl::name), [&] {
    setup_facts f;
    f.unusable = unusable_reason(impl);
    if (!f.unusable.empty()) return f;
    std::size_t differ = 0;
    for (const request& r : requests) differ += !disagreement<Impl>(table, r).empty();
    if (differ)
      f.label = "disagrees on " + std::to_string(differ) + " of " + std::to_string(requests.size());
    f.allocations = testing::allocations_per_call(pass, 1) / n;
    return f;
  });
  if (!facts.unusable.empty()) return state.SkipWithError(facts.unusable.c_str());
  if (!facts.label.empty()) state.SetLabel(facts.label);
  for (auto _ : state) pass();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * requests.size()));
  state.counters["requests"] = n;
  state.counters["allocs"] = facts.allocations;
}

inline double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Registering a whole table into a fresh router, timed by this thread's CPU clock (other
// engineers' compilers share the machine) around construction only: teardown is not
// registration. Small tables are built `batch` at a time so that the clock's own cost
// (a system call) stays well under 1% of what it measures.
template <class Impl>
void register_all(benchmark::State& state, const route_table& table) {
  // The cached router supplies the translation and says whether the table is usable.
  const built_router<Impl>& cache = cached<Impl>(table);
  if (std::string why = unusable_reason(*cache.impl); !why.empty())
    return state.SkipWithError(why.c_str());
  const typename Impl::prepared* prepared = &cache.prepared;
  const std::size_t n = table.patterns.size();
  const std::size_t batch = std::max<std::size_t>(1, 1000 / n);
  std::vector<std::optional<Impl>> built(batch);
  std::uint64_t allocations = 0;
  std::size_t refused = 0;
  for (auto _ : state) {
    testing::allocation_scope scope;
    double start = thread_cpu_seconds();
    for (auto& slot : built) slot.emplace(*prepared);
    double stop = thread_cpu_seconds();
    allocations += scope.count();
    state.SetIterationTime((stop - start) / static_cast<double>(batch));
    refused = built.front()->rejected().size();
    for (auto& slot : built) slot.reset();
  }
  state.counters["routes"] = static_cast<double>(n);
  state.counters["allocs_per_route"] =
      benchmark::Counter(static_cast<double>(allocations) / static_cast<double>(batch * n),
                         benchmark::Counter::kAvgIterations);
  if (refused) state.SetLabel("refused " + std::to_string(refused) + " routes");
}

}  // namespace waypoint::bench
