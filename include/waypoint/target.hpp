// Turning an HTTP/1.1 request line and Host field into what the router needs: the escaped
// path, the query and the host. Part of the core (standard library only), so that the Beast
// adapter, the route tool and the fuzzers split targets by one set of rules.
//
// Accepted (RFC 9112 section 3.2):
//   origin-form    "/path?query"                   host from the Host field
//   absolute-form  "http://host:port/path?query"   host from the target; Host is ignored
// Refused with a reason (the adapter answers 400): authority-form ("example.com:443", the
// form of CONNECT), asterisk-form ("*", of OPTIONS), any other shape, a target holding a
// control byte, a space, a non-ASCII byte or a fragment, and an HTTP/1.1 request with no
// Host field, several Host fields, or a Host value that is not an authority.
//
// Control bytes are refused here, before routing, so that nothing taken from the target
// (the query of a redirect's Location) can split a response header.
#pragma once

#include "waypoint/detail/escape.hpp"
#include "waypoint/detail/url.hpp"

#include <array>
#include <cstddef>
#include <string_view>

namespace waypoint {

// The parts of a request line the router needs, as they arrived.
struct request_head {
  std::string_view method;
  std::string_view target;
  std::string_view host;        // the Host field's value, empty when absent
  std::size_t host_fields = 0;  // how many Host fields the request carries
  unsigned version = 11;        // 10 for HTTP/1.0, 11 for HTTP/1.1
};

// A request target split for routing. Views into the request_head's strings, except an
// absolute-form target with no path, whose path is a static "/".
struct request_target {
  std::string_view path;   // escaped, begins with '/', without the query
  std::string_view query;  // after '?', possibly empty
  std::string_view host;   // may carry a port; empty when the request names none
};

namespace detail {

// Bytes a target may hold at all: visible ASCII. A control byte or a space could end a
// header line if it were ever echoed; non-ASCII must arrive percent-encoded (RFC 3986).
constexpr bool is_target_byte(char c) noexcept {
  auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f;
}

// RFC 3986 authority bytes: the path's pchar set (unreserved, sub-delims, ':' for the
// port) plus '[' ']' for an IPv6 literal and '%' for an escape or a zone, less '@':
// userinfo has no place in a request.
inline constexpr std::array<bool, 256> authority_table = [] {
  std::array<bool, 256> table = path_byte_table;
  table['@'] = false;
  for (char c : std::string_view("[]%")) table[static_cast<unsigned char>(c)] = true;
  return table;
}();

constexpr bool is_authority(std::string_view s) noexcept {
  for (char c : s)
    if (!authority_table[static_cast<unsigned char>(c)]) return false;
  return true;
}

inline const char* check_target_bytes(std::string_view target) noexcept {
  for (char c : target) {
    if (!is_target_byte(c))
      return "the request target holds a control byte, a space or a non-ASCII byte";
    if (c == '#') return "the request target holds a fragment";
  }
  return nullptr;
}

inline const char* check_host_field(const request_head& head) noexcept {
  if (head.host_fields > 1) return "the request has more than one Host field";
  if (head.host_fields == 0 && head.version >= 11) return "an HTTP/1.1 request needs a Host field";
  if (!is_authority(head.host)) return "the Host field is not a valid authority";
  return nullptr;
}

// "/path?query" -> path and query.
inline void split_query(std::string_view path_and_query, request_target& out) noexcept {
  std::size_t q = path_and_query.find('?');
  out.path = path_and_query.substr(0, q);
  out.query = q == std::string_view::npos ? std::string_view() : path_and_query.substr(q + 1);
}

// An absolute-form target, already split (a fragment was refused before).
inline const char* resolve_absolute(const url_parts& url, request_target& out) noexcept {
  if (url.authority.empty()) return "the absolute-form target has no host";
  if (!is_authority(url.authority))
    return "the absolute-form target's host is not a valid authority";
  out.host = url.authority;
  out.path = url.path.empty() ? std::string_view("/") : url.path;
  out.query = url.query;
  return nullptr;
}

}  // namespace detail

// Splits `head.target`; returns why the request cannot be routed, or nullptr. The path
// itself (its bytes and escapes) is the router's to judge. Allocates nothing.
inline const char* resolve_target(const request_head& head, request_target& out) noexcept {
  out = request_target{};
  std::string_view target = head.target;
  if (target.empty()) return "the request target is empty";
  if (const char* why = detail::check_target_bytes(target)) return why;
  if (const char* why = detail::check_host_field(head)) return why;
  if (target.front() == '/') {
    detail::split_query(target, out);
    out.host = head.host;
    return nullptr;
  }
  if (detail::url_parts url; detail::split_http_url(target, url))
    return detail::resolve_absolute(url, out);
  if (target == "*") return "the asterisk-form target (OPTIONS *) is not routable";
  return "the request target is neither origin-form (/path) nor absolute-form (http://host/path)";
}

}  // namespace waypoint
