// Fuzzes basic_router::match with arbitrary requests against one fixed table that uses
// every pattern feature. Byte 0 picks the method, byte 1 the host, the rest is the path.
// Whatever the request, the outcome is consistent: a match's values fit its route and no
// other matching route outranks it; a 404 or 405 has no route for the request's method; a
// 405's Allow never lists that method; a redirect goes to a clean path that is not the
// request's; a 400 names a real problem; no value holds a "." or ".." segment once
// decoded (however the request spelled it); and matching again gives the same outcome.
#include <waypoint/detail/escape.hpp>
#include <waypoint/pattern.hpp>
#include <waypoint/reference/outcome.hpp>
#include <waypoint/router.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "check.hpp"

namespace {

using waypoint::match_status;
using waypoint::fuzzing::quoted;
using waypoint::fuzzing::require;
using router_type = waypoint::basic_router<int>;

constexpr std::string_view table[] = {
    "/{$}",
    "GET /users/{id}",
    "GET /users/me",
    "POST /users/",
    "DELETE /users/{id}",
    "PUT /users/{id}/avatar",
    "HEAD /users/{id}/avatar",
    "OPTIONS /users/{id}",
    "/static/",
    "/files/{path...}",
    "GET /org/{org}/repos/{repo}/issues/{n}",
    "GET /org/{org}/repos/{repo}/{rest...}",
    "GET /org/{org}/members/",
    "GET /docs/{$}",
    "GET /a%2Fb/{x}",
    "GET /%61bc",
    "GET api.example.com/v1/{x}/{y}",
    "api.example.com/",
    "POST api.example.com/v1/{x}",
    "[::1]/local",
};
constexpr std::string_view methods[] = {"GET",     "HEAD",  "POST", "PUT", "DELETE",
                                        "OPTIONS", "PATCH", "BREW", "",    "get"};
constexpr std::string_view hosts[] = {
    "",           "api.example.com", "api.example.com:443", "API.EXAMPLE.COM", "other.org",
    "[::1]:8080", "[::1]",           "api.example.com:"};

const router_type& fixed_router() {
  static const router_type router = [] {
    router_type r;
    int handler = 0;
    for (std::string_view p : table) r.add(p, handler++);
    r.freeze();
    return r;
  }();
  return router;
}

struct request {
  std::string_view method, host, path;
  std::string context() const {
    return "method " + quoted(method) + " host " + quoted(host) + " path " + quoted(path);
  }
};

bool any_route_matches(const router_type& router, const request& r, std::string_view path) {
  std::string_view host = waypoint::detail::strip_port(r.host);
  for (const auto& route : router.routes())
    if (waypoint::matches(route.pattern, host, r.method, path)) return true;
  return false;
}

// `value` (decoded), split on '/', has a "." or ".." piece: a handler that joins it to a
// directory would climb out of it.
bool has_dot_segment(std::string_view value) {
  for (std::size_t start = 0; start <= value.size();) {
    std::size_t end = value.find('/', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view piece = value.substr(start, end - start);
    if (piece == "." || piece == "..") return true;
    start = end + 1;
  }
  return false;
}

void check_matched(const router_type& router, const request& r,
                   const router_type::match_result& m) {
  const std::string context = r.context();
  const auto* winner = m.route();
  require(winner != nullptr, "a match has a route", context);
  const auto& names = winner->pattern.wildcard_names();
  require(m.value_count() == names.size(), "one value per wildcard", context);
  for (std::size_t i = 0; i < names.size(); ++i) {
    require(m.value(names[i]) == m.value(i), "values by name and by index agree", context);
    require(!has_dot_segment(m.value(i)), "no value holds a dot segment " + quoted(m.value(i)),
            context);
  }
  std::string_view host = waypoint::detail::strip_port(r.host);
  require(waypoint::matches(winner->pattern, host, r.method, r.path), "the winner matches",
          context);
  for (const auto& route : router.routes()) {
    if (&route == winner || !waypoint::matches(route.pattern, host, r.method, r.path)) continue;
    require(!waypoint::precedes(route.pattern, winner->pattern),
            "no matching route outranks the winner " + std::string(route.pattern.text()), context);
  }
}

void check_allow(const router_type& router, const request& r, const router_type::match_result& m) {
  const std::string context = r.context();
  require(!any_route_matches(router, r, r.path), "405 means no route serves the method", context);
  std::string allow = m.allowed().to_string();
  require(!allow.empty(), "405 has an Allow", context);
  bool listed = false;
  m.allowed().for_each([&](std::string_view method) {
    listed |= method == r.method;
    if (method == "HEAD" && m.allowed().contains("GET")) return;
    request other = r;
    other.method = method;
    std::string with_slash = std::string(r.path) + "/";
    require(
        any_route_matches(router, other, r.path) || any_route_matches(router, other, with_slash),
        "every allowed method has a route " + std::string(method), context);
  });
  require(!listed, "Allow never lists the request's method", context + " allow " + allow);
}

void check_redirect(const request& r, const router_type::match_result& m) {
  const std::string context = r.context();
  std::string_view location = m.location_path();
  require(m.redirect_status() == 307, "the default redirect status", context);
  require(!location.empty() && location.front() == '/', "a location begins with '/'", context);
  require(location.substr(0, 2) != "//", "a location never begins with \"//\"", context);
  require(waypoint::detail::is_clean_path(location), "a location is clean", context);
  require(waypoint::detail::path_error(location) == nullptr, "a location is a valid path", context);
  require(location != r.path, "a redirect goes elsewhere", context);
}

void check_bad_request(const request& r, const router_type::match_result& m) {
  require(!m.error().empty(), "a bad request says why", r.context());
  require(r.path.size() > waypoint::max_path_length || waypoint::detail::path_error(r.path) ||
              waypoint::detail::joins_dot_segment(r.path),
          "a bad request has a bad path", r.context());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  request r{methods[data[0] % std::size(methods)], hosts[data[1] % std::size(hosts)],
            std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2)};
  const router_type& router = fixed_router();
  // A result is ~16 KiB: keep it off the fuzzer's stack.
  auto m = std::make_unique<router_type::match_result>();
  router.match(r.method, r.path, r.host, *m);
  switch (m->status()) {
    case match_status::matched:
      check_matched(router, r, *m);
      break;
    case match_status::not_found:
      require(!any_route_matches(router, r, r.path), "404 means no route serves the method",
              r.context());
      require(m->allowed().empty(), "404 has no Allow", r.context());
      break;
    case match_status::method_not_allowed:
      check_allow(router, r, *m);
      break;
    case match_status::redirect:
      check_redirect(r, *m);
      break;
    case match_status::bad_request:
      check_bad_request(r, *m);
      break;
  }
  auto again = std::make_unique<router_type::match_result>();
  router.match(r.method, r.path, r.host, *again);
  require(waypoint::reference::outcome_of(*m) == waypoint::reference::outcome_of(*again),
          "matching is deterministic", r.context());
  return 0;
}
