// The one URL and authority parser (RFC 3986 §3, §3.2.2, §3.2.3): an http or https URL
// split into its authority, path, query and fragment, and an authority split into its host
// and port. Views only, no checks of the parts' bytes: each caller judges what it accepts
// (the request-target rules in target.hpp, the upstream client's base URL, the router's
// host without its port, a Forwarded node), and an Origin field's serialised origin (the
// CSRF layer, the MCP endpoint). Standard library only.
#pragma once

#include "waypoint/detail/http_grammar.hpp"

#include <string_view>

namespace waypoint::detail {

// "http://authority/path?query#fragment", each part as written.
struct url_parts {
  bool https = false;            // the scheme is https (either is matched without regard to case)
  std::string_view authority;    // up to the first '/', '?' or '#'; may be empty
  std::string_view path;         // "" or from the '/' up to the query or fragment
  std::string_view query;        // after the '?', up to the fragment
  std::string_view fragment;     // after the '#'
  bool has_query = false;        // a '?' follows the path, even with nothing after it
  bool has_fragment = false;
};

// Splits `url` when it starts with "http://" or "https://"; false (nothing set) otherwise.
constexpr bool split_http_url(std::string_view url, url_parts& out) noexcept {
  out = url_parts{};
  if (istarts_with(url, "https://")) {
    out.https = true;
    url.remove_prefix(8);
  } else if (istarts_with(url, "http://")) {
    url.remove_prefix(7);
  } else {
    return false;
  }
  std::size_t hash = url.find('#');
  if (hash != std::string_view::npos) {
    out.has_fragment = true;
    out.fragment = url.substr(hash + 1);
    url = url.substr(0, hash);
  }
  std::size_t question = url.find('?');
  if (question != std::string_view::npos) {
    out.has_query = true;
    out.query = url.substr(question + 1);
    url = url.substr(0, question);
  }
  std::size_t slash = url.find('/');
  out.authority = url.substr(0, slash);
  out.path = slash == std::string_view::npos ? std::string_view() : url.substr(slash);
  return true;
}

// An authority's host and port: "name", "name:port", "[v6]" or "[v6]:port".
struct host_port {
  std::string_view host;   // without the brackets of an IPv6 literal
  std::string_view port;   // as written, empty when absent
  bool has_port = false;   // a ':' introduced a port, even an empty one
  bool bracketed = false;  // the host was an IP literal in brackets
};

// Splits `authority` (no userinfo); returns why it does not split, or nullptr. Exactly one
// ':' outside brackets separates a port; with several (an unbracketed IPv6 address, which
// RFC 3986 does not allow but X-Forwarded-For writes) the whole is the host, unsplit.
constexpr const char* split_host_port(std::string_view authority, host_port& out) noexcept {
  out = host_port{};
  std::string_view after;
  if (!authority.empty() && authority.front() == '[') {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "an unclosed '[' in its host";
    out.host = authority.substr(1, close - 1);
    out.bracketed = true;
    after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return "text after its IPv6 host";
  } else {
    std::size_t colon = authority.find(':');
    bool one_colon =
        colon != std::string_view::npos && authority.find(':', colon + 1) == std::string_view::npos;
    out.host = one_colon ? authority.substr(0, colon) : authority;
    after = one_colon ? authority.substr(colon) : std::string_view();
  }
  if (after.empty()) return nullptr;
  out.has_port = true;
  out.port = after.substr(1);
  if (out.port.find(':') != std::string_view::npos) return "a second ':' after its IPv6 host";
  return nullptr;
}

// RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
constexpr bool is_scheme(std::string_view text) noexcept {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (text.empty() || !alpha(text.front())) return false;
  for (char c : text)
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return false;
  return true;
}

// A host as an origin may name it: an IP literal of hex digits, ':' and '.' (RFC 3986
// §3.2.2's IPv6address), or a reg-name of unreserved, pct-encoded and sub-delims bytes.
// Anything else ('@' of userinfo, '/', a space, a second ':') is not part of a host.
constexpr bool is_origin_host(const host_port& parts) noexcept {
  if (parts.host.empty()) return false;
  for (char c : parts.host) {
    bool digit = c >= '0' && c <= '9';
    bool hex = digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    bool alnum = digit || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool ok = parts.bracketed ? hex || c == ':' || c == '.'
                              : alnum || std::string_view("-._~%!$&'()*+,;=").find(c) !=
                                             std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// A serialised origin (RFC 6454 §6.2), as browsers send it in Origin: scheme "://" host
// [":" port] and nothing else: no userinfo, path, query or fragment. "null" is none.
struct origin_parts {
  std::string_view scheme;     // as written; compared without regard to case
  std::string_view authority;  // host[:port] as written
  host_port host;              // the authority split
};

// Splits `origin`; false when it is not a serialised origin. "http://localhost:80@evil"
// (userinfo), "http://[::1]evil" (text after the literal) and "http://h:8x" are not.
constexpr bool split_origin(std::string_view origin, origin_parts& out) noexcept {
  out = origin_parts{};
  std::size_t separator = origin.find("://");
  if (separator == std::string_view::npos || !is_scheme(origin.substr(0, separator))) return false;
  out.scheme = origin.substr(0, separator);
  out.authority = origin.substr(separator + 3);
  if (split_host_port(out.authority, out.host) != nullptr || !is_origin_host(out.host))
    return false;
  if (out.host.has_port && out.host.port.empty()) return false;
  for (char c : out.host.port)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace waypoint::detail
