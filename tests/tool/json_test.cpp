// JSON string escaping (tools/json.hpp): every output parses as JSON, and well-formed UTF-8
// passes through unchanged.
#include "json.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using waypoint::route_tool::json_number;
using waypoint::route_tool::json_string;

struct escape_row {
  const char* rule;
  std::string input;
  std::string expected;
};

TEST(JsonString, EscapesWhatJsonRequiresAndReplacesIllFormedUtf8) {
  const escape_row rows[] = {
      {"plain ASCII is quoted as is", "GET /a/{x}", R"("GET /a/{x}")"},
      {"the empty string", "", R"("")"},
      {"quote and backslash are escaped", "a\"b\\c", R"("a\"b\\c")"},
      {"common controls use short escapes", "\b\f\n\r\t", R"("\b\f\n\r\t")"},
      {"other controls use \\u00XX", std::string("\x01\x1f", 2), R"("\u0001\u001f")"},
      {"NUL is a control like any other", std::string("a\0b", 3), R"("a\u0000b")"},
      {"DEL is escaped for terminals", "\x7f", R"("\u007f")"},
      {"two-byte UTF-8 passes", "caf\xC3\xA9", "\"caf\xC3\xA9\""},
      {"three-byte UTF-8 passes", "\xE2\x82\xAC", "\"\xE2\x82\xAC\""},
      {"four-byte UTF-8 passes", "\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\""},
      {"a lone continuation byte is replaced", "a\x80z", "\"a\xEF\xBF\xBDz\""},
      {"0xFF is never UTF-8", "\xFF", "\"\xEF\xBF\xBD\""},
      {"an overlong two-byte form is replaced byte by byte", "\xC0\xAF",
       "\"\xEF\xBF\xBD\xEF\xBF\xBD\""},
      {"an overlong three-byte form is replaced", "\xE0\x80\xAF",
       "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""},
      {"a UTF-16 surrogate is replaced", "\xED\xA0\x80",
       "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""},
      {"a code point above U+10FFFF is replaced", "\xF4\x90\x80\x80",
       "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""},
      {"a truncated sequence at the end is replaced", "a\xE2\x82", "\"a\xEF\xBF\xBD\xEF\xBF\xBD\""},
      {"a truncated sequence keeps the next ASCII byte", "\xC3z", "\"\xEF\xBF\xBDz\""},
  };
  for (const escape_row& row : rows) EXPECT_EQ(json_string(row.input), row.expected) << row.rule;
}

TEST(JsonNumber, PrintsFixedDecimalsAndNullForNonFinite) {
  EXPECT_EQ(json_number(23.44, 1), "23.4");
  EXPECT_EQ(json_number(0, 0), "0");
  EXPECT_EQ(json_number(2.5, 2), "2.50");
  EXPECT_EQ(json_number(1.0 / 0.0, 1), "null");
}

}  // namespace
