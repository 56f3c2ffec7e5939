// Replaces the global allocation functions so that every operator new on a thread
// is counted. Thread-local counts keep concurrent tests from disturbing each other.
#include "alloc_counter.hpp"

#include <cstdlib>
#include <new>

namespace {
thread_local std::uint64_t thread_allocations = 0;

void* counted_allocate(std::size_t size) {
  ++thread_allocations;
  if (size == 0) size = 1;
  if (void* p = std::malloc(size)) return p;
  throw std::bad_alloc();
}

void* counted_allocate_aligned(std::size_t size, std::align_val_t alignment) {
  ++thread_allocations;
  auto align = static_cast<std::size_t>(alignment);
  size = (size + align - 1) / align * align;
  if (size == 0) size = align;
  if (void* p = std::aligned_alloc(align, size)) return p;
  throw std::bad_alloc();
}
}  // namespace

namespace waypoint::testing {
std::uint64_t allocation_count() noexcept { return thread_allocations; }
}  // namespace waypoint::testing

void* operator new(std::size_t size) { return counted_allocate(size); }
void* operator new[](std::size_t size) { return counted_allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t a) {
  return counted_allocate_aligned(size, a);
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return counted_allocate_aligned(size, a);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
