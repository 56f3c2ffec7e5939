// The access log layer: one JSON line per request, built in a per-thread buffer and
// handed on with one call (a sink, the application's logger, or one write(2)).
#include "waypoint/app/middleware.hpp"
#include "waypoint/app/trace_context.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include <waypoint/json_string.hpp>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <exception>

namespace waypoint::app {
namespace {

using waypoint::detail::append_decimal;

using std::chrono::system_clock;

// When the request reached the access log layer; a request-scoped value, so the layer
// stays one shared object.
struct access_log_start {
  std::chrono::steady_clock::time_point at;
};

// "2026-12-01T17:04:05.123456Z". gmtime_r runs once per second per thread: the text of
// the current second is kept.
void append_time(std::string& out, system_clock::time_point now) {
  thread_local std::time_t cached_second = -1;
  thread_local char cached_text[20];  // "YYYY-MM-DDTHH:MM:SS"
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch());
  std::time_t second = static_cast<std::time_t>(micros.count() / 1'000'000);
  if (second != cached_second) {
    std::tm utc{};
    gmtime_r(&second, &utc);
    std::strftime(cached_text, sizeof cached_text, "%Y-%m-%dT%H:%M:%S", &utc);
    cached_second = second;
  }
  out.append(cached_text, 19);
  char fraction[8] = {'.', '0', '0', '0', '0', '0', '0', 'Z'};
  auto part = static_cast<unsigned>(micros.count() % 1'000'000);
  for (int i = 6; i >= 1; --i, part /= 10) fraction[i] = static_cast<char>('0' + part % 10);
  out.append(fraction, sizeof fraction);
}

// A client's text, clipped and escaped; null when empty and `null_when_empty`.
void append_client_text(std::string& out, std::string_view text, bool null_when_empty = false) {
  if (text.empty() && null_when_empty) {
    out += "null";
    return;
  }
  std::string clipped;  // allocates only for a field too long to log whole
  waypoint::append_json_string(out, detail::clip_client_text(text, clipped));
}

struct line_facts {
  int status;
  bool failed;  // an exception passes through: the answer is written outside this layer
  std::chrono::steady_clock::duration elapsed;
  system_clock::time_point now;
};

void append_field(std::string& line, access_field field, context& ctx, const line_facts& facts) {
  switch (field) {
    case access_field::time:
      line += "\"time\":\"";
      append_time(line, facts.now);
      line += '"';
      return;
    case access_field::remote:
      line += "\"remote\":";
      append_client_text(line, ctx.endpoints().remote.address, true);
      return;
    case access_field::method:
      line += "\"method\":";
      append_client_text(line, ctx.method());
      return;
    case access_field::path:
      line += "\"path\":";
      append_client_text(line, ctx.path());
      return;
    case access_field::route:
      line += "\"route\":";
      if (ctx.route_pattern().text().empty())
        line += "null";
      else
        waypoint::append_json_string(line, ctx.route_pattern().text());
      return;
    case access_field::status:
      line += "\"status\":";
      append_decimal(line, static_cast<std::uint64_t>(facts.status));
      return;
    case access_field::bytes:
      line += "\"bytes\":";
      if (facts.failed)
        line += "null";
      else
        append_decimal(line, ctx.body_size());
      return;
    case access_field::duration:
      line += "\"duration_us\":";
      append_decimal(line, static_cast<std::uint64_t>(
                               std::chrono::duration_cast<std::chrono::microseconds>(facts.elapsed)
                                   .count()));
      return;
    case access_field::user_agent:
      line += "\"user_agent\":";
      append_client_text(line, ctx.header(http::field::user_agent), true);
      return;
    case access_field::request_id:
      line += "\"request_id\":";
      waypoint::append_json_string(line, ctx.request_id());
      return;
    case access_field::trace_id:
      line += "\"trace_id\":";
      if (const trace_context* trace = ctx.find<trace_context>()) {
        auto id = trace->trace_id_hex();
        waypoint::append_json_string(line, std::string_view(id.data(), id.size()));
      } else {
        line += "null";
      }
      return;
  }
}

// The line for this request in the calling thread's buffer, reused by the next line, so
// a steady stream of requests allocates nothing here once it has grown.
std::string& access_line(context& ctx, const std::vector<access_field>& fields,
                         const line_facts& facts) {
  thread_local std::string line;
  line.clear();
  line += '{';
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) line += ',';
    append_field(line, fields[i], ctx, facts);
  }
  line += '}';
  return line;
}

// One write(2) for the line and its newline; a short write (a full pipe) is finished
// with more, which a reader may then see interleaved, the price of taking no lock.
void write_line(int fd, std::string& line) noexcept {
  line += '\n';
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // nowhere to log to: the request must not fail for it
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  line.pop_back();
}

}  // namespace

middleware access_log(access_log_options options) {
  auto write = [options = std::move(options)](context& ctx, std::exception_ptr& error) {
    int status = detail::answered_status(ctx, error);
    const access_log_start* start = ctx.find<access_log_start>();
    auto elapsed = start ? std::chrono::steady_clock::now() - start->at
                         : std::chrono::steady_clock::duration::zero();
    std::string& line = access_line(ctx, options.fields, {status, error != nullptr, elapsed, system_clock::now()});
    if (options.sink)
      options.sink(line);
    else if (options.fd >= 0)
      write_line(options.fd, line);
    else
      ctx.app().log(line);
  };
  return layer_hooks{[](context& ctx) {
                       ctx.set<access_log_start>(std::chrono::steady_clock::now());
                       return true;
                     },
                     std::move(write)};
}

}  // namespace waypoint::app
