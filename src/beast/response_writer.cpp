// append_response: serialised by hand rather than with Beast's serializer, which would
// need a composed write per response; pipelined answers share one output string instead.
#include "response_writer.hpp"

#include "waypoint/beast/adapter.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include <cstdint>
#include <cstring>

namespace waypoint::beast::detail {

using waypoint::detail::append_decimal;

// Every field of every response goes through this, so it reads eight bytes at a time:
// find_first_of with a set of three calls memchr on the set once per byte, which made the
// check cost more than the rest of writing a short field. A word with no byte below 14
// ('\r' + 1) holds none of the three; one with such a byte (a tab, say) is read bytewise.
bool holds_line_break(std::string_view s) noexcept {
  auto is_break = [](char c) { return c == '\r' || c == '\n' || c == '\0'; };
  constexpr std::uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    // Nonzero exactly when some byte is below 14 (the classic "has less" test).
    if (((word - 14 * ones) & ~word & highs) == 0) continue;
    for (std::size_t j = i; j < i + 8; ++j)
      if (is_break(s[j])) return true;
  }
  for (; i < s.size(); ++i)
    if (is_break(s[i])) return true;
  return false;
}

bool valid_fields(const response& res) noexcept {
  for (const auto& f : res)
    if (holds_line_break(f.name_string()) || holds_line_break(f.value())) return false;
  return true;
}

namespace {

bool is_decimal(std::string_view s) noexcept {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// Returns false (having appended a partial head) when the reason or a field holds CR, LF
// or NUL.
bool append_checked(const response& res, const response_framing& framing, std::string& out) {
  unsigned status = res.result_int();
  out += framing.version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  append_decimal(out, status);
  out += ' ';
  std::string_view reason = status_line_reason(res);
  if (holds_line_break(reason)) return false;
  out.append(reason);
  out += "\r\n";
  std::string_view given_length;
  for (const auto& f : res) {
    switch (f.name()) {
      case http::field::content_length:
        given_length = f.value();
        continue;
      case http::field::transfer_encoding:
      case http::field::connection:
      case http::field::date:
        continue;
      default:
        break;
    }
    if (holds_line_break(f.name_string()) || holds_line_break(f.value())) return false;
    out.append(f.name_string());
    out += ": ";
    out.append(f.value());
    out += "\r\n";
  }
  out += "Date: ";
  out.append(framing.date);
  out += "\r\n";
  if (!framing.keep_alive) {
    out += "Connection: close\r\n";
  } else if (framing.version == 10) {
    out += "Connection: keep-alive\r\n";
  }
  bool may_have_body = carries_content(status);
  const std::string& body = res.body();
  if (may_have_body && framing.streamed) {
    if (framing.version >= 11) out += "Transfer-Encoding: chunked\r\n";
  } else if (may_have_body) {
    out += "Content-Length: ";
    // HEAD: a length the handler set for the GET body it did not produce is the truth.
    if (framing.file_body) {
      append_decimal(out, framing.file_length);
    } else if (framing.head && body.empty() && is_decimal(given_length)) {
      out.append(given_length);
    } else {
      append_decimal(out, body.size());
    }
    out += "\r\n";
  }
  out += "\r\n";
  if (may_have_body && !framing.head && !framing.file_body && !framing.streamed) out += body;
  return true;
}

}  // namespace

bool append_response(const response& res, const response_framing& framing, std::string& out) {
  std::size_t mark = out.size();
  if (append_checked(res, framing, out))
    return (framing.file_body || framing.streamed) && !framing.head &&
           carries_content(res.result_int());
  out.resize(mark);
  response fallback{http::status::internal_server_error, framing.version};
  fallback.body() = "Internal Server Error: the handler set an invalid header field\n";
  response_framing plain = framing;
  plain.file_body = false;
  plain.streamed = false;
  append_checked(fallback, plain, out);
  return false;
}

}  // namespace waypoint::beast::detail
