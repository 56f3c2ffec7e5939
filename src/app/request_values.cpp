// Request-scoped value slots and request ids.
#include "waypoint/app/request_values.hpp"

#include "waypoint/detail/hex.hpp"

#include <atomic>
#include <random>
#include <stdexcept>
#include <string>

namespace waypoint::app {
namespace detail {

value_slots::slot& value_slots::vacate(const void* key) {
  slot* free_slot = nullptr;
  for (std::size_t i = 0; i < used_; ++i) {
    slot& s = slots_[i];
    if (s.key == key) {
      s.key = nullptr;
      s.destroy(s.object);
      return s;
    }
    if (!s.key && !free_slot) free_slot = &s;
  }
  if (free_slot) return *free_slot;
  if (used_ == capacity)
    throw std::length_error("waypoint::app: more than " + std::to_string(capacity) +
                            " request-scoped value types in one request");
  slot& s = slots_[used_++];
  s.key = nullptr;
  return s;
}

}  // namespace detail

namespace {

constexpr bool is_request_id_byte(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '+' || c == '/' || c == '=' || c == '-';
}

// splitmix64's finalizer: a bijection on 64-bit values, so distinct counters give distinct
// ids, and the random seed makes ids differ between processes.
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

std::uint64_t process_seed() noexcept {
  static const std::uint64_t seed = [] {
    try {
      std::random_device device;
      return (std::uint64_t{device()} << 32) ^ device();
    } catch (...) {
      return std::uint64_t{0x5eed};  // no entropy source: ids stay unique in the process
    }
  }();
  return seed;
}

std::atomic<std::uint64_t> next_request_number{0};

// Each thread takes numbers a block at a time: one shared increment per 4,096 generated ids
// instead of one per id, so that server threads on many cores do not pass one cache line
// between them on every request (BENCHMARKS.md §24). Ids stay unique in the process.
constexpr std::uint64_t numbers_per_block = 4096;

std::uint64_t take_request_number() noexcept {
  thread_local std::uint64_t next = 0;
  thread_local std::uint64_t end = 0;
  if (next == end) {
    next = next_request_number.fetch_add(numbers_per_block, std::memory_order_relaxed);
    end = next + numbers_per_block;
  }
  return next++;
}

}  // namespace

std::string_view request_values::request_id() {
  if (request_id_length_ == 0) {
    std::uint64_t id = mix(process_seed() + take_request_number());
    // Most significant byte first, as the number reads in hex.
    for (std::size_t i = 8; i-- > 0; id >>= 8)
      waypoint::detail::write_hex(static_cast<unsigned char>(id & 0xff), &request_id_[2 * i]);
    request_id_length_ = 16;
  }
  return {request_id_.data(), request_id_length_};
}

bool request_values::request_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > max_request_id_length) return false;
  for (char c : id)
    if (!is_request_id_byte(c)) return false;
  id.copy(request_id_.data(), id.size());
  request_id_length_ = static_cast<std::uint8_t>(id.size());
  return true;
}

void request_values::throw_missing_value() {
  throw std::logic_error("waypoint::app: request_values::get<T>(): no layer set a value of this type");
}

}  // namespace waypoint::app
