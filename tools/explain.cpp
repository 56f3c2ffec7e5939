// `waypoint-route explain FILE METHOD TARGET [HOST]`: the outcome of one request, for people.
// A match lists every pattern that also matches, each with why the winner is more specific
// (router::explain). A 404 or 405 lists the patterns nearest to the request instead, ranked
// by a heuristic: those that match the whole path first (they differ only in method or
// host), then those that share the longest leading run of segments with the path.
#include "commands.hpp"
#include "json.hpp"
#include "outcome.hpp"
#include "printable.hpp"
#include "registration.hpp"
#include "tool_error.hpp"
#include "waypoint/detail/escape.hpp"

#include <algorithm>
#include <ostream>
#include <tuple>

namespace waypoint::route_tool {
namespace {

constexpr std::string_view help = R"(usage: waypoint-route explain FILE METHOD TARGET [HOST]

Registers the patterns of FILE (lines that fail are reported on stderr and skipped) and
explains the outcome of one request, given as on an HTTP/1.1 request line:
  match               the winning pattern, its values, and every other pattern that
                      matches the request with the reason the winner is more specific
  not_found, method_not_allowed
                      the nearest patterns (up to 5): those matching the path but not the
                      method or host, then those sharing the longest leading run of segments
  redirect            why (trailing slash or unclean path), and what the new path matches
  bad_request         what is wrong with the request

Exit status: 0 after explaining (whatever the outcome), 2 on usage or I/O error.
)";

// How many near misses a 404 or 405 shows: enough to spot a typo, few enough to read.
constexpr std::size_t max_nearest = 5;

using route_type = line_router::route_type;

// One row of a listing: a route and a note about it.
struct listed_route {
  const route_type* route;
  std::string note;
};

std::string line_label(std::size_t line) { return "line " + std::to_string(line); }

// Rows aligned in three columns: line, pattern, note.
void print_listing(std::ostream& out, const std::vector<listed_route>& rows) {
  std::size_t label_width = 0, pattern_width = 0;
  for (const listed_route& r : rows) {
    label_width = std::max(label_width, line_label(r.route->handler).size());
    pattern_width = std::max(pattern_width, display_width(printable(r.route->pattern.text())));
  }
  for (const listed_route& r : rows) {
    std::string label = line_label(r.route->handler);
    std::string text = printable(r.route->pattern.text());
    out << "  " << label << std::string(label_width - label.size() + 2, ' ') << text;
    if (!r.note.empty())
      out << std::string(pattern_width - display_width(text) + 2, ' ') << printable(r.note);
    out << '\n';
  }
}

std::string describe_request(const request& r) {
  std::string out = r.method + " " + r.path;
  if (!r.query.empty()) out += "?" + r.query;
  if (!r.host.empty()) out += " (host " + r.host + ")";
  return printable(out);
}

std::string describe_match(const route_type& route) {
  return line_label(route.handler) + ": " + printable(route.pattern.text());
}

// The segments of a clean path and where each ends: "/a/b/" -> {"a", 2}, {"b", 4}, {"", 5}.
struct path_segment {
  std::string_view raw;
  std::size_t end;
};

std::vector<path_segment> split_path(std::string_view path) {
  std::vector<path_segment> out;
  std::size_t pos = 0;  // Invariant: path[pos] == '/'.
  while (pos < path.size()) {
    std::size_t end = path.find('/', pos + 1);
    if (end == std::string_view::npos) end = path.size();
    out.push_back({path.substr(pos + 1, end - pos - 1), end});
    pos = end;
  }
  return out;
}

bool segment_matches(const segment& s, std::string_view raw, bool last) {
  switch (s.type) {
    case segment::kind::literal: {
      std::string decoded(raw.size(), '\0');
      decoded.resize(detail::percent_decode(raw, decoded.data()));
      return decoded == s.text;
    }
    case segment::kind::wildcard:
      return !raw.empty();
    case segment::kind::rest:
      return true;
    case segment::kind::end:
      return raw.empty() && last;
  }
  return false;
}

// How many leading path segments `p` matches, ignoring method and host.
std::size_t shared_segments(const pattern& p, const std::vector<path_segment>& path) {
  std::size_t n = 0;
  for (const segment& s : p.segments()) {
    if (n == path.size()) break;
    if (s.type == segment::kind::rest) return path.size();
    if (!segment_matches(s, path[n].raw, n + 1 == path.size())) break;
    ++n;
  }
  return n;
}

// A route measured against a request that no route serves.
struct near_miss {
  const route_type* route;
  bool path_matches;  // the whole path, ignoring method and host
  bool host_ok;
  bool method_ok;
  std::size_t shared;

  auto rank() const {
    return std::tuple(!path_matches, -static_cast<long>(shared), !host_ok, !method_ok,
                      route->handler);
  }
};

near_miss measure(const route_type& route, const request& r, std::string_view bare_host,
                  const std::vector<path_segment>& segments) {
  const pattern& p = route.pattern;
  std::string_view m = r.method;
  near_miss n{&route, false, p.host().empty() || p.host() == bare_host,
              p.method().empty() || p.method() == m || (p.method() == "GET" && m == "HEAD"),
              shared_segments(p, segments)};
  // Giving matches() the pattern's own host and method leaves only the path to decide.
  n.path_matches = matches(p, p.host(), p.method().empty() ? m : p.method(), r.path);
  return n;
}

std::string methods_served(std::string_view method) {
  if (method == "GET") return "GET and HEAD";
  return std::string(method);
}

std::string near_miss_note(const near_miss& n, const std::vector<path_segment>& segments,
                           std::string_view path) {
  const pattern& p = n.route->pattern;
  if (n.path_matches) {
    std::vector<std::string> limits;
    if (!n.host_ok) limits.push_back("for host \"" + std::string(p.host()) + "\"");
    if (!n.method_ok) limits.push_back("for " + methods_served(p.method()));
    if (limits.empty()) return "matches the request";
    std::string note = "matches the path, but only " + limits[0];
    if (limits.size() == 2) note += " and " + limits[1];
    return note;
  }
  std::string_view prefix = path.substr(0, segments[n.shared - 1].end);
  return "shares the leading \"" + std::string(prefix) + "\" with the path";
}

void print_nearest(std::ostream& out, const line_router& router, const request& r) {
  std::vector<path_segment> segments = split_path(r.path);
  std::string_view bare_host = detail::strip_port(r.host);
  std::vector<near_miss> misses;
  for (const route_type& route : router.routes()) {
    near_miss n = measure(route, r, bare_host, segments);
    if (n.path_matches || n.shared > 0) misses.push_back(n);
  }
  std::sort(misses.begin(), misses.end(),
            [](const near_miss& a, const near_miss& b) { return a.rank() < b.rank(); });
  if (misses.size() > max_nearest) misses.resize(max_nearest);
  if (misses.empty()) {
    out << "\nno pattern matches this request or shares a leading segment with its path.\n";
    return;
  }
  out << "\nno pattern matches this request; the nearest:\n";
  std::vector<listed_route> rows;
  for (const near_miss& n : misses) rows.push_back({n.route, near_miss_note(n, segments, r.path)});
  print_listing(out, rows);
}

void print_match(std::ostream& out, const line_router& router, const request& r,
                 const outcome& o) {
  basic_explanation<std::size_t> e = router.explain(r.method, r.path, r.host);
  out << "outcome: match, " << describe_match(*e.candidates.front().route) << '\n';
  for (const auto& [name, value] : o.values)
    out << "  " << name << " = " << json_string(value) << '\n';
  if (e.candidates.size() == 1) {
    out << "\nno other pattern matches this request.\n";
    return;
  }
  out << "\npatterns that match this request, most specific first:\n";
  // The core's reasons speak of the winner as "it": naming the winner's line first keeps
  // "it" from reading as the loser.
  std::string loses = "loses to " + line_label(e.candidates.front().route->handler) + ": ";
  std::vector<listed_route> rows;
  for (const auto& c : e.candidates)
    rows.push_back({c.route, c.winner ? "wins" : loses + c.reason});
  print_listing(out, rows);
}

std::string clean_form(std::string_view path) {
  std::string clean(path.size() + 1, '\0');
  clean.resize(detail::clean_path(path, clean.data()));
  return clean;
}

void print_redirect(std::ostream& out, const line_router& router, const request& r,
                    const outcome& o) {
  out << "outcome: redirect " << o.redirect_status << " to " << o.location << '\n';
  // The location's path ends at its '?': a request path never holds one.
  std::string location = o.location.substr(0, o.location.find('?'));
  std::string clean = clean_form(r.path);
  if (clean != r.path)
    out << "  why: the path is not clean (it has an empty, \".\" or \"..\" segment); its clean "
           "form is \""
        << clean << "\"\n";
  if (location == clean + "/")
    out << "  why: no pattern serves \"" << clean
        << "\" itself, but one serves it with a trailing slash\n";
  request followed = r;
  followed.path = location;
  outcome next = answer(router, followed);
  out << "  after the redirect: " << to_string(next.status);
  if (next.status == match_status::matched)
    out << ", line " << next.line << ": " << printable(next.pattern);
  out << '\n';
}

void explain_request(std::ostream& out, const line_router& router, const request& r) {
  out << "request: " << describe_request(r) << '\n';
  outcome o = answer(router, r);
  switch (o.status) {
    case match_status::matched:
      return print_match(out, router, r, o);
    case match_status::not_found:
      out << "outcome: not_found (404)\n";
      return print_nearest(out, router, r);
    case match_status::method_not_allowed:
      out << "outcome: method_not_allowed (405), Allow: " << o.allow << '\n';
      return print_nearest(out, router, r);
    case match_status::redirect:
      return print_redirect(out, router, r, o);
    case match_status::bad_request:
      out << "outcome: bad_request (400): " << o.error << '\n';
      return;
  }
}

void report_skipped(std::ostream& err, const std::string& file,
                    const std::vector<registration_problem>& problems) {
  for (const registration_problem& p : problems)
    err << file << ':' << p.line << ": skipped: " << printable(p.message) << '\n';
}

}  // namespace

int run_explain(std::span<const std::string_view> args, command_io io) {
  arguments a = parse_arguments("explain", args, {});
  if (a.help) {
    io.out << help;
    return exit_clean;
  }
  expect_positional("explain", a, 3, 4);
  const std::string& file = a.positional[0];
  line_router router;
  report_skipped(io.err, file, register_lines(router, read_content_file(file)));
  router.freeze();
  std::vector<std::string_view> fields(a.positional.begin() + 1, a.positional.end());
  request_parse parsed = parse_request(fields);
  if (!parsed.ok()) {
    io.out << "request: " << printable(fields[0]) << ' ' << printable(fields[1]) << '\n';
    io.out << "outcome: bad_request (400): " << parsed.error << '\n';
    return exit_clean;
  }
  explain_request(io.out, router, parsed.value);
  return exit_clean;
}

}  // namespace waypoint::route_tool
