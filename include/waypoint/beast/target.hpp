// Turning an HTTP/1.1 request line and Host field into what the router needs: the escaped
// path, the query and the host. Standard library only, so it is cheap to include and the
// fuzzer can drive it without Beast.
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

#include <cstddef>
#include <string_view>

namespace waypoint::beast {

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

// Splits `head.target`; returns why the request cannot be routed, or nullptr. The path
// itself (its bytes and escapes) is the router's to judge.
const char* resolve_target(const request_head& head, request_target& out) noexcept;

}  // namespace waypoint::beast
