// The definitions of waypoint/json_string.hpp: compiled once by src/core/json_string.cpp,
// or included by the header with WAYPOINT_HEADER_ONLY (detail/config.hpp).
#pragma once

#include "waypoint/json_string.hpp"

#include "waypoint/detail/hex.hpp"

#include <cstdint>
#include <cstring>

namespace waypoint {
namespace detail {

WAYPOINT_INLINE std::size_t utf8_sequence_length(std::string_view text) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  auto in = [&](std::size_t i, unsigned lo, unsigned hi) {
    return i < text.size() && byte(i) >= lo && byte(i) <= hi;
  };
  unsigned lead = byte(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return in(1, 0x80, 0xBF) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    unsigned lo = lead == 0xE0 ? 0xA0 : 0x80;  // no overlong three-byte forms
    unsigned hi = lead == 0xED ? 0x9F : 0xBF;  // no UTF-16 surrogates
    return in(1, lo, hi) && in(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    unsigned lo = lead == 0xF0 ? 0x90 : 0x80;  // no overlong four-byte forms
    unsigned hi = lead == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    return in(1, lo, hi) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

// Whether JSON takes all eight bytes of `word` as they are (json_takes_as_is for each):
// none is a control, DEL, the quote, the backslash or a byte of a multi-byte sequence. The
// has-zero-byte and has-byte-less-than tests of a word can misplace the byte they find,
// never miss one, so the answer for the word is exact.
constexpr bool json_takes_all_as_is(std::uint64_t word) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101u;
  constexpr std::uint64_t highs = 0x8080808080808080u;
  auto has_zero_byte = [](std::uint64_t v) { return (v - ones) & ~v & highs; };
  std::uint64_t below_space = (word - ones * 0x20) & ~word & highs;
  return ((word & highs) | below_space | has_zero_byte(word ^ (ones * '"')) |
          has_zero_byte(word ^ (ones * '\\')) | has_zero_byte(word ^ (ones * 0x7F))) == 0;
}

// Each byte at each place of a word of plain bytes (the lowest and highest plain ones among
// them) decides the word as it decides itself.
static_assert([] {
  for (std::uint64_t plain : {0x20u, 0x61u, 0x7Eu})
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned at = 0; at < 64; at += 8) {
        std::uint64_t word =
            (plain * 0x0101010101010101u & ~(std::uint64_t{0xFF} << at)) | (std::uint64_t{b} << at);
        if (json_takes_all_as_is(word) != json_takes_as_is(static_cast<char>(b))) return false;
      }
  return true;
}());

WAYPOINT_INLINE void append_ascii_escaped(std::string& out, char c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u == 0x7F) {  // DEL is legal JSON but unreadable in a terminal
    out += "\\u00";
    append_hex(out, u);
    return;
  }
  out += c;
}

}  // namespace detail

WAYPOINT_INLINE void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    // Most text (paths, routes, ids) is printable ASCII throughout: a run of bytes JSON
    // takes as they are is appended in one go, not a byte at a time through the escaper.
    std::size_t plain_end = i;
    for (std::uint64_t word; plain_end + 8 <= text.size(); plain_end += 8) {
      std::memcpy(&word, text.data() + plain_end, 8);
      if (!detail::json_takes_all_as_is(word)) break;
    }
    while (plain_end < text.size() && detail::json_takes_as_is(text[plain_end])) ++plain_end;
    if (plain_end > i) {
      out.append(text.data() + i, plain_end - i);
      i = plain_end;
      continue;
    }
    std::size_t n = detail::utf8_sequence_length(text.substr(i));
    if (n == 0) {
      out += detail::replacement_character;
      ++i;
    } else if (n == 1) {
      detail::append_ascii_escaped(out, text[i++]);
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  out += '"';
}

}  // namespace waypoint
