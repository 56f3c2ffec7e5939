// JSON string literals written by hand, for the places that print JSON without a JSON
// library: the route tool's output, the framework's problem documents and access-log lines,
// and handlers that echo request text, such as the example gateway's. RFC 8259 section 7;
// UTF-8 per RFC 3629 section 4.
//
//   std::string body = R"({"route":)";
//   waypoint::append_json_string(body, m.route()->pattern.text());   // {"route":"GET /a/{x}"
#pragma once

#include "waypoint/detail/config.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace waypoint {
namespace detail {

constexpr std::string_view replacement_character = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Length of the well-formed UTF-8 sequence that starts `text`, or 0 when its first byte
// does not start one. Follows RFC 3629's table, so overlong forms, surrogates and code
// points above U+10FFFF are ill-formed.
std::size_t utf8_sequence_length(std::string_view text);

// Whether `c` stands for itself inside a JSON string as append_ascii_escaped writes it:
// printable ASCII other than the quote and the backslash.
constexpr bool json_takes_as_is(char c) noexcept {
  auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x7F && c != '"' && c != '\\';
}

// Appends the ASCII byte `c` as it reads inside a JSON string: escaped where JSON requires
// it, and DEL too.
void append_ascii_escaped(std::string& out, char c);

}  // namespace detail

// Appends `text` as a JSON string literal, quotes included. A decoded path value may hold
// any bytes: each byte that does not belong to a well-formed UTF-8 sequence is written as
// U+FFFD, so the output always parses.
void append_json_string(std::string& out, std::string_view text);

}  // namespace waypoint

#ifdef WAYPOINT_HEADER_ONLY
#include "waypoint/impl/json_string.ipp"
#endif
