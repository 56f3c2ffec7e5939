// The bytes of one response on the wire, appended to a connection's output. The server
// decides here, and only here, which fields it writes itself (Date, Connection,
// Content-Length), what HEAD and bodiless statuses send, and what becomes of a field that
// could split the header. No socket is involved, so it is tested on strings.
#pragma once

#include "waypoint/beast/server.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace waypoint::beast::detail {

struct response_framing {
  unsigned version = 11;    // the request's HTTP version: 10 or 11
  bool head = false;        // the request was HEAD: no body is sent
  bool keep_alive = true;   // false: "Connection: close"
  std::string_view date;    // the Date value
  bool file_body = false;   // the body is a file of file_length bytes, sent after the head
  std::uint64_t file_length = 0;
  // The body follows in chunks (exchange_host::write_chunk): HTTP/1.1 says
  // `Transfer-Encoding: chunked`, HTTP/1.0 no length (the close ends it); only the head
  // is appended.
  bool streamed = false;
};

// Appends the status line, every field of `res` except Content-Length, Transfer-Encoding,
// Connection and Date, the server's own Date, Connection and Content-Length, then the body.
// With framing.file_body, Content-Length is file_length and only the head is appended (the
// connection sends the file after it). A status line or field holding CR, LF or NUL is a
// handler bug: a 500 is appended instead (with no file).
// Returns whether the file (or, streamed, the chunks) is to follow: file_body or
// streamed, a status with content, not HEAD, and no 500 in its place.
bool append_response(const response& res, const response_framing& framing, std::string& out);

// Whether `s` holds CR, LF or NUL, which would split a header; HTTP/2's framing refuses
// the same fields as HTTP/1.1's writer.
bool holds_line_break(std::string_view s) noexcept;
// Whether every field of `res` is free of them.
bool valid_fields(const response& res) noexcept;

}  // namespace waypoint::beast::detail
