// Exact heap-allocation counts for code that promises zero (or a fixed number of)
// allocations. Three users share this interface (support/CMakeLists.txt): the tests pin
// allocation counts with it, the route tool's `bench` command reports them, and the
// benchmarks report them. Linking waypoint_alloc_counter (support/alloc_counter.cpp)
// replaces the global operator new/delete with versions that count every call on this
// thread; the benchmarks link bench/support/malloc_counter.cpp instead, which implements
// the same functions at the malloc level.
#pragma once

#include <cstdint>

namespace waypoint::testing {

// Allocations made by the calling thread since it started.
std::uint64_t allocation_count() noexcept;

// Counts the allocations made while it is alive, on the thread that made it.
class allocation_scope {
 public:
  allocation_scope() noexcept : start_(allocation_count()) {}
  std::uint64_t count() const noexcept { return allocation_count() - start_; }

 private:
  std::uint64_t start_;
};

// Allocations per call of `op`: one warm-up call first (first-use statics, buffers grown
// once), then the mean over `calls` calls.
template <class Op>
double allocations_per_call(Op&& op, int calls = 100) {
  op();
  allocation_scope scope;
  for (int i = 0; i < calls; ++i) op();
  return static_cast<double>(scope.count()) / calls;
}

}  // namespace waypoint::testing
