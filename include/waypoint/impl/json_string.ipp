// The definitions of waypoint/json_string.hpp: compiled once by src/core/json_string.cpp,
// or included by the header with WAYPOINT_HEADER_ONLY (detail/config.hpp).
#pragma once

#include "waypoint/json_string.hpp"

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
    constexpr char hex[] = "0123456789abcdef";
    out += "\\u00";
    out += hex[u >> 4];
    out += hex[u & 15];
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
