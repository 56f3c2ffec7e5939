// Tests of waypoint/json_string.hpp through its public name. The full escaping table (every
// control, every ill-formed UTF-8 form) is tests/tool/json_test.cpp, which reaches the same
// function through the route tool's json_string().
#include <waypoint/json_string.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

struct append_row {
  const char* rule;
  std::string before;
  std::string text;
  std::string expected;
};

TEST(AppendJsonString, AppendsOneQuotedLiteral) {
  const append_row rows[] = {
      {"appends after what is there", R"({"a":)", "b", R"({"a":"b")"},
      {"the empty string is two quotes", "", "", R"("")"},
      {"quote, backslash and controls are escaped", "", "\"\\\n\x01", R"("\"\\\n\u0001")"},
      {"well-formed UTF-8 passes", "", "caf\xC3\xA9", "\"caf\xC3\xA9\""},
      {"an ill-formed byte becomes U+FFFD", "", "a\xFFz", "\"a\xEF\xBF\xBDz\""},
      {"a run of plain ASCII passes whole", "", "/hr/insights/pending?x=1 ~",
       R"("/hr/insights/pending?x=1 ~")"},
      {"escapes between runs keep the runs intact", "", "ab\"cd\\ef\tgh", R"("ab\"cd\\ef\tgh")"},
      {"DEL ends a run and is escaped", "", "a\x7Fz", R"("a\u007fz")"},
      {"UTF-8 between runs", "", "x\xC3\xA9y\xFFz", "\"x\xC3\xA9y\xEF\xBF\xBDz\""},
      {"escapes at both ends", "", "\"mid\"", R"("\"mid\"")"},
  };
  for (const append_row& row : rows) {
    std::string out = row.before;
    waypoint::append_json_string(out, row.text);
    EXPECT_EQ(out, row.expected) << row.rule;
  }
}

struct special_byte_row {
  const char* rule;
  std::string text;     // the special text
  std::string escaped;  // as it reads in the literal
};

// Runs of plain bytes are scanned a word at a time: a special text at every place of a
// run (every offset within and across the eight-byte words) ends it exactly there.
TEST(AppendJsonString, SpecialTextAnywhereInARunIsEscapedInPlace) {
  const special_byte_row rows[] = {
      {"quote", "\"", "\\\""},
      {"backslash", "\\", "\\\\"},
      {"newline", "\n", "\\n"},
      {"a control", "\x1F", "\\u001f"},
      {"DEL", "\x7F", "\\u007f"},
      {"two-byte UTF-8", "\xC3\xA9", "\xC3\xA9"},
      {"an ill-formed byte", "\xFF", "\xEF\xBF\xBD"},
  };
  for (const special_byte_row& row : rows) {
    for (std::size_t before = 0; before <= 17; ++before) {
      std::string head(before, 'a');
      std::string tail(17 - before, '~');
      std::string out;
      waypoint::append_json_string(out, head + row.text + tail);
      EXPECT_EQ(out, "\"" + head + row.escaped + tail + "\"") << row.rule << " after " << before;
    }
  }
}

}  // namespace
