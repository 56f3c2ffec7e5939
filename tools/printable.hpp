// Text for people: route-table lines may hold any bytes, and a control byte written raw to a
// terminal can garble it, so the human-readable commands (check, explain) show those bytes
// as \xNN escapes, and place carets by display column rather than by byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace waypoint::route_tool {

// `text` with each control byte except tab (0x00-0x1F, 0x7F) written as \xNN.
std::string printable(std::string_view text);

// The columns `text` takes on a terminal, counting one per UTF-8 sequence (wide characters
// are rare in route tables and not worth a table of East Asian widths).
std::size_t display_width(std::string_view text);

// The prefix of printable(text) that shows text[0, offset), as blanks of the same width:
// tabs stay tabs, an escaped byte takes four columns, a UTF-8 sequence takes one. A caret
// after it points at text[offset].
std::string caret_indent(std::string_view text, std::size_t offset);

}  // namespace waypoint::route_tool
