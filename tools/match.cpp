// `waypoint-route match FILE [--reference]`: answers requests from stdin with one JSON line
// each, for scripts, golden tests, and comparing the router with the reference matcher.
#include "commands.hpp"
#include "outcome.hpp"
#include "registration.hpp"
#include "tool_error.hpp"

#include <istream>
#include <ostream>

namespace waypoint::route_tool {
namespace {

constexpr std::string_view help = R"(usage: waypoint-route match FILE [--reference] < REQUESTS

Registers the patterns of FILE in file order; each line that fails is skipped and reported
on stderr as one JSON object:
  {"line":3,"pattern":"GET /a/{x","error":"..."}
Then reads requests from stdin, one per line:
  METHOD TARGET [HOST]
TARGET is as on an HTTP/1.1 request line: an escaped path with an optional ?query, or an
absolute URL (http://host/path?query) whose host is used instead of HOST. Blank lines and
lines starting with '#' are skipped; every other line gets exactly one JSON line on stdout,
in input order:
  {"kind":"match","pattern":"GET /v1/tracker/{id}","values":{"id":"42"}}
  {"kind":"not_found"}
  {"kind":"method_not_allowed","allow":"GET, HEAD"}
  {"kind":"redirect","status":307,"location":"/images/?q=1"}
  {"kind":"bad_request","error":"..."}
"pattern" is as written in FILE; values are percent-decoded, and a byte that is not part of
well-formed UTF-8 prints as U+FFFD. --reference answers in exactly the same form, so the
two outputs can be compared with diff.

options:
  --reference   answer with waypoint::reference::servemux instead of the router

Exit status: 0 after the last request, 2 on usage or I/O error.
)";

template <class Matcher>
void answer_requests(const Matcher& matcher, command_io io) {
  content_line_reader reader(io.in);
  for (source_line line; reader.next(line);) {
    std::vector<std::string_view> fields = split_fields(line.text);
    request_parse parsed = parse_request(fields);
    outcome o = parsed.ok() ? answer(matcher, parsed.value) : bad_request_outcome(parsed.error);
    // Flushed per line, so that a program can drive the tool as a coprocess.
    io.out << to_json(o) << '\n' << std::flush;
  }
  if (io.in.bad()) throw tool_error("match: cannot read the requests from stdin");
}

template <class Matcher>
void load(Matcher& matcher, const std::string& file, command_io io) {
  for (const registration_problem& p : register_lines(matcher, read_content_file(file)))
    io.err << json_report(p) << '\n';
}

}  // namespace

int run_match(std::span<const std::string_view> args, command_io io) {
  arguments a = parse_arguments("match", args, {.reference = true});
  if (a.help) {
    io.out << help;
    return exit_clean;
  }
  expect_positional("match", a, 1, 1);
  if (a.reference) {
    line_reference reference;
    load(reference, a.positional[0], io);
    answer_requests(reference, io);
    return exit_clean;
  }
  line_router router;
  load(router, a.positional[0], io);
  router.freeze();
  answer_requests(router, io);
  return exit_clean;
}

}  // namespace waypoint::route_tool
