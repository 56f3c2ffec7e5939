// Request lines as waypoint-route reads them: `METHOD TARGET [HOST]`, with TARGET exactly as
// on an HTTP/1.1 request line. Splits the target into what a router is given (the escaped
// path, the host) and what it is not (the query, which only a redirect's Location echoes).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::route_tool {

struct request {
  std::string method;
  std::string path;   // escaped, as on the request line; the router judges it
  std::string query;  // after the first '?', without it; empty when absent or empty
  std::string host;   // the HOST field, or the authority of an absolute-form target
};

// A parsed request, or why there is none.
struct request_parse {
  request value;
  std::string error;  // empty on success
  bool ok() const noexcept { return error.empty(); }
};

// The blank-separated fields of `line` (spaces and tabs).
std::vector<std::string_view> split_fields(std::string_view line);

// METHOD TARGET [HOST], already split. The target may be
//   origin-form    "/path?query"
//   absolute-form  "http://host:port/path?query" (http or https): its authority is the
//                  host, and a HOST field is ignored, as RFC 9112 section 3.2.2 requires;
// the asterisk- and authority-forms name no path and are refused.
request_parse parse_request(std::span<const std::string_view> fields);

// The Location of a redirect: the router's escaped path, plus "?query" when the request had
// a non-empty query (Go's ServeMux drops a bare '?' the same way).
std::string redirect_location(std::string_view location_path, std::string_view query);

}  // namespace waypoint::route_tool
