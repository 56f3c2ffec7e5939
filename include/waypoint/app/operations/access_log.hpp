// The access log, as one layer: one JSON line per request once it is answered.
//
//   app.use(waypoint::app::access_log());   // outermost: sees the final status
#pragma once

#include "waypoint/app/handler.hpp"

#include <cstdint>
#include <functional>
#include <iterator>
#include <string_view>
#include <vector>

namespace waypoint::app {

// The fields of an access log line, in the order they are written.
enum class access_field : std::uint8_t {
  time,        // "time": RFC 3339 in UTC with microseconds, "2026-12-01T17:04:05.123456Z"
  remote,      // "remote": the socket's peer address (null under respond())
  method,      // "method"
  path,        // "path": the escaped target without the query (queries carry secrets)
  protocol,    // "protocol": "HTTP/1.1", "HTTP/1.0" or "HTTP/2"
  route,       // "route": the matched pattern, null when none matched
  status,      // "status"
  bytes,       // "bytes": body bytes of the response as the layers leave it (0 for HEAD
               // and for a redirect, whose short note is added later; null when an
               // exception passes through, answered outside the layer)
  duration,    // "duration_us": from this layer's entry to its exit
  user_agent,  // "user_agent": null when absent
  request_id,  // "request_id"
  trace_id,    // "trace_id": from tracing() (trace_context.hpp), null without it
};

// Every field, the default.
inline constexpr access_field all_access_fields[] = {
    access_field::time,       access_field::remote,     access_field::method,
    access_field::path,       access_field::protocol,   access_field::route,
    access_field::status,     access_field::bytes,      access_field::duration,
    access_field::user_agent, access_field::request_id, access_field::trace_id};

struct access_log_options {
  // Receives each line (without its newline), on the request's thread.
  std::function<void(std::string_view line)> sink{};
  // Without a sink: >= 0 writes each line and its newline to this descriptor, taking no
  // lock shared between threads. On a thread running an io_context (a server's worker) the
  // thread's lines wait for the handlers already ready in that pass of its loop, then go
  // out together: under load many lines a write(2), one request at a time one line a write.
  // A write holds whole lines, at most PIPE_BUF bytes of them (a longer line alone), so
  // lines up to PIPE_BUF bytes never interleave on a pipe, and never on a file opened with
  // O_APPEND. Elsewhere (respond() answering at once, async_handle() off an io_context) a
  // line is written at once. None is left behind: the queued write runs when the loop does,
  // or when its io_context is destroyed first, or when the thread ends; the descriptor must
  // stay open until then (until the server has stopped). -1 hands each line to the
  // application's logger.
  int fd = -1;
  // What a line holds, in this order.
  std::vector<access_field> fields{std::begin(all_access_fields), std::end(all_access_fields)};
};

// One JSON line per request once it is answered (access_field names the keys):
//   {"time":"2026-12-01T17:04:05.123456Z","remote":"10.0.0.7","method":"GET",
//    "path":"/v1/users/42","protocol":"HTTP/1.1","route":"GET
//    /v1/users/{id}","status":200,"bytes":37,
//    "duration_us":41,"user_agent":"curl/7.88.1","request_id":"6f1c0e2a9b7d4c35",
//    "trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}
// Client text (method, path, user agent) is clipped to max_client_text_bytes and
// escaped, so it can neither forge a line nor make one long. The line is built in a
// per-thread buffer: no allocation per line once it has grown (the sink's own aside). An
// exception passing through is logged with the status it will be answered with, then
// rethrown.
middleware access_log(access_log_options options = {});

}  // namespace waypoint::app
