// Exact heap-allocation counts for `bench`. alloc_counter.cpp replaces the global operator
// new of the waypoint-route binary with one that counts each call on the calling thread;
// tests/support has the same counter for test binaries, but an installed tool must not
// depend on the test tree.
#pragma once

#include <cstdint>

namespace waypoint::route_tool {

// Allocations made by the calling thread since it started.
std::uint64_t allocation_count() noexcept;

}  // namespace waypoint::route_tool
