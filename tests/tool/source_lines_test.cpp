// Reading route tables and request lists (tools/source_lines.hpp): numbering, trimming,
// comments, and unreadable files.
#include "source_lines.hpp"
#include "tool_error.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace {

using namespace waypoint::route_tool;

TEST(ReadContentLines, SkipsBlankAndCommentLinesButCountsThem) {
  std::istringstream in("# comment\n\nGET /a\n   \n  # indented comment\nGET /b\n");
  std::vector<source_line> lines = read_content_lines(in);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].number, 3u);
  EXPECT_EQ(lines[0].text, "GET /a");
  EXPECT_EQ(lines[1].number, 6u);
  EXPECT_EQ(lines[1].text, "GET /b");
}

TEST(ReadContentLines, TrimsBlanksAndCarriageReturnsAndRecordsTheIndent) {
  std::istringstream in(" \tGET /a \t\r\nGET /b\r\n");
  std::vector<source_line> lines = read_content_lines(in);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "GET /a");
  EXPECT_EQ(lines[0].indent, 2u);
  EXPECT_EQ(lines[1].text, "GET /b");
  EXPECT_EQ(lines[1].indent, 0u);
}

TEST(ReadContentLines, KeepsBlanksInsideALine) {
  std::istringstream in("GET \t /a");
  EXPECT_EQ(read_content_lines(in).at(0).text, "GET \t /a");
}

TEST(ReadContentLines, DropsAByteOrderMarkOnTheFirstLineOnly) {
  std::istringstream in("\xEF\xBB\xBFGET /a\n\xEF\xBB\xBFGET /b");
  std::vector<source_line> lines = read_content_lines(in);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].text, "GET /a");
  EXPECT_EQ(lines[1].text, "\xEF\xBB\xBFGET /b");
}

TEST(ReadContentLines, ReadsALastLineWithoutNewline) {
  std::istringstream in("GET /a\nGET /b");
  EXPECT_EQ(read_content_lines(in).size(), 2u);
}

TEST(ReadContentFile, NamesTheFileAndTheReasonWhenUnreadable) {
  try {
    read_content_file("/nonexistent/routes.txt");
    FAIL() << "no error";
  } catch (const tool_error& e) {
    EXPECT_STREQ(e.what(), "cannot read /nonexistent/routes.txt: No such file or directory");
  }
  try {
    read_content_file("/");
    FAIL() << "no error";
  } catch (const tool_error& e) {
    EXPECT_STREQ(e.what(), "cannot read /: it is a directory");
  }
}

}  // namespace
