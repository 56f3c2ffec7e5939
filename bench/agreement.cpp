// Prints, as Markdown, every route a router refused and every request it answers
// differently from waypoint, for each table and its listed and sweep requests. A peer that
// cannot express a route or picks another winner is reported here, never dropped from the
// numbers in silence. The reference matcher is the oracle: a row against it is a bug.
//
//   waypoint_bench_agreement [--rows N] [--table NAME]...
//     --rows N      at most N request rows per table and router (default 20; 0 for all)
//     --table NAME  only this table (repeatable); NAME:N is the first N routes of NAME with
//                   the growth requests. Default: gateway, rest200, mix1000, unique10k, and
//                   unique10k:10, :100, :1000 (the smaller tables of the scale suite)
#include "support/implementations.hpp"
#include "support/peers.hpp"
#include "support/tables.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace waypoint::bench {
namespace {

// Tables above this size skip the table-order pass: for RESTinio it costs tens of
// seconds, and mix1000 already shows the effect.
constexpr std::size_t file_order_limit = 1000;

struct table_input {
  route_table table;
  std::vector<request> requests;  // listed requests, then the sweep
  std::size_t listed = 0;
};

std::string cell(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// Why a row differs, in a few words: the kind of outcome first.
std::string kind_of(const outcome& ours, const outcome& theirs) {
  if (ours.status != theirs.status)
    return std::string(to_string(ours.status)) + " -> " + std::string(to_string(theirs.status));
  if (ours.pattern != theirs.pattern) return "other winner";
  return "other values";
}

struct report {
  std::size_t rows_per_router;
  std::map<std::string, std::size_t> total_by_router;

  template <class Impl>
  void compare(const table_input& in, const waypoint_impl& ours) {
    auto prepared = Impl::prepare(in.table);
    Impl theirs(prepared);
    std::string name(Impl::name);
    std::map<std::string, std::size_t> kinds;
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < in.requests.size(); ++i) {
      const request& r = in.requests[i];
      outcome a = ours.answer(r);
      outcome b = theirs.answer(r);
      if (a == b) continue;
      std::string kind = kind_of(a, b);
      ++kinds[kind];
      std::string label = i < in.listed ? r.name : "sweep";
      rows.push_back("| " + name + " | " + label + " | `" + cell(r.method + " " + r.target) +
                     "` | " + cell(a.to_string()) + " | " + cell(b.to_string()) + " |");
    }
    // A rejection at index patterns.size() is the router refusing the table as a whole.
    bool whole = false;
    for (const rejection& r : theirs.rejected()) whole |= r.route >= in.table.patterns.size();
    std::size_t refused = whole ? in.table.patterns.size() : theirs.rejected().size();
    std::printf("\n**%s**: refused %zu of %zu routes%s; disagrees on %zu of %zu requests",
                name.c_str(), refused, in.table.patterns.size(), whole ? " (the whole table)" : "",
                rows.size(), in.requests.size());
    if (!kinds.empty()) {
      std::printf(" (");
      const char* sep = "";
      for (const auto& [kind, count] : kinds) {
        std::printf("%s%s: %zu", sep, kind.c_str(), count);
        sep = ", ";
      }
      std::printf(")");
    }
    std::printf(".\n");
    if constexpr (requires { Impl::syntax; }) {
      if (in.table.patterns.size() <= file_order_limit) print_file_order<Impl>(in, ours);
    }
    total_by_router[name] += rows.size() + theirs.rejected().size();
    print_refusals(in, theirs.rejected());
    if (rows.empty()) return;
    if (whole) {
      std::printf("\n(Its %zu answers are not listed: it holds none of the table's routes.)\n",
                  rows.size());
      return;
    }
    std::printf("\n| router | request | method target | waypoint | %s |\n|---|---|---|---|---|\n",
                name.c_str());
    std::size_t shown = rows_per_router ? std::min(rows.size(), rows_per_router) : rows.size();
    for (std::size_t i = 0; i < shown; ++i) std::printf("%s\n", rows[i].c_str());
    if (shown < rows.size()) std::printf("| ... | %zu more | | | |\n", rows.size() - shown);
  }

  // The same peer given the routes in table order: how many answers change for the worse
  // when a first-match router does not get them most specific first.
  template <class Impl>
  void print_file_order(const table_input& in, const waypoint_impl& ours) {
    auto prepared = translate(in.table, Impl::syntax, peer_order::file);
    Impl theirs(prepared);
    std::size_t differ = 0, winners = 0;
    std::string example;
    for (const request& r : in.requests) {
      outcome a = ours.answer(r);
      outcome b = theirs.answer(r);
      if (a == b) continue;
      ++differ;
      if (a.status == b.status && a.pattern != b.pattern) {
        if (!winners++) example = "`" + r.method + " " + r.target + "` goes to `" + b.pattern + "`";
      }
    }
    std::printf(
        "Given the routes in table order instead of precedence order, it disagrees on %zu "
        "requests, %zu of them with another winner%s%s.\n",
        differ, winners, example.empty() ? "" : ", e.g. ", example.c_str());
  }

  void print_refusals(const table_input& in, const std::vector<rejection>& refused) {
    if (refused.empty()) return;
    std::printf("\n| refused route | reason |\n|---|---|\n");
    std::size_t shown =
        rows_per_router ? std::min(refused.size(), rows_per_router) : refused.size();
    for (std::size_t i = 0; i < shown; ++i) {
      const rejection& r = refused[i];
      std::string route = r.route < in.table.patterns.size()
                              ? "`" + in.table.patterns[r.route] + "`"
                              : "(whole tree)";
      std::printf("| %s | %s |\n", cell(route).c_str(), cell(r.reason).c_str());
    }
    if (shown < refused.size()) std::printf("| ... %zu more | |\n", refused.size() - shown);
  }
};

// NAME, or NAME:N for the first N routes of NAME asked the growth requests (the tables
// of the scale suite).
table_input load(const std::string& spec) {
  std::size_t colon = spec.find(':');
  std::string name = spec.substr(0, colon);
  table_input in{load_table(name), load_requests(colon == std::string::npos ? name : "growth"), 0};
  if (colon != std::string::npos) in.table = in.table.prefix(std::stoul(spec.substr(colon + 1)));
  in.listed = in.requests.size();
  verify_or_exit(in.table, in.requests);
  auto sweep = sweep_requests(in.table);
  verify_or_exit(in.table, sweep);
  in.requests.insert(in.requests.end(), sweep.begin(), sweep.end());
  return in;
}

}  // namespace
}  // namespace waypoint::bench

int main(int argc, char** argv) {
  using namespace waypoint::bench;
  report rep{20, {}};
  std::vector<std::string> tables;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
      rep.rows_per_router = std::strtoul(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--table") == 0 && i + 1 < argc) {
      tables.emplace_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--rows N] [--table NAME]...\n", argv[0]);
      return 2;
    }
  }
  if (tables.empty())
    tables = {"gateway",      "rest200",       "mix1000",       "unique10k",
              "unique10k:10", "unique10k:100", "unique10k:1000"};
  for (const std::string& name : tables) {
    table_input in = load(name);
    std::printf("\n### %s: %zu routes, %zu listed requests and %zu sweep requests\n",
                in.table.name.c_str(), in.table.patterns.size(), in.listed,
                in.requests.size() - in.listed);
    waypoint_impl ours(in.table);
    rep.compare<reference_impl>(in, ours);
#if defined(WAYPOINT_BENCH_HAVE_R3)
    rep.compare<r3_impl>(in, ours);
#endif
#if defined(WAYPOINT_BENCH_HAVE_RESTINIO)
    rep.compare<restinio_impl>(in, ours);
#endif
  }
  // Exit status: non-zero when the reference disagrees, which is a bug in one of the two.
  return rep.total_by_router["reference"] == 0 ? 0 : 3;
}
