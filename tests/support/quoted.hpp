// Printable, copyable form of arbitrary bytes for failure messages: a C++ string literal
// with the bytes a terminal would mangle escaped. Shared by the differential test and the
// fuzzers (header-only, standard library only).
#pragma once

#include <string>
#include <string_view>

namespace waypoint::testing {

// A C++ string literal for `s`, with the bytes a terminal would mangle escaped.
inline std::string quoted(std::string_view s) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
      out += "\"\"";  // so that a following hex digit is not read as part of the escape
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// An exact match for std::string, so that an unqualified call never picks std::quoted by
// argument-dependent lookup.
inline std::string quoted(const std::string& s) { return quoted(std::string_view(s)); }

}  // namespace waypoint::testing
