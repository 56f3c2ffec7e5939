// Bytes as hexadecimal text and back, for the tests and command-line filters that show or
// take binary messages (CBOR, COSE) as text.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace waypoint::app::testing {

inline std::string to_hex(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    out += digits[b >> 4];
    out += digits[b & 0xf];
  }
  return out;
}

// Hex digits in either case; spaces (between items, for reading) are skipped. Anything else,
// or an odd number of digits, is std::invalid_argument.
inline std::string from_hex(std::string_view hex) {
  std::string out;
  int high = -1;
  for (char c : hex) {
    if (c == ' ') continue;
    int value = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (value < 0) throw std::invalid_argument("not a hex digit: '" + std::string(1, c) + "'");
    if (high < 0) {
      high = value;
    } else {
      out.push_back(static_cast<char>(high << 4 | value));
      high = -1;
    }
  }
  if (high >= 0) throw std::invalid_argument("an odd number of hex digits");
  return out;
}

}  // namespace waypoint::app::testing
