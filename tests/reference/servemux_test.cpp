// Hand-written ServeMux cases, each run against BOTH the reference servemux and
// basic_router: every row states one rule of Go 1.22's ServeMux (or one of waypoint's
// documented departures) and the complete outcome it implies. A disagreement found by the
// differential test or a fuzzer becomes a row here once it is understood.
#include <waypoint/reference/outcome.hpp>
#include <waypoint/reference/servemux.hpp>
#include <waypoint/router.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "differential.hpp"

namespace {

using waypoint::pattern_errc;
using waypoint::testing::register_pattern;

struct match_row {
  const char* rule;  // the test name: what the row demonstrates
  std::vector<std::string> table;
  std::string method;
  std::string path;
  std::string host;
  std::string expected;  // outcome::to_string()
};

std::string long_path(std::size_t size) {
  std::string path = "/a";
  while (path.size() < size) path += path.size() + 1 < size ? "/a" : "/";
  return path.substr(0, size);
}

// Go's documented behaviour (net/http.ServeMux, Go 1.22) unless the rule says "Waypoint".
const match_row match_rows[] = {
    // Precedence: the most specific pattern wins, whatever the registration order.
    {"LiteralBeatsWildcard", {"/a/{x}", "/a/b"}, "GET", "/a/b", "", R"(match "/a/b")"},
    {"WildcardTakesOneSegment", {"/a/{x}", "/a/b"}, "GET", "/a/c", "", R"(match "/a/{x}" x="c")"},
    {"BacktracksFromLiteralToWildcard",
     {"/a/b/z", "/a/{x}/c"},
     "GET",
     "/a/b/c",
     "",
     R"(match "/a/{x}/c" x="b")"},
    {"MethodBeatsMethodless", {"/a", "GET /a"}, "GET", "/a", "", R"(match "GET /a")"},
    {"MethodlessServesOtherMethods", {"/a", "GET /a"}, "POST", "/a", "", R"(match "/a")"},
    {"GetServesHead", {"GET /a"}, "HEAD", "/a", "", R"(match "GET /a")"},
    {"HeadPatternBeatsGetForHead", {"GET /a", "HEAD /a"}, "HEAD", "/a", "", R"(match "HEAD /a")"},
    {"HostPatternBeatsHostless", {"/a", "h.com/a"}, "GET", "/a", "h.com", R"(match "h.com/a")"},
    {"HostPortIsIgnored", {"/a", "h.com/a"}, "GET", "/a", "h.com:8080", R"(match "h.com/a")"},
    {"HostPatternWinsEvenWhenMoreGeneralInPath",
     {"/a", "h.com/"},
     "GET",
     "/a",
     "h.com",
     R"(match "h.com/")"},
    {"OtherHostFallsBackToHostless", {"/a", "h.com/a"}, "GET", "/a", "k.org", R"(match "/a")"},
    {"HostMissFallsBackToHostless",
     {"h.com/a/b", "/a/{x}"},
     "GET",
     "/a/c",
     "h.com",
     R"(match "/a/{x}" x="c")"},

    // Wildcards, rest wildcards, {$} and trailing slashes.
    {"WildcardValueIsDecoded", {"/a/{x}"}, "GET", "/a/x%20y", "", R"(match "/a/{x}" x="x y")"},
    {"LiteralMatchesEscapedSpelling", {"/abc"}, "GET", "/%61bc", "", R"(match "/abc")"},
    {"EscapedSlashInLiteralIsOneSegment",
     {"/a%2Fb", "/{x}/b"},
     "GET",
     "/a%2Fb",
     "",
     R"(match "/a%2Fb")"},
    // Waypoint: a segment is "." or ".." by what it decodes to. Go cleans the escaped path
    // and hands the handler x="." or p="../../etc/passwd".
    {"WaypointEscapedDotIsCleanedLikeADot",
     {"/a/{x}"},
     "GET",
     "/a/%2e",
     "",
     R"(redirect 307 "/a")"},
    {"WaypointEscapedDotDotsInRestAreCleaned",
     {"/f/{p...}"},
     "GET",
     "/f/%2e%2e/%2e%2e/etc/passwd",
     "",
     R"(redirect 307 "/etc/passwd")"},
    {"WaypointMixedEscapedDotsAreCleaned",
     {"/f/{p...}"},
     "GET",
     "/f/a/.%2e/%2E./b/%2e/",
     "",
     R"(redirect 307 "/b/")"},
    {"WaypointEscapedSlashJoiningADotIsBadRequest",
     {"/f/{p...}"},
     "GET",
     "/f/a%2F..%2Fb",
     "",
     "400"},
    {"WaypointDotsInsideNamesAreData",
     {"/f/{p...}"},
     "GET",
     "/f/...%2Fa.%2e/.hidden",
     "",
     R"(match "/f/{p...}" p=".../a../.hidden")"},
    {"WaypointThreeEscapedDotsAreAName",
     {"/a/{x}"},
     "GET",
     "/a/%2e%2e%2e",
     "",
     R"(match "/a/{x}" x="...")"},
    {"RestTakesTheRemainderDecoded",
     {"/f/{p...}"},
     "GET",
     "/f/a/b%20c",
     "",
     R"(match "/f/{p...}" p="a/b c")"},
    {"RestTakesAnEmptyRemainder", {"/f/{p...}"}, "GET", "/f/", "", R"(match "/f/{p...}" p="")"},
    {"TrailingSlashMatchesTheSubtree",
     {"/images/"},
     "GET",
     "/images/x/y",
     "",
     R"(match "/images/")"},
    {"RootMatchesEverything", {"/"}, "DELETE", "/x/y", "", R"(match "/")"},
    {"EndMatchesTheTrailingSlash", {"/a/{$}"}, "GET", "/a/", "", R"(match "/a/{$}")"},
    {"EndDoesNotMatchASegment", {"/a/{$}"}, "GET", "/a/b", "", "404"},
    {"RootEndMatchesOnlyRoot", {"/{$}"}, "GET", "/x", "", "404"},
    {"EndBeatsTrailingSlash", {"/a/", "/a/{$}"}, "GET", "/a/", "", R"(match "/a/{$}")"},
    {"WildcardDoesNotMatchAnEmptySegment", {"/a/{x}"}, "GET", "/a/", "", "404"},
    {"WildcardDoesNotTakeATrailingSlash", {"/a/{x}"}, "GET", "/a/b/", "", "404"},
    // Waypoint: Go decodes "%2F" to "/" and takes it for the trailing slash.
    {"WaypointEscapedSlashIsDataForAWildcard",
     {"/a/{x}"},
     "GET",
     "/a/%2F",
     "",
     R"(match "/a/{x}" x="/")"},
    {"WaypointEscapedSlashIsNotTheEnd", {"/a/{$}"}, "GET", "/a/%2F", "", "404"},

    // Redirects: to the path plus '/' when only that matches exactly, then to the clean path.
    {"RedirectsToTrailingSlashPattern",
     {"/images/"},
     "GET",
     "/images",
     "",
     R"(redirect 307 "/images/")"},
    {"RedirectsToRestWithEmptyRemainder", {"/f/{p...}"}, "GET", "/f", "", R"(redirect 307 "/f/")"},
    {"RedirectsToEnd", {"/a/{$}"}, "GET", "/a", "", R"(redirect 307 "/a/")"},
    {"ExactMatchNeedsNoRedirect", {"/a", "/a/"}, "GET", "/a", "", R"(match "/a")"},
    {"InexactMatchYieldsToSlashRedirect", {"/", "/a/"}, "GET", "/a", "", R"(redirect 307 "/a/")"},
    {"RedirectHonoursHeadViaGet", {"GET /a/"}, "HEAD", "/a", "", R"(redirect 307 "/a/")"},
    {"RedirectOnlyForTheRequestMethod", {"GET /a/"}, "POST", "/a", "", R"(405 Allow: "GET, HEAD")"},
    {"UncleanPathRedirectsToCleanPath", {"/a/b"}, "GET", "/a//b", "", R"(redirect 307 "/a/b")"},
    {"DotSegmentsAreCleaned", {"/a/b"}, "GET", "/x/../a/./b", "", R"(redirect 307 "/a/b")"},
    {"DotDotStopsAtRoot", {"/a"}, "GET", "/../a", "", R"(redirect 307 "/a")"},
    {"UncleanPathRedirectsEvenWithoutRoute", {"/z"}, "GET", "/a//b", "", R"(redirect 307 "/a/b")"},
    {"SlashRedirectUsesTheCleanedPath", {"/a/b/"}, "GET", "/a//b", "", R"(redirect 307 "/a/b/")"},
    {"CleaningKeepsTheTrailingSlash", {"/a/"}, "GET", "/a//", "", R"(redirect 307 "/a/")"},

    // 404 and 405: Allow is every method that would match the path or the path plus '/',
    // on the request host or on any host, in byte order, GET implying HEAD.
    {"NoPatternIsNotFound", {"/a"}, "GET", "/b", "", "404"},
    {"AllowIsSortedAndHasHead",
     {"POST /a", "GET /a", "DELETE /a"},
     "PUT",
     "/a",
     "",
     R"(405 Allow: "DELETE, GET, HEAD, POST")"},
    {"AllowForUnknownMethod", {"GET /a"}, "BREW", "/a", "", R"(405 Allow: "GET, HEAD")"},
    {"HeadWithoutGetIsNotAllowed", {"POST /a"}, "HEAD", "/a", "", R"(405 Allow: "POST")"},
    {"AllowCountsThePathPlusSlash", {"POST /a/"}, "GET", "/a", "", R"(405 Allow: "POST")"},
    {"AllowJoinsHostAndHostless",
     {"POST h.com/a", "GET /a"},
     "PUT",
     "/a",
     "h.com",
     R"(405 Allow: "GET, HEAD, POST")"},
    {"AllowIgnoresOtherHosts",
     {"POST h.com/a", "GET /a"},
     "PUT",
     "/a",
     "k.org",
     R"(405 Allow: "GET, HEAD")"},

    // Waypoint: a path that is not a valid request path is a 400, never a match.
    {"WaypointInvalidEscapeIsBadRequest", {"/"}, "GET", "/a%zz", "", "400"},
    {"WaypointUnescapedByteIsBadRequest", {"/"}, "GET", "/a b", "", "400"},
    {"WaypointEmptyPathIsBadRequest", {"/"}, "GET", "", "", "400"},
    {"WaypointRelativePathIsBadRequest", {"/"}, "GET", "a", "", "400"},
    {"WaypointOverlongPathIsBadRequest",
     {"/"},
     "GET",
     long_path(waypoint::reference::max_path_length + 1),
     "",
     "400"},
    {"WaypointLongestPathIsAccepted",
     {"/"},
     "GET",
     long_path(waypoint::reference::max_path_length),
     "",
     R"(match "/")"},
};

template <class Mux>
std::string outcome_in(Mux& mux, const match_row& row) {
  int handler = 0;
  for (const auto& p : row.table) {
    std::string registered = register_pattern(mux, p, handler++);
    if (registered != "accepted") return "registering " + p + ": " + registered;
  }
  return waypoint::reference::outcome_of(mux.match(row.method, row.path, row.host)).to_string();
}

// Failures name the row's rule rather than dumping its bytes.
void PrintTo(const match_row& row, std::ostream* os) { *os << row.rule; }

class ServeMuxCase : public ::testing::TestWithParam<match_row> {};

TEST_P(ServeMuxCase, Reference) {
  waypoint::reference::servemux<int> mux;
  EXPECT_EQ(outcome_in(mux, GetParam()), GetParam().expected);
}

TEST_P(ServeMuxCase, Router) {
  waypoint::basic_router<int> router;
  EXPECT_EQ(outcome_in(router, GetParam()), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Rows, ServeMuxCase, ::testing::ValuesIn(match_rows),
                         [](const auto& info) { return std::string(info.param.rule); });

struct registration_row {
  const char* rule;
  std::vector<std::string> table;  // accepted first
  std::string added;
  std::string expected;  // "accepted", "conflict" or "pattern_error <code>"
};

std::string refused(pattern_errc code) {
  return "pattern_error " + std::to_string(static_cast<int>(code));
}

std::string too_many_wildcards() {
  std::string text;
  for (std::size_t i = 0; i <= waypoint::max_wildcards; ++i)
    text += "/{w" + std::to_string(i) + "}";
  return text;
}

const registration_row registration_rows[] = {
    {"MoreSpecificIsAccepted", {"/a/{x}"}, "/a/b", "accepted"},
    {"EquivalentWildcardsConflict", {"/a/{x}"}, "/a/{y}", "conflict"},
    {"EscapedLiteralIsEquivalent", {"/a"}, "/%61", "conflict"},
    {"SamePatternConflicts", {"GET /a"}, "GET /a", "conflict"},
    {"OverlapWithNeitherMoreSpecificConflicts", {"/{x}/b"}, "/a/{y}", "conflict"},
    {"MethodAndPathPullingApartConflict", {"GET /{x...}"}, "/a/", "conflict"},
    {"RestAndTrailingSlashAreEquivalent", {"/a/{x...}"}, "/a/", "conflict"},
    {"EndIsMoreSpecificThanTrailingSlash", {"/a/"}, "/a/{$}", "accepted"},
    {"GetAndHeadCoexist", {"GET /a"}, "HEAD /a", "accepted"},
    {"DifferentMethodsCoexist", {"GET /{x}"}, "POST /{x}", "accepted"},
    {"DifferentHostsNeverConflict", {"h.com/{x}/b"}, "/a/{y}", "accepted"},
    {"SameHostOverlapConflicts", {"h.com/{x}/b"}, "h.com/a/{y}", "conflict"},
    // Found by the differential test: the rest pattern is narrower at an earlier segment
    // than a route below its rest, so both match "/b/" and neither is more specific.
    {"RestNarrowerEarlierConflictsBelow", {"/{x}/{$}"}, "/b/", "conflict"},
    {"RestNarrowerEarlierConflictsWithMethod",
     {"DELETE /{x}/{y}/{z}"},
     "/{x}/a/{r...}",
     "conflict"},
    {"UnclosedBraceIsRefused", {}, "/a/{x", refused(pattern_errc::unclosed_brace)},
    {"UncleanPatternIsRefused", {}, "/a/../b", refused(pattern_errc::unclean_path)},
    // Waypoint: no request could reach these literals ("." and "..", "a/../b" decoded).
    {"WaypointEscapedDotLiteralIsRefused", {}, "/a/%2E%2E", refused(pattern_errc::unclean_path)},
    {"WaypointEscapedSlashJoiningADotLiteralIsRefused",
     {},
     "/a%2F..%2Fb",
     refused(pattern_errc::unclean_path)},
    {"WaypointTooManyWildcardsIsRefused",
     {},
     too_many_wildcards(),
     refused(pattern_errc::too_many_wildcards)},
};

template <class Mux>
std::string registration_in(Mux& mux, const registration_row& row) {
  int handler = 0;
  for (const auto& p : row.table) {
    std::string registered = register_pattern(mux, p, handler++);
    if (registered != "accepted") return "registering " + p + ": " + registered;
  }
  return register_pattern(mux, row.added, handler);
}

void PrintTo(const registration_row& row, std::ostream* os) { *os << row.rule; }

class ServeMuxRegistration : public ::testing::TestWithParam<registration_row> {};

TEST_P(ServeMuxRegistration, Reference) {
  waypoint::reference::servemux<int> mux;
  EXPECT_EQ(registration_in(mux, GetParam()), GetParam().expected);
}

TEST_P(ServeMuxRegistration, Router) {
  waypoint::basic_router<int> router;
  EXPECT_EQ(registration_in(router, GetParam()), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(Rows, ServeMuxRegistration, ::testing::ValuesIn(registration_rows),
                         [](const auto& info) { return std::string(info.param.rule); });

TEST(ServeMux, RedirectStatusIsConfigurable) {
  waypoint::reference::servemux<int> mux;
  mux.add("/a/", 1);
  mux.set_redirect_status(308);
  auto r = mux.match("GET", "/a");
  EXPECT_EQ(r.redirect_status, 308);
  EXPECT_EQ(r.location, "/a/");
}

TEST(ServeMux, JoinedDotSegmentSaysWhy) {
  waypoint::reference::servemux<int> mux;
  mux.add("/f/{p...}", 1);
  waypoint::basic_router<int> router;
  router.add("/f/{p...}", 1);
  router.freeze();
  EXPECT_EQ(mux.match("GET", "/f/..%2Fetc").error, waypoint::detail::path_dot_join_error);
  EXPECT_EQ(router.match("GET", "/f/..%2Fetc").error(), waypoint::detail::path_dot_join_error);
  // A path that is not valid besides is refused for that first.
  EXPECT_EQ(mux.match("GET", "/f/..%2F/a b").error, waypoint::detail::path_byte_error);
}

TEST(ServeMux, RejectsOtherRedirectStatuses) {
  waypoint::reference::servemux<int> mux;
  EXPECT_THROW(mux.set_redirect_status(302), std::invalid_argument);
}

TEST(ServeMux, ConflictNamesBothPatterns) {
  waypoint::reference::servemux<int> mux;
  mux.add("/{x}/b", 1);
  try {
    mux.add("/a/{y}", 2);
    FAIL() << "expected a conflict";
  } catch (const waypoint::conflict_error& e) {
    EXPECT_EQ(e.added(), "/a/{y}");
    EXPECT_EQ(e.existing(), "/{x}/b");
    EXPECT_EQ(e.example(), "/a/b");
  }
}

TEST(ServeMux, RoutesKeepRegistrationOrderAndHandlers) {
  waypoint::reference::servemux<int> mux;
  mux.add("/a", 10);
  const auto& second = mux.add("GET /b/{id}", 20);
  EXPECT_EQ(second.position, 1u);
  EXPECT_EQ(mux.size(), 2u);
  auto r = mux.match("GET", "/b/7");
  ASSERT_EQ(r.route, &second);
  EXPECT_EQ(r.route->handler, 20);
  ASSERT_EQ(r.values.size(), 1u);
  EXPECT_EQ(r.values[0], (std::pair<std::string, std::string>{"id", "7"}));
}

TEST(ServeMux, BadRequestSaysWhy) {
  waypoint::reference::servemux<int> mux;
  mux.add("/", 1);
  EXPECT_FALSE(mux.match("GET", "/a%zz").error.empty());
}

}  // namespace
