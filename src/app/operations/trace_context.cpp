// Reading and writing W3C traceparent fields, and the per-thread generator of ids.
#include "waypoint/app/operations/trace_context.hpp"

#include "waypoint/detail/hex.hpp"

#include <algorithm>
#include <random>
#include <string>

namespace waypoint::app {
namespace {

using waypoint::detail::write_hex;

// Lowercase hex only: the spec rejects uppercase digits.
int lowercase_hex_value(char c) noexcept {
  return c >= 'A' && c <= 'F' ? -1 : waypoint::detail::hex_value(c);
}

// Decodes 2 * out.size() hex digits at `text`; false on any other byte.
template <std::size_t N>
bool decode_hex(std::string_view text, std::array<std::uint8_t, N>& out) noexcept {
  if (text.size() != 2 * N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    int high = lowercase_hex_value(text[2 * i]), low = lowercase_hex_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return true;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& bytes) noexcept {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

// Per thread, seeded once from the system: ids need to be unique, not secret, and a
// shared generator would need a lock.
template <std::size_t N>
void random_id(std::array<std::uint8_t, N>& out) noexcept {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      std::uint64_t word = generator();
      for (std::size_t j = 0; j < 8 && i + j < N; ++j)
        out[i + j] = static_cast<std::uint8_t>(word >> (8 * j));
    }
  } while (all_zero(out));  // all-zero ids are invalid
}

// The version-00 fields of a traceparent; false when it is not one the spec accepts.
bool parse_traceparent(std::string_view text, trace_context& out) noexcept {
  constexpr std::size_t length = trace_context::traceparent_length;
  if (text.size() < length) return false;
  std::array<std::uint8_t, 1> version{}, flags{};
  if (!decode_hex(text.substr(0, 2), version) || version[0] == 0xff) return false;
  // Version 00 is exactly 55 characters; a later version may append "-..." fields.
  if (version[0] == 0 ? text.size() != length : text.size() > length && text[length] != '-')
    return false;
  if (text[2] != '-' || text[35] != '-' || text[52] != '-') return false;
  if (!decode_hex(text.substr(3, 32), out.trace_id) || all_zero(out.trace_id)) return false;
  if (!decode_hex(text.substr(36, 16), out.parent_id) || all_zero(out.parent_id)) return false;
  if (!decode_hex(text.substr(53, 2), flags)) return false;
  out.flags = flags[0] & 0x01;  // version 00 defines the sampled flag only
  return true;
}

}  // namespace

trace_context read_trace_context(std::string_view traceparent, std::size_t count) noexcept {
  trace_context trace;
  if (count == 0) {
    trace.from = trace_context::origin::started;
  } else if (count == 1 && parse_traceparent(traceparent, trace)) {
    trace.from = trace_context::origin::kept;
  } else {
    trace = trace_context{};
    trace.from = trace_context::origin::restarted;
  }
  if (trace.from != trace_context::origin::kept) random_id(trace.trace_id);
  random_id(trace.span_id);
  return trace;
}

namespace {
template <std::size_t N>
std::array<char, 2 * N> hex_text(const std::array<std::uint8_t, N>& bytes) noexcept {
  std::array<char, 2 * N> text;
  write_hex(bytes, text.data());
  return text;
}
}  // namespace

trace_context::trace_id_text trace_context::trace_id_hex() const noexcept {
  return hex_text(trace_id);
}
trace_context::span_id_text trace_context::span_id_hex() const noexcept { return hex_text(span_id); }
trace_context::span_id_text trace_context::parent_id_hex() const noexcept {
  return hex_text(parent_id);
}

trace_context::traceparent_text trace_context::outgoing_traceparent() const noexcept {
  traceparent_text text;
  char* p = text.data();
  *p++ = '0';
  *p++ = '0';
  *p++ = '-';
  p = write_hex(trace_id, p);
  *p++ = '-';
  p = write_hex(span_id, p);
  *p++ = '-';
  write_hex(flags, p);
  return text;
}

middleware tracing() {
  return layer_hooks{[](context& ctx) {
                       const auto& fields = ctx.request().base();
                       auto [first, last] = fields.equal_range("traceparent");
                       std::size_t count = static_cast<std::size_t>(std::distance(first, last));
                       std::string_view value = count ? std::string_view(first->value()) : std::string_view();
                       ctx.set<trace_context>(read_trace_context(value, count));
                       return true;
                     },
                     {}};
}

void propagate_trace(const context& ctx, http::fields& out) {
  const trace_context* trace = ctx.find<trace_context>();
  if (!trace) return;
  auto parent = trace->outgoing_traceparent();
  out.set("traceparent", std::string_view(parent.data(), parent.size()));
  out.erase("tracestate");
  if (trace->from != trace_context::origin::kept) return;
  std::string state;
  auto [first, last] = ctx.request().base().equal_range("tracestate");
  for (auto it = first; it != last; ++it) {
    if (it->value().empty()) continue;
    if (!state.empty()) state += ',';
    state += it->value();
  }
  if (!state.empty()) out.set("tracestate", state);
}

}  // namespace waypoint::app
