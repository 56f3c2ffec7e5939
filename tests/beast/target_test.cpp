// resolve_target: which request targets and Host fields route, and to what.
#include <waypoint/beast/target.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using waypoint::beast::request_head;
using waypoint::beast::request_target;
using waypoint::beast::resolve_target;

struct good_row {
  std::string target;
  std::string host;
  std::string path;
  std::string query;
  std::string routed_host;
};

TEST(ResolveTarget, SplitsOriginAndAbsoluteForm) {
  std::vector<good_row> rows = {
      {"/", "example.com", "/", "", "example.com"},
      {"/a/b?x=1&y", "example.com:8080", "/a/b", "x=1&y", "example.com:8080"},
      {"/a?", "h", "/a", "", "h"},
      {"/a?b?c", "h", "/a", "b?c", "h"},
      // absolute-form: the target's authority wins over the Host field
      {"http://api.example.com/v1/x?q", "other", "/v1/x", "q", "api.example.com"},
      {"HTTPS://api.example.com:443/v1", "other", "/v1", "", "api.example.com:443"},
      {"http://[::1]:8080/a", "other", "/a", "", "[::1]:8080"},
      {"http://example.com", "other", "/", "", "example.com"},
      {"http://example.com?q=1", "other", "/", "q=1", "example.com"},
  };
  for (const auto& row : rows) {
    request_head head{"GET", row.target, row.host, 1, 11};
    request_target out;
    const char* why = resolve_target(head, out);
    ASSERT_EQ(why, nullptr) << row.target << ": " << why;
    EXPECT_EQ(out.path, row.path) << row.target;
    EXPECT_EQ(out.query, row.query) << row.target;
    EXPECT_EQ(out.host, row.routed_host) << row.target;
  }
}

struct bad_row {
  std::string target;
  std::string host;
  std::size_t host_fields;
  unsigned version;
  std::string rule;
};

TEST(ResolveTarget, RefusesTargetsAndHostsThatCannotRouteSafely) {
  std::vector<bad_row> rows = {
      {"", "h", 1, 11, "empty target"},
      {"*", "h", 1, 11, "asterisk-form"},
      {"example.com:443", "h", 1, 11, "authority-form"},
      {"a/b", "h", 1, 11, "relative path"},
      {"ftp://h/a", "h", 1, 11, "other scheme"},
      {"/a\r\nSet-Cookie: x=1", "h", 1, 11, "CRLF in the target"},
      {"/a?x=\r\nLocation: evil", "h", 1, 11, "CRLF in the query"},
      {std::string("/a\0b", 4), "h", 1, 11, "NUL in the target"},
      {"/a\x7f", "h", 1, 11, "DEL in the target"},
      {"/a b", "h", 1, 11, "space in the target"},
      {"/caf\xc3\xa9", "h", 1, 11, "non-ASCII byte in the target"},
      {"/a#frag", "h", 1, 11, "fragment"},
      {"/a", "", 0, 11, "HTTP/1.1 without Host"},
      {"/a", "h", 2, 11, "two Host fields"},
      {"/a", "h/x", 1, 11, "Host that is not an authority"},
      {"/a", "h\r\nx", 1, 11, "Host with CRLF"},
      {"http:///a", "h", 1, 11, "absolute-form without host"},
      {"http://user@h/a", "h", 1, 11, "absolute-form with userinfo"},
  };
  for (const auto& row : rows) {
    request_head head{"GET", row.target, row.host, row.host_fields, row.version};
    request_target out;
    EXPECT_NE(resolve_target(head, out), nullptr) << row.rule;
  }
}

TEST(ResolveTarget, Http10NeedsNoHost) {
  request_head head{"GET", "/a", "", 0, 10};
  request_target out;
  EXPECT_EQ(resolve_target(head, out), nullptr);
  EXPECT_EQ(out.path, "/a");
  EXPECT_EQ(out.host, "");
}

}  // namespace
