// Parsing request lines and request targets (RFC 9112 section 3.2).
#include "request.hpp"

#include <waypoint/detail/http_grammar.hpp>
#include <waypoint/target.hpp>
#include <waypoint/pattern.hpp>

#include <algorithm>

namespace waypoint::route_tool {
namespace {

bool has_control_byte(std::string_view s) {
  return std::ranges::any_of(s, [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7F;
  });
}

request_parse failure(std::string message) { return {{}, std::move(message)}; }

// The target is split by the core's rules (waypoint/target.hpp), which the Beast adapter
// uses too, so the tool and the server refuse the same targets. A HOST field stands for a Host header on
// an HTTP/1.1 request; without one the request is read as HTTP/1.0, which needs no Host.
request_parse parse_target(std::string_view target, request r) {
  request_head head{r.method, target, r.host, r.host.empty() ? 0u : 1u,
                           r.host.empty() ? 10u : 11u};
  request_target split;
  if (const char* error = waypoint::resolve_target(head, split)) return failure(error);
  request out{r.method, std::string(split.path), std::string(split.query), std::string(split.host)};
  return {std::move(out), {}};
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
  if (!std::ranges::all_of(method, waypoint::detail::is_token_byte))
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
