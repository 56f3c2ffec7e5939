// Hexadecimal digits both ways, written once for every layer: a byte as two digits (JSON's
// \u00XX, %XX escapes, trace and request ids, digests shown as keys, bytes quoted in errors)
// and a digit's value (escapes and ids read back). Standard library only, so that the core,
// the server and the framework share it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace waypoint::detail {

// Lowercase is what ids and digests are written in (W3C Trace Context requires it);
// uppercase is what RFC 3986 §2.1 asks percent-encoders to produce.
enum class hex_case : bool { lower, upper };

inline constexpr std::string_view lower_hex_digits = "0123456789abcdef";
inline constexpr std::string_view upper_hex_digits = "0123456789ABCDEF";

// Writes `byte` as two hex digits at `out`, the high nibble first; returns the end.
constexpr char* write_hex(unsigned char byte, char* out,
                          hex_case letters = hex_case::lower) noexcept {
  std::string_view digits = letters == hex_case::lower ? lower_hex_digits : upper_hex_digits;
  out[0] = digits[byte >> 4];
  out[1] = digits[byte & 0xf];
  return out + 2;
}

// Writes each of `bytes` in order (2 * bytes.size() digits) at `out`; returns the end.
constexpr char* write_hex(std::span<const unsigned char> bytes, char* out,
                          hex_case letters = hex_case::lower) noexcept {
  for (unsigned char byte : bytes) out = write_hex(byte, out, letters);
  return out;
}

inline void append_hex(std::string& out, unsigned char byte, hex_case letters = hex_case::lower) {
  char digits[2];
  write_hex(byte, digits, letters);
  out.append(digits, 2);
}

inline void append_hex(std::string& out, std::span<const unsigned char> bytes,
                       hex_case letters = hex_case::lower) {
  std::size_t at = out.size();
  out.resize(at + 2 * bytes.size());
  write_hex(bytes, out.data() + at, letters);
}

// A hex digit's value in either case, or -1 for any other byte.
constexpr int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace waypoint::detail
