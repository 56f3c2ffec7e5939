// Byte-level helpers shared by the pattern parser, the router and the reference
// matcher: which bytes a request path may contain, percent-decoding, Go's path
// cleaning and host-port stripping. All are allocation-free and noexcept so the match
// path can use them.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace waypoint::detail {

// RFC 3986 `pchar` minus '%': unreserved, sub-delims, ':' and '@'. A request path may
// hold these, '/', and valid %XX escapes; anything else makes the target invalid.
inline constexpr std::array<bool, 256> path_byte_table = [] {
  std::array<bool, 256> table{};
  for (unsigned char c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (unsigned char c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (unsigned char c = '0'; c <= '9'; ++c) table[c] = true;
  for (unsigned char c : std::string_view("-._~!$&'()*+,;=:@")) table[c] = true;
  return table;
}();

constexpr bool is_path_byte(char c) noexcept {
  return path_byte_table[static_cast<unsigned char>(c)];
}

constexpr int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Offset of the first invalid %-escape in `s`, or npos when every '%' starts one.
constexpr std::size_t find_invalid_escape(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') continue;
    if (i + 2 >= s.size() || hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0) return i;
    i += 2;
  }
  return std::string_view::npos;
}

// Decodes the valid escapes of `s` into `out` (which holds at least s.size() bytes)
// and returns the decoded length. Callers validate first; an invalid escape is copied.
// With `plus_is_space` (application/x-www-form-urlencoded, as in a query) '+' becomes ' '.
inline std::size_t percent_decode(std::string_view s, char* out,
                                  bool plus_is_space = false) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (plus_is_space && s[i] == '+') {
      out[n++] = ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 &&
               hex_value(s[i + 2]) >= 0) {
      out[n++] = static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out[n++] = s[i];
    }
  }
  return n;
}

// Why a request path is not acceptable, or nullptr when it is: it must begin with
// '/', and hold only path bytes, '/' and valid escapes.
constexpr const char* path_error(std::string_view path) noexcept {
  if (path.empty() || path.front() != '/') return "the path must begin with '/'";
  for (std::size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '/' || is_path_byte(c)) continue;
    if (c != '%') return "the path holds a byte that must be percent-encoded";
    if (i + 2 >= path.size() || hex_value(path[i + 1]) < 0 || hex_value(path[i + 2]) < 0)
      return "the path holds an invalid percent-escape";
    i += 2;
  }
  return nullptr;
}

// What one pass over a request path learns: whether it is acceptable (error is
// nullptr), whether it is clean, and whether any segment holds an escape (when none does,
// the match walk never decodes).
struct path_scan {
  const char* error = nullptr;
  bool clean = true;
  bool escaped = false;
};

// Byte classes for scan_path: 0 not allowed, 1 path byte, 2 '/', 3 '%', 4 '.'.
inline constexpr std::array<unsigned char, 256> path_class_table = [] {
  std::array<unsigned char, 256> table{};
  for (int c = 0; c < 256; ++c) table[c] = path_byte_table[c] ? 1 : 0;
  table['/'] = 2;
  table['%'] = 3;
  table['.'] = 4;
  return table;
}();

// path_error and is_clean_path in a single pass, for the match path. The two plain
// functions stay as the oracle: the reference matcher and the fuzzers use them, and
// tests/core/router_test.cpp checks that all three agree on every short path.
constexpr path_scan scan_path(std::string_view path) noexcept {
  path_scan scan;
  if (path.empty() || path.front() != '/') {
    scan.error = "the path must begin with '/'";
    return scan;
  }
  // Only '/', '.', '%' and invalid bytes need a look; the common byte costs a table load.
  std::size_t segment_start = 1;  // where the current segment begins
  std::size_t dots = 0;           // '.' bytes in the current segment
  auto dot_segment = [&](std::size_t end) {
    std::size_t length = end - segment_start;
    return length <= 2 && dots == length;  // "", "." or ".."
  };
  for (std::size_t i = 1; i < path.size(); ++i) {
    unsigned char cls = path_class_table[static_cast<unsigned char>(path[i])];
    if (cls == 1) [[likely]]
      continue;
    if (cls == 2) {
      if (dot_segment(i)) scan.clean = false;
      segment_start = i + 1;
      dots = 0;
    } else if (cls == 4) {
      ++dots;
    } else if (cls == 3) {
      if (i + 2 >= path.size() || hex_value(path[i + 1]) < 0 || hex_value(path[i + 2]) < 0) {
        scan.error = "the path holds an invalid percent-escape";
        return scan;
      }
      scan.escaped = true;
      i += 2;
    } else {
      scan.error = "the path holds a byte that must be percent-encoded";
      return scan;
    }
  }
  // The last segment may be empty (a trailing slash) but not "." or "..".
  if (segment_start < path.size() && dot_segment(path.size())) scan.clean = false;
  return scan;
}

// True when `path` (which begins with '/') has no empty segment other than a trailing
// one and no "." or ".." segment: Go's cleanPath would return it unchanged.
constexpr bool is_clean_path(std::string_view path) noexcept {
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    bool last = end == path.size();
    if (segment.empty() && !last) return false;
    if (segment == "." || segment == "..") return false;
    start = end + 1;
  }
  return true;
}

// Go's cleanPath on an escaped path that begins with '/': removes empty, "." and ".."
// segments and keeps a trailing slash. Writes into `out` (at least path.size() + 1
// bytes) and returns the length. Escapes are not decoded, so "%2e" is not a dot.
inline std::size_t clean_path(std::string_view path, char* out) noexcept {
  std::size_t n = 0;
  out[n++] = '/';
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    start = end + 1;
    if (segment.empty() || segment == ".") continue;
    if (segment == "..") {
      while (n > 1 && out[n - 1] != '/') --n;  // drop the last segment's bytes
      if (n > 1) --n;                          // and the slash before it
      continue;
    }
    if (n > 1) out[n++] = '/';
    for (char c : segment) out[n++] = c;
  }
  if (path.back() == '/' && n > 1) out[n++] = '/';
  return n;
}

// The host without its port, as Go's stripHostPort: "example.com:8080" and
// "[::1]:80" lose the port; anything that does not split cleanly is kept whole.
constexpr std::string_view strip_port(std::string_view host) noexcept {
  if (host.find(':') == std::string_view::npos) return host;
  if (host.front() == '[') {
    std::size_t close = host.find(']');
    if (close == std::string_view::npos || close + 1 >= host.size() || host[close + 1] != ':')
      return host;
    if (host.find(':', close + 2) != std::string_view::npos) return host;
    return host.substr(1, close - 1);
  }
  std::size_t colon = host.find(':');
  if (host.find(':', colon + 1) != std::string_view::npos) return host;
  return host.substr(0, colon);
}

}  // namespace waypoint::detail
