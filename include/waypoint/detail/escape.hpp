// Byte-level helpers shared by the pattern parser, the router and the reference
// matcher: which bytes a request path may contain, percent-decoding, Go's path
// cleaning and host-port stripping. All are allocation-free and noexcept so the match
// path can use them. Percent-encoding, which writes URLs rather than matching them, is
// here too, beside its inverse, for every layer that writes one.
#pragma once

#include "waypoint/detail/hex.hpp"
#include "waypoint/detail/url.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace waypoint::detail {

// RFC 3986 `pchar` minus '%': unreserved, sub-delims, ':' and '@'. A request path may
// hold these, '/', and valid %XX escapes; anything else makes the target invalid.
inline constexpr std::array<bool, 256> path_byte_table = [] {
  std::array<bool, 256> table{};
  for (unsigned char c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (unsigned char c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (unsigned char c = '0'; c <= '9'; ++c) table[c] = true;
  for (char c : std::string_view("-._~!$&'()*+,;=:@")) table[static_cast<unsigned char>(c)] = true;
  return table;
}();

constexpr bool is_path_byte(char c) noexcept {
  return path_byte_table[static_cast<unsigned char>(c)];
}

// Unaligned loads of 8 and 4 bytes (a fixed-size memcpy is one move).
inline std::uint64_t load8(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline std::uint32_t load4(const char* p) noexcept {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// s[i] (a '%') begins a valid %XX escape.
constexpr bool escape_at(std::string_view s, std::size_t i) noexcept {
  return i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0;
}

// Why a request path is refused; path_error and the scans name the first one met, and
// name path_dot_join_error only for a path that has none of the others.
inline constexpr const char* path_start_error = "the path must begin with '/'";
inline constexpr const char* path_byte_error = "the path holds a byte that must be percent-encoded";
inline constexpr const char* path_escape_error = "the path holds an invalid percent-escape";
inline constexpr const char* path_dot_join_error =
    "an escaped slash joins a dot segment (\".\" or \"..\" next to %2F)";

// Offset of the first invalid %-escape in `s`, or npos when every '%' starts one.
constexpr std::size_t find_invalid_escape(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') continue;
    if (!escape_at(s, i)) return i;
    i += 2;
  }
  return std::string_view::npos;
}

// s[i] begins the escape %2E or %2F (either case): an escaped '.' or '/'.
constexpr bool escaped_dot_at(std::string_view s, std::size_t i) noexcept {
  return s[i] == '%' && escape_at(s, i) && s[i + 1] == '2' && (s[i + 2] | 0x20) == 'e';
}
constexpr bool escaped_slash_at(std::string_view s, std::size_t i) noexcept {
  return s[i] == '%' && escape_at(s, i) && s[i + 1] == '2' && (s[i + 2] | 0x20) == 'f';
}

// How many dots the escaped segment `s` decodes to when it decodes to "." or ".." (1 or
// 2), else 0: "." and ".." spelled with plain dots, %2E or %2e in any mix.
constexpr std::size_t dot_segment_length(std::string_view s) noexcept {
  std::size_t dots = 0;
  for (std::size_t i = 0; i < s.size() && dots <= 2; ++i) {
    if (escaped_dot_at(s, i))
      i += 2;
    else if (s[i] != '.')
      return 0;
    ++dots;
  }
  return dots <= 2 ? dots : 0;
}

// The escaped segment `s` holds an escaped slash and one of the pieces it separates
// decodes to "." or ".." ("a%2F..%2Fb", "%2F..", ".%2Fx"): decoded, the segment would
// climb, and no cleaning keeps it one segment.
constexpr bool escaped_slash_joins_dot(std::string_view s) noexcept {
  bool joined = false;
  bool dot_piece = false;
  std::size_t start = 0;  // where the current piece begins
  for (std::size_t i = 0; i <= s.size(); ++i) {
    bool slash = i < s.size() && escaped_slash_at(s, i);
    if (i < s.size() && !slash) continue;
    dot_piece |= dot_segment_length(s.substr(start, i - start)) != 0;
    if (!slash) break;
    joined = true;
    i += 2;
    start = i + 1;
  }
  return joined && dot_piece;
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
    } else if (s[i] == '%' && escape_at(s, i)) {
      out[n++] = static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out[n++] = s[i];
    }
  }
  return n;
}

// RFC 3986 §2.3 unreserved bytes: the only ones a query name or value keeps unescaped, so
// that '+', '&', '=' and ' ' read back as themselves in any form decoder.
constexpr bool is_unreserved(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// Appends `text` with every byte that `keep` refuses written as %XX, in the uppercase
// digits RFC 3986 §2.1 asks encoders to produce: percent_decode's inverse.
template <class Keep>
void append_percent_encoded(std::string& out, std::string_view text, Keep keep) {
  for (char c : text) {
    if (keep(c)) {
      out += c;
    } else {
      out += '%';
      append_hex(out, static_cast<unsigned char>(c), hex_case::upper);
    }
  }
}

// Why a request path is not a valid one, or nullptr when it is: it must begin with
// '/', and hold only path bytes, '/' and valid escapes. A valid path can still be refused
// by the router: see joins_dot_segment.
constexpr const char* path_error(std::string_view path) noexcept {
  if (path.empty() || path.front() != '/') return path_start_error;
  for (std::size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c == '/' || is_path_byte(c)) continue;
    if (c != '%') return path_byte_error;
    if (!escape_at(path, i)) return path_escape_error;
    i += 2;
  }
  return nullptr;
}

// Some segment of `path` (valid, beginning with '/') is escaped_slash_joins_dot: the
// router answers bad_request (path_dot_join_error), so that no wildcard value ever holds a
// "." or ".." segment once decoded.
constexpr bool joins_dot_segment(std::string_view path) noexcept {
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (escaped_slash_joins_dot(path.substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

// What one pass over a request path learns: whether it is acceptable (error is
// nullptr: path_error, then joins_dot_segment), whether it is clean (is_clean_path),
// whether any segment holds an escape (when none does, the match walk never decodes), how
// many segments it has (one per '/') and where the first ones begin.
struct path_scan {
  const char* error = nullptr;
  bool clean = true;
  bool escaped = false;
  std::size_t segments = 0;
  std::uint64_t slashes = 0;  // bit i: path[i] == '/', for i < 64
};

// Bit i set where path[i] == '/', for the first 64 bytes: lets the match walk find where a
// segment ends without reading it.
constexpr std::uint64_t slash_map(std::string_view path) noexcept {
  std::uint64_t map = 0;
  for (std::size_t i = 0; i < path.size() && i < 64; ++i)
    if (path[i] == '/') map |= std::uint64_t{1} << i;
  return map;
}

// Byte classes for scan_path_bytes: 0 not allowed, 1 path byte, 2 '/', 3 '%', 4 '.'.
inline constexpr std::array<unsigned char, 256> path_class_table = [] {
  std::array<unsigned char, 256> table{};
  for (std::size_t c = 0; c < table.size(); ++c) table[c] = path_byte_table[c] ? 1 : 0;
  table['/'] = 2;
  table['%'] = 3;
  table['.'] = 4;
  return table;
}();

// path_error, joins_dot_segment and is_clean_path in a single pass, a byte at a time. The
// plain functions stay as the oracle: the tests and fuzzers hold scan_path to them.
constexpr path_scan scan_path_bytes(std::string_view path) noexcept {
  path_scan scan;
  if (path.empty() || path.front() != '/') {
    scan.error = path_start_error;
    return scan;
  }
  // Only '/', '.', '%' and invalid bytes need a look; the common byte costs a table load.
  // A segment is "." or ".." by what it decodes to, so %2E counts as a dot, and an escaped
  // slash splits a segment into pieces that are looked at the same way.
  std::size_t segment_start = 1;  // where the current segment begins
  std::size_t piece_start = 1;    // where its current piece (after the last %2F) begins
  std::size_t dots = 0;           // '.' bytes and %2E escapes in the current piece
  std::size_t escapes = 0;        // escapes in the current piece: 3 bytes decode to 1
  bool joined = false;            // the current segment holds a %2F
  bool dot_join = false;          // some %2F joins a dot piece: refused once all is valid
  // The piece that ends at `end` decodes to "." or "..": a dot segment when the segment
  // has no %2F, a refused request when it has one.
  auto end_piece = [&](std::size_t end) {
    std::size_t length = end - piece_start - 2 * escapes;  // decoded
    if ((length != 1 && length != 2) || dots != length) return;
    if (joined)
      dot_join = true;
    else
      scan.clean = false;
  };
  scan.segments = 1;
  scan.slashes = 1;
  for (std::size_t i = 1; i < path.size(); ++i) {
    unsigned char cls = path_class_table[static_cast<unsigned char>(path[i])];
    if (cls == 1) [[likely]]
      continue;
    if (cls == 2) {
      if (i == segment_start) scan.clean = false;  // an empty segment
      end_piece(i);
      segment_start = piece_start = i + 1;
      dots = escapes = 0;
      joined = false;
      ++scan.segments;
      if (i < 64) scan.slashes |= std::uint64_t{1} << i;
    } else if (cls == 4) {
      ++dots;
    } else if (cls == 3) {
      if (!escape_at(path, i)) {
        scan.error = path_escape_error;
        return scan;
      }
      scan.escaped = true;
      if (escaped_slash_at(path, i)) {
        joined = true;  // before end_piece: the piece before a %2F is joined too
        end_piece(i);
        piece_start = i + 3;
        dots = escapes = 0;
      } else {
        dots += escaped_dot_at(path, i);
        ++escapes;
      }
      i += 2;
    } else {
      scan.error = path_byte_error;
      return scan;
    }
  }
  // The last segment may be empty (a trailing slash) but not "." or "..".
  end_piece(path.size());
  if (dot_join) scan.error = path_dot_join_error;
  return scan;
}

#if defined(__SSE2__)
// Bit i of each mask describes byte i of a 16-byte block.
struct path_block {
  unsigned invalid;  // not a path byte, '/' or '%'
  unsigned slash;
  unsigned dot;
  unsigned percent;
};

inline path_block classify_path_block(__m128i v) noexcept {
  auto mask = [](__m128i m) { return static_cast<unsigned>(_mm_movemask_epi8(m)); };
  auto is = [&](char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
  // Signed compares: bytes from 0x80 up are negative and fall in no range.
  auto within = [&](char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lo - 1))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(hi + 1))));
  };
  // The pchar set plus '/' and '%', as ASCII ranges: "$%&'()*+,-./0-9:;", "@A-Z" and
  // "a-z", then the four allowed bytes between them.
  __m128i allowed = _mm_or_si128(_mm_or_si128(within('$', ';'), within('@', 'Z')),
                                 _mm_or_si128(within('a', 'z'), is('!')));
  allowed = _mm_or_si128(allowed, _mm_or_si128(_mm_or_si128(is('='), is('_')), is('~')));
  return {~mask(allowed) & 0xFFFFu, mask(is('/')), mask(is('.')), mask(is('%'))};
}

// The first n bytes of `p` (4 <= n < 16) in lanes 0 to n - 1, a plain 'a' in the others,
// read with overlapping loads that stay inside the n bytes. x86 is little-endian: byte
// i of a loaded word is its lane i.
inline __m128i load_short_path(const char* p, std::size_t n) noexcept {
  constexpr std::uint64_t pad = 0x6161616161616161ull;
  std::uint64_t low = pad;
  std::uint64_t high = pad;
  if (n >= 8) {
    low = load8(p);
    if (n > 8)  // bytes 8 to n - 1 are the tail of the last eight
      high = load8(p + n - 8) >> (8 * (16 - n)) | pad << (8 * (n - 8));
  } else {  // bytes 4 to n - 1 are the tail of the last four
    low = load4(p) | (std::uint64_t{load4(p + n - 4)} >> (8 * (8 - n))) << 32 | pad << (8 * n);
  }
  return _mm_set_epi64x(static_cast<long long>(high), static_cast<long long>(low));
}

// The masks of the bytes [at, at + 16) of `path`, or of [at, path.size()) when fewer
// are left (bit j is byte at + j), never reading outside the path. A path of at least
// four bytes.
inline path_block path_block_at(std::string_view path, std::size_t at) noexcept {
  const char* p = path.data();
  std::size_t n = path.size();
  if (at + 16 <= n)
    return classify_path_block(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at)));
  if (n < 16) return classify_path_block(load_short_path(p, n));
  // The last sixteen bytes, less those the previous block had.
  unsigned shift = static_cast<unsigned>(at + 16 - n);
  path_block b = classify_path_block(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16)));
  return {b.invalid >> shift, b.slash >> shift, b.dot >> shift, b.percent >> shift};
}

// Set bits of a 16-bit mask, without relying on the popcnt instruction (not in the
// x86-64 baseline, where std::popcount becomes a library call).
constexpr std::size_t count_bits16(unsigned m) noexcept {
  m = m - ((m >> 1) & 0x5555u);
  m = (m & 0x3333u) + ((m >> 2) & 0x3333u);
  m = (m + (m >> 4)) & 0x0F0Fu;
  return (m + (m >> 8)) & 0x1Fu;
}

// The segment holding the '.' at `i` is "." or "..". path[0] is '/', so i >= 1.
constexpr bool in_dot_segment(std::string_view path, std::size_t i) noexcept {
  auto ends_at = [&](std::size_t j) { return j == path.size() || path[j] == '/'; };
  if (path[i - 1] != '/') return false;  // the second dot of ".." is seen from the first
  return ends_at(i + 1) || (path[i + 1] == '.' && ends_at(i + 2));
}

// scan_path_bytes sixteen bytes at a time. Only the rare bytes ('.', '%') are looked at
// one by one; an invalid byte or escape hands the path to scan_path_bytes, which names
// the first error, and so does a %2E or %2F, which only the byte scan decodes.
inline path_scan scan_path_blocks(std::string_view path) noexcept {
  if (path.size() < 4 || path.front() != '/') return scan_path_bytes(path);
  path_scan scan;
  bool after_slash = false;  // the previous block ended in '/'
  for (std::size_t at = 0; at < path.size(); at += 16) {
    path_block b = path_block_at(path, at);
    if (b.invalid) return scan_path_bytes(path);
    scan.segments += count_bits16(b.slash);
    if (at < 64) scan.slashes |= std::uint64_t{b.slash} << at;
    if ((b.slash & (b.slash >> 1)) || (after_slash && (b.slash & 1u))) scan.clean = false;
    after_slash = (b.slash >> 15) & 1u;
    for (unsigned m = b.percent; m; m &= m - 1) {
      std::size_t i = at + static_cast<std::size_t>(std::countr_zero(m));
      if (!escape_at(path, i)) return scan_path_bytes(path);
      // %2E and %2F can make or join a dot segment: the byte scan decodes those.
      if (path[i + 1] == '2' && ((path[i + 2] | 0x20) == 'e' || (path[i + 2] | 0x20) == 'f'))
        return scan_path_bytes(path);
      scan.escaped = true;
    }
    for (unsigned m = b.dot; m && scan.clean; m &= m - 1)
      if (in_dot_segment(path, at + static_cast<std::size_t>(std::countr_zero(m))))
        scan.clean = false;
  }
  return scan;
}
#endif

// The match path's scan: blocks where the compiler has SSE2 (every x86-64), bytes
// elsewhere and in constant evaluation.
constexpr path_scan scan_path(std::string_view path) noexcept {
#if defined(__SSE2__)
  if (!std::is_constant_evaluated()) return scan_path_blocks(path);
#endif
  return scan_path_bytes(path);
}

// True when `path` (which begins with '/') has no empty segment other than a trailing
// one and no segment that decodes to "." or ".." ("%2e%2e" is ".."): clean_path would
// return it unchanged.
constexpr bool is_clean_path(std::string_view path) noexcept {
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    bool last = end == path.size();
    if (segment.empty() && !last) return false;
    if (dot_segment_length(segment) != 0) return false;
    start = end + 1;
  }
  return true;
}

// Go's cleanPath on an escaped path that begins with '/': removes empty, "." and ".."
// segments and keeps a trailing slash. Writes into `out` (at least path.size() + 1
// bytes) and returns the length. Unlike Go, a segment is a dot segment by what it decodes
// to: "%2e%2e" climbs like "..", so that no handler is ever given one. The other
// segments are copied as escaped.
inline std::size_t clean_path(std::string_view path, char* out) noexcept {
  std::size_t n = 0;
  out[n++] = '/';
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    start = end + 1;
    std::size_t dots = dot_segment_length(segment);
    if (segment.empty() || dots == 1) continue;
    if (dots == 2) {
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
  host_port parts;
  if (split_host_port(host, parts) != nullptr || !parts.has_port) return host;
  return parts.host;
}

}  // namespace waypoint::detail
