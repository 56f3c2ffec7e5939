// Tests of waypoint/detail/url.hpp: the one URL and authority parser behind the request
// target rules, the upstream client's base URL, the router's host matching (strip_port)
// and the Forwarded nodes, and the serialised origins of Origin fields.
#include <waypoint/detail/escape.hpp>
#include <waypoint/detail/url.hpp>

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace {

using namespace waypoint::detail;

struct url_row {
  std::string_view url;
  bool split;
  bool https;
  std::string_view authority, path, query, fragment;
  bool has_query, has_fragment;
};

TEST(Url, SplitHttpUrlTakesHttpAndHttpsInAnyCase) {
  std::vector<url_row> rows{
      {"http://example.com", true, false, "example.com", "", "", "", false, false},
      {"HTTPS://Example.com:8443/a/b", true, true, "Example.com:8443", "/a/b", "", "", false, false},
      {"http://h?q=1", true, false, "h", "", "q=1", "", true, false},
      {"http://h/p?", true, false, "h", "/p", "", "", true, false},
      {"http://h/p#top", true, false, "h", "/p", "", "top", false, true},
      {"http://h?x/y#f?g", true, false, "h", "", "x/y", "f?g", true, true},
      {"http://", true, false, "", "", "", "", false, false},
      {"http:///base", true, false, "", "/base", "", "", false, false},
      {"http://[::1]:80/x", true, false, "[::1]:80", "/x", "", "", false, false},
      {"ftp://h/", false, false, "", "", "", "", false, false},
      {"http:/h", false, false, "", "", "", "", false, false},
      {"/path", false, false, "", "", "", "", false, false},
  };
  for (const url_row& row : rows) {
    url_parts parts;
    ASSERT_EQ(split_http_url(row.url, parts), row.split) << row.url;
    if (!row.split) continue;
    EXPECT_EQ(parts.https, row.https) << row.url;
    EXPECT_EQ(parts.authority, row.authority) << row.url;
    EXPECT_EQ(parts.path, row.path) << row.url;
    EXPECT_EQ(parts.query, row.query) << row.url;
    EXPECT_EQ(parts.fragment, row.fragment) << row.url;
    EXPECT_EQ(parts.has_query, row.has_query) << row.url;
    EXPECT_EQ(parts.has_fragment, row.has_fragment) << row.url;
  }
}

struct authority_row {
  std::string_view authority;
  const char* why;  // nullptr: splits
  std::string_view host, port;
  bool has_port, bracketed;
};

TEST(Url, SplitHostPortSeparatesOnePortFromAHostOrAnIpLiteral) {
  std::vector<authority_row> rows{
      {"example.com", nullptr, "example.com", "", false, false},
      {"example.com:8080", nullptr, "example.com", "8080", true, false},
      {"example.com:", nullptr, "example.com", "", true, false},
      {"[::1]", nullptr, "::1", "", false, true},
      {"[::1]:80", nullptr, "::1", "80", true, true},
      {"::1", nullptr, "::1", "", false, false},  // several colons: unsplit
      {"", nullptr, "", "", false, false},
      {"[::1", "an unclosed '[' in its host", "", "", false, false},
      {"[::1]x", "text after its IPv6 host", "", "", false, false},
      {"[::1]:80:90", "a second ':' after its IPv6 host", "", "", false, false},
  };
  for (const authority_row& row : rows) {
    host_port parts;
    const char* why = split_host_port(row.authority, parts);
    if (row.why) {
      EXPECT_STREQ(why, row.why) << row.authority;
      continue;
    }
    ASSERT_EQ(why, nullptr) << row.authority << ": " << why;
    EXPECT_EQ(parts.host, row.host) << row.authority;
    EXPECT_EQ(parts.port, row.port) << row.authority;
    EXPECT_EQ(parts.has_port, row.has_port) << row.authority;
    EXPECT_EQ(parts.bracketed, row.bracketed) << row.authority;
  }
}

// Go's stripHostPort: a host that does not split into host and port is kept whole.
TEST(Url, StripPortKeepsWhatDoesNotSplitWhole) {
  std::vector<std::pair<std::string_view, std::string_view>> rows{
      {"example.com", "example.com"}, {"example.com:8080", "example.com"},
      {"[::1]:80", "::1"},            {"[::1]", "[::1]"},
      {"a:b:c", "a:b:c"},             {"[::1]x", "[::1]x"},
      {"[::1]:80:90", "[::1]:80:90"}, {"", ""},
  };
  for (auto [host, stripped] : rows) EXPECT_EQ(strip_port(host), stripped) << host;
}

struct origin_row {
  std::string_view origin;
  bool split;
  std::string_view scheme, host, port;
};

// RFC 6454 §6.2's serialised origin, as Origin carries it: anything more (userinfo, a path,
// text after an IPv6 literal, a port that is not digits) is not an origin at all.
TEST(Url, SplitOriginTakesSchemeHostAndPortAndNothingElse) {
  std::vector<origin_row> rows{
      {"http://localhost", true, "http", "localhost", ""},
      {"https://app.example.com:8443", true, "https", "app.example.com", "8443"},
      {"http://[::1]:6274", true, "http", "::1", "6274"},
      {"http://[::1]", true, "http", "::1", ""},
      {"chrome-extension://abcdef", true, "chrome-extension", "abcdef", ""},
      {"http://localhost:80@evil.example", false, "", "", ""},
      {"http://user@localhost", false, "", "", ""},
      {"http://[::1]evil", false, "", "", ""},
      {"http://[::1", false, "", "", ""},
      {"http://[::1]:80:90", false, "", "", ""},
      {"http://[v1.x]", false, "", "", ""},
      {"http://a:b:c", false, "", "", ""},
      {"http://localhost/", false, "", "", ""},
      {"http://localhost?x", false, "", "", ""},
      {"http://localhost#x", false, "", "", ""},
      {"http://local host", false, "", "", ""},
      {"http://localhost:", false, "", "", ""},
      {"http://localhost:8x", false, "", "", ""},
      {"http://", false, "", "", ""},
      {"://localhost", false, "", "", ""},
      {"1http://localhost", false, "", "", ""},
      {"null", false, "", "", ""},
  };
  for (const origin_row& row : rows) {
    origin_parts parts;
    ASSERT_EQ(split_origin(row.origin, parts), row.split) << row.origin;
    if (!row.split) continue;
    EXPECT_EQ(parts.scheme, row.scheme) << row.origin;
    EXPECT_EQ(parts.host.host, row.host) << row.origin;
    EXPECT_EQ(parts.host.port, row.port) << row.origin;
  }
}

}  // namespace
