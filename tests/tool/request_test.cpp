// Request lines and targets (tools/request.hpp): what reaches the router, and which lines
// are refused with a reason.
#include "request.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace waypoint::route_tool;

request_parse parse_line(std::string_view line) {
  std::vector<std::string_view> fields = split_fields(line);
  return parse_request(fields);
}

struct good_row {
  const char* rule;
  const char* line;
  request expected;
};

TEST(ParseRequest, SplitsTargetIntoPathQueryAndHost) {
  const good_row rows[] = {
      {"origin-form path", "GET /a/b", {"GET", "/a/b", "", ""}},
      {"the query is split at the first '?'", "GET /a?x=1?y", {"GET", "/a", "x=1?y", ""}},
      {"an empty query stays empty", "GET /a?", {"GET", "/a", "", ""}},
      {"the host field is kept with its port",
       "GET / example.com:8080",
       {"GET", "/", "", "example.com:8080"}},
      {"tabs and runs of blanks separate fields", "GET\t /a  \th", {"GET", "/a", "", "h"}},
      {"the path is kept escaped", "GET /a%2Fb", {"GET", "/a%2Fb", "", ""}},
      {"an invalid path is left for the router to judge", "GET /a%zz", {"GET", "/a%zz", "", ""}},
      {"absolute-form routes on its authority",
       "GET http://h.example:81/a?q",
       {"GET", "/a", "q", "h.example:81"}},
      {"absolute-form ignores the host field", "GET http://h/a other", {"GET", "/a", "", "h"}},
      {"the scheme is case-insensitive, https too", "GET HTTPS://h/a", {"GET", "/a", "", "h"}},
      {"an empty absolute-form path is '/'", "GET http://h", {"GET", "/", "", "h"}},
      {"an empty path before a query is '/'", "GET http://h?q=1", {"GET", "/", "q=1", "h"}},
      {"an IPv6 authority keeps its brackets",
       "GET http://[::1]:8080/a",
       {"GET", "/a", "", "[::1]:8080"}},
      {"methods are case-sensitive tokens", "get /a", {"get", "/a", "", ""}},
  };
  for (const good_row& row : rows) {
    request_parse p = parse_line(row.line);
    ASSERT_TRUE(p.ok()) << row.rule << ": " << p.error;
    EXPECT_EQ(p.value.method, row.expected.method) << row.rule;
    EXPECT_EQ(p.value.path, row.expected.path) << row.rule;
    EXPECT_EQ(p.value.query, row.expected.query) << row.rule;
    EXPECT_EQ(p.value.host, row.expected.host) << row.rule;
  }
}

struct bad_row {
  const char* rule;
  const char* line;
  const char* error;
};

TEST(ParseRequest, RefusesLinesAndTargetsWithAReason) {
  const bad_row rows[] = {
      {"one field", "GET", "expected METHOD TARGET [HOST], got 1 field"},
      {"four fields", "GET / h x", "expected METHOD TARGET [HOST], got 4 fields"},
      {"a method that is not a token", "G@T /", "the method is not an HTTP token"},
      {"asterisk-form", "OPTIONS *", "the asterisk-form target (OPTIONS *) is not routable"},
      {"authority-form", "CONNECT h:443", "the request target is neither origin-form (/path) nor absolute-form (http://host/path)"},
      {"a relative path", "GET a/b", "the request target is neither origin-form (/path) nor absolute-form (http://host/path)"},
      {"another scheme", "GET ftp://h/a", "the request target is neither origin-form (/path) nor absolute-form (http://host/path)"},
      {"no host in absolute-form", "GET http:///a", "the absolute-form target has no host"},
      {"userinfo", "GET http://u:p@h/a", "the absolute-form target's host is not a valid authority"},
      {"a fragment", "GET /a#b", "the request target holds a fragment"},
      {"a control byte in the target", "GET /a\x01",
       "the request target holds a control byte, a space or a non-ASCII byte"},
      {"a non-ASCII byte in the query, refused as the server refuses it", "GET /a?\xC3\xA9",
       "the request target holds a control byte, a space or a non-ASCII byte"},
      {"a control byte in the host", "GET /a h\x7f", "the host holds a control byte"},
  };
  for (const bad_row& row : rows) {
    request_parse p = parse_line(row.line);
    EXPECT_EQ(p.error, row.error) << row.rule;
  }
}

TEST(ParseRequest, RefusesEmptyFieldsGivenDirectly) {
  // explain takes its fields from argv, where an empty argument is possible.
  std::vector<std::string_view> empty_target = {"GET", ""};
  EXPECT_EQ(parse_request(empty_target).error, "the target is empty");
  std::vector<std::string_view> empty_method = {"", "/"};
  EXPECT_EQ(parse_request(empty_method).error, "the method is empty");
}

TEST(RedirectLocation, AppendsANonEmptyQueryOnly) {
  EXPECT_EQ(redirect_location("/a/", "x=1"), "/a/?x=1");
  EXPECT_EQ(redirect_location("/a/", ""), "/a/");
}

}  // namespace
