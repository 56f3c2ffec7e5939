#include "app/detail/utf8.hpp"

#include <cstddef>

namespace waypoint::app::detail {

bool is_utf8(std::string_view text) noexcept {
  std::size_t i = 0;
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < text.size()) {
    unsigned char lead = byte(i);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length;
    char32_t code;
    if ((lead & 0xe0) == 0xc0) {
      length = 2;
      code = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3;
      code = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4;
      code = lead & 0x07;
    } else {
      return false;
    }
    if (text.size() - i < length) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((byte(i + k) & 0xc0) != 0x80) return false;
      code = (code << 6) | (byte(i + k) & 0x3f);
    }
    constexpr char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
      return false;
    i += length;
  }
  return true;
}

}  // namespace waypoint::app::detail
