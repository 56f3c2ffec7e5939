// Reading and checking the benchmark tables (see tables.hpp).
#include "tables.hpp"

#include "waypoint/pattern.hpp"
#include "waypoint/router.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read " + path + " (set WAYPOINT_BENCH_TABLES to bench/tables)");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool is_content(std::string_view line) { return !line.empty() && line.front() != '#'; }

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

// A value for wildcard `name` that starts with a digit: no literal in bench/tables does.
std::string example_value(std::string_view name) { return "7" + std::string(name); }

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
  for (const std::string& raw : read_lines(tables_directory() + "/" + table.name + ".routes")) {
    std::string_view line = trim(raw);
    if (is_content(line)) table.patterns.emplace_back(line);
  }
  if (table.patterns.empty()) fail("table " + table.name + " has no routes");
  return table;
}

std::vector<request> load_requests(std::string_view file_stem) {
  std::string path = tables_directory() + "/" + std::string(file_stem) + ".requests";
  std::vector<request> out;
  std::size_t number = 0;
  for (const std::string& raw : read_lines(path)) {
    ++number;
    std::string_view line = trim(raw);
    if (!is_content(line)) continue;
    request r;
    if (std::size_t hash = line.find(" # expect: "); hash != std::string_view::npos) {
      r.expect = std::string(trim(line.substr(hash + 11)));
      line = trim(line.substr(0, hash));
    }
    auto fields = fields_of(line);
    if (fields.size() < 3 || fields.size() > 4)
      fail(path + ":" + std::to_string(number) + ": want NAME METHOD TARGET [HOST]");
    r.name = fields[0];
    r.method = fields[1];
    r.target = fields[2];
    r.path = r.target.substr(0, r.target.find('?'));
    if (fields.size() == 4) r.host = fields[3];
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
