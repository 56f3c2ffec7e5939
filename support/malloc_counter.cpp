// Counts heap allocations for the benchmarks' `allocs` counters, at the malloc level.
//
// support/alloc_counter.cpp counts operator new, which is enough for waypoint but
// blind to C code: R3 and PCRE allocate with malloc and strdup. This file interposes
// glibc's malloc family instead (the "replacing malloc" mechanism glibc documents, with
// each call forwarded to the __libc_ implementation), so an operator new, which calls
// malloc, and a direct malloc inside a C library are counted alike, each once. realloc
// counts as one allocation per call. It implements the interface of
// support/alloc_counter.hpp, so the suites use allocation_scope unchanged.
#include "alloc_counter.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
}

namespace {
// Initial-exec TLS in the executable: reading it never allocates, even from malloc.
thread_local std::uint64_t thread_allocations = 0;
}  // namespace

namespace waypoint::testing {
std::uint64_t allocation_count() noexcept { return thread_allocations; }
}  // namespace waypoint::testing

extern "C" {

void* malloc(std::size_t size) noexcept {
  ++thread_allocations;
  return __libc_malloc(size);
}

void* calloc(std::size_t count, std::size_t size) noexcept {
  ++thread_allocations;
  return __libc_calloc(count, size);
}

void* realloc(void* p, std::size_t size) noexcept {
  ++thread_allocations;
  return __libc_realloc(p, size);
}

void* memalign(std::size_t alignment, std::size_t size) noexcept {
  ++thread_allocations;
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  ++thread_allocations;
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  ++thread_allocations;
  void* p = __libc_memalign(alignment, size);
  if (!p && size) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"
