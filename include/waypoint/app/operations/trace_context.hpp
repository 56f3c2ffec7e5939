// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and
// `tracestate` request fields, taken from the request or started here, kept in the
// context for handlers and the access log, and forwarded to upstreams with this server's
// span as the new parent.
//
//   app.use(waypoint::app::access_log());
//   app.use(waypoint::app::tracing());        // before the layers and handlers that read it
//   app.get("/x", [](waypoint::app::context& ctx) {
//     const auto& trace = ctx.get<waypoint::app::trace_context>();
//     log(trace.trace_id_hex());
//   });
//
// The rules (§3.2, §4.3 of the spec): a `traceparent` is version-trace_id-parent_id-flags
// in lowercase hex; version ff is invalid; version 00 is exactly 55 characters; a higher
// version is read as 00 when it is at least 55 characters and what follows them starts
// with '-'; an all-zero trace id or parent id is invalid; two `traceparent` fields are
// invalid. A valid one is kept (this server's span gets a new id, the sampled flag is
// kept); a missing one starts a trace; an invalid one restarts it, and its `tracestate` is
// then dropped, since it describes another trace.
#pragma once

#include "waypoint/app/context.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace waypoint::app {

struct trace_context {
  // How the trace came to be, for the log and for tests.
  enum class origin : std::uint8_t {
    kept,       // the request's traceparent was valid
    started,    // the request had none
    restarted,  // the request's was invalid: a new trace, its tracestate dropped
  };

  std::array<std::uint8_t, 16> trace_id{};
  std::array<std::uint8_t, 8> parent_id{};  // the caller's span; zero unless kept
  std::array<std::uint8_t, 8> span_id{};    // this server's span for the request
  std::uint8_t flags = 0;                   // bit 0: sampled
  origin from = origin::started;

  static constexpr std::size_t traceparent_length = 55;
  using traceparent_text = std::array<char, traceparent_length>;
  using trace_id_text = std::array<char, 32>;
  using span_id_text = std::array<char, 16>;

  trace_id_text trace_id_hex() const noexcept;
  span_id_text span_id_hex() const noexcept;
  span_id_text parent_id_hex() const noexcept;
  // The version-00 traceparent naming this server's span as the parent: what an outgoing
  // request carries.
  traceparent_text outgoing_traceparent() const noexcept;
};

// The trace of a request with these field values (`count` traceparent fields, of which
// `traceparent` is the first); a fresh span id either way. noexcept and allocation-free.
trace_context read_trace_context(std::string_view traceparent, std::size_t count = 1) noexcept;

// Parses the request's traceparent into a trace_context value of the context (see above).
middleware tracing();

// Sets `out`'s traceparent to the context's trace with this server's span as parent, and
// its tracestate to the request's (all its fields, joined with ','; none when the trace
// was restarted). A context without a trace_context leaves `out` as it is.
void propagate_trace(const context& ctx, http::fields& out);

}  // namespace waypoint::app
