// Patterns and the specificity relation between them: the rule that defines waypoint.
//
// Grammar (Go 1.22 net/http.ServeMux):
//
//     [METHOD (spaces|tabs)][HOST]/[PATH]
//
//   METHOD   an HTTP token (RFC 9110 tchar); omitted means every method. GET also serves HEAD.
//   HOST     anything up to the first '/'; omitted means every host.
//   PATH     '/'-separated segments, each one of
//              literal    compared case-sensitively after percent-decoding ("a%2Fb" is one
//                         segment whose text is "a/b")
//              {name}     exactly one non-empty segment
//              {name...}  the rest of the path, possibly empty; last segment only
//              {$}        the end of a path that ends in '/'; last segment only
//            and a trailing '/' is an anonymous {...}: "/images/" matches "/images/a/b".
//
// A pattern P1 is more specific than P2 when P1 matches a strict subset of the requests P2
// matches. Two patterns that overlap with neither more specific conflict, and so do two
// equivalent ones; the router rejects the second at registration. docs/precedence.md works
// through examples and lists where waypoint deliberately differs from Go.
#pragma once

#include "waypoint/detail/config.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint {

// Most wildcards in one pattern; the parser refuses more (too_many_wildcards), so that a
// match result can hold every value in fixed storage. No route in the gateway, rest200,
// mix1000 or Go router benchmark tables has more than four.
inline constexpr std::size_t max_wildcards = 16;

// Why a pattern was rejected. Stable: tools and tests switch on it.
enum class pattern_errc : std::uint8_t {
  empty,               // ""
  bad_method,          // "G@T /"
  missing_slash,       // "GET example.com" (no path)
  brace_in_host,       // "{host}/a"
  unclosed_brace,      // "/{id"
  unmatched_brace,     // "/a}"
  partial_segment,     // "/b_{bucket}": a wildcard must be a whole segment
  empty_wildcard,      // "/{}" or "/{...}"
  bad_wildcard_name,   // "/{1x}"
  duplicate_name,      // "/{x}/{x}"
  rest_not_last,       // "/{x...}/a"
  end_not_last,        // "/{$}/a"
  invalid_escape,      // "/a%zz"
  unclean_path,        // "/a//b", "/a/./b", "/a/../b", "/a/%2E%2E", "/a%2F..%2Fb"
  too_many_wildcards,  // more than max_wildcards wildcards: at the first one too many
};

// A pattern that failed to parse: the code, the byte offset in the pattern text, and a
// message that quotes the pattern and names the problem.
class pattern_error : public std::invalid_argument {
 public:
  pattern_error(pattern_errc code, std::size_t offset, std::string_view pattern,
                std::string_view problem)
      : std::invalid_argument(format(offset, pattern, problem)), code_(code), offset_(offset) {}

  pattern_errc code() const noexcept { return code_; }
  std::size_t offset() const noexcept { return offset_; }

 private:
  static std::string format(std::size_t offset, std::string_view pattern,
                            std::string_view problem);

  pattern_errc code_;
  std::size_t offset_;
};

// One path segment of a pattern.
struct segment {
  enum class kind : std::uint8_t {
    literal,   // text: the percent-decoded literal, never empty ("a%2Fb" -> "a/b")
    wildcard,  // text: the name ("{id}" -> "id")
    rest,      // text: the name, empty for a trailing slash ("{p...}" -> "p", "/a/" -> "")
    end,       // text: empty ("{$}")
  };
  kind type;
  std::string text;

  friend bool operator==(const segment&, const segment&) = default;
};

// A parsed pattern. Invariant: segments is non-empty, and a rest or end segment can only
// be the last one.
class pattern {
 public:
  // Out of line, so that a unit holding patterns does not instantiate the vectors' copies
  // and destructors (compile time: BENCHMARKS.md §15).
  pattern();
  pattern(const pattern&);
  pattern(pattern&&) noexcept;
  pattern& operator=(const pattern&);
  pattern& operator=(pattern&&) noexcept;
  ~pattern();

  // The text as written, e.g. "GET example.com/v1/{id}".
  std::string_view text() const noexcept { return text_; }
  // Empty when the pattern serves every method.
  std::string_view method() const noexcept { return method_; }
  // Empty when the pattern serves every host.
  std::string_view host() const noexcept { return host_; }
  const std::vector<segment>& segments() const noexcept { return segments_; }
  const segment& last() const noexcept { return segments_.back(); }
  bool ends_in_rest() const noexcept { return last().type == segment::kind::rest; }
  // Names of the wildcards that capture a value, in path order.
  const std::vector<std::string>& wildcard_names() const noexcept { return names_; }

  friend pattern parse_pattern(std::string_view text);

 private:
  std::string text_;
  std::string method_;
  std::string host_;
  std::vector<segment> segments_;
  std::vector<std::string> names_;
};

namespace detail {

constexpr bool is_identifier(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && i > 0)) return false;
  }
  return true;
}

}  // namespace detail

// Parses `text`; throws pattern_error naming the problem and its offset.
pattern parse_pattern(std::string_view text);

// How the sets of requests two patterns match are related.
enum class relation : std::uint8_t {
  equivalent,     // the same requests
  more_specific,  // a strict subset
  more_general,   // a strict superset
  disjoint,       // no request in common
  overlaps,       // some in common, neither contains the other
};

constexpr relation inverse(relation r) noexcept {
  switch (r) {
    case relation::more_specific:
      return relation::more_general;
    case relation::more_general:
      return relation::more_specific;
    default:
      return r;
  }
}

constexpr std::string_view to_string(relation r) noexcept {
  switch (r) {
    case relation::equivalent:
      return "equivalent";
    case relation::more_specific:
      return "more specific";
    case relation::more_general:
      return "more general";
    case relation::disjoint:
      return "disjoint";
    case relation::overlaps:
      return "overlaps";
  }
  return "?";
}

// The relation of two independent dimensions taken together (a product of sets).
constexpr relation combine(relation a, relation b) noexcept {
  if (a == relation::disjoint || b == relation::disjoint) return relation::disjoint;
  if (a == relation::equivalent) return b;
  if (b == relation::equivalent) return a;
  if (a == relation::overlaps || b == relation::overlaps) return relation::overlaps;
  return a == b ? a : relation::overlaps;
}

namespace detail {

constexpr relation compare_methods(std::string_view a, std::string_view b) noexcept {
  if (a == b) return relation::equivalent;
  if (a.empty()) return relation::more_general;
  if (b.empty()) return relation::more_specific;
  if (a == "GET" && b == "HEAD") return relation::more_general;
  if (a == "HEAD" && b == "GET") return relation::more_specific;
  return relation::disjoint;
}

constexpr relation compare_hosts(std::string_view a, std::string_view b) noexcept {
  if (a == b) return relation::equivalent;
  if (a.empty()) return relation::more_general;
  if (b.empty()) return relation::more_specific;
  return relation::disjoint;
}

// Segments at the same position. A wildcard never matches the empty segment that {$}
// stands for; a literal is never empty.
relation compare_segments(const segment& a, const segment& b) noexcept;

}  // namespace detail

// The path dimension alone, segment by segment; a rest wildcard covers every segment
// that the other pattern has beyond it.
relation compare_paths(const pattern& a, const pattern& b) noexcept;

// The full relation: hosts, methods and paths. Sets of requests, nothing else: the
// host exception of the precedence rule lives in conflicts() and precedes().
relation compare(const pattern& a, const pattern& b) noexcept;

// Go's registration rule: patterns with different hosts never conflict (when only one
// has a host it wins for that host); otherwise equivalent or overlapping ones do.
bool conflicts(const pattern& a, const pattern& b) noexcept;

// True when `a` wins over `b` for a request both match (they must not conflict).
bool precedes(const pattern& a, const pattern& b) noexcept;

namespace detail {

// Appends `text` (a decoded literal) percent-encoded so that it reads back as itself.
void append_escaped(std::string& out, std::string_view text);

// A short description of a segment for messages: `literal "a"`, `wildcard {id}`.
std::string describe(const segment& s);

}  // namespace detail

// A request path that both patterns match; only meaningful when their paths are not
// disjoint. Used in conflict messages.
std::string example_path(const pattern& a, const pattern& b);

// Whether `p` matches a request: `host` without its port, `path` clean and escaped.
// A direct, segment-by-segment reading of the grammar; the router's index must agree.
bool matches(const pattern& p, std::string_view host, std::string_view method,
             std::string_view path);

// Why `winner` takes precedence over `loser`, for people: each dimension in which it is
// more specific. Both must match some request and not conflict.
std::string describe_precedence(const pattern& winner, const pattern& loser);

}  // namespace waypoint

#ifdef WAYPOINT_HEADER_ONLY
#include "waypoint/impl/pattern.ipp"
#endif
