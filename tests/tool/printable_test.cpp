// Text for people (tools/printable.hpp): control bytes escaped, carets placed by column.
#include "printable.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace waypoint::route_tool;

TEST(Printable, EscapesControlBytesButKeepsTabsAndUtf8) {
  EXPECT_EQ(printable("GET /a"), "GET /a");
  EXPECT_EQ(printable(std::string("/a\0b", 4)), "/a\\x00b");
  EXPECT_EQ(printable("\x1b[31m\x7f"), "\\x1b[31m\\x7f");
  EXPECT_EQ(printable("GET\t/caf\xC3\xA9"), "GET\t/caf\xC3\xA9");
}

TEST(DisplayWidth, CountsOneColumnPerUtf8Sequence) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("caf\xC3\xA9"), 4u);
  EXPECT_EQ(display_width("\xE2\x82\xAC"), 1u);
}

TEST(CaretIndent, PointsAtTheOffsetByteAsDisplayed) {
  EXPECT_EQ(caret_indent("/a{b", 2), "  ");
  EXPECT_EQ(caret_indent("GET\t/b", 4), "   \t");
  EXPECT_EQ(caret_indent("/caf\xC3\xA9/{x", 7), "      ");  // "/café/" is 6 columns
  EXPECT_EQ(caret_indent("\x01/a", 1), "    ");             // shown as \x01
  EXPECT_EQ(caret_indent("/a", 10), "  ");                  // an offset past the end stops there
}

}  // namespace
