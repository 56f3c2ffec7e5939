// The fuzzers' assertion: a broken invariant prints what broke and the input's context,
// then aborts so that libFuzzer saves the input. Not assert(), which the fuzz preset's
// NDEBUG would remove.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace waypoint::fuzzing {

inline void require(bool holds, std::string_view invariant, const std::string& context) {
  if (holds) return;
  std::fprintf(stderr, "\n*** invariant broken: %.*s\n%s\n", static_cast<int>(invariant.size()),
               invariant.data(), context.c_str());
  std::abort();
}

// Printable form of arbitrary bytes, for the context of a failure.
inline std::string printable(std::string_view bytes) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : bytes) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '"' && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out + "\"";
}

}  // namespace waypoint::fuzzing
