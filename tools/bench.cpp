// `waypoint-route bench FILE REQUESTS [--reference] [--min-time SECONDS]`: the cost of
// registering a route table, and of matching each named request against it, as JSON lines.
// Timings are medians of repeated runs after a warm-up; allocations are counted exactly by
// the counting operator new linked into the binary (support/alloc_counter.cpp).
#include "alloc_counter.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "outcome.hpp"
#include "registration.hpp"
#include "tool_error.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <ostream>

namespace waypoint::route_tool {
namespace {

constexpr std::string_view help =
    R"(usage: waypoint-route bench FILE REQUESTS [--reference] [--min-time SECONDS]

Times the registration of FILE's patterns and the match of each request in REQUESTS, whose
lines are
  NAME METHOD TARGET [HOST]
(blank lines and lines starting with '#' are skipped). Prints one JSON line for the
registration, then one per request, in order:
  {"registration_ns_per_route":812.3,"routes":12}
  {"name":"static_deep","kind":"match","ns_per_match":23.4,"allocs_per_match":0}
Each figure is the median of 5 runs of at least --min-time seconds (default 0.2) after a
warm-up; allocations are counted exactly over 16 matches. The router is timed with one
reused result object, as a server would use it; only the match call is timed, not the
parsing of the request line. Lines of FILE that fail to register are reported on stderr as
by 'match' and left out.

options:
  --reference        time waypoint::reference::servemux instead of the router
  --min-time SECONDS the least duration of each timed run (default 0.2)

Exit status: 0 success, 2 on usage or I/O error, or a malformed line in REQUESTS.
)";

using clock_type = std::chrono::steady_clock;

constexpr std::size_t repetitions = 5;  // the median of 5 shrugs off one noisy run
constexpr int allocation_sample = 16;

// Keeps the compiler from dropping a computation whose result nothing reads: the empty asm
// takes the object's address and may read any memory (Google Benchmark's DoNotOptimize).
template <class T>
void keep(T& value) {
#if defined(__GNUC__) || defined(__clang__)
  asm volatile("" : : "r"(&value) : "memory");
#else
  static volatile const void* sink;
  sink = &value;
#endif
}

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Runs `body` in batches until `seconds` have passed; returns nanoseconds per call.
template <class Body>
double ns_per_call(Body& body, std::size_t batch, double seconds) {
  std::size_t calls = 0;
  auto start = clock_type::now();
  double elapsed = 0;
  do {
    for (std::size_t i = 0; i < batch; ++i) body();
    calls += batch;
    elapsed = seconds_since(start);
  } while (elapsed < seconds);
  return elapsed * 1e9 / static_cast<double>(calls);
}

// The number of calls that take about `seconds`, so that reading the clock between batches
// costs nothing measurable. Doubling up to it is also the first part of the warm-up.
template <class Body>
std::size_t calibrate_batch(Body& body, double seconds) {
  constexpr std::size_t max_batch = std::size_t{1} << 30;
  std::size_t batch = 1;
  while (batch < max_batch) {
    auto start = clock_type::now();
    for (std::size_t i = 0; i < batch; ++i) body();
    if (seconds_since(start) >= seconds) break;
    batch *= 2;
  }
  return batch;
}

double median(std::array<double, repetitions> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[repetitions / 2];
}

template <class Body>
double median_ns_per_call(Body& body, double min_time) {
  std::size_t batch = calibrate_batch(body, std::min(1e-3, min_time / 20));
  ns_per_call(body, batch, min_time / 10);  // warm-up
  std::array<double, repetitions> samples{};
  for (double& s : samples) s = ns_per_call(body, batch, min_time);
  return median(samples);
}

std::string allocation_figure(double allocations) {
  bool whole = allocations == static_cast<double>(static_cast<std::uint64_t>(allocations));
  return json_number(allocations, whole ? 0 : 2);
}

// The table registered once, into a fresh matcher; nanoseconds spent in add() and freeze().
template <class Matcher>
double register_once_ns(const std::vector<source_line>& lines) {
  Matcher matcher;
  auto start = clock_type::now();
  for (const source_line& line : lines) matcher.add(line.text, line.number);
  if constexpr (requires { matcher.freeze(); }) matcher.freeze();
  auto elapsed = clock_type::now() - start;
  keep(matcher);
  return std::chrono::duration<double, std::nano>(elapsed).count();
}

// Median nanoseconds to register the whole table; the matcher's construction and
// destruction stay outside the clock.
template <class Matcher>
double registration_ns(const std::vector<source_line>& lines, double min_time) {
  auto run = [&](double seconds) {
    double total = 0;
    std::size_t rounds = 0;
    auto start = clock_type::now();
    do {
      total += register_once_ns<Matcher>(lines);
      ++rounds;
    } while (seconds_since(start) < seconds);
    return total / static_cast<double>(rounds);
  };
  run(min_time / 10);  // warm-up
  std::array<double, repetitions> samples{};
  for (double& s : samples) s = run(min_time);
  return median(samples);
}

struct bench_request {
  std::string name;
  request value;
};

std::vector<bench_request> read_bench_requests(const std::string& file) {
  std::vector<bench_request> out;
  for (const source_line& line : read_content_file(file)) {
    std::string where = file + ":" + std::to_string(line.number) + ": ";
    std::vector<std::string_view> fields = split_fields(line.text);
    if (fields.size() < 3 || fields.size() > 4)
      throw tool_error(where + "expected NAME METHOD TARGET [HOST]");
    request_parse parsed = parse_request(std::span(fields).subspan(1));
    if (!parsed.ok()) throw tool_error(where + parsed.error);
    out.push_back({std::string(fields[0]), std::move(parsed.value)});
  }
  return out;
}

// The lines that register cleanly; the others are reported as `match` reports them.
template <class Matcher>
std::vector<source_line> registrable_lines(const std::vector<source_line>& lines, command_io io) {
  Matcher probe;
  std::vector<registration_problem> problems = register_lines(probe, lines);
  std::vector<source_line> good;
  std::size_t next = 0;
  for (const source_line& line : lines) {
    if (next < problems.size() && problems[next].line == line.number) {
      io.err << json_report(problems[next++]) << '\n';
      continue;
    }
    good.push_back(line);
  }
  return good;
}

void print_request_line(std::ostream& out, const bench_request& r, match_status status, double ns,
                        double allocations) {
  std::string line = "{\"name\":" + json_string(r.name) +
                     ",\"kind\":" + json_string(to_string(status)) +
                     ",\"ns_per_match\":" + json_number(ns, 1) +
                     ",\"allocs_per_match\":" + allocation_figure(allocations) + "}";
  out << line << '\n' << std::flush;
}

void bench_router(const std::vector<source_line>& lines, const std::vector<bench_request>& requests,
                  double min_time, std::ostream& out) {
  line_router router;
  for (const source_line& line : lines) router.add(line.text, line.number);
  router.freeze();
  // One result object reused for every call, as a server thread would: a result is large
  // (it owns its decode storage) and lives outside the timed loop.
  auto result = std::make_unique<line_router::match_result>();
  for (const bench_request& r : requests) {
    const request& q = r.value;
    auto body = [&] {
      router.match(q.method, q.path, q.host, *result);
      keep(*result);
    };
    body();
    match_status status = result->status();
    double ns = median_ns_per_call(body, min_time);
    print_request_line(out, r, status, ns, testing::allocations_per_call(body, allocation_sample));
  }
}

void bench_reference(const std::vector<source_line>& lines,
                     const std::vector<bench_request>& requests, double min_time,
                     std::ostream& out) {
  line_reference reference;
  for (const source_line& line : lines) reference.add(line.text, line.number);
  for (const bench_request& r : requests) {
    const request& q = r.value;
    auto body = [&] {
      line_reference::result result = reference.match(q.method, q.path, q.host);
      keep(result);
    };
    match_status status = reference.match(q.method, q.path, q.host).status;
    double ns = median_ns_per_call(body, min_time);
    print_request_line(out, r, status, ns, testing::allocations_per_call(body, allocation_sample));
  }
}

void print_registration_line(std::ostream& out, double table_ns, std::size_t routes) {
  double per_route = routes == 0 ? 0 : table_ns / static_cast<double>(routes);
  out << "{\"registration_ns_per_route\":" << json_number(per_route, 1) << ",\"routes\":" << routes
      << "}\n"
      << std::flush;
}

}  // namespace

int run_bench(std::span<const std::string_view> args, command_io io) {
  arguments a = parse_arguments("bench", args, {.reference = true, .min_time = true});
  if (a.help) {
    io.out << help;
    return exit_clean;
  }
  expect_positional("bench", a, 2, 2);
  std::vector<source_line> table = read_content_file(a.positional[0]);
  std::vector<bench_request> requests = read_bench_requests(a.positional[1]);
  if (a.reference) {
    std::vector<source_line> lines = registrable_lines<line_reference>(table, io);
    print_registration_line(io.out, registration_ns<line_reference>(lines, a.min_time),
                            lines.size());
    bench_reference(lines, requests, a.min_time, io.out);
    return exit_clean;
  }
  std::vector<source_line> lines = registrable_lines<line_router>(table, io);
  print_registration_line(io.out, registration_ns<line_router>(lines, a.min_time), lines.size());
  bench_router(lines, requests, a.min_time, io.out);
  return exit_clean;
}

}  // namespace waypoint::route_tool
