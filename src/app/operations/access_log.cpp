// The access log layer: one JSON line per request, built in a per-thread buffer and
// handed on with one call (a sink or the application's logger), or, to a descriptor,
// gathered per thread and written once the event loop's ready handlers have run: under
// load the lines of one pass of the loop share a write(2), each write whole lines.
#include "waypoint/app/operations/access_log.hpp"

#include "waypoint/app/middleware.hpp"
#include "waypoint/app/operations/trace_context.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include <waypoint/json_string.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

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
  detail::append_log_text(out, text);
}

struct line_facts {
  int status;
  bool failed;  // an exception passes through: the answer is written outside this layer
  std::chrono::steady_clock::duration elapsed;
  system_clock::time_point now;
};

// A JSON string, or null when `text` is empty.
void append_string_or_null(std::string& line, std::string_view text) {
  if (text.empty())
    line += "null";
  else
    waypoint::append_json_string(line, text);
}

// The request's protocol as its version says it (20: a stream of an HTTP/2 connection).
void append_protocol(std::string& line, unsigned version) {
  line += version == 20 ? "\"HTTP/2\"" : version == 10 ? "\"HTTP/1.0\"" : "\"HTTP/1.1\"";
}

// The trace id from tracing(), null without it.
void append_trace_id(std::string& line, context& ctx) {
  if (const trace_context* trace = ctx.find<trace_context>()) {
    auto id = trace->trace_id_hex();
    waypoint::append_json_string(line, std::string_view(id.data(), id.size()));
  } else {
    line += "null";
  }
}

// A field of the request: what the client sent, what the router matched, who it was.
void append_request_field(std::string& line, access_field field, context& ctx) {
  switch (field) {
    case access_field::remote:
      line += "\"remote\":";
      return append_client_text(line, ctx.endpoints().remote.address, true);
    case access_field::method:
      line += "\"method\":";
      return append_client_text(line, ctx.method());
    case access_field::path:
      line += "\"path\":";
      return append_client_text(line, ctx.path());
    case access_field::protocol:
      line += "\"protocol\":";
      return append_protocol(line, ctx.request().version());
    case access_field::route:
      line += "\"route\":";
      return append_string_or_null(line, ctx.route_pattern().text());
    case access_field::user_agent:
      line += "\"user_agent\":";
      return append_client_text(line, ctx.header(http::field::user_agent), true);
    case access_field::request_id:
      line += "\"request_id\":";
      return waypoint::append_json_string(line, ctx.request_id());
    case access_field::trace_id:
      line += "\"trace_id\":";
      return append_trace_id(line, ctx);
    default:
      return;  // the answer's fields
  }
}

// A field of the answer: when, which status, how many body bytes, how long it took.
void append_answer_field(std::string& line, access_field field, context& ctx,
                         const line_facts& facts) {
  using std::chrono::microseconds;
  switch (field) {
    case access_field::time:
      line += "\"time\":\"";
      append_time(line, facts.now);
      line += '"';
      return;
    case access_field::status:
      line += "\"status\":";
      return append_decimal(line, static_cast<std::uint64_t>(facts.status));
    case access_field::bytes:
      line += "\"bytes\":";
      if (facts.failed)
        line += "null";
      else
        append_decimal(line, ctx.body_size());
      return;
    case access_field::duration:
      line += "\"duration_us\":";
      return append_decimal(line,
                            static_cast<std::uint64_t>(
                                std::chrono::duration_cast<microseconds>(facts.elapsed).count()));
    default:
      return;  // the request's fields
  }
}

void append_field(std::string& line, access_field field, context& ctx, const line_facts& facts) {
  switch (field) {
    case access_field::time:
    case access_field::status:
    case access_field::bytes:
    case access_field::duration:
      return append_answer_field(line, field, ctx, facts);
    default:
      return append_request_field(line, field, ctx);
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

// Writes all of `text`, finishing a short write (a full pipe) with more; false when the
// descriptor takes nothing (nowhere to log to: the request must not fail for it).
bool write_all(int fd, std::string_view text) noexcept {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Whole lines (`text` ends with a newline) in writes of at most PIPE_BUF bytes, so that on
// a pipe no other thread's write lands inside a line; a line longer than that goes alone.
void write_lines(int fd, std::string_view text) noexcept {
  while (!text.empty()) {
    std::size_t take = text.size();
    if (take > PIPE_BUF) {
      std::size_t last = text.rfind('\n', PIPE_BUF - 1);
      take = (last != std::string_view::npos ? last : text.find('\n')) + 1;
    }
    if (!write_all(fd, text.substr(0, take))) return;
    text.remove_prefix(take);
  }
}

// Past this many bytes the lines are written without waiting for the loop's pass.
constexpr std::size_t flush_at_bytes = 32 * 1024;

// One thread's lines for one descriptor, each with its newline, waiting for their write.
// Appended to on that thread only; the lock is for the flush, which runs wherever the
// executor runs its handlers (an io_context may have several threads) or where the
// io_context is destroyed with the flush still queued.
struct pending_lines {
  explicit pending_lines(int descriptor) : fd(descriptor) {}

  void flush() noexcept {
    std::lock_guard lock(mutex);
    write_lines(fd, text);
    text.clear();
    flush_queued = false;
  }

  const int fd;
  std::mutex mutex;
  std::string text;
  bool flush_queued = false;
};

// The handler posted to the request's executor: it writes the thread's lines when it runs,
// or when it is destroyed without running (its io_context stopped and destroyed first),
// so a line is never left behind.
class flush_lines {
 public:
  explicit flush_lines(std::shared_ptr<pending_lines> lines) noexcept : lines_(std::move(lines)) {}
  flush_lines(flush_lines&&) noexcept = default;
  flush_lines& operator=(flush_lines&&) = delete;
  ~flush_lines() {
    if (lines_) lines_->flush();
  }

  void operator()() noexcept { std::exchange(lines_, nullptr)->flush(); }

 private:
  std::shared_ptr<pending_lines> lines_;
};

// The calling thread's pending lines per descriptor; whatever is left is written when the
// thread ends.
class thread_lines {
 public:
  thread_lines() = default;
  thread_lines(const thread_lines&) = delete;
  thread_lines& operator=(const thread_lines&) = delete;
  ~thread_lines() {
    for (auto& lines : by_fd_) lines->flush();
  }

  const std::shared_ptr<pending_lines>& for_fd(int fd) {
    for (auto& lines : by_fd_)
      if (lines->fd == fd) return lines;
    by_fd_.push_back(std::make_shared<pending_lines>(fd));
    return by_fd_.back();
  }

 private:
  std::vector<std::shared_ptr<pending_lines>> by_fd_;  // one per descriptor logged to
};

// The executor of the loop that will run a posted flush once its ready handlers have run:
// an io_context's, running on this thread (a server's worker). Null otherwise (respond()
// answering synchronously, async_handle() on another kind of executor): the line goes out
// at once.
const boost::asio::io_context::executor_type* loop_running_here(
    const boost::asio::any_io_executor& executor) noexcept {
  const auto* io = executor.target<boost::asio::io_context::executor_type>();
  return io && io->running_in_this_thread() ? io : nullptr;
}

// Queues `line` for `fd` behind the thread's earlier lines, and the flush unless one is
// queued; writes at once past flush_at_bytes or when no loop would run the flush.
void log_to_descriptor(int fd, std::string_view line, context& ctx) {
  thread_local thread_lines lines_of_thread;
  const std::shared_ptr<pending_lines>& lines = lines_of_thread.for_fd(fd);
  std::unique_lock lock(lines->mutex);
  lines->text.append(line);
  lines->text += '\n';
  if (lines->text.size() < flush_at_bytes) {
    if (lines->flush_queued) return;
    boost::asio::any_io_executor executor = ctx.executor();
    if (const auto* loop = loop_running_here(executor)) {
      lines->flush_queued = true;
      lock.unlock();
      try {
        boost::asio::post(*loop, flush_lines(lines));
      } catch (...) {
        lines->flush();  // no memory for the handler: written now
      }
      return;
    }
  }
  // A queued flush, if any, stays queued and finds what comes after.
  write_lines(fd, lines->text);
  lines->text.clear();
}

}  // namespace

middleware access_log(access_log_options options) {
  auto write = [options = std::move(options)](context& ctx, std::exception_ptr& error) {
    int status = answered_status(ctx, error);
    const access_log_start* start = ctx.find<access_log_start>();
    auto elapsed = start ? std::chrono::steady_clock::now() - start->at
                         : std::chrono::steady_clock::duration::zero();
    std::string& line =
        access_line(ctx, options.fields, {status, error != nullptr, elapsed, system_clock::now()});
    if (options.sink)
      options.sink(line);
    else if (options.fd >= 0)
      log_to_descriptor(options.fd, line, ctx);
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
