// Tests of waypoint/pattern.hpp: the grammar, every parse error, the specificity
// relation, the conflict rule, and a brute-force check of compare() against the sets of
// requests that patterns actually match.
#include <waypoint/detail/escape.hpp>
#include <waypoint/pattern.hpp>

#include <gtest/gtest.h>

#include <bitset>
#include <random>
#include <string>
#include <vector>

namespace {

using waypoint::parse_pattern;
using waypoint::pattern;
using waypoint::pattern_errc;
using waypoint::relation;
using waypoint::segment;

// A pattern's segments in a compact form: 'literal' {name} {name...} {...} {$}.
std::string shape(const pattern& p) {
  std::string out;
  for (const segment& s : p.segments()) {
    if (!out.empty()) out += ' ';
    switch (s.type) {
      case segment::kind::literal:
        out += "'" + s.text + "'";
        break;
      case segment::kind::wildcard:
        out += "{" + s.text + "}";
        break;
      case segment::kind::rest:
        out += "{" + s.text + "...}";
        break;
      case segment::kind::end:
        out += "{$}";
        break;
    }
  }
  return out;
}

std::string test_name(std::string rule) {
  for (char& c : rule)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return rule;
}

// --- grammar ---------------------------------------------------------------------

struct parse_case {
  const char* rule;
  const char* text;
  const char* method;
  const char* host;
  const char* segments;
};

class PatternParses : public ::testing::TestWithParam<parse_case> {};

TEST_P(PatternParses, IntoMethodHostAndSegments) {
  const parse_case& c = GetParam();
  pattern p = parse_pattern(c.text);
  EXPECT_EQ(p.text(), c.text);
  EXPECT_EQ(p.method(), c.method);
  EXPECT_EQ(p.host(), c.host);
  EXPECT_EQ(shape(p), c.segments);
}

const parse_case parse_cases[] = {
    {"RootIsAnonymousRest", "/", "", "", "{...}"},
    {"SingleLiteral", "/a", "", "", "'a'"},
    {"TrailingSlashIsAnonymousRest", "/a/", "", "", "'a' {...}"},
    {"DeepLiterals", "/a/b/c/d", "", "", "'a' 'b' 'c' 'd'"},
    {"MethodThenSpace", "GET /a", "GET", "", "'a'"},
    {"MethodThenTab", "GET\t/a", "GET", "", "'a'"},
    {"MethodThenSeveralBlanks", "POST  \t /a", "POST", "", "'a'"},
    {"LeadingBlankMeansNoMethodAsInGo", " /a", "", "", "'a'"},
    {"CustomMethodToken", "PURGE /cache", "PURGE", "", "'cache'"},
    {"MethodWithTokenPunctuation", "X-CUSTOM.1 /a", "X-CUSTOM.1", "", "'a'"},
    {"LowercaseMethodIsKeptAsWritten", "get /a", "get", "", "'a'"},
    {"HostOnly", "example.com/", "", "example.com", "{...}"},
    {"HostAndPath", "example.com/a/b", "", "example.com", "'a' 'b'"},
    {"MethodHostAndPath", "GET api.example.com/v1/{id}", "GET", "api.example.com", "'v1' {id}"},
    {"HostWithPort", "example.com:8080/a", "", "example.com:8080", "'a'"},
    {"SingleWildcard", "/{id}", "", "", "{id}"},
    {"WildcardAfterLiteral", "/users/{id}", "", "", "'users' {id}"},
    {"WildcardBetweenLiterals", "/users/{id}/posts", "", "", "'users' {id} 'posts'"},
    {"SeveralWildcards", "/{a}/{b}/{c}", "", "", "{a} {b} {c}"},
    {"NamedRest", "/files/{path...}", "", "", "'files' {path...}"},
    {"RestAtRoot", "/{all...}", "", "", "{all...}"},
    {"EndAtRoot", "/{$}", "", "", "{$}"},
    {"EndAfterLiteral", "/a/{$}", "", "", "'a' {$}"},
    {"EndAfterWildcard", "/a/{x}/{$}", "", "", "'a' {x} {$}"},
    {"WildcardThenTrailingSlash", "/a/{x}/", "", "", "'a' {x} {...}"},
    {"UnderscoreName", "/{_x1}", "", "", "{_x1}"},
    {"UppercaseName", "/{ID}", "", "", "{ID}"},
    {"EscapedSlashStaysInOneSegment", "/a%2Fb", "", "", "'a/b'"},
    {"LowercaseHexEscape", "/a%2fb", "", "", "'a/b'"},
    {"EscapedPercent", "/%25", "", "", "'%'"},
    {"EscapedSpace", "/a%20b", "", "", "'a b'"},
    {"EscapedBracesAreLiteral", "/%7Bx%7D", "", "", "'{x}'"},
    {"EscapedUtf8", "/caf%C3%A9", "", "", "'caf\xC3\xA9'"},
    {"ThreeEscapedDotsAreALiteral", "/a/%2e%2e%2e", "", "", "'a' '...'"},
    {"NameThenEscapedDotIsALiteral", "/a.%2e", "", "", "'a..'"},
    {"EscapedSlashNextToThreeDotsIsALiteral", "/...%2Fa", "", "", "'.../a'"},
    {"DotInsideSegment", "/a.b/.well-known", "", "", "'a.b' '.well-known'"},
    {"DotsInsideSegment", "/..a/a..", "", "", "'..a' 'a..'"},
    {"SubDelimsInLiteral", "/a;b=c/@x:y", "", "", "'a;b=c' '@x:y'"},
    {"DollarInsideLiteral", "/$x", "", "", "'$x'"},
    {"TildeAndDashInLiteral", "/~user/a-b_c", "", "", "'~user' 'a-b_c'"},
    {"HostOnlyWithMethod", "GET example.com/", "GET", "example.com", "{...}"},
    {"IPv6HostLiteral", "[::1]/a", "", "[::1]", "'a'"},
    {"DeepPathEndingInRest", "/a/b/c/{rest...}", "", "", "'a' 'b' 'c' {rest...}"},
    {"WildcardThenEnd", "/{x}/{$}", "", "", "{x} {$}"},
    {"EscapedQuestionMarkIsLiteral", "/a%3Fb", "", "", "'a?b'"},
    {"EscapedHashIsLiteral", "/a%23b", "", "", "'a#b'"},
    {"LiteralLooksLikeEndButEscaped", "/%7B$%7D", "", "", "'{$}'"},
};

INSTANTIATE_TEST_SUITE_P(Grammar, PatternParses, ::testing::ValuesIn(parse_cases),
                         [](const auto& info) { return test_name(info.param.rule); });

TEST(Pattern, WildcardNamesAreCapturedInPathOrder) {
  pattern p = parse_pattern("GET /{a}/x/{b}/{c...}");
  EXPECT_EQ(p.wildcard_names(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(p.ends_in_rest());
}

TEST(Pattern, AnonymousRestAndEndCaptureNothing) {
  EXPECT_TRUE(parse_pattern("/a/").wildcard_names().empty());
  EXPECT_TRUE(parse_pattern("/a/{$}").wildcard_names().empty());
}

// --- parse errors ------------------------------------------------------------------

struct error_case {
  const char* rule;
  const char* text;
  pattern_errc code;
  std::size_t offset;
};

class PatternRejects : public ::testing::TestWithParam<error_case> {};

TEST_P(PatternRejects, WithCodeOffsetAndQuotedMessage) {
  const error_case& c = GetParam();
  try {
    parse_pattern(c.text);
    FAIL() << "accepted " << c.text;
  } catch (const waypoint::pattern_error& e) {
    EXPECT_EQ(e.code(), c.code) << e.what();
    EXPECT_EQ(e.offset(), c.offset) << e.what();
    std::string prefix =
        "\"" + std::string(c.text) + "\": at offset " + std::to_string(c.offset) + ": ";
    EXPECT_EQ(std::string(e.what()).substr(0, prefix.size()), prefix);
    EXPECT_GT(std::string(e.what()).size(), prefix.size()) << "the message names no problem";
  }
}

const error_case error_cases[] = {
    {"EmptyPattern", "", pattern_errc::empty, 0},
    {"MethodWithoutPath", "GET", pattern_errc::missing_slash, 0},
    {"MethodAndBlankWithoutPath", "GET ", pattern_errc::missing_slash, 4},
    {"HostWithoutPath", "example.com", pattern_errc::missing_slash, 0},
    {"MethodAndHostWithoutPath", "GET example.com", pattern_errc::missing_slash, 4},
    {"MethodWithAt", "G@T /", pattern_errc::bad_method, 1},
    {"MethodWithComma", "GE,T /", pattern_errc::bad_method, 2},
    {"MethodWithSlash", "GE/T /a", pattern_errc::bad_method, 2},
    {"MethodWithBrace", "{GET} /a", pattern_errc::bad_method, 0},
    {"BraceInHost", "{host}/a", pattern_errc::brace_in_host, 0},
    {"BraceInHostAfterMethod", "GET {x}/a", pattern_errc::brace_in_host, 4},
    {"ClosingBraceInHost", "GET a}/b", pattern_errc::brace_in_host, 5},
    {"BlankInHost", "GET a b/c", pattern_errc::missing_slash, 5},
    {"UnclosedBraceAtRoot", "/{id", pattern_errc::unclosed_brace, 1},
    {"UnclosedBraceDeep", "/a/{id", pattern_errc::unclosed_brace, 3},
    {"UnclosedBraceBeforeSlash", "/{id/x}", pattern_errc::unclosed_brace, 1},
    {"StrayClosingBrace", "/a}", pattern_errc::unmatched_brace, 2},
    {"StrayClosingBraceDeep", "/a/b}c", pattern_errc::unmatched_brace, 4},
    {"WildcardAfterPrefix", "/b_{bucket}", pattern_errc::partial_segment, 3},
    {"WildcardBeforeSuffix", "/{a}b", pattern_errc::partial_segment, 1},
    {"TwoWildcardsInOneSegment", "/{a}{b}", pattern_errc::partial_segment, 1},
    {"WildcardInMiddleOfSegment", "/x{a}y", pattern_errc::partial_segment, 2},
    {"EmptyWildcard", "/{}", pattern_errc::empty_wildcard, 1},
    {"EmptyRestWildcard", "/{...}", pattern_errc::empty_wildcard, 1},
    {"NameStartsWithDigit", "/{1x}", pattern_errc::bad_wildcard_name, 2},
    {"NameWithDash", "/{a-b}", pattern_errc::bad_wildcard_name, 2},
    {"NameWithPercent", "/{a%b}", pattern_errc::bad_wildcard_name, 2},
    {"SpaceInPathSplitsMethodAsInGo", "/{a b}", pattern_errc::bad_method, 0},
    {"NameWithDot", "/{a.b}", pattern_errc::bad_wildcard_name, 2},
    {"NameWithTwoDots", "/{x..}", pattern_errc::bad_wildcard_name, 2},
    {"NameWithDollar", "/{$x}", pattern_errc::bad_wildcard_name, 2},
    {"NameWithNonAscii", "/{caf\xC3\xA9}", pattern_errc::bad_wildcard_name, 2},
    {"NameWithNestedBrace", "/{a{b}", pattern_errc::bad_wildcard_name, 2},
    {"DuplicateName", "/{x}/{x}", pattern_errc::duplicate_name, 6},
    {"DuplicateNameWithRest", "/{x}/{x...}", pattern_errc::duplicate_name, 6},
    {"RestNotLast", "/{x...}/a", pattern_errc::rest_not_last, 1},
    {"RestFollowedByTrailingSlash", "/{x...}/", pattern_errc::rest_not_last, 1},
    {"EndNotLast", "/{$}/a", pattern_errc::end_not_last, 1},
    {"EndFollowedByTrailingSlash", "/a/{$}/", pattern_errc::end_not_last, 3},
    {"InvalidEscapeLetters", "/a%zz", pattern_errc::invalid_escape, 2},
    {"TruncatedEscape", "/a%2", pattern_errc::invalid_escape, 2},
    {"LonePercent", "/%", pattern_errc::invalid_escape, 1},
    {"EscapeWithOneHexDigit", "/%g0", pattern_errc::invalid_escape, 1},
    {"InvalidEscapeAfterValidOne", "/%41%4", pattern_errc::invalid_escape, 4},
    {"DoubleSlash", "/a//b", pattern_errc::unclean_path, 3},
    {"LeadingDoubleSlash", "//", pattern_errc::unclean_path, 1},
    {"DotSegment", "/a/./b", pattern_errc::unclean_path, 3},
    {"DotDotSegment", "/a/../b", pattern_errc::unclean_path, 3},
    {"TrailingDot", "/.", pattern_errc::unclean_path, 1},
    {"TrailingDotDot", "GET /a/..", pattern_errc::unclean_path, 7},
    {"UncleanWithConnectToo", "CONNECT /a//b", pattern_errc::unclean_path, 11},
    // A request segment that decodes to a dot segment is cleaned away, and one whose %2F
    // joins a dot piece is refused: a literal spelled so could never match.
    {"EscapedDotSegment", "/a/%2e", pattern_errc::unclean_path, 3},
    {"EscapedDotDotSegment", "/%2E%2E/b", pattern_errc::unclean_path, 1},
    {"DotThenEscapedDotSegment", "GET /a/.%2e", pattern_errc::unclean_path, 7},
    {"EscapedDotThenDotSegment", "/%2e./b", pattern_errc::unclean_path, 1},
    {"EscapedSlashJoiningDotDot", "/a%2F..%2Fb", pattern_errc::unclean_path, 1},
    {"EscapedSlashBeforeDot", "/x/%2F.", pattern_errc::unclean_path, 3},
    {"DotDotBeforeEscapedSlash", "/..%2f", pattern_errc::unclean_path, 1},
    // The seventeenth wildcard is the one a match result has no room for.
    {"SeventeenthWildcardAtItsOffset",
     "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}/{j}/{k}/{l}/{m}/{n}/{o}/{p}/{q}",
     pattern_errc::too_many_wildcards, 65},
    {"SeventeenthWildcardARest",
     "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}/{j}/{k}/{l}/{m}/{n}/{o}/{p}/x/{q...}",
     pattern_errc::too_many_wildcards, 67},
};

TEST(Pattern, SixteenWildcardsAndAnEndParse) {
  pattern p = parse_pattern("/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}/{j}/{k}/{l}/{m}/{n}/{o}/{p}/{$}");
  EXPECT_EQ(p.wildcard_names().size(), waypoint::max_wildcards);
}

INSTANTIATE_TEST_SUITE_P(Errors, PatternRejects, ::testing::ValuesIn(error_cases),
                         [](const auto& info) { return test_name(info.param.rule); });

// --- the relation ------------------------------------------------------------------

struct relation_case {
  const char* rule;
  const char* a;
  const char* b;
  relation expected;
};

class PatternRelation : public ::testing::TestWithParam<relation_case> {};

TEST_P(PatternRelation, HoldsBothWays) {
  const relation_case& c = GetParam();
  pattern a = parse_pattern(c.a);
  pattern b = parse_pattern(c.b);
  EXPECT_EQ(waypoint::compare(a, b), c.expected) << to_string(waypoint::compare(a, b));
  EXPECT_EQ(waypoint::compare(b, a), waypoint::inverse(c.expected));
}

using enum relation;
const relation_case relation_cases[] = {
    {"SameLiteralIsEquivalent", "/a", "/a", equivalent},
    {"WildcardNamesDoNotMatter", "/{x}", "/{y}", equivalent},
    {"RestNamesDoNotMatter", "GET /a/{x...}", "GET /a/{y...}", equivalent},
    {"TrailingSlashEqualsNamedRest", "/a/", "/a/{rest...}", equivalent},
    {"SameHostIsEquivalent", "h.com/a", "h.com/a", equivalent},
    {"EscapedAndPlainLiteralAreEquivalent", "/%61", "/a", equivalent},
    {"MethodBeatsAnyMethod", "GET /a", "/a", more_specific},
    {"HeadIsInsideGet", "HEAD /a", "GET /a", more_specific},
    {"PostIsNotInsideGet", "POST /a", "GET /a", disjoint},
    {"DifferentMethodsAreDisjoint", "PUT /a", "DELETE /a", disjoint},
    {"MethodsAreCaseSensitive", "get /a", "GET /a", disjoint},
    {"HostBeatsAnyHost", "h.com/a", "/a", more_specific},
    {"DifferentHostsAreDisjoint", "h1.com/a", "h2.com/a", disjoint},
    {"HostWithGeneralPathOverlapsAsSets", "h.com/", "/a", overlaps},
    {"LiteralInsideWildcard", "/a", "/{x}", more_specific},
    {"LiteralInsideRest", "/a", "/{x...}", more_specific},
    {"WildcardInsideRest", "/{x}", "/{y...}", more_specific},
    {"DeeperLiteralInsideWildcard", "/a/b", "/a/{x}", more_specific},
    {"CrossedWildcardsOverlap", "/a/{x}", "/{y}/b", overlaps},
    {"CrossedWildcardsWithDisjointTailAreDisjoint", "/a/{x}/c", "/{y}/b/d", disjoint},
    {"CrossedWildcardsWithSameTailOverlap", "/a/{x}/c", "/{y}/b/c", overlaps},
    {"DifferentLiteralsAreDisjoint", "/a", "/b", disjoint},
    {"DifferentLengthsWithoutRestAreDisjoint", "/a", "/a/b", disjoint},
    {"ExactPathAndTrailingSlashAreDisjoint", "/a", "/a/", disjoint},
    {"WildcardAndItsSubtreeAreDisjoint", "/a/{x}", "/a/{x}/", disjoint},
    {"SubtreeInsideSubtree", "/images/thumbnails/", "/images/", more_specific},
    {"RootContainsEverything", "/", "/a/b/c", more_general},
    {"RootContainsEnd", "/", "/{$}", more_general},
    {"NamedRootRestEqualsRoot", "/{x...}", "/", equivalent},
    {"EndInsideSubtree", "/a/{$}", "/a/", more_specific},
    {"EndInsideRest", "/a/{$}", "/a/{p...}", more_specific},
    {"EndIsDisjointFromWildcard", "/a/{$}", "/a/{x}", disjoint},
    {"EndIsDisjointFromLiteral", "/a/{$}", "/a/b", disjoint},
    {"EndAtRootIsDisjointFromLiteral", "/{$}", "/a", disjoint},
    {"EndsAtDifferentDepthsAreDisjoint", "/a/{$}", "/a/b/{$}", disjoint},
    {"DeeperEndInsideShallowRest", "/a/b/{$}", "/a/{x...}", more_specific},
    {"GetRootOverlapsIndexHtml", "GET /", "/index.html", overlaps},
    {"MethodAndPathBothMoreSpecific", "GET /a/b", "/a/{x}", more_specific},
    {"MethodMoreSpecificPathMoreGeneralOverlap", "GET /a/{x}", "/a/b", overlaps},
    {"HeadLiteralInsideGetWildcard", "HEAD /a/b", "GET /a/{x}", more_specific},
    {"HeadWildcardOverlapsGetLiteral", "HEAD /a/{x}", "GET /a/b", overlaps},
    {"HostMethodAndPathAllMoreSpecific", "GET h.com/a/b", "/a/{x}", more_specific},
    {"HostMoreSpecificPathMoreGeneralOverlap", "GET h.com/a/{x}", "/a/b", overlaps},
    {"DisjointMethodWinsOverPathOverlap", "POST h.com/a", "GET /{x}", disjoint},
    {"EscapedSlashLiteralInsideWildcard", "/a%2Fb", "/{x}", more_specific},
    {"EscapedSlashIsNotASeparator", "/a%2Fb", "/a/b", disjoint},
    {"EscapedSlashIsNotEnd", "/%2F", "/{$}", disjoint},
    {"RestAgainstWildcardLiteralOverlap", "/a/{x...}", "/{y}/b", overlaps},
    {"RestInsideShorterRest", "/a/b/{x...}", "/a/{y...}", more_specific},
    {"WildcardsInsideRestAtRoot", "/{a}/{b}", "/{c...}", more_specific},
    {"TwoLiteralsInsideTwoWildcards", "/a/b", "/{x}/{y}", more_specific},
    {"WildcardThenRestInsideRest", "/{x}/{y...}", "/{z...}", more_specific},
    {"WildcardThenRestVersusLiteralRest", "/{x}/", "/a/", more_general},
    {"SubtreeOfWildcardOverlapsLiteralThenWildcard", "/{x}/b/", "/a/{y}/", overlaps},
    {"SameShapeDifferentTailLiteral", "/{x}/b", "/{y}/c", disjoint},
    {"EndAfterWildcardInsideTrailingSlash", "/{x}/{$}", "/{y}/", more_specific},
    {"EndAfterWildcardVersusLiteralEnd", "/{x}/{$}", "/a/{$}", more_general},
    {"LongLiteralInsideTwoRests", "/a/b/c/d/e", "/a/{x...}", more_specific},
    {"RestDoesNotMatchItsOwnDirectory", "/a/b", "/a/b/{x...}", disjoint},
    {"GetAnyHostVersusHeadHost", "GET /a", "HEAD h.com/a", more_general},
    {"HeadAnyHostVersusGetHostOverlap", "HEAD /a", "GET h.com/a", overlaps},
    {"HostRestVersusHostlessEndOverlap", "h.com/a/", "/a/{$}", overlaps},
    {"HostEndInsideHostlessRest", "h.com/a/{$}", "/a/", more_specific},
    {"SameHostDifferentMethodsDisjoint", "GET h.com/a", "POST h.com/a", disjoint},
    {"WildcardEndVersusWildcardRestSameDepth", "/{x}/{$}", "/{y}/{z...}", more_specific},
    {"ThreeLiteralsVersusWildcardMiddle", "/a/b/c", "/a/{x}/c", more_specific},
    {"WildcardMiddleVersusWildcardEnds", "/a/{x}/c", "/{y}/b/{z}", overlaps},
    {"RestAtDepthTwoVersusWildcardDepthOne", "/a/{x...}", "/{y}", disjoint},
    {"RootRestVersusWildcard", "/", "/{y}", more_general},
    {"EscapedPercentLiteralDiffersFromPercent41", "/%2541", "/A", disjoint},
};

INSTANTIATE_TEST_SUITE_P(Relations, PatternRelation, ::testing::ValuesIn(relation_cases),
                         [](const auto& info) { return test_name(info.param.rule); });

TEST(Relation, CombineIsSymmetricAndEquivalentIsItsIdentity) {
  const relation all[] = {equivalent, more_specific, more_general, disjoint, overlaps};
  for (relation a : all) {
    EXPECT_EQ(waypoint::combine(equivalent, a), a);
    for (relation b : all) EXPECT_EQ(waypoint::combine(a, b), waypoint::combine(b, a));
  }
  EXPECT_EQ(waypoint::combine(more_specific, more_general), overlaps);
  EXPECT_EQ(waypoint::combine(overlaps, disjoint), disjoint);
}

// --- conflicts and precedence ------------------------------------------------------

struct conflict_case {
  const char* rule;
  const char* a;
  const char* b;
  bool conflict;
};

class PatternConflict : public ::testing::TestWithParam<conflict_case> {};

TEST_P(PatternConflict, FollowsGoRegistrationRule) {
  const conflict_case& c = GetParam();
  pattern a = parse_pattern(c.a);
  pattern b = parse_pattern(c.b);
  EXPECT_EQ(waypoint::conflicts(a, b), c.conflict);
  EXPECT_EQ(waypoint::conflicts(b, a), c.conflict);
  if (c.conflict) {
    // The example in a conflict message must be a path that both patterns match.
    std::string example = waypoint::example_path(a, b);
    std::string host(a.host());
    std::string method = a.method().empty() ? std::string(b.method().empty() ? "GET" : b.method())
                                            : std::string(a.method());
    EXPECT_TRUE(waypoint::detail::is_clean_path(example)) << example;
    EXPECT_TRUE(waypoint::matches(a, host, method, example)) << example;
    EXPECT_TRUE(waypoint::matches(b, host, method, example)) << example;
  }
}

const conflict_case conflict_cases[] = {
    {"EquivalentPatternsConflict", "/a", "/a", true},
    {"EquivalentWildcardsConflict", "GET /u/{id}", "GET /u/{name}", true},
    {"TrailingSlashAndNamedRestConflict", "/a/", "/a/{p...}", true},
    {"OverlappingPathsConflict", "/a/{x}", "/{y}/b", true},
    {"GetRootConflictsWithIndex", "GET /", "/index.html", true},
    {"MethodVersusPathConflict", "GET /a/{x}", "/a/b", true},
    {"HeadWildcardVersusGetLiteralConflict", "HEAD /a/{x}", "GET /a/b", true},
    {"SameHostOverlapConflicts", "h.com/a/{x}", "h.com/{y}/b", true},
    {"MoreSpecificDoesNotConflict", "/a/b", "/a/{x}", false},
    {"DisjointDoesNotConflict", "/a", "/b", false},
    {"DifferentMethodsDoNotConflict", "GET /a/{x}", "POST /{y}/b", false},
    {"HostExceptionOneHostWins", "h.com/a/{x}", "/{y}/b", false},
    {"HostExceptionEvenWhenEquivalentPath", "h.com/a", "/a", false},
    {"DifferentHostsNeverConflict", "h1.com/a", "h2.com/a", false},
    {"EndAndWildcardDoNotConflict", "/a/{$}", "/a/{x}", false},
    {"SubtreesNestDoNotConflict", "/images/", "/images/thumbnails/", false},
    {"DottedLiteralConflictExample", "GET /.../{x}", "GET /{y}/b", true},
    {"EscapedSlashLiteralConflictExample", "GET /a%2F.b/{x}", "GET /{y}/b", true},
};

INSTANTIATE_TEST_SUITE_P(Conflicts, PatternConflict, ::testing::ValuesIn(conflict_cases),
                         [](const auto& info) { return test_name(info.param.rule); });

TEST(Precedence, PatternWithHostWinsOverMoreSpecificHostlessPath) {
  EXPECT_TRUE(waypoint::precedes(parse_pattern("h.com/"), parse_pattern("GET /a/b")));
  EXPECT_FALSE(waypoint::precedes(parse_pattern("GET /a/b"), parse_pattern("h.com/")));
}

TEST(Precedence, MoreSpecificPatternPrecedes) {
  EXPECT_TRUE(waypoint::precedes(parse_pattern("/a/b"), parse_pattern("/a/{x}")));
  EXPECT_FALSE(waypoint::precedes(parse_pattern("/a/{x}"), parse_pattern("/a/b")));
}

TEST(Precedence, DescriptionNamesEachDimension) {
  EXPECT_EQ(waypoint::describe_precedence(parse_pattern("GET h.com/a/b"), parse_pattern("/a/{x}")),
            "it names the host \"h.com\"; method GET is more specific than any method; at segment "
            "2, literal \"b\" is more specific than wildcard {x}");
  EXPECT_EQ(waypoint::describe_precedence(parse_pattern("/a/{$}"), parse_pattern("/a/")),
            "at segment 2, {$} is more specific than a trailing slash");
}

// --- matches(): the grammar read directly ------------------------------------------

struct direct_case {
  const char* rule;
  const char* pattern;
  const char* method;
  const char* path;
  bool matched;
};

class PatternMatches : public ::testing::TestWithParam<direct_case> {};

TEST_P(PatternMatches, Directly) {
  const direct_case& c = GetParam();
  EXPECT_EQ(waypoint::matches(parse_pattern(c.pattern), "", c.method, c.path), c.matched);
}

const direct_case direct_cases[] = {
    {"WildcardNeedsNonEmptySegment", "/a/{x}", "GET", "/a/", false},
    {"WildcardTakesEscapedSlash", "/a/{x}", "GET", "/a/%2F", true},
    {"EndNeedsTrailingSlash", "/a/{$}", "GET", "/a", false},
    {"EndMatchesTrailingSlash", "/a/{$}", "GET", "/a/", true},
    {"EndNeverMatchesEscapedSlash", "/a/{$}", "GET", "/a/%2F", false},
    {"RestMatchesEmptyRemainder", "/a/{p...}", "GET", "/a/", true},
    {"RestNeedsTheSlash", "/a/{p...}", "GET", "/a", false},
    {"GetServesHead", "GET /a", "HEAD", "/a", true},
    {"HeadDoesNotServeGet", "HEAD /a", "GET", "/a", false},
    {"LiteralComparedDecoded", "/a%2Fb", "GET", "/a%2fb", true},
    {"LiteralIsCaseSensitive", "/a", "GET", "/A", false},
};

INSTANTIATE_TEST_SUITE_P(Direct, PatternMatches, ::testing::ValuesIn(direct_cases),
                         [](const auto& info) { return test_name(info.param.rule); });

// --- property: compare() agrees with brute force ------------------------------------

// Every request of a small universe: hosts, methods, and clean paths of up to four
// segments drawn from {a, b, c, %2F}, with and without a trailing slash. Patterns draw
// literals from {a, b, %2F} only, so a wildcard always matches something no literal does.
struct universe {
  struct request {
    std::string host, method, path;
  };
  std::vector<request> requests;

  universe() {
    std::vector<std::string> paths{"/"};
    std::vector<std::string> frontier{""};
    for (int depth = 0; depth < 4; ++depth) {
      std::vector<std::string> next;
      for (const auto& prefix : frontier)
        for (const char* seg : {"a", "b", "c", "%2F"}) {
          std::string p = prefix + "/" + seg;
          paths.push_back(p);
          paths.push_back(p + "/");
          next.push_back(p);
        }
      frontier = std::move(next);
    }
    for (const char* host : {"h1", "h2", "h3"})
      for (const char* method : {"GET", "HEAD", "POST", "PUT"})
        for (const auto& path : paths) requests.push_back({host, method, path});
  }
};

constexpr std::size_t universe_size = 3 * 4 * (1 + 2 * (4 + 16 + 64 + 256));
using request_set = std::bitset<universe_size>;

std::string random_pattern(std::mt19937& rng) {
  auto pick = [&](std::initializer_list<const char*> items) {
    std::uniform_int_distribution<std::size_t> d(0, items.size() - 1);
    return std::string(items.begin()[d(rng)]);
  };
  std::string text = pick({"", "", "GET ", "HEAD ", "POST "}) + pick({"", "", "h1", "h2"});
  int depth = std::uniform_int_distribution<int>(0, 3)(rng);
  int wildcard = 0;
  for (int i = 0; i < depth; ++i) {
    std::string seg = pick({"a", "b", "%2F", "{w}"});
    if (seg == "{w}") seg = "{w" + std::to_string(wildcard++) + "}";
    text += "/" + seg;
  }
  std::string tail = pick({"", "", "/", "/{r...}", "/{$}"});
  if (depth == 0 && tail.empty()) tail = "/";
  return text + tail;
}

TEST(RelationProperty, AgreesWithBruteForceOverRequestSets) {
  static const universe u;
  ASSERT_EQ(u.requests.size(), universe_size);
  std::mt19937 rng(20261130);
  std::vector<pattern> patterns;
  std::vector<request_set> sets;
  for (int i = 0; i < 160; ++i) {
    patterns.push_back(parse_pattern(random_pattern(rng)));
    request_set s;
    for (std::size_t r = 0; r < u.requests.size(); ++r) {
      const auto& q = u.requests[r];
      s[r] = waypoint::matches(patterns.back(), q.host, q.method, q.path);
    }
    ASSERT_TRUE(s.any()) << patterns.back().text() << " matches nothing";
    sets.push_back(s);
  }
  ASSERT_EQ(patterns.size(), 160u);  // the universe is the size the test was written for
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    for (std::size_t j = 0; j < patterns.size(); ++j) {
      const request_set& a = sets[i];
      const request_set& b = sets[j];
      relation expected = a == b            ? equivalent
                          : (a & b).none()  ? disjoint
                          : (a & ~b).none() ? more_specific
                          : (b & ~a).none() ? more_general
                                            : overlaps;
      ASSERT_EQ(waypoint::compare(patterns[i], patterns[j]), expected)
          << patterns[i].text() << " vs " << patterns[j].text();
    }
  }
}

}  // namespace
