// Registering route-table lines (tools/registration.hpp): each refused line becomes a problem
// that names its line, and a conflict names the line of the pattern it clashes with.
#include "registration.hpp"
#include "outcome.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace waypoint::route_tool;
using kind = registration_problem::kind;

std::vector<source_line> table(std::initializer_list<std::pair<std::size_t, std::string>> rows) {
  std::vector<source_line> lines;
  for (const auto& [number, text] : rows) lines.push_back({number, text, 0});
  return lines;
}

TEST(RegisterLines, ReportsAParseErrorWithItsOffsetAndBareProblem) {
  line_router router;
  auto problems = register_lines(router, table({{4, "GET /a/{x"}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].type, kind::parse_error);
  EXPECT_EQ(problems[0].line, 4u);
  EXPECT_EQ(problems[0].offset, 7u);
  EXPECT_EQ(problems[0].problem, "'{' is never closed");
  EXPECT_EQ(problems[0].message, "\"GET /a/{x\": at offset 7: '{' is never closed");
}

// A table that names more methods than the router can tell apart is refused line by
// line from the first method over the limit, not by a crash.
TEST(RegisterLines, RefusesLinesPastTheMethodLimit) {
  line_router router;
  std::vector<source_line> lines;
  for (std::size_t i = 0; i < 70; ++i)
    lines.push_back({i + 1, "M" + std::to_string(i) + " /x" + std::to_string(i), 0});
  auto problems = register_lines(router, lines);
  // GET, HEAD and the other seven standard methods are known from the start: 55 more fit.
  ASSERT_EQ(problems.size(), 15u);
  EXPECT_EQ(problems[0].type, kind::rejected);
  EXPECT_EQ(problems[0].line, 56u);
  EXPECT_NE(problems[0].problem.find("more than 64 distinct methods"), std::string::npos);
}

TEST(RegisterLines, NamesTheLineOfTheConflictingPatternAndAPathBothMatch) {
  line_router router;
  auto problems = register_lines(router, table({{2, "/a/{x}"}, {7, "/{y}/b"}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].type, kind::conflict);
  EXPECT_EQ(problems[0].line, 7u);
  EXPECT_EQ(problems[0].existing_line, 2u);
  EXPECT_EQ(problems[0].existing_pattern, "/a/{x}");
  EXPECT_EQ(problems[0].example, "/a/b");
  EXPECT_FALSE(problems[0].equivalent);
  EXPECT_EQ(problems[0].message,
            "\"/{y}/b\" conflicts with \"/a/{x}\" (line 2): both match some requests, e.g. path "
            "\"/a/b\", and neither is more specific");
}

TEST(RegisterLines, SaysWhenTwoPatternsAreEquivalent) {
  line_router router;
  auto problems = register_lines(router, table({{1, "/a/"}, {2, "/a/{rest...}"}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(problems[0].equivalent);
  EXPECT_EQ(
      problems[0].message,
      "\"/a/{rest...}\" matches exactly the same requests as \"/a/\" (line 1), e.g. path \"/a/\"");
}

TEST(RegisterLines, SkipsARefusedLineSoLaterLinesAreCheckedWithoutIt) {
  line_router router;
  // Line 2 conflicts with line 1 and is skipped, so line 3, which would conflict only with
  // line 2, registers.
  auto problems = register_lines(router, table({{1, "/a/{x}"}, {2, "/{y}/b"}, {3, "/{z}/b/"}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].line, 2u);
  EXPECT_EQ(router.size(), 2u);
}

TEST(RegisterLines, RefusesANulByteBeforeTheMatcherSeesIt) {
  line_router router;
  auto problems = register_lines(router, table({{5, std::string("/a\0b", 4)}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].type, kind::parse_error);
  EXPECT_EQ(problems[0].offset, 2u);
  EXPECT_EQ(problems[0].problem, "the line holds a NUL byte");
  EXPECT_EQ(router.size(), 0u);
}

TEST(RegisterLines, TheReferenceMatcherReportsTheSameProblems) {
  line_router router;
  line_reference reference;
  auto lines = table({{1, "/a/{x}"}, {2, "/{y}/b"}, {3, "/b/{"}, {4, "GET /a/{x}"}});
  auto from_router = register_lines(router, lines);
  auto from_reference = register_lines(reference, lines);
  ASSERT_EQ(from_router.size(), from_reference.size());
  for (std::size_t i = 0; i < from_router.size(); ++i)
    EXPECT_EQ(from_router[i].message, from_reference[i].message);
}

TEST(JsonReport, IsOneObjectWithLinePatternAndError) {
  line_router router;
  auto problems = register_lines(router, table({{3, "GET /a/{x"}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(
      json_report(problems[0]),
      R"({"line":3,"pattern":"GET /a/{x","error":"\"GET /a/{x\": at offset 7: '{' is never closed"})");
}

}  // namespace
