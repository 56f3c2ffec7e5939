// Golden-file tests of waypoint-route: each case runs the built binary from this directory
// (so paths in its output are the short relative ones below) and compares its stdout and
// stderr with golden/<name>.stdout and golden/<name>.stderr, and its exit status with the
// table. A difference fails the case and prints a unified diff.
//
// WAYPOINT_UPDATE_GOLDENS=1 rewrites the golden files from the current output instead;
// read every change (git diff tests/tool/golden) before keeping it.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path test_dir = WAYPOINT_ROUTE_TOOL_TEST_DIR;
const std::string tool = WAYPOINT_ROUTE_TOOL;
// Under this build's own tree, so that two builds running their tests at once (dev and
// asan in CI) never write the same files.
const fs::path scratch_dir = WAYPOINT_ROUTE_TOOL_SCRATCH_DIR;

// A single-quoted shell word.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct run_result {
  int status = -1;
  fs::path out;
  fs::path err;
};

// Runs the tool with `arguments` (shell words) in test_dir, stdin from `input` (relative to
// test_dir; empty for none), capturing both streams into files named after `name`.
run_result run_tool(const std::string& name, const std::string& arguments,
                    const std::string& input) {
  fs::create_directories(scratch_dir);
  run_result r{-1, scratch_dir / (name + ".stdout"), scratch_dir / (name + ".stderr")};
  std::string command = "cd " + shell_quote(test_dir.string()) + " && " + shell_quote(tool) + " " +
                        arguments + " < " + (input.empty() ? "/dev/null" : shell_quote(input)) +
                        " > " + shell_quote(r.out.string()) + " 2> " + shell_quote(r.err.string());
  int raw = std::system(command.c_str());
  r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

bool updating_goldens() {
  const char* v = std::getenv("WAYPOINT_UPDATE_GOLDENS");
  return v != nullptr && std::string(v) == "1";
}

// Compares `actual` with the golden file; the failure message carries `diff -u`.
void expect_same_as_golden(const fs::path& golden, const fs::path& actual) {
  if (updating_goldens()) {
    fs::copy_file(actual, golden, fs::copy_options::overwrite_existing);
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; see docs/route-tool.md to create it";
  if (read_file(golden) == read_file(actual)) return;
  fs::path diff = actual.string() + ".diff";
  std::string command = "diff -u " + shell_quote(golden.string()) + " " +
                        shell_quote(actual.string()) + " > " + shell_quote(diff.string());
  [[maybe_unused]] int ignored = std::system(command.c_str());
  ADD_FAILURE() << "output differs from " << golden << ":\n" << read_file(diff);
}

struct golden_case {
  std::string name;       // the test's name
  std::string arguments;  // shell words after the tool's path, run in tests/tool
  std::string input;      // stdin, relative to tests/tool; empty for /dev/null
  int exit_status;
  std::string golden;  // golden/<golden>.stdout and .stderr; defaults to name
};

void PrintTo(const golden_case& c, std::ostream* os) { *os << c.name; }

const std::string examples = "../../tools/examples/";

const std::vector<golden_case> cases = {
    // The tool and its commands describe themselves.
    {"help", "--help", "", 0, ""},
    {"no_command_prints_usage", "", "", 2, ""},
    {"unknown_command", "frobnicate", "", 2, ""},
    {"check_help", "check --help", "", 0, ""},
    {"match_help", "match --help", "", 0, ""},
    {"explain_help", "explain --help", "", 0, ""},
    {"bench_help", "bench --help", "", 0, ""},
    {"openapi_help", "openapi --help", "", 0, ""},
    // openapi: every kind of pattern as an OpenAPI path, and the refused lines on stderr.
    {"openapi_skeleton", "openapi input/routes.txt", "", 0, ""},
    // check: a clean table, every kind of problem, and the usage and I/O errors.
    {"check_clean", "check " + examples + "routes.txt", "", 0, ""},
    {"check_reports_every_problem", "check input/problems.txt", "", 1, ""},
    {"check_missing_file", "check input/no-such-file.txt", "", 2, ""},
    {"check_directory", "check input", "", 2, ""},
    {"check_missing_argument", "check", "", 2, ""},
    {"check_unknown_option", "check --frob input/routes.txt", "", 2, ""},
    // match: every outcome kind, the stderr report of refused lines, and the same answers
    // from the reference matcher (it shares the golden files: the two must agree).
    {"match_every_outcome", "match input/routes.txt", "input/requests.txt", 0, ""},
    {"match_reference_agrees", "match input/routes.txt --reference", "input/requests.txt", 0,
     "match_every_outcome"},
    {"match_examples", "match " + examples + "routes.txt", examples + "requests.txt", 0, ""},
    {"match_reference_examples", "match --reference " + examples + "routes.txt",
     examples + "requests.txt", 0, "match_examples"},
    {"match_missing_file", "match input/no-such-file.txt", "input/requests.txt", 2, ""},
    {"match_refused_lines_only", "match input/problems.txt", "", 0, ""},
    // explain: each outcome, for people.
    {"explain_match_with_losers",
     "explain " + examples + "routes.txt GET /v1/tracker/42 admin.example.com", "", 0, ""},
    {"explain_match_alone", "explain " + examples + "routes.txt GET /v1/tracker/42/events/7", "", 0,
     ""},
    {"explain_not_found_nearest", "explain " + examples + "routes.txt GET /v1/trackr/42/events", "",
     0, ""},
    {"explain_not_found_nothing_near", "explain " + examples + "routes.txt GET /nothing", "", 0,
     ""},
    {"explain_method_not_allowed", "explain " + examples + "routes.txt PATCH /v1/tracker/42", "", 0,
     ""},
    {"explain_redirect_trailing_slash",
     "explain " + examples + "routes.txt GET '/images?size=large'", "", 0, ""},
    {"explain_redirect_unclean_path", "explain " + examples + "routes.txt GET /v1//tracker/./42",
     "", 0, ""},
    {"explain_bad_request_path", "explain " + examples + "routes.txt GET /v1/tracker/%zz", "", 0,
     ""},
    {"explain_bad_request_target", "explain " + examples + "routes.txt OPTIONS '*'", "", 0, ""},
    {"explain_reports_skipped_lines", "explain input/routes.txt GET /v1/items/7", "", 0, ""},
    {"explain_missing_target", "explain input/routes.txt GET", "", 2, ""},
    // bench: input errors (its timings are checked for shape below, never for speed).
    {"bench_malformed_request_line", "bench input/routes.txt input/bench-malformed.txt", "", 2, ""},
    {"bench_bad_min_time", "bench input/routes.txt input/bench-malformed.txt --min-time 0", "", 2,
     ""},
};

class RouteToolGolden : public testing::TestWithParam<golden_case> {};

TEST_P(RouteToolGolden, OutputAndExitStatusMatchGolden) {
  const golden_case& c = GetParam();
  run_result r = run_tool(c.name, c.arguments, c.input);
  EXPECT_EQ(r.status, c.exit_status) << "waypoint-route " << c.arguments;
  std::string golden = c.golden.empty() ? c.name : c.golden;
  // A case that shares another's golden files only compares: it never rewrites them.
  if (!c.golden.empty() && updating_goldens()) {
    EXPECT_EQ(read_file(r.out), read_file(test_dir / "golden" / (golden + ".stdout")));
    return;
  }
  expect_same_as_golden(test_dir / "golden" / (golden + ".stdout"), r.out);
  expect_same_as_golden(test_dir / "golden" / (golden + ".stderr"), r.err);
}

INSTANTIATE_TEST_SUITE_P(Cases, RouteToolGolden, testing::ValuesIn(cases),
                         [](const testing::TestParamInfo<golden_case>& info) {
                           return info.param.name;
                         });

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Whether `line` has the form `shape`, in which @S stands for a JSON string without escapes
// and @N for a non-negative decimal number; every other byte stands for itself. (std::regex
// would do, but GCC 12 warns inside <regex> under the asan preset's flags.)
bool has_shape(std::string_view line, std::string_view shape) {
  auto digits = [&](std::size_t& i) {
    std::size_t start = i;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    return i > start;
  };
  std::size_t i = 0;
  for (std::size_t s = 0; s < shape.size(); ++s) {
    if (shape.substr(s, 2) == "@S") {
      if (i == line.size() || line[i] != '"') return false;
      std::size_t close = line.find_first_of("\"\\", i + 1);
      if (close == std::string_view::npos || line[close] != '"') return false;
      i = close + 1;
      ++s;
    } else if (shape.substr(s, 2) == "@N") {
      if (!digits(i)) return false;
      if (i < line.size() && line[i] == '.' && (++i, !digits(i))) return false;
      ++s;
    } else if (i == line.size() || line[i++] != shape[s]) {
      return false;
    }
  }
  return i == line.size();
}

TEST(HasShape, AcceptsTheShapeAndRejectsNearMisses) {
  constexpr std::string_view shape = R"({"a":@S,"b":@N})";
  EXPECT_TRUE(has_shape(R"({"a":"x","b":1.5})", shape));
  EXPECT_TRUE(has_shape(R"({"a":"","b":0})", shape));
  EXPECT_FALSE(has_shape(R"({"a":"x","b":1.})", shape));
  EXPECT_FALSE(has_shape(R"({"a":"x","b":-1})", shape));
  EXPECT_FALSE(has_shape(R"({"a":x,"b":1})", shape));
  EXPECT_FALSE(has_shape(R"({"a":"x","b":1} )", shape));
}

// bench prints valid JSON lines of a fixed shape, one per request after the registration
// line; the router allocates nothing for any outcome. Speed is never asserted.
void check_bench_shape(const std::string& name, const std::string& options, bool zero_allocations) {
  run_result r = run_tool(name,
                          "bench " + examples + "routes.txt " + examples +
                              "bench-requests.txt --min-time 0.001 " + options,
                          "");
  ASSERT_EQ(r.status, 0) << read_file(r.err);
  EXPECT_EQ(read_file(r.err), "");
  std::vector<std::string> lines = lines_of(read_file(r.out));
  ASSERT_EQ(lines.size(), 11u) << read_file(r.out);
  EXPECT_TRUE(has_shape(lines[0], R"({"registration_ns_per_route":@N,"routes":11})")) << lines[0];
  const std::set<std::string> kinds = {"match", "not_found", "method_not_allowed", "redirect",
                                       "bad_request"};
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    EXPECT_TRUE(has_shape(line, R"({"name":@S,"kind":@S,"ns_per_match":@N,"allocs_per_match":@N})"))
        << line;
    std::size_t kind_start = line.find(R"("kind":")") + 8;
    std::string kind = line.substr(kind_start, line.find('"', kind_start) - kind_start);
    EXPECT_TRUE(kinds.contains(kind)) << line;
    if (zero_allocations) {
      EXPECT_TRUE(line.ends_with(R"("allocs_per_match":0})")) << line;
    }
  }
  EXPECT_TRUE(lines[1].starts_with(R"({"name":"root","kind":"match",)")) << lines[1];
  EXPECT_TRUE(lines[10].starts_with(R"({"name":"redirect","kind":"redirect",)")) << lines[10];
}

TEST(RouteToolBench, RouterLinesHaveTheDocumentedShapeAndNoAllocations) {
  check_bench_shape("bench_router", "", true);
}

TEST(RouteToolBench, ReferenceLinesHaveTheDocumentedShape) {
  check_bench_shape("bench_reference", "--reference", false);
}

}  // namespace
