// The one URL and authority parser (RFC 3986 §3, §3.2.2, §3.2.3): an http or https URL
// split into its authority, path, query and fragment, and an authority split into its host
// and port. Views only, no checks of the parts' bytes: each caller judges what it accepts
// (the request-target rules in target.hpp, the upstream client's base URL, the router's
// host without its port, a Forwarded node). Standard library only.
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

}  // namespace waypoint::detail
