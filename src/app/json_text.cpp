// JSON string escaping with UTF-8 validation (RFC 8259 section 7, RFC 3629 section 4).
#include "json_text.hpp"

namespace waypoint::app::detail {
namespace {

constexpr bool in(unsigned char c, unsigned char low, unsigned char high) noexcept {
  return c >= low && c <= high;
}

// The length of the valid UTF-8 sequence of two or more bytes starting at text[i], or 0.
std::size_t multibyte_length(std::string_view text, std::size_t i) noexcept {
  auto at = [&](std::size_t k) -> unsigned char {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
  };
  unsigned char lead = at(0);
  auto continuation = [&](std::size_t k) { return in(at(k), 0x80, 0xbf); };
  if (in(lead, 0xc2, 0xdf)) return continuation(1) ? 2 : 0;
  if (lead == 0xe0) return in(at(1), 0xa0, 0xbf) && continuation(2) ? 3 : 0;
  if (in(lead, 0xe1, 0xec) || in(lead, 0xee, 0xef))
    return continuation(1) && continuation(2) ? 3 : 0;
  if (lead == 0xed) return in(at(1), 0x80, 0x9f) && continuation(2) ? 3 : 0;  // no surrogates
  if (lead == 0xf0) return in(at(1), 0x90, 0xbf) && continuation(2) && continuation(3) ? 4 : 0;
  if (in(lead, 0xf1, 0xf3)) return continuation(1) && continuation(2) && continuation(3) ? 4 : 0;
  if (lead == 0xf4) return in(at(1), 0x80, 0x8f) && continuation(2) && continuation(3) ? 4 : 0;
  return 0;
}

void append_control(std::string& out, unsigned char c) {
  constexpr char hex[] = "0123456789abcdef";
  switch (c) {
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
  out += "\\u00";
  out += hex[c >> 4];
  out += hex[c & 0xf];
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        append_control(out, c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    std::size_t n = multibyte_length(text, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  out += '"';
}

}  // namespace waypoint::app::detail
