// Tests of waypoint/router.hpp: a ServeMux behaviour table over several route tables,
// registration errors, introspection, zero allocations on every outcome, and
// concurrent matching on a frozen router.
#include <waypoint/detail/escape.hpp>
#include <waypoint/router.hpp>

#include "alloc_counter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace {

using router_type = waypoint::basic_router<int>;
using waypoint::match_status;

// One line per outcome: "match <pattern> [name=value ...]", "404", "405 <Allow>",
// "<status> <location>" for a redirect, "400".
std::string describe(const router_type::match_result& m) {
  switch (m.status()) {
    case match_status::matched: {
      std::string out = "match " + std::string(m.route()->pattern.text());
      const auto& names = m.route()->pattern.wildcard_names();
      for (std::size_t i = 0; i < m.value_count(); ++i)
        out += " " + names[i] + "=" + std::string(m.value(i));
      return out;
    }
    case match_status::not_found:
      return "404";
    case match_status::method_not_allowed:
      return "405 " + m.allowed().to_string();
    case match_status::redirect:
      return std::to_string(m.redirect_status()) + " " + std::string(m.location_path());
    case match_status::bad_request:
      return "400";
  }
  return "?";
}

// `n` 'k's between `open` and `close`: enclosed('<', 2, '>') is "<kk>". Filled in place
// because "<" + std::string(n, 'k') + ">" trips a GCC 12 -Wrestrict false positive at -O3
// (the inlined insert of a one-character literal, https://gcc.gnu.org/PR105329).
std::string enclosed(char open, std::size_t n, char close) {
  std::string s(n + 2, 'k');
  s.front() = open;
  s.back() = close;
  return s;
}

// "M<i> /m": a route for the i-th custom method. Appended piece by piece for the same
// GCC 12 false positive as enclosed().
std::string custom_method_route(int i) {
  std::string route = "M";
  route.append(std::to_string(i)).append(" /m");
  return route;
}

router_type build(const std::vector<const char*>& patterns) {
  router_type r;
  int i = 0;
  for (const char* p : patterns) r.add(p, i++);
  r.freeze();
  return r;
}

const std::vector<const char*> api_table = {
    "GET /users/{id}",
    "GET /users/me",
    "POST /users",
    "GET /users",
    "DELETE /users/{id}",
    "/static/",
    "GET /static/logo.png",
    "GET /files/{path...}",
    "PUT /files/{path...}",
    "/images/",
    "/images/thumbnails/",
    "GET /exact/{$}",
    "GET /posts/{year}/{slug}",
    "GET /posts/latest/{slug}",
    "HEAD /head-only",
    "GET /both",
    "HEAD /both",
    "example.com/",
    "GET example.com/users/{id}",
    "api.example.com/v1/{rest...}",
    "/dir%2Fx/",
    "GET /a/b/c",
    "GET /a/{x}/d",
    "GET /m",
    "POST /m",
    "PUT /m",
    "CUSTOM /m",
    "/esc/a%2Fb",
    "/esc/a/b",
    "/esc/sp%20ace",
    "/esc/%25",
};

struct behaviour_case {
  const char* rule;
  const char* method;
  const char* path;
  const char* host;
  const char* expected;
};

class ServeMuxBehaviour : public ::testing::TestWithParam<behaviour_case> {};

TEST_P(ServeMuxBehaviour, OnApiTable) {
  static const router_type r = build(api_table);
  const behaviour_case& c = GetParam();
  EXPECT_EQ(describe(r.match(c.method, c.path, c.host)), c.expected);
}

const behaviour_case behaviour_cases[] = {
    // Literal over wildcard, whatever the registration order.
    {"WildcardCapturesSegment", "GET", "/users/42", "", "match GET /users/{id} id=42"},
    {"LiteralBeatsWildcard", "GET", "/users/me", "", "match GET /users/me"},
    {"GetServesHead", "HEAD", "/users/me", "", "match GET /users/me"},
    {"GetWildcardServesHead", "HEAD", "/users/7", "", "match GET /users/{id} id=7"},
    {"ExactMethodOnWildcard", "DELETE", "/users/42", "", "match DELETE /users/{id} id=42"},
    {"MethodNotAllowedListsSortedAllow", "POST", "/users/42", "", "405 DELETE, GET, HEAD"},
    {"AllowCollectsEveryMatchingPath", "PUT", "/users/me", "", "405 DELETE, GET, HEAD"},
    {"CollectionPost", "POST", "/users", "", "match POST /users"},
    {"CollectionGet", "GET", "/users", "", "match GET /users"},
    {"CollectionHeadViaGet", "HEAD", "/users", "", "match GET /users"},
    {"CollectionPatchNotAllowed", "PATCH", "/users", "", "405 GET, HEAD, POST"},
    {"WildcardNeverMatchesEmptySegment", "GET", "/users/", "", "404"},
    {"WildcardTakesEscapedSlashAsData", "GET", "/users/a%2Fb", "", "match GET /users/{id} id=a/b"},
    {"LoneEscapedSlashIsData", "GET", "/users/%2F", "", "match GET /users/{id} id=/"},
    {"ValuesAreDecoded", "GET", "/users/caf%C3%A9", "", "match GET /users/{id} id=caf\xC3\xA9"},
    {"EscapedPercentDecodesOnce", "GET", "/users/%2541", "", "match GET /users/{id} id=%41"},
    {"ExtraSegmentIsNotFound", "GET", "/users/42/", "", "404"},
    {"DeeperPathIsNotFound", "GET", "/users/42/x", "", "404"},
    {"LiteralsAreCaseSensitive", "GET", "/USERS/me", "", "404"},
    {"MethodsAreCaseSensitive", "get", "/users/1", "", "405 DELETE, GET, HEAD"},
    {"UnknownMethodGets405", "BREW", "/users/1", "", "405 DELETE, GET, HEAD"},
    // Subtrees and trailing slashes.
    {"SubtreeRedirectsBareDirectory", "GET", "/static", "", "307 /static/"},
    {"SubtreeMatchesDirectory", "GET", "/static/", "", "match /static/"},
    {"SubtreeMatchesDeepPath", "GET", "/static/css/site.css", "", "match /static/"},
    {"SpecificFileInSubtreeWins", "GET", "/static/logo.png", "", "match GET /static/logo.png"},
    {"MethodlessSubtreeServesOtherMethods", "POST", "/static/logo.png", "", "match /static/"},
    {"HeadReachesGetFileInSubtree", "HEAD", "/static/logo.png", "", "match GET /static/logo.png"},
    {"UnknownMethodReachesMethodlessRoute", "BREW", "/static/x", "", "match /static/"},
    {"NamedRestCapturesPath", "GET", "/files/a/b/c", "", "match GET /files/{path...} path=a/b/c"},
    {"NamedRestCapturesEmpty", "GET", "/files/", "", "match GET /files/{path...} path="},
    {"NamedRestDecodesEscapedSlash", "GET", "/files/a%2Fb", "",
     "match GET /files/{path...} path=a/b"},
    {"RestRedirectsBareDirectory", "GET", "/files", "", "307 /files/"},
    {"RestWithOtherMethod", "PUT", "/files/x", "", "match PUT /files/{path...} path=x"},
    {"RestMethodNotAllowed", "POST", "/files/x", "", "405 GET, HEAD, PUT"},
    {"AllowIncludesPathWithSlashAppended", "POST", "/files", "", "405 GET, HEAD, PUT"},
    {"RedirectToNestedSubtree", "GET", "/images/thumbnails", "", "307 /images/thumbnails/"},
    {"NestedSubtreeWins", "GET", "/images/thumbnails/x.png", "", "match /images/thumbnails/"},
    {"OuterSubtreeServesSiblings", "GET", "/images/x.png", "", "match /images/"},
    {"RedirectToOuterSubtree", "GET", "/images", "", "307 /images/"},
    {"EndMatchesTrailingSlash", "GET", "/exact/", "", "match GET /exact/{$}"},
    {"EndRedirectsWithoutSlash", "GET", "/exact", "", "307 /exact/"},
    {"EndDoesNotMatchDeeper", "GET", "/exact/x", "", "404"},
    {"EndServesHeadViaGet", "HEAD", "/exact/", "", "match GET /exact/{$}"},
    {"EndMethodNotAllowed", "POST", "/exact/", "", "405 GET, HEAD"},
    {"EndNeverMatchesEscapedSlash", "GET", "/exact/%2F", "", "404"},
    {"NoRedirectForOtherMethod", "POST", "/exact", "", "405 GET, HEAD"},
    // Several wildcards and backtracking.
    {"TwoWildcards", "GET", "/posts/2024/hello", "",
     "match GET /posts/{year}/{slug} year=2024 slug=hello"},
    {"LiteralThenWildcardBeatsTwoWildcards", "GET", "/posts/latest/hello", "",
     "match GET /posts/latest/{slug} slug=hello"},
    {"TooShortForTwoWildcards", "GET", "/posts/2024", "", "404"},
    {"BacktrackFromLiteralToWildcard", "GET", "/a/b/d", "", "match GET /a/{x}/d x=b"},
    {"DeepLiteralMatch", "GET", "/a/b/c", "", "match GET /a/b/c"},
    {"BacktrackingMissIsNotFound", "GET", "/a/b/f", "", "404"},
    // HEAD routes.
    {"HeadOnlyRoute", "HEAD", "/head-only", "", "match HEAD /head-only"},
    {"HeadOnlyRouteRefusesGet", "GET", "/head-only", "", "405 HEAD"},
    {"ExactHeadBeatsGet", "HEAD", "/both", "", "match HEAD /both"},
    {"GetStillServesGet", "GET", "/both", "", "match GET /both"},
    {"BothMethodsInAllow", "POST", "/both", "", "405 GET, HEAD"},
    // Methods.
    {"CustomMethodRoute", "CUSTOM", "/m", "", "match CUSTOM /m"},
    {"AllowInByteOrderWithCustom", "DELETE", "/m", "", "405 CUSTOM, GET, HEAD, POST, PUT"},
    {"PostOnSharedPath", "POST", "/m", "", "match POST /m"},
    // Hosts.
    {"HostRouteBeatsHostless", "GET", "/users/42", "example.com",
     "match GET example.com/users/{id} id=42"},
    {"HostRouteBeatsMoreSpecificHostless", "GET", "/users/me", "example.com",
     "match GET example.com/users/{id} id=me"},
    {"PortIsIgnored", "GET", "/anything", "example.com:8080", "match example.com/"},
    {"HostCatchAllServesAnyMethod", "POST", "/users", "example.com", "match example.com/"},
    {"OtherHostUsesHostless", "GET", "/users/me", "other.com", "match GET /users/me"},
    {"HostRestCaptures", "GET", "/v1/a/b", "api.example.com",
     "match api.example.com/v1/{rest...} rest=a/b"},
    {"HostWithoutMatchFallsBackToHostless", "GET", "/users/me", "api.example.com",
     "match GET /users/me"},
    {"HostRedirectsBareDirectory", "GET", "/v1", "api.example.com", "307 /v1/"},
    {"HostIsCaseSensitiveAsInGo", "GET", "/users/me", "EXAMPLE.COM", "match GET /users/me"},
    {"IPv6HostWithPort", "GET", "/users/me", "[::1]:8080", "match GET /users/me"},
    {"EmptyHostUsesHostless", "GET", "/users/1", "", "match GET /users/{id} id=1"},
    // Cleaning.
    {"DoubleSlashRedirectsToClean", "GET", "/users//42", "", "307 /users/42"},
    {"DotSegmentRedirectsToClean", "GET", "/users/./me", "", "307 /users/me"},
    {"DotDotSegmentRedirectsToClean", "GET", "/x/../users/me", "", "307 /users/me"},
    {"DotDotAboveRootStopsAtRoot", "GET", "/..", "", "307 /"},
    {"CleanRedirectEvenWhenCleanPathMisses", "GET", "/nothing//here", "", "307 /nothing/here"},
    {"CleanThenSlashRedirect", "GET", "/x/../static", "", "307 /static/"},
    {"CleanKeepsTrailingSlash", "GET", "/static//a/", "", "307 /static/a/"},
    {"CleanKeepsEscapesExactlyOnce", "GET", "/users/a%20b//", "", "307 /users/a%20b/"},
    {"EscapedDotDotIsCleanedLikeDotDot", "GET", "/users/%2e%2e", "", "307 /"},
    {"EscapedDotsClimbLikeDots", "GET", "/users/%2e%2e/me", "", "307 /me"},
    {"ProtocolRelativeNeverSurvivesCleaning", "GET", "//evil.example/..", "", "307 /"},
    {"LeadingDoubleSlashIsCleaned", "GET", "//evil.example", "", "307 /evil.example"},
    {"SlashRedirectKeepsEscapedSlash", "GET", "/dir%2Fx", "", "307 /dir%2Fx/"},
    {"EscapedSlashDirectoryMatches", "GET", "/dir%2Fx/y", "", "match /dir%2Fx/"},
    // Escaped literals.
    {"EscapedSlashLiteral", "GET", "/esc/a%2Fb", "", "match /esc/a%2Fb"},
    {"LowercaseEscapeMatchesLiteral", "GET", "/esc/a%2fb", "", "match /esc/a%2Fb"},
    {"RealSlashIsASeparator", "GET", "/esc/a/b", "", "match /esc/a/b"},
    {"EscapedSpaceLiteral", "GET", "/esc/sp%20ace", "", "match /esc/sp%20ace"},
    {"EscapedPercentLiteral", "GET", "/esc/%25", "", "match /esc/%25"},
    {"DoubleEscapedPercentIsOtherText", "GET", "/esc/%2525", "", "404"},
    {"UnescapedLetterMatchesEscapedLiteral", "GET", "/esc/%61%2Fb", "", "match /esc/a%2Fb"},
    // Invalid request paths.
    {"BackslashIsBadRequest", "GET", "/\\evil.example", "", "400"},
    {"InvalidEscapeIsBadRequest", "GET", "/users/4%zz", "", "400"},
    {"TruncatedEscapeIsBadRequest", "GET", "/users/%4", "", "400"},
    {"RelativePathIsBadRequest", "GET", "users/1", "", "400"},
    {"EmptyPathIsBadRequest", "GET", "", "", "400"},
    {"SpaceIsBadRequest", "GET", "/a b", "", "400"},
    {"CrLfIsBadRequest", "GET", "/a\r\nLocation: x", "", "400"},
    {"QueryIsNotPartOfThePath", "GET", "/users/1?x=1", "", "400"},
    {"NonAsciiByteIsBadRequest", "GET", "/caf\xC3\xA9", "", "400"},
    {"EscapedControlByteIsData", "GET", "/users/%0A", "", "match GET /users/{id} id=\n"},
    {"RootMissesWithoutCatchAll", "GET", "/", "", "404"},
};

INSTANTIATE_TEST_SUITE_P(Api, ServeMuxBehaviour, ::testing::ValuesIn(behaviour_cases),
                         [](const auto& info) { return std::string(info.param.rule); });

// Small tables for rules that need a particular set of routes.
struct table_case {
  const char* rule;
  std::vector<const char*> table;
  const char* method;
  const char* path;
  const char* host;
  const char* expected;
};

class ServeMuxTables : public ::testing::TestWithParam<table_case> {};

TEST_P(ServeMuxTables, Outcome) {
  const table_case& c = GetParam();
  router_type r = build(c.table);
  EXPECT_EQ(describe(r.match(c.method, c.path, c.host)), c.expected);
}

const table_case table_cases[] = {
    {"CatchAllServesEverything", {"/"}, "GET", "/x/y", "", "match /"},
    {"CatchAllServesRoot", {"/"}, "GET", "/", "", "match /"},
    {"IndexBeatsCatchAll", {"/", "/index.html"}, "GET", "/index.html", "", "match /index.html"},
    {"RootEndOnlyMatchesRoot", {"/{$}"}, "GET", "/x", "", "404"},
    {"RootEndMatchesRoot", {"/{$}", "/"}, "GET", "/", "", "match /{$}"},
    {"CatchAllAfterRootEnd", {"/{$}", "/"}, "GET", "/x", "", "match /"},
    {"SlashRedirectBeatsInexactCatchAll", {"/", "/a/"}, "GET", "/a", "", "307 /a/"},
    {"NoSlashRedirectForOtherMethod", {"/", "GET /a/"}, "POST", "/a", "", "match /"},
    {"CatchAllBeatsMethodSpecificSubtreeForOtherMethod",
     {"/", "GET /static/"},
     "POST",
     "/static/x",
     "",
     "match /"},
    {"ExactBeatsSubtree", {"/a", "/a/"}, "GET", "/a", "", "match /a"},
    {"SubtreeWithoutExact", {"/a", "/a/"}, "GET", "/a/", "", "match /a/"},
    {"SubtreeTakesDeeper", {"/a", "/a/"}, "GET", "/a/b", "", "match /a/"},
    {"EndBeatsRest", {"GET /b/{$}", "GET /b/{x...}"}, "GET", "/b/", "", "match GET /b/{$}"},
    {"RestTakesDeeper",
     {"GET /b/{$}", "GET /b/{x...}"},
     "GET",
     "/b/c",
     "",
     "match GET /b/{x...} x=c"},
    {"RedirectPrefersEnd", {"GET /b/{$}", "GET /b/{x...}"}, "GET", "/b", "", "307 /b/"},
    {"MethodOnlyUnderSlashIs405", {"POST /p/"}, "GET", "/p", "", "405 POST"},
    {"SameMethodUnderSlashRedirects", {"POST /p/"}, "POST", "/p", "", "307 /p/"},
    {"HostlessExactBeatsHostSlashRedirect", {"h.com/x/", "/x"}, "GET", "/x", "h.com", "match /x"},
    {"HostSubtreeServesDeeper", {"h.com/x/", "/x"}, "GET", "/x/y", "h.com", "match h.com/x/"},
    {"HostSlashRedirectWithoutHostlessMatch", {"h.com/x/"}, "GET", "/x", "h.com", "307 /x/"},
    {"OtherHostIgnoresHostRoutes", {"h.com/x/"}, "GET", "/x/y", "o.com", "404"},
    {"AllowMergesHostAndHostless",
     {"GET h.com/r", "POST /r"},
     "PUT",
     "/r",
     "h.com",
     "405 GET, HEAD, POST"},
    {"AllowIgnoresOtherHosts", {"GET h.com/r", "POST /r"}, "PUT", "/r", "o.com", "405 POST"},
    // A literal-only route is found by one probe of the whole path, without a walk; when
    // it does not serve the request, the walk decides as if the shortcut were not there.
    {"StaticServesItsMethod",
     {"GET /s/list", "GET /s/{x}"},
     "GET",
     "/s/list",
     "",
     "match GET /s/list"},
    {"StaticForOtherMethodFallsToWildcard",
     {"POST /s/list", "GET /s/{x}"},
     "GET",
     "/s/list",
     "",
     "match GET /s/{x} x=list"},
    {"StaticForOtherMethodIs405", {"POST /s/list"}, "GET", "/s/list", "", "405 POST"},
    {"StaticUnderEscapedFirstSegment", {"GET /st/a"}, "GET", "/s%74/a", "", "match GET /st/a"},
    {"StaticWithEscapedRestIsWalked", {"GET /st/a"}, "GET", "/st/%61", "", "match GET /st/a"},
    {"StaticEndsInSlash",
     {"GET /st/b/{$}", "GET /st/b/{r...}"},
     "GET",
     "/st/b/",
     "",
     "match GET /st/b/{$}"},
    {"StaticUnderHostWins",
     {"GET /st/a", "GET h.com/st/a"},
     "GET",
     "/st/a",
     "h.com:80",
     "match GET h.com/st/a"},
    {"StaticMissFallsToCatchAll", {"GET /st/a", "/"}, "GET", "/st/b", "", "match /"},
    {"StaticDeepMissIsNotFound", {"GET /st/a/b/c"}, "GET", "/st/a/b/c/d", "", "404"},
    // A subtree whose routes cannot reach the path's depth is skipped, never a match in it.
    {"ShallowLiteralSubtreeSkippedForWildcard",
     {"GET /a/b", "GET /{x}/y/z"},
     "GET",
     "/a/y/z",
     "",
     "match GET /{x}/y/z x=a"},
    {"RestBelowReachesAnyDepth",
     {"GET /a/b", "GET /a/{r...}"},
     "GET",
     "/a/b/c/d",
     "",
     "match GET /a/{r...} r=b/c/d"},
    {"DepthOfEndCountsForSlashRedirect", {"GET /a/b/{$}"}, "GET", "/a/b", "", "307 /a/b/"},
    {"DeepPathPastEveryRouteIsNotFound", {"GET /a/b", "POST /a/{x}"}, "GET", "/a/b/c", "", "404"},
    // A first segment no hostless literal route has skips the hostless tree's literals,
    // never its root wildcard or catch-all, the clean redirect, or a host's tree.
    {"UnknownFirstSegmentTakesRootWildcard",
     {"GET /{x}/a", "GET /b/c"},
     "GET",
     "/z/a",
     "",
     "match GET /{x}/a x=z"},
    {"UnknownFirstSegmentTakesCatchAll", {"GET /b/c", "/"}, "GET", "/z/a", "", "match /"},
    {"UnknownFirstSegmentStillRedirectsToClean", {"GET /a"}, "GET", "/zz//q", "", "307 /zz/q"},
    {"EscapedFirstSegmentIsKnownDecoded", {"GET /ab/c"}, "GET", "/%61b/c", "", "match GET /ab/c"},
    {"FirstSegmentOfHostRouteIsNotHostless", {"h.com/x/y"}, "GET", "/x/y", "", "404"},
    {"UnknownHostlessFirstSegmentWalksHostTree",
     {"h.com/x/y", "/a"},
     "GET",
     "/x/y",
     "h.com",
     "match h.com/x/y"},
    {"MethodlessWildcardAfterMethodLiteral",
     {"POST /a/b", "/a/{x}"},
     "GET",
     "/a/b",
     "",
     "match /a/{x} x=b"},
    {"MethodLiteralForItsMethod", {"POST /a/b", "/a/{x}"}, "POST", "/a/b", "", "match POST /a/b"},
    {"DisjointMethodsShareTree",
     {"GET /a/{x}", "POST /{y}/b"},
     "POST",
     "/a/b",
     "",
     "match POST /{y}/b y=a"},
    {"DisjointMethodsShareTreeGet",
     {"GET /a/{x}", "POST /{y}/b"},
     "GET",
     "/a/b",
     "",
     "match GET /a/{x} x=b"},
    {"DisjointMethodsShareTree405",
     {"GET /a/{x}", "POST /{y}/b"},
     "PUT",
     "/a/b",
     "",
     "405 GET, HEAD, POST"},
    {"HeadFallsBackToMethodlessAfterGet", {"GET /g", "/{x}"}, "HEAD", "/g", "", "match GET /g"},
    {"HeadPrefersExactHeadOverMethodless", {"HEAD /h", "/{x}"}, "HEAD", "/h", "", "match HEAD /h"},
    {"DeepBacktrackingAcrossThreeLevels",
     {"/a/b/c/d", "/a/{x}/c/e", "/a/{x}/{y}/f", "/{w}/b/c/g"},
     "GET",
     "/a/b/c/g",
     "",
     "match /{w}/b/c/g w=a"},
    {"ManyLiteralChildrenUseIndex",
     {"/k0", "/k1", "/k2", "/k3", "/k4", "/k5", "/k6", "/k7", "/k8", "/k9", "/k10"},
     "GET",
     "/k9",
     "",
     "match /k9"},
    {"ManyLiteralChildrenMiss",
     {"/k0", "/k1", "/k2", "/k3", "/k4", "/k5", "/k6", "/k7", "/k8", "/k9", "/k10"},
     "GET",
     "/k11",
     "",
     "404"},
    {"EscapedSegmentAgainstIndexedChildren",
     {"/k0", "/k1", "/k2", "/k3", "/k4", "/k5", "/k6", "/k7", "/k8", "/a/b", "/a%2Fb"},
     "GET",
     "/a%2Fb",
     "",
     "match /a%2Fb"},
    {"EmptyRouterIsNotFound", {}, "GET", "/", "", "404"},
    {"BacktrackToRootWildcard",
     {"GET /a/b/c", "GET /a/{x}/d", "GET /{y}/b/e"},
     "GET",
     "/a/b/e",
     "",
     "match GET /{y}/b/e y=a"},
    {"WildcardValueIsTheRightSegment",
     {"GET /a/b/c", "GET /a/{x}/d", "GET /{y}/b/e"},
     "GET",
     "/z/b/e",
     "",
     "match GET /{y}/b/e y=z"},
    {"HeadRedirectsLikeGet", {"GET /d/"}, "HEAD", "/d", "", "307 /d/"},
    {"HeadRestRedirectFromGetRoute", {"GET /d/{p...}"}, "HEAD", "/d", "", "307 /d/"},
    {"UnknownMethodRedirectsToMethodlessSubtree", {"/d/"}, "BREW", "/d", "", "307 /d/"},
    {"UnknownMethodOnMethodRoutesIs405", {"GET /d/"}, "BREW", "/d/x", "", "405 GET, HEAD"},
    {"PortOnlyHostUsesHostless", {"/a"}, "GET", "/a", ":8080", "match /a"},
    {"HostWithTooManyColonsIsKeptWhole", {"a:b:c/x", "/x"}, "GET", "/x", "a:b:c", "match a:b:c/x"},
    {"BracketedHostWithoutPortIsKept", {"[::1]/x"}, "GET", "/x", "[::1]", "match [::1]/x"},
    {"BracketedHostWithPortLosesBrackets",
     {"[::1]/x", "::1/y"},
     "GET",
     "/y",
     "[::1]:80",
     "match ::1/y"},
    {"RestValueKeepsInnerEscapes",
     {"/f/{p...}"},
     "GET",
     "/f/a%20b/c%2Fd",
     "",
     "match /f/{p...} p=a b/c/d"},
    {"EndOnlyAtItsDepth", {"/a/{$}", "/a/b/{$}"}, "GET", "/a/b/", "", "match /a/b/{$}"},
    {"EndRedirectFromDeeperPath", {"/a/{$}", "/a/b/{$}"}, "GET", "/a/b", "", "307 /a/b/"},
    {"CleanRedirectBeatsMissingMethod", {"POST /a"}, "GET", "/x/../a", "", "307 /a"},
    {"CleanThenSlashRedirectKeepsEscapes", {"/a%20b/"}, "GET", "/./a%20b", "", "307 /a%20b/"},
    {"WildcardThenEndRedirect", {"/u/{id}/{$}"}, "GET", "/u/7", "", "307 /u/7/"},
    {"WildcardThenEndMatch", {"/u/{id}/{$}"}, "GET", "/u/7/", "", "match /u/{id}/{$} id=7"},
    {"AllowFromEndChildOnSlashPath", {"PUT /u/{id}/{$}"}, "GET", "/u/7", "", "405 PUT"},
    {"NoRedirectWhenExactMatchExists", {"/a", "/a/"}, "POST", "/a", "", "match /a"},
};

INSTANTIATE_TEST_SUITE_P(Tables, ServeMuxTables, ::testing::ValuesIn(table_cases),
                         [](const auto& info) { return std::string(info.param.rule); });

TEST(Router, RedirectStatusIsConfigurable) {
  router_type r;
  r.add("/dir/", 0);
  r.set_redirect_status(308);
  EXPECT_EQ(describe(r.match("GET", "/dir")), "308 /dir/");
  r.set_redirect_status(301);
  EXPECT_EQ(describe(r.match("GET", "/dir//x")), "301 /dir/x");
  EXPECT_THROW(r.set_redirect_status(302), std::invalid_argument);
}

TEST(Router, ValuesByNameAndIndex) {
  router_type r = build({"GET /orgs/{org}/repos/{repo}/{path...}"});
  auto m = r.match("GET", "/orgs/acme/repos/wp%20x/src/a%2Fb.cpp");
  ASSERT_TRUE(m);
  EXPECT_EQ(m.value("org"), "acme");
  EXPECT_EQ(m.value("repo"), "wp x");
  EXPECT_EQ(m.value("path"), "src/a/b.cpp");
  EXPECT_EQ(m.value(1), "wp x");
  EXPECT_EQ(m.value("missing"), "");
  EXPECT_FALSE(m.has_value("missing"));
  EXPECT_EQ(m.route()->position, 0u);
}

TEST(Router, LongestPathsAreAccepted) {
  router_type r = build({"/{x...}"});
  std::string path = "/" + std::string(waypoint::max_path_length - 1, 'a');
  EXPECT_EQ(r.match("GET", path).status(), match_status::matched);
  path += 'a';
  EXPECT_EQ(r.match("GET", path).status(), match_status::bad_request);
}

// The static shortcut of a host's tree looks the path up in that tree's own table: no
// host + path key is built, so no length of host can outgrow the result's storage
// (under the asan preset an overflow would fail this test).
TEST(Router, LongHostWithLongestPathStaysWithinStorage) {
  std::string host(2 * waypoint::max_path_length, 'h');
  std::string path = "/" + std::string(waypoint::max_path_length - 1, 'a');
  router_type r = build({(host + path).c_str(), (host + "/x").c_str()});
  EXPECT_EQ(describe(r.match("GET", path, host)), "match " + host + path);
  EXPECT_EQ(describe(r.match("GET", "/x", host)), "match " + host + "/x");
  EXPECT_EQ(describe(r.match("GET", "/x", "other")), "404");
}

TEST(Router, LongEscapedPathDecodesWithinStorage) {
  router_type r = build({"/{x...}"});
  std::string path = "/";
  while (path.size() + 3 <= waypoint::max_path_length) path += "%41";
  auto m = r.match("GET", path);
  ASSERT_TRUE(m);
  EXPECT_EQ(m.value(0), std::string((path.size() - 1) / 3, 'A'));
}

// --- dot segments spelled with escapes ------------------------------------------------

// A segment that decodes to "." or ".." is a dot segment: it is cleaned and redirected
// exactly as the plain one. A segment whose %2F joins a dot piece is refused. So no value
// handed to a handler holds a "." or ".." segment once decoded.
const std::vector<const char*> registry_table = {
    "GET /v1/registry/{path...}",
    "GET /v1/users/{id}",
    "GET /v1/users/{id}/posts",
    "/v1/static/",
};

// describe(), with the reason of a bad_request.
std::string describe_with_reason(const router_type::match_result& m) {
  std::string out = describe(m);
  if (m.status() == match_status::bad_request) out += " " + std::string(m.error());
  return out;
}

const std::string dot_join = std::string("400 ") + waypoint::detail::path_dot_join_error;

struct dot_case {
  const char* rule;
  const char* path;
  std::string expected;
};

class EscapedDotSegments : public ::testing::TestWithParam<dot_case> {};

TEST_P(EscapedDotSegments, OnRegistryTable) {
  static const router_type r = build(registry_table);
  const dot_case& c = GetParam();
  EXPECT_EQ(describe_with_reason(r.match("GET", c.path)), c.expected);
}

const dot_case dot_cases[] = {
    // The finding: the rest wildcard was handed "../../etc/passwd".
    {"EscapedDotDotsInRestAreCleaned", "/v1/registry/%2e%2e/%2e%2e/etc/passwd", "307 /etc/passwd"},
    {"UppercaseEscapedDotDotIsCleaned", "/v1/registry/%2E%2E/etc/passwd", "307 /v1/etc/passwd"},
    {"DotThenEscapedDotIsCleaned", "/v1/registry/a/.%2e/b", "307 /v1/registry/b"},
    {"EscapedDotThenDotIsCleaned", "/v1/registry/a/%2e./b", "307 /v1/registry/b"},
    {"MixedCaseEscapedDotDotIsCleaned", "/v1/registry/a/%2E%2e/b", "307 /v1/registry/b"},
    {"EscapedDotIsCleaned", "/v1/registry/a/%2e/b", "307 /v1/registry/a/b"},
    {"UppercaseEscapedDotIsCleaned", "/v1/registry/a/%2E/b", "307 /v1/registry/a/b"},
    {"EscapedAndPlainDotsAreCleanedTogether", "/v1/registry/a/../b/%2e%2e/c/./d/%2e",
     "307 /v1/registry/c/d"},
    {"EscapedDotDotAtTheStartStopsAtRoot", "/%2e%2e/v1/users/7", "307 /v1/users/7"},
    {"EscapedDotAtTheStartIsCleaned", "/%2e/v1/users/7", "307 /v1/users/7"},
    {"EscapedDotDotInTheMiddleIsCleaned", "/v1/users/7/%2e%2e/8/posts", "307 /v1/users/8/posts"},
    {"EscapedDotDotAtTheEndIsCleaned", "/v1/users/7/%2e%2e", "307 /v1/users"},
    {"EscapedDotAtTheEndIsCleaned", "/v1/users/7/%2e", "307 /v1/users/7"},
    {"EscapedDotDotBeforeTrailingSlashKeepsIt", "/v1/users/7/%2e%2e/", "307 /v1/users/"},
    {"EscapedDotBeforeTrailingSlashKeepsIt", "/v1/static/%2e/", "307 /v1/static/"},
    {"EscapedDotDotInsideTheRestIsCleaned", "/v1/registry/library/%2e%2e/nginx",
     "307 /v1/registry/nginx"},
    {"EscapedDotDotClimbsOutOfTheRest", "/v1/registry/%2e%2e/users/7", "307 /v1/users/7"},
    {"EscapedDotDotInASingleWildcardIsCleaned", "/v1/users/%2e%2e/posts", "307 /v1/posts"},
    {"CleaningKeepsOtherEscapes", "/v1/registry/a%20b/%2e/c%2Fd", "307 /v1/registry/a%20b/c%2Fd"},
    {"CleaningThenTrailingSlashRedirect", "/v1/x/%2e%2e/static", "307 /v1/static/"},
    // An escaped slash that joins a dot piece cannot be cleaned: refused.
    {"EscapedSlashJoiningDotDotIsRefused", "/v1/registry/a%2F..%2Fb", dot_join},
    {"EscapedSlashBeforeDotDotIsRefused", "/v1/registry/%2F..", dot_join},
    {"DotDotBeforeEscapedSlashIsRefused", "/v1/registry/..%2Fetc/passwd", dot_join},
    {"DotBeforeEscapedSlashIsRefused", "/v1/users/.%2Fx", dot_join},
    {"LowercaseEscapedSlashJoiningEscapedDotsIsRefused",
     "/v1/registry/%2e%2e%2f%2e%2e%2fetc%2fpasswd", dot_join},
    {"JoinedDotIsRefusedEvenInAnUncleanPath", "/v1/registry/../a%2F..", dot_join},
    {"JoinedDotIsRefusedAtTheEndWithTrailingSlash", "/v1/registry/a%2F../", dot_join},
    {"InvalidByteIsNamedBeforeAJoinedDot", "/v1/registry/..%2F/a b",
     std::string("400 ") + waypoint::detail::path_byte_error},
    // Values that merely contain dots are names, not dot segments.
    {"DotsInsideANameAreKept", "/v1/users/a..b", "match GET /v1/users/{id} id=a..b"},
    {"ThreeDotsAreAName", "/v1/users/...", "match GET /v1/users/{id} id=..."},
    {"ThreeEscapedDotsAreAName", "/v1/users/%2e%2e%2e", "match GET /v1/users/{id} id=..."},
    {"HiddenFileIsAName", "/v1/registry/.hidden/x",
     "match GET /v1/registry/{path...} path=.hidden/x"},
    {"NameThenEscapedDotIsAName", "/v1/users/a.%2e", "match GET /v1/users/{id} id=a.."},
    {"EscapedSlashNextToThreeDotsIsData", "/v1/registry/...%2Fa",
     "match GET /v1/registry/{path...} path=.../a"},
    {"EscapedSlashNextToHiddenFileIsData", "/v1/registry/a%2F.hidden",
     "match GET /v1/registry/{path...} path=a/.hidden"},
    {"LoneEscapedSlashIsStillData", "/v1/users/%2F", "match GET /v1/users/{id} id=/"},
};

INSTANTIATE_TEST_SUITE_P(Registry, EscapedDotSegments, ::testing::ValuesIn(dot_cases),
                         [](const auto& info) { return std::string(info.param.rule); });

// Each spelling of a dot segment gets exactly the outcome of the plain one, wherever it is.
TEST(EscapedDotSegments, AreAnsweredAsThePlainDotSegment) {
  router_type r = build(registry_table);
  const std::pair<const char*, std::vector<const char*>> spellings[] = {
      {".", {"%2e", "%2E"}},
      {"..", {"%2e%2e", "%2E%2E", ".%2e", "%2e.", "%2E.", ".%2E", "%2e%2E"}},
  };
  const char* paths[] = {"/D/v1/users/7",       "/v1/D/users/7",      "/v1/users/7/D",
                         "/v1/users/7/D/",      "/v1/registry/a/D/b", "/v1/registry/D",
                         "/v1/registry/a/b/D/", "/v1/static/D/x",     "/D"};
  for (const auto& [plain, escaped] : spellings) {
    for (std::string path : paths) {
      std::size_t at = path.find('D');
      std::string expected = describe(r.match("GET", path.replace(at, 1, plain)));
      for (const char* spelling : escaped) {
        std::string other = path;
        other.replace(at, std::string_view(plain).size(), spelling);
        EXPECT_EQ(describe(r.match("GET", other)), expected) << other;
      }
    }
  }
}

// Split on '/', no decoded value holds a "." or ".." piece: every path of up to three
// segments over spellings of dots, escaped slashes and names, under a single wildcard and
// under a rest wildcard.
TEST(EscapedDotSegments, NoMatchedValueHoldsADotSegment) {
  router_type r = build(registry_table);
  const char* pieces[] = {"a",   ".",     "..",  "%2e",    "%2E%2e", ".%2e",   "%2e.",
                          "...", "a.%2e", "%2F", "a%2F..", "..%2F",  "%2F%2e", ".hidden"};
  std::vector<std::string> tails{""};
  for (int depth = 0; depth < 3; ++depth) {
    std::vector<std::string> next;
    for (const std::string& tail : tails)
      for (const char* piece : pieces) next.push_back(tail + "/" + piece);
    tails.insert(tails.end(), next.begin(), next.end());
  }
  std::size_t matched = 0;
  for (const char* base : {"/v1/registry", "/v1/users"}) {
    for (const std::string& tail : tails) {
      std::string path = base + tail;
      auto m = r.match("GET", path);
      if (!m) continue;
      ++matched;
      for (std::size_t i = 0; i < m.value_count(); ++i) {
        std::string value = "/" + std::string(m.value(i));
        for (std::size_t start = 1; start <= value.size();) {
          std::size_t end = std::min(value.find('/', start), value.size());
          std::string_view piece = std::string_view(value).substr(start, end - start);
          EXPECT_TRUE(piece != "." && piece != "..") << path << " gives " << m.value(i);
          start = end + 1;
        }
      }
    }
  }
  EXPECT_GT(matched, 100u);
}

// --- the one-pass path scan ---------------------------------------------------------

// scan_path must give the answers of the plain path_error, joins_dot_segment and
// is_clean_path, count one segment per '/' and map the first 64 of them.
void expect_scan_agrees(const std::string& path, std::size_t& checked) {
  waypoint::detail::path_scan scan = waypoint::detail::scan_path(path);
  waypoint::detail::path_scan bytes = waypoint::detail::scan_path_bytes(path);
  const char* error = waypoint::detail::path_error(path);
  if (!error && waypoint::detail::joins_dot_segment(path))
    error = waypoint::detail::path_dot_join_error;
  ASSERT_EQ(scan.error == nullptr, error == nullptr) << path;
  ASSERT_EQ(bytes.error == nullptr, error == nullptr) << path;
  if (error) {
    EXPECT_STREQ(scan.error, error) << path;
    EXPECT_STREQ(bytes.error, error) << path;
    return;
  }
  bool clean = waypoint::detail::is_clean_path(path);
  bool escaped = path.find('%') != std::string::npos;
  auto segments = static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
  EXPECT_EQ(scan.clean, clean) << path;
  EXPECT_EQ(bytes.clean, clean) << path;
  EXPECT_EQ(scan.escaped, escaped) << path;
  EXPECT_EQ(bytes.escaped, escaped) << path;
  EXPECT_EQ(scan.segments, segments) << path;
  EXPECT_EQ(bytes.segments, segments) << path;
  EXPECT_EQ(scan.slashes, waypoint::detail::slash_map(path)) << path;
  EXPECT_EQ(bytes.slashes, waypoint::detail::slash_map(path)) << path;
  ++checked;
}

// Every string of up to `longest` bytes over `alphabet`.
std::vector<std::string> strings_over(const std::string& alphabet, std::size_t longest) {
  std::vector<std::string> out{""};
  for (std::size_t begin = 0, length = 1; length <= longest; ++length) {
    std::size_t end = out.size();
    for (std::size_t i = begin; i < end; ++i)
      for (char c : alphabet) out.push_back(out[i] + c);
    begin = end;
  }
  return out;
}

// Each tail alone and shifted so that it straddles the boundaries of the 16-byte blocks
// the vector scan reads.
std::size_t expect_scan_agrees_after_prefixes(const std::vector<std::string>& tails) {
  std::size_t checked = 0;
  for (const std::string& prefix : {std::string("/"), "/" + std::string(6, 'b'),
                                    "/" + std::string(12, 'b'), "/" + std::string(14, 'b') + "/",
                                    "/b/" + std::string(27, 'c'), "/b/" + std::string(58, 'c')})
    for (const std::string& tail : tails) expect_scan_agrees(prefix + tail, checked);
  return checked;
}

// Every path of up to six bytes over an alphabet that reaches each branch of the scan
// (plain, '/', '.', '%', hex digits, a byte that must be escaped).
TEST(PathScan, AgreesWithPlainValidationAndCleaning) {
  EXPECT_GT(expect_scan_agrees_after_prefixes(strings_over("a/.%2F ", 6)), 6 * 1000u);
}

// The escaped dot and slash in both cases, next to plain dots and slashes: every way of
// spelling a dot segment, or joining one to an escaped slash, in up to six bytes.
TEST(PathScan, AgreesOnEscapedDotsAndSlashes) {
  EXPECT_GT(expect_scan_agrees_after_prefixes(strings_over("/.%2eEf", 6)), 6 * 1000u);
}

// The plain oracles on the spellings the rules are about.
struct dot_segment_case {
  const char* rule;
  const char* segment;
  std::size_t dots;  // dot_segment_length
  bool joins;        // escaped_slash_joins_dot
};

class DotSegment : public ::testing::TestWithParam<dot_segment_case> {};

TEST_P(DotSegment, IsKnownByWhatItDecodesTo) {
  const dot_segment_case& c = GetParam();
  EXPECT_EQ(waypoint::detail::dot_segment_length(c.segment), c.dots);
  EXPECT_EQ(waypoint::detail::escaped_slash_joins_dot(c.segment), c.joins);
}

const dot_segment_case dot_segment_cases[] = {
    {"PlainDot", ".", 1, false},
    {"PlainDotDot", "..", 2, false},
    {"EscapedDot", "%2e", 1, false},
    {"UppercaseEscapedDot", "%2E", 1, false},
    {"EscapedDotDot", "%2e%2e", 2, false},
    {"UppercaseEscapedDotDot", "%2E%2E", 2, false},
    {"DotThenEscapedDot", ".%2e", 2, false},
    {"EscapedDotThenDot", "%2e.", 2, false},
    {"ThreeDotsAreAName", "...", 0, false},
    {"ThreeEscapedDotsAreAName", "%2e%2e%2e", 0, false},
    {"DotsInsideANameAreAName", "a..b", 0, false},
    {"HiddenFileIsAName", ".hidden", 0, false},
    {"NameThenEscapedDotIsAName", "a.%2e", 0, false},
    {"EscapedOtherByteIsNotADot", "%2d", 0, false},
    {"EmptyIsNotADotSegment", "", 0, false},
    {"EscapedSlashJoinsDotDotBetweenNames", "a%2F..%2Fb", 0, true},
    {"EscapedSlashBeforeDotDot", "%2F..", 0, true},
    {"DotDotBeforeEscapedSlash", "..%2F", 0, true},
    {"DotBeforeEscapedSlash", ".%2Fx", 0, true},
    {"LowercaseEscapedSlashJoinsEscapedDots", "a%2f%2e%2e", 0, true},
    {"EscapedSlashAloneJoinsNothing", "%2F", 0, false},
    {"EscapedSlashBetweenNamesJoinsNothing", "a%2Fb", 0, false},
    {"EscapedSlashNextToThreeDotsJoinsNothing", "...%2Fa", 0, false},
    {"EscapedSlashNextToHiddenFileJoinsNothing", "a%2F.hidden", 0, false},
};

INSTANTIATE_TEST_SUITE_P(Spellings, DotSegment, ::testing::ValuesIn(dot_segment_cases),
                         [](const auto& info) { return std::string(info.param.rule); });

#if defined(__SSE2__)
// The vector classes are the byte table's: a too-strict class would only send every path
// to the byte scan, which the agreement tests above cannot see.
TEST(PathScan, BlockClassesAreTheByteClasses) {
  for (int c = 0; c < 256; ++c) {
    waypoint::detail::path_block b =
        waypoint::detail::classify_path_block(_mm_set1_epi8(static_cast<char>(c)));
    unsigned char cls = waypoint::detail::path_class_table[static_cast<std::size_t>(c)];
    EXPECT_EQ(b.invalid, cls == 0 ? 0xFFFFu : 0u) << c;
    EXPECT_EQ(b.slash, cls == 2 ? 0xFFFFu : 0u) << c;
    EXPECT_EQ(b.percent, cls == 3 ? 0xFFFFu : 0u) << c;
    EXPECT_EQ(b.dot, cls == 4 ? 0xFFFFu : 0u) << c;
  }
}
#endif

// Every byte value at every position of a path two blocks long, so each is classified in
// each lane of the vector scan.
TEST(PathScan, ClassifiesEveryByteInEveryLane) {
  std::size_t checked = 0;
  for (std::size_t at = 1; at < 34; ++at)
    for (int c = 0; c < 256; ++c) {
      std::string path = "/" + std::string(33, 'x');
      path[at] = static_cast<char>(c);
      expect_scan_agrees(path, checked);
    }
  EXPECT_GT(checked, 33 * 70u);  // the path bytes, '/', '.' (as a file-name dot)
}

// --- literal lookup helpers ---------------------------------------------------------

// same_segment reads words that overlap; it must still answer like ==, for a difference
// at any position of any length, and segment_hash must see only the segment's own bytes.
TEST(LiteralLookup, SameSegmentAndHashSeeEveryByteAndNoOther) {
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string buffer = enclosed('<', n, '>');  // neighbours that differ
    std::string other = enclosed('[', n, ']');
    std::string_view a(buffer.data() + 1, n);
    std::string_view b(other.data() + 1, n);
    EXPECT_TRUE(waypoint::detail::same_segment(a, b)) << n;
    EXPECT_EQ(waypoint::detail::segment_hash(a), waypoint::detail::segment_hash(b)) << n;
    EXPECT_EQ(waypoint::detail::segment_fingerprint(a), waypoint::detail::segment_fingerprint(b))
        << n;
    for (std::size_t i = 0; i < n; ++i) {
      other[i + 1] = 'j';
      EXPECT_FALSE(waypoint::detail::same_segment(a, b)) << n << " differs at " << i;
      other[i + 1] = 'k';
    }
    if (n > 0) {
      std::string_view shorter(other.data() + 1, n - 1);
      EXPECT_FALSE(waypoint::detail::same_segment(a, shorter)) << n;
    }
  }
}

// The filter may let an unknown segment through, but never stops one it was given.
TEST(LiteralLookup, SegmentFilterHasNoFalseNegatives) {
  waypoint::detail::segment_filter filter;
  std::vector<std::string> added;
  for (int i = 0; i < 200; ++i) added.push_back("seg" + std::to_string(i * 7919));
  for (const std::string& s : added) filter.add(waypoint::detail::segment_fingerprint(s));
  for (const std::string& s : added)
    EXPECT_TRUE(filter.may_contain(waypoint::detail::segment_fingerprint(s))) << s;
  int passed = 0;
  for (int i = 0; i < 1000; ++i)
    passed +=
        filter.may_contain(waypoint::detail::segment_fingerprint("other" + std::to_string(i)));
  // 200 segments set at most 200 of the 512 bits: about a third of the others pass.
  EXPECT_LT(passed, 500);
}

// --- registration ------------------------------------------------------------------

TEST(Registration, ConflictNamesBothPatternsSitesAndExample) {
  router_type r;
  r.add("/a/{x}", 0);
  try {
    r.add("/{y}/b", 1);
    FAIL() << "conflict accepted";
  } catch (const waypoint::conflict_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("\"/{y}/b\""), std::string::npos) << what;
    EXPECT_NE(what.find("\"/a/{x}\""), std::string::npos) << what;
    EXPECT_NE(what.find("router_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("\"/a/b\""), std::string::npos) << what;
    EXPECT_EQ(e.example(), "/a/b");
    EXPECT_FALSE(e.equivalent());
  }
}

TEST(Registration, DuplicateIsRejectedAsEquivalent) {
  router_type r;
  r.add("GET /a/{x}", 0);
  try {
    r.add("GET /a/{y}", 1);
    FAIL() << "duplicate accepted";
  } catch (const waypoint::conflict_error& e) {
    EXPECT_TRUE(e.equivalent());
    EXPECT_NE(std::string(e.what()).find("matches the same requests as"), std::string::npos);
  }
}

struct registration_case {
  const char* rule;
  std::vector<const char*> existing;
  const char* added;
  bool accepted;
};

class RegistrationRule : public ::testing::TestWithParam<registration_case> {};

TEST_P(RegistrationRule, AcceptsOrRejects) {
  const registration_case& c = GetParam();
  router_type r;
  for (const char* p : c.existing) r.add(p, 0);
  bool accepted = true;
  try {
    r.add(c.added, 1);
  } catch (const waypoint::conflict_error&) {
    accepted = false;
  }
  EXPECT_EQ(accepted, c.accepted);
}

const registration_case registration_cases[] = {
    {"RestAfterDeeperMethodlessRouteConflictsForMethod", {"/a/b"}, "GET /a/", false},
    {"RestAfterDeeperSameMethodRouteIsMoreGeneral", {"GET /a/b"}, "GET /a/", true},
    {"HeadRestAfterDeeperGetConflicts", {"GET /a/b/c"}, "HEAD /a/{x...}", false},
    {"MethodlessRestAfterDeeperMethodRoute", {"GET /a/b"}, "/a/", true},
    {"DeeperMethodlessAfterMethodRestConflicts", {"GET /a/"}, "/a/b", false},
    {"WildcardAfterManyLiteralsChecksEach",
     {"/k0/x", "/k1/x", "/k2/x", "/k3/x", "/k4/x", "/k5/x", "/k6/x", "/k7/x", "/k8/y", "GET /k9/z"},
     "GET /{k}/y",
     false},
    {"WildcardAfterManyLiteralsWithoutOverlap",
     {"/k0/x", "/k1/x", "/k2/x", "/k3/x", "/k4/x", "/k5/x", "/k6/x", "/k7/x", "/k8/y"},
     "/{k}/z",
     true},
    {"EndAgainstRestAtSameDepth", {"GET /a/"}, "/a/{$}", false},
    {"EndAgainstSameMethodRest", {"GET /a/"}, "GET /a/{$}", true},
    {"HostRoutesDoNotConflictWithHostless", {"/a/{x}"}, "h.com/{y}/b", true},
    {"SameHostRoutesConflict", {"h.com/a/{x}"}, "h.com/{y}/b", false},
    {"RootCatchAllAfterEverything", {"GET /a", "POST /b/{x}", "/c/"}, "/", true},
    {"GetRootAfterMethodlessPage", {"/index.html"}, "GET /", false},
    {"RestNarrowerAtEarlierSegmentConflicts", {"/{y}/b"}, "/a/{r...}", false},
    {"MethodRestNarrowerAtEarlierSegmentConflicts", {"GET /{y}/b"}, "GET /a/", false},
    {"DeepRestNarrowerAtEarlierSegmentConflicts", {"POST /a/{x}/b/"}, "POST /{x}/b/", false},
    {"RestNarrowerButDisjointMethodIsAccepted", {"GET /{y}/b"}, "POST /a/", true},
};

INSTANTIATE_TEST_SUITE_P(Rules, RegistrationRule, ::testing::ValuesIn(registration_cases),
                         [](const auto& info) { return std::string(info.param.rule); });

TEST(Registration, ParseErrorsPropagate) {
  router_type r;
  EXPECT_THROW(r.add("/b_{bucket}", 0), waypoint::pattern_error);
  EXPECT_EQ(r.size(), 0u);
}

TEST(Registration, TooManyWildcardsIsAPatternError) {
  std::string p;
  for (std::size_t i = 0; i <= waypoint::max_wildcards; ++i) p += "/{w" + std::to_string(i) + "}";
  router_type r;
  try {
    r.add(p, 0);
    FAIL();
  } catch (const waypoint::pattern_error& e) {
    EXPECT_EQ(e.code(), waypoint::pattern_errc::too_many_wildcards);
  }
}

TEST(Registration, MoreThanSixtyFourMethodsIsALengthError) {
  router_type r;
  // Nine methods are known from the start; 55 custom ones fill the 64-bit method mask.
  for (int i = 0; i < 55; ++i) r.add(custom_method_route(i), i);
  EXPECT_THROW(r.add("M55 /m", 55), std::length_error);
  EXPECT_EQ(describe(r.match("M54", "/m")), "match M54 /m");
  EXPECT_EQ(r.match("GET", "/m").allowed().to_string().substr(0, 11), "M0, M1, M10");
}

TEST(Registration, AddAfterFreezeIsALogicError) {
  router_type r;
  r.freeze();
  EXPECT_THROW(r.add("/a", 0), std::logic_error);
}

TEST(Registration, RejectedRouteLeavesRouterUnchanged) {
  router_type r = [] {
    router_type t;
    t.add("/a/{x}", 0);
    EXPECT_THROW(t.add("/{y}/b", 1), waypoint::conflict_error);
    return t;
  }();
  EXPECT_EQ(r.size(), 1u);
  EXPECT_EQ(describe(r.match("GET", "/c/b")), "404");
}

// --- introspection -----------------------------------------------------------------

TEST(Introspection, RoutesByPrecedenceHasMoreSpecificFirst) {
  router_type r = build({"/", "/images/", "GET /images/logo.png", "/images/thumbnails/", "h.com/",
                         "GET /a/{x}", "HEAD /a/{x}", "HEAD /a/b"});
  std::vector<std::string> order;
  for (const auto* route : r.routes_by_precedence()) order.emplace_back(route->pattern.text());
  auto before = [&](const char* a, const char* b) {
    return std::find(order.begin(), order.end(), a) < std::find(order.begin(), order.end(), b);
  };
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(order.front(), "h.com/");
  EXPECT_EQ(order.back(), "/");
  EXPECT_TRUE(before("GET /images/logo.png", "/images/"));
  EXPECT_TRUE(before("/images/thumbnails/", "/images/"));
  EXPECT_TRUE(before("HEAD /a/{x}", "GET /a/{x}"));
  EXPECT_TRUE(before("HEAD /a/b", "HEAD /a/{x}"));
}

TEST(Introspection, ExplainListsWinnerThenLosersWithReasons) {
  router_type r = build({"/", "/images/", "GET /images/{name}", "GET /images/logo.png"});
  auto e = r.explain("GET", "/images/logo.png");
  EXPECT_EQ(e.status, match_status::matched);
  ASSERT_EQ(e.candidates.size(), 4u);
  EXPECT_EQ(e.candidates[0].route->pattern.text(), "GET /images/logo.png");
  EXPECT_TRUE(e.candidates[0].winner);
  EXPECT_EQ(e.candidates[1].route->pattern.text(), "GET /images/{name}");
  EXPECT_EQ(e.candidates[1].reason,
            "at segment 2, literal \"logo.png\" is more specific than wildcard {name}");
  EXPECT_EQ(e.candidates[3].route->pattern.text(), "/");
  EXPECT_NE(e.candidates[3].reason.find("method GET is more specific than any method"),
            std::string::npos);
}

TEST(Introspection, ExplainReportsOutcomeWithoutWinner) {
  router_type r = build({"GET /a"});
  auto e = r.explain("POST", "/a");
  EXPECT_EQ(e.status, match_status::method_not_allowed);
  EXPECT_EQ(e.allow, "GET, HEAD");
  EXPECT_TRUE(e.candidates.empty());
}

// --- methods at a path --------------------------------------------------------------

struct methods_case {
  const char* rule;
  const char* path;
  const char* host;
  const char* expected;  // "any", or the named methods as an Allow value ("" for none)
};

std::string describe(const waypoint::path_methods& m) {
  return m.any ? (m.named.empty() ? "any" : "any with named methods") : m.named.to_string();
}

class MethodsAt : public ::testing::TestWithParam<methods_case> {};

// methods_at is a match for a method no route names: `named` is what a 405 there lists
// for every method outside it, and `any` means every method is served. It allocates nothing.
TEST_P(MethodsAt, OnApiTable) {
  static const router_type r = build(api_table);
  const methods_case& c = GetParam();
  auto scratch = std::make_unique<router_type::match_result>();
  waypoint::path_methods served;
  {
    waypoint::testing::allocation_scope scope;
    served = r.methods_at(c.path, c.host, *scratch);
    EXPECT_EQ(scope.count(), 0u);
  }
  EXPECT_EQ(describe(served), c.expected);
  EXPECT_EQ(describe(r.methods_at(c.path, c.host)), c.expected) << "the stack overload";
  for (const char* method : {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "CUSTOM", "X"}) {
    auto m = r.match(method, c.path, c.host);
    if (served.any) {
      EXPECT_EQ(m.status(), match_status::matched) << method;
    } else if (served.named.contains(method)) {
      EXPECT_NE(m.status(), match_status::method_not_allowed) << method;
    } else if (m.status() == match_status::method_not_allowed) {
      EXPECT_EQ(m.allowed().to_string(), served.named.to_string()) << method;
    } else {
      EXPECT_TRUE(served.named.empty()) << method << " is " << describe(m);
    }
  }
}

const methods_case methods_cases[] = {
    {"MethodRoutesOfOnePath", "/m", "", "CUSTOM, GET, HEAD, POST, PUT"},
    {"WildcardAndLiteralRoutesBothCount", "/users/me", "", "DELETE, GET, HEAD"},
    {"GetImpliesHead", "/users", "", "GET, HEAD, POST"},
    {"HeadAloneDoesNotImplyGet", "/head-only", "", "HEAD"},
    {"GetAndHeadRoutesListOnce", "/both", "", "GET, HEAD"},
    {"RestWildcardRoutes", "/files/a/b", "", "GET, HEAD, PUT"},
    {"MethodLessRouteServesEveryMethod", "/static/", "", "any"},
    {"MethodLessRestBehindAMethodRoute", "/static/logo.png", "", "any"},
    {"HostTreeFirst", "/users/42", "example.com", "any"},
    {"HostWithPort", "/users/42", "example.com:8080", "any"},
    {"OtherHostsUseHostlessRoutes", "/users/42", "other.example", "DELETE, GET, HEAD"},
    {"NoRouteNoMethods", "/nothing", "", ""},
    {"UncleanPathRedirectsAndHasNone", "/users//42", "", ""},
    {"InvalidPathHasNone", "/users/%zz", "", ""},
    {"EscapedLiteral", "/esc/sp%20ace", "", "any"},
};

INSTANTIATE_TEST_SUITE_P(Api, MethodsAt, ::testing::ValuesIn(methods_cases),
                         [](const auto& info) { return std::string(info.param.rule); });

// --- allocations -------------------------------------------------------------------

TEST(Allocations, NoneOnAnyOutcome) {
  router_type r =
      build({"GET /v1/static/deep/path", "GET /v1/users/{id}", "GET /v1/orgs/{org}/repos/{repo}",
             "GET /v1/files/{path...}", "POST /v1/only-post", "/v1/dir/", "h.com/v1/x"});
  struct probe {
    const char* method;
    const char* path;
    match_status status;
  };
  const probe probes[] = {
      {"GET", "/v1/static/deep/path", match_status::matched},
      {"GET", "/v1/users/42", match_status::matched},
      {"GET", "/v1/users/a%20b", match_status::matched},
      {"GET", "/v1/orgs/acme/repos/wp", match_status::matched},
      {"GET", "/v1/files/a/b%2Fc", match_status::matched},
      {"GET", "/v1/nothing/here", match_status::not_found},
      {"GET", "/v1/only-post", match_status::method_not_allowed},
      {"GET", "/v1/dir", match_status::redirect},
      {"GET", "/v1//users/42", match_status::redirect},
      {"GET", "/v1/%zz", match_status::bad_request},
      {"GET", "/v1/files/a/%2e%2e/b", match_status::redirect},
      {"GET", "/v1/files/a%2F..%2Fb", match_status::bad_request},
  };
  auto result = std::make_unique<router_type::match_result>();
  for (const probe& p : probes) {
    waypoint::testing::allocation_scope scope;
    r.match(p.method, p.path, "h.com:80", *result);
    EXPECT_EQ(scope.count(), 0u) << p.path;
    EXPECT_EQ(result->status(), p.status) << p.path;
  }
}

// --- storage a result's owner lends (basic_match_result<H, 0>) ---------------------------

// A result without storage of its own writes decoded values and redirect paths where its
// owner says; given at least match_storage_bytes(path) it answers as a result with its own
// 16 KiB does, given less it refuses the path rather than write past the end.
struct lent_storage_case {
  const char* rule;
  const char* path;
  std::size_t storage;  // bytes lent; 0 means match_storage_bytes(path)
  match_status status;
  const char* value;  // the first value, or the redirect's location
};

const lent_storage_case lent_storage_cases[] = {
    {"ExactSizeDecodesValues", "/files/a%20b/c%2Fd", 0, match_status::matched, "a b/c/d"},
    {"ExactSizeCleansForARedirect", "/files//a/../b", 0, match_status::redirect, "/files/b"},
    {"ExactSizeAppendsTheSlash", "/dir", 0, match_status::redirect, "/dir/"},
    {"PlainPathNeedsItToo", "/users/42", 5, match_status::bad_request,
     "the path is longer than the match result holds"},
    {"OneByteShortIsRefused", "/files/a%20b", 25, match_status::bad_request,
     "the path is longer than the match result holds"},
    {"NoneLentIsRefused", "/users/42", std::size_t(-1), match_status::bad_request,
     "the match result was lent no storage"},
};

class LentStorage : public ::testing::TestWithParam<lent_storage_case> {};

TEST_P(LentStorage, AnswersAsOwnStorageOrRefuses) {
  const lent_storage_case& c = GetParam();
  router_type r = build({"GET /files/{path...}", "GET /users/{id}", "GET /dir/"});
  std::string path = c.path;
  std::size_t bytes = c.storage == 0 ? waypoint::match_storage_bytes(path.size()) : c.storage;
  std::vector<char> lent(bytes == std::size_t(-1) ? 0 : bytes);
  waypoint::basic_match_result<int, 0> result;
  if (c.storage != std::size_t(-1)) result.lend_storage(lent);
  {
    waypoint::testing::allocation_scope scope;
    r.match("GET", path, "", result);
    EXPECT_EQ(scope.count(), 0u);
  }
  ASSERT_EQ(result.status(), c.status) << c.rule;
  router_type::match_result own = r.match("GET", path);
  if (c.status == match_status::matched) {
    EXPECT_EQ(result.value(0), c.value);
    EXPECT_EQ(result.value(0), own.value(0));
    EXPECT_GE(result.value(0).data(), lent.data());  // decoded into the lent bytes
    EXPECT_LT(result.value(0).data(), lent.data() + lent.size());
  } else if (c.status == match_status::redirect) {
    EXPECT_EQ(result.location_path(), c.value);
    EXPECT_EQ(result.location_path(), own.location_path());
  } else {
    EXPECT_EQ(result.error(), c.value);
    EXPECT_EQ(own.status(), match_status::matched) << "a result with its own storage matches";
  }
}

INSTANTIATE_TEST_SUITE_P(Rules, LentStorage, ::testing::ValuesIn(lent_storage_cases),
                         [](const auto& info) { return std::string(info.param.rule); });

// A copy of a result with its own storage decodes into its own, not the original's.
TEST(MatchResultCopy, WritesIntoItsOwnStorage) {
  router_type r = build({"GET /users/{id}"});
  auto original = std::make_unique<router_type::match_result>();
  r.match("GET", "/users/a%20b", "", *original);
  auto copy = std::make_unique<router_type::match_result>(*original);
  r.match("GET", "/users/c%20d", "", *copy);
  EXPECT_EQ(original->value(0), "a b");
  EXPECT_EQ(copy->value(0), "c d");
}

// A copy of a lent result is lent nothing: matching through it cannot write into the
// original's storage, and says why it refuses.
TEST(MatchResultCopy, ALentResultsCopyIsLentNothing) {
  router_type r = build({"GET /users/{id}"});
  std::vector<char> lent(waypoint::match_storage_bytes(64));
  waypoint::basic_match_result<int, 0> original;
  original.lend_storage(lent);
  r.match("GET", "/users/a%20b", "", original);
  waypoint::basic_match_result<int, 0> copy(original);
  r.match("GET", "/users/c%20d", "", copy);
  EXPECT_EQ(original.value(0), "a b");
  EXPECT_EQ(copy.status(), match_status::bad_request);
  EXPECT_EQ(copy.error(), "the match result was lent no storage");
}

// Registration allocates for the pattern (its text when longer than the small-string
// buffer, its segment vector, its name vector when it has wildcards) and, amortized, for
// the router's vectors (about 0.06 per route over 2,000 routes); the index keeps nodes,
// edges and texts in shared arrays, the routes in chunks of 64. Rows: the table's shape and
// the most allocations per route it may take (it was about 10 before issue 19).
struct registration_allocation_case {
  const char* rule;
  std::string (*pattern)(int);
  double most_per_route;
};

const registration_allocation_case registration_allocation_cases[] = {
    {"LongStaticPaths", [](int i) { return "GET /v1/accounts" + std::to_string(i) + "/summary/weekly"; }, 2.1},
    {"OneParameterEach", [](int i) { return "GET /v1/deals" + std::to_string(i) + "/{dealId}"; }, 3.1},
    {"TwoParametersDeep",
     [](int i) { return "PUT /crm/orgs" + std::to_string(i) + "/{org}/members/{member}/roles"; }, 3.1},
};

class RegistrationAllocations
    : public ::testing::TestWithParam<registration_allocation_case> {};

TEST_P(RegistrationAllocations, AtMostTheRowsLimitPerRoute) {
  const auto& c = GetParam();
  constexpr int routes = 2000;
  std::vector<std::string> patterns;
  for (int i = 0; i < routes; ++i) patterns.push_back(c.pattern(i));
  router_type r;
  waypoint::testing::allocation_scope scope;
  for (int i = 0; i < routes; ++i) r.add(patterns[static_cast<std::size_t>(i)], i);
  double per_route = static_cast<double>(scope.count()) / routes;
  EXPECT_LE(per_route, c.most_per_route) << c.pattern(0);
  EXPECT_GT(per_route, 0.0);  // the counter is live
}

INSTANTIATE_TEST_SUITE_P(Shapes, RegistrationAllocations,
                         ::testing::ValuesIn(registration_allocation_cases),
                         [](const auto& info) { return std::string(info.param.rule); });

TEST(Allocations, CounterSeesAllocations) {
  waypoint::testing::allocation_scope scope;
  auto p = std::make_unique<int>(1);
  EXPECT_EQ(scope.count(), 1u);
}

// --- concurrency -------------------------------------------------------------------

TEST(Concurrency, FrozenRouterMatchesFromManyThreads) {
  router_type r;
  for (int i = 0; i < 200; ++i) r.add("GET /r" + std::to_string(i) + "/{id}", i);
  r.add("/", -1);
  r.freeze();
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto m = std::make_unique<router_type::match_result>();
      for (int i = 0; i < 20000; ++i) {
        int route = (i * 7 + t) % 200;
        std::string path = "/r" + std::to_string(route) + "/" + std::to_string(i);
        r.match("GET", path, {}, *m);
        if (!*m || m->handler() != route || m->value("id") != std::to_string(i)) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

}  // namespace
