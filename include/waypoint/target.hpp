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

inline bool starts_with_scheme(std::string_view target, std::string_view scheme) noexcept {
  if (target.size() < scheme.size()) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    char c = target[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != scheme[i]) return false;
  }
  return true;
}

// "http://host:port/path?query", the scheme already matched and removed.
inline const char* split_absolute(std::string_view rest, request_target& out) noexcept {
  std::size_t end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end);
  if (authority.empty()) return "the absolute-form target has no host";
  if (!is_authority(authority)) return "the absolute-form target's host is not a valid authority";
  out.host = authority;
  if (end == std::string_view::npos) {
    out.path = "/";
    return nullptr;
  }
  if (rest[end] == '?') {
    out.path = "/";
    out.query = rest.substr(end + 1);
    return nullptr;
  }
  split_query(rest.substr(end), out);
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
  for (std::string_view scheme : {std::string_view("http://"), std::string_view("https://")})
    if (detail::starts_with_scheme(target, scheme))
      return detail::split_absolute(target.substr(scheme.size()), out);
  if (target == "*") return "the asterisk-form target (OPTIONS *) is not routable";
  return "the request target is neither origin-form (/path) nor absolute-form (http://host/path)";
}

}  // namespace waypoint
