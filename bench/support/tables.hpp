// The benchmark's inputs: route tables and request lists read from bench/tables/, the
// requests derived from a table's own patterns (the sweep), and the startup check that
// every table registers in waypoint and every request has the outcome its file expects.
// A benchmark that ran on a table waypoint refuses, or on a request that does not test
// the shape its name claims, would measure the wrong thing, so the check exits loudly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::bench {

// A route table: pattern texts in file order. A route's index is its position.
struct route_table {
  std::string name;
  std::vector<std::string> patterns;

  // The first `n` routes; any prefix of a conflict-free table is conflict-free.
  route_table prefix(std::size_t n) const;
};

// One request: `NAME METHOD TARGET [HOST]  # expect: OUTCOME`.
struct request {
  std::string name;
  std::string method;
  std::string target;
  std::string path;  // the target up to '?': what a router is given
  std::string host;
  std::string expect;  // "match PATTERN", "404", "405 ALLOW", "redirect LOCATION", or empty
};

// The directory holding the tables: $WAYPOINT_BENCH_TABLES, else the source tree's.
std::string tables_directory();

// Reads NAME.routes and NAME.requests (or a named request file); exits on a bad line.
route_table load_table(std::string_view name);
std::vector<request> load_requests(std::string_view file_stem);

// One request per route, built from its pattern: wildcard values that no literal in the
// tables can equal, so each request's own route is the one that should win.
std::vector<request> sweep_requests(const route_table& table);

// Registers `table` in waypoint and checks every request against its expectation (and,
// for sweep requests, that the request's own route wins). On any failure prints what
// went wrong and exits with status 1.
void verify_or_exit(const route_table& table, const std::vector<request>& requests);

}  // namespace waypoint::bench
