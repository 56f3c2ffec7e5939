// Parsing request lines and request targets (RFC 9112 section 3.2).
#include "request.hpp"

#include <algorithm>

namespace waypoint::route_tool {
namespace {

bool is_token_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_control_byte(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7F;
}

bool has_control_byte(std::string_view s) { return std::ranges::any_of(s, is_control_byte); }

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return a.size() == b.size() &&
         std::ranges::equal(a, b, [&](char x, char y) { return lower(x) == lower(y); });
}

request_parse failure(std::string message) { return {{}, std::move(message)}; }

// Splits "path?query" into the request's path and query.
void split_query(std::string_view path_and_query, request& out) {
  std::size_t mark = path_and_query.find('?');
  out.path = std::string(path_and_query.substr(0, mark));
  if (mark != std::string_view::npos) out.query = std::string(path_and_query.substr(mark + 1));
}

// "http://host/path?query" without the scheme: the authority becomes the host.
request_parse parse_absolute_form(std::string_view after_scheme, request r) {
  std::size_t end = after_scheme.find_first_of("/?");
  std::string_view authority = after_scheme.substr(0, end);
  if (authority.empty()) return failure("the absolute-form target has no host");
  if (authority.find('@') != std::string_view::npos)
    return failure("the target carries userinfo (\"user@\"), which HTTP forbids");
  r.host = std::string(authority);
  std::string_view rest = end == std::string_view::npos ? "" : after_scheme.substr(end);
  // An empty path in absolute-form means "/" (RFC 9112 section 3.2.2).
  if (rest.empty() || rest.front() == '?') {
    std::string rooted = "/";  // appended, not `"/" + std::string(rest)`: see quoted()
    rooted.append(rest);
    split_query(rooted, r);
  } else {
    split_query(rest, r);
  }
  return {std::move(r), {}};
}

request_parse parse_target(std::string_view target, request r) {
  if (has_control_byte(target)) return failure("the target holds a control byte");
  if (target.find('#') != std::string_view::npos)
    return failure("a request target never holds a fragment ('#')");
  if (target == "*") return failure("the asterisk-form target \"*\" names no path to route");
  if (target.front() == '/') {
    split_query(target, r);
    return {std::move(r), {}};
  }
  std::size_t scheme_end = target.find("://");
  if (scheme_end != std::string_view::npos) {
    std::string_view scheme = target.substr(0, scheme_end);
    if (!equals_ignoring_case(scheme, "http") && !equals_ignoring_case(scheme, "https"))
      return failure("only http and https absolute-form targets are routed");
    return parse_absolute_form(target.substr(scheme_end + 3), std::move(r));
  }
  return failure(
      "the target must be an absolute path (\"/...\") or an absolute URL (\"http://host/...\")");
}

}  // namespace

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t pos = 0;
  while (true) {
    std::size_t begin = line.find_first_not_of(" \t", pos);
    if (begin == std::string_view::npos) break;
    std::size_t end = line.find_first_of(" \t", begin);
    if (end == std::string_view::npos) end = line.size();
    fields.push_back(line.substr(begin, end - begin));
    pos = end;
  }
  return fields;
}

request_parse parse_request(std::span<const std::string_view> fields) {
  if (fields.size() < 2 || fields.size() > 3)
    return failure("expected METHOD TARGET [HOST], got " + std::to_string(fields.size()) +
                   (fields.size() == 1 ? " field" : " fields"));
  request r;
  std::string_view method = fields[0];
  if (method.empty()) return failure("the method is empty");
  if (fields[1].empty()) return failure("the target is empty");
  if (!std::ranges::all_of(method, is_token_byte))
    return failure("the method is not an HTTP token");
  r.method = std::string(method);
  if (fields.size() == 3) {
    if (has_control_byte(fields[2])) return failure("the host holds a control byte");
    r.host = std::string(fields[2]);
  }
  return parse_target(fields[1], std::move(r));
}

std::string redirect_location(std::string_view location_path, std::string_view query) {
  std::string location(location_path);
  if (!query.empty()) {
    location += '?';
    location.append(query);
  }
  return location;
}

}  // namespace waypoint::route_tool
