// The pieces of the router's index that need no tree: the bit per method, hashing and
// comparing literal segments, and the first-segment filter. detail/route_index.hpp builds
// the trees from them; docs/design.md draws those.
#pragma once

#include "waypoint/detail/config.hpp"
#include "waypoint/detail/escape.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint {

// Most methods one router can tell apart: the Allow set is a 64-bit mask.
inline constexpr std::size_t max_methods = 64;

namespace detail {

inline constexpr std::uint32_t no_index = 0xFFFFFFFFu;
inline constexpr std::uint8_t no_method = 0xFF;

// A node with at most this many literal children scans them; more get a hash index.
// Eight std::string compares (length first) cost about one hash of a short segment.
inline constexpr std::size_t literal_scan_limit = 8;

struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

// Every byte of a string of fewer than eight bytes in one word, without reading past it:
// two 4-byte loads that overlap for 4 to 7 bytes, the first, middle and last byte below
// that.
[[gnu::always_inline]] inline std::uint64_t short_word(const char* p, std::size_t n) noexcept {
  if (n >= 4) return load4(p) | std::uint64_t{load4(p + n - 4)} << 32;
  if (n == 0) return 0;
  auto byte = [&](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])}; };
  return byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16;
}

// The first bytes of a segment as one word: with the length, the whole segment when it
// is shorter than eight bytes (short_word keeps every byte then), its first eight bytes
// otherwise. A literal child or a method is compared by this word before any byte is read.
[[gnu::always_inline]] inline std::uint64_t segment_word(std::string_view s) noexcept {
  return s.size() < 8 ? short_word(s.data(), s.size()) : load8(s.data());
}

// Hash of a literal segment, eight bytes at a time because segments are short and a
// byte-at-a-time hash costs more than the probe it serves. The last word overlaps the one
// before it rather than being copied out byte by byte; the length is in the seed.
inline std::uint32_t segment_hash(std::string_view s) noexcept {
  const char* p = s.data();
  std::size_t n = s.size();
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  auto mix = [&](std::uint64_t word) {
    h = (h ^ word) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  };
  if (n < 8) {
    mix(short_word(p, n));
  } else {
    for (std::size_t i = 0; i + 8 < n; i += 8) mix(load8(p + i));
    mix(load8(p + n - 8));
  }
  return static_cast<std::uint32_t>(h);
}

// The length and at most the first eight bytes of a segment, mixed: enough to tell the
// first segments of a table apart in a filter, at a fraction of segment_hash's cost.
inline std::uint32_t segment_fingerprint(std::string_view s) noexcept {
  std::size_t n = s.size();
  return static_cast<std::uint32_t>(((segment_word(s) ^ n) * 0x9E3779B97F4A7C15ull) >> 32);
}

// Equality for short strings without a call to memcmp, whose call and dispatch cost more
// than the compare: words that overlap at the end, so that no load leaves either string.
inline bool same_segment(std::string_view a, std::string_view b) noexcept {
  std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8)
      if (load8(x + i) != load8(y + i)) return false;
    return load8(x + n - 8) == load8(y + n - 8);
  }
  // The words short_word would build, compared as they are read: a mismatch in the first
  // bytes (most mismatches) then costs no more loads.
  if (n >= 4) return load4(x) == load4(y) && load4(x + n - 4) == load4(y + n - 4);
  return n == 0 || (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
}

// Every method name the router has seen gets a bit. GET and HEAD have fixed bits
// because the match rules name them.
class method_table {
 public:
  static constexpr std::uint8_t get = 0;
  static constexpr std::uint8_t head = 1;

  method_table();  // the standard methods, GET and HEAD first

  // The bit of `method`, or no_method when no route names it. Every match starts here, so
  // names are compared by length and first word, which is the whole name of every
  // standard method: a string compare per name cost a tenth of a static match.
  std::uint8_t find(std::string_view method) const noexcept {
    std::uint64_t word = segment_word(method);
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i].word == word && keys_[i].length == method.size() &&
          (method.size() < 8 || names_[i] == method))
        return static_cast<std::uint8_t>(i);
    return no_method;
  }

  // The bit of `method`, the next free one when the table has not seen it. Throws
  // std::length_error past max_methods.
  std::uint8_t intern(std::string_view method);

  std::string_view name(std::uint8_t i) const noexcept { return names_[i]; }
  // Bits in byte order of their names, the order of an Allow header.
  const std::vector<std::uint8_t>& by_name() const noexcept { return by_name_; }

 private:
  struct key {
    std::uint64_t word;
    std::size_t length;
  };
  std::vector<std::string> names_;
  std::vector<key> keys_;  // keys_[i] describes names_[i]
  std::vector<std::uint8_t> by_name_;
};

// The first segments of a tree's literal routes (their segment_fingerprint), as a one-hash
// Bloom filter of 512 bits: a
// request whose first segment was never added can match no literal-only route and enter
// no first-segment bucket, so it needs neither lookup. With the 17 first segments of the
// benchmark tables about 3% of unknown segments pass anyway and are looked up as usual.
class segment_filter {
 public:
  void add(std::uint32_t hash) noexcept { bits_[word(hash)] |= bit(hash); }
  bool may_contain(std::uint32_t hash) const noexcept { return bits_[word(hash)] & bit(hash); }

 private:
  // The top nine bits, the best mixed.
  static std::size_t word(std::uint32_t hash) noexcept { return hash >> 29; }
  static std::uint64_t bit(std::uint32_t hash) noexcept {
    return std::uint64_t{1} << (hash >> 23 & 63);
  }

  std::array<std::uint64_t, 8> bits_{};
};

}  // namespace detail
}  // namespace waypoint

#ifdef WAYPOINT_HEADER_ONLY
#include "waypoint/impl/router_tree.ipp"
#endif
