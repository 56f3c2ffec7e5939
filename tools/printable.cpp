// Escaping and column arithmetic for human-readable output.
#include "printable.hpp"

#include <waypoint/detail/hex.hpp>

namespace waypoint::route_tool {
namespace {

bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && c != '\t') || u == 0x7F;
}

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (!is_control(c)) {
      out += c;
      continue;
    }
    out += "\\x";
    waypoint::detail::append_hex(out, static_cast<unsigned char>(c));
  }
  return out;
}

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (char c : text) width += !is_utf8_continuation(c);
  return width;
}

std::string caret_indent(std::string_view text, std::size_t offset) {
  std::string out;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    char c = text[i];
    if (c == '\t')
      out += '\t';
    else if (is_control(c))
      out += "    ";
    else if (!is_utf8_continuation(c))
      out += ' ';
  }
  return out;
}

}  // namespace waypoint::route_tool
