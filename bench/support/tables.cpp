// Reading and checking the benchmark tables (see tables.hpp).
#include "tables.hpp"

#include "request.hpp"
#include "source_lines.hpp"

#include "waypoint/pattern.hpp"
#include "waypoint/router.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#ifndef WAYPOINT_BENCH_TABLES_DIR
#define WAYPOINT_BENCH_TABLES_DIR "bench/tables"
#endif

namespace waypoint::bench {
namespace {

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "waypoint bench: %s\n", message.c_str());
  std::exit(1);
}

// The route tool's reader (tools/source_lines.hpp): the same numbering, trimming and
// comment rules for every table and request file, whichever program reads it.
std::vector<route_tool::source_line> read_lines(const std::string& path) {
  try {
    return route_tool::read_content_file(path);
  } catch (const std::exception& e) {
    fail(std::string(e.what()) + " (set WAYPOINT_BENCH_TABLES to bench/tables)");
  }
}

// A value for wildcard `name` that starts with a digit: no literal in bench/tables does.
std::string example_value(std::string_view name) {
  std::string value = "7";  // appended, not `"7" + std::string(name)`: GCC 12's -Wrestrict
  value.append(name);       // misfires on that at -O3
  return value;
}

std::string request_path_for(const pattern& p) {
  std::string path;
  for (const segment& s : p.segments()) {
    path += '/';
    switch (s.type) {
      case segment::kind::literal:
        detail::append_escaped(path, s.text);
        break;
      case segment::kind::wildcard:
        path += example_value(s.text);
        break;
      case segment::kind::rest:
        path += "2024/q3/report.pdf";
        break;
      case segment::kind::end:
        break;
    }
  }
  return path;
}

using checked_router = basic_router<std::uint32_t>;

std::string outcome_text(const checked_router::match_result& m) {
  switch (m.status()) {
    case match_status::matched:
      return "match " + std::string(m.route()->pattern.text());
    case match_status::not_found:
      return "404";
    case match_status::method_not_allowed:
      return "405 " + m.allowed().to_string();
    case match_status::redirect:
      return "redirect " + std::string(m.location_path());
    case match_status::bad_request:
      return "400 " + std::string(m.error());
  }
  return "?";
}

}  // namespace

route_table route_table::prefix(std::size_t n) const {
  route_table out{name + "[" + std::to_string(n) + "]", {}};
  if (n > patterns.size()) fail(name + " has fewer than " + std::to_string(n) + " routes");
  out.patterns.assign(patterns.begin(), patterns.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

std::string tables_directory() {
  if (const char* dir = std::getenv("WAYPOINT_BENCH_TABLES"); dir && *dir) return dir;
  return WAYPOINT_BENCH_TABLES_DIR;
}

route_table load_table(std::string_view name) {
  route_table table{std::string(name), {}};
  for (const auto& line : read_lines(tables_directory() + "/" + table.name + ".routes"))
    table.patterns.push_back(line.text);
  if (table.patterns.empty()) fail("table " + table.name + " has no routes");
  return table;
}

// `NAME METHOD TARGET [HOST]  # expect: OUTCOME`: the tool's request line behind a name,
// split by the tool's parse_request (and so by the core's request-target rules).
std::vector<request> load_requests(std::string_view file_stem) {
  std::string path = tables_directory() + "/" + std::string(file_stem) + ".requests";
  std::vector<request> out;
  for (const auto& line : read_lines(path)) {
    std::string_view text = line.text;
    request r;
    if (std::size_t hash = text.find(" # expect: "); hash != std::string_view::npos) {
      std::size_t indent = 0;
      r.expect = std::string(route_tool::trim_blanks(text.substr(hash + 11), indent));
      text = route_tool::trim_blanks(text.substr(0, hash), indent);
    }
    auto fields = route_tool::split_fields(text);
    std::string where = path + ":" + std::to_string(line.number) + ": ";
    if (fields.size() < 3 || fields.size() > 4) fail(where + "want NAME METHOD TARGET [HOST]");
    route_tool::request_parse parsed =
        route_tool::parse_request(std::span(fields).subspan(1));
    if (!parsed.ok()) fail(where + parsed.error);
    r.name = fields[0];
    r.method = parsed.value.method;
    r.target = fields[2];
    r.path = parsed.value.path;
    r.host = parsed.value.host;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<request> sweep_requests(const route_table& table) {
  std::vector<request> out;
  out.reserve(table.patterns.size());
  for (const std::string& text : table.patterns) {
    pattern p = parse_pattern(text);
    request r;
    r.name = text;
    r.method = p.method().empty() ? "GET" : std::string(p.method());
    r.path = r.target = request_path_for(p);
    r.host = p.host();
    r.expect = "match " + text;
    out.push_back(std::move(r));
  }
  return out;
}

void verify_or_exit(const route_table& table, const std::vector<request>& requests) {
  checked_router router;
  for (std::size_t i = 0; i < table.patterns.size(); ++i) {
    try {
      router.add(table.patterns[i], static_cast<std::uint32_t>(i));
    } catch (const std::exception& e) {
      fail("table " + table.name + ", route " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  router.freeze();
  auto result = std::make_unique<checked_router::match_result>();
  std::ostringstream wrong;
  for (const request& r : requests) {
    if (r.expect.empty()) continue;
    router.match(r.method, r.path, r.host, *result);
    std::string got = outcome_text(*result);
    if (got != r.expect)
      wrong << "  " << r.name << " (" << r.method << " " << r.target << "): expected " << r.expect
            << ", got " << got << "\n";
  }
  if (!wrong.str().empty())
    fail("table " + table.name + ": requests with the wrong outcome:\n" + wrong.str());
}

}  // namespace waypoint::bench
