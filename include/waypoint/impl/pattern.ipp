// The definitions of waypoint/pattern.hpp: compiled once by src/core/pattern.cpp, or
// included by the header with WAYPOINT_HEADER_ONLY (detail/config.hpp).
#pragma once

#include "waypoint/pattern.hpp"

#include "waypoint/detail/escape.hpp"
#include "waypoint/detail/http_grammar.hpp"  // is_token_byte

#include <algorithm>
#include <string>
#include <utility>

namespace waypoint {

WAYPOINT_INLINE pattern::pattern() = default;
WAYPOINT_INLINE pattern::pattern(const pattern&) = default;
WAYPOINT_INLINE pattern::pattern(pattern&&) noexcept = default;
WAYPOINT_INLINE pattern& pattern::operator=(const pattern&) = default;
WAYPOINT_INLINE pattern& pattern::operator=(pattern&&) noexcept = default;
WAYPOINT_INLINE pattern::~pattern() = default;

WAYPOINT_INLINE std::string pattern_error::format(std::size_t offset, std::string_view pattern,
                                                  std::string_view problem) {
  std::string m = "\"";
  m.append(pattern);
  m += "\": at offset " + std::to_string(offset) + ": ";
  m.append(problem);
  return m;
}

namespace detail {

// Parses the path part of `text`, which starts at byte `start`, into segments.
class path_parser {
 public:
  path_parser(std::string_view text, std::size_t start) : text_(text), pos_(start) {}

  std::vector<segment> parse(std::vector<std::string>& names) {
    // One allocation each: a vector grown by push_back would allocate once per doubling,
    // and registration would pay that for every route (BENCHMARKS.md, registration).
    std::string_view path = text_.substr(pos_);
    std::vector<segment> segments;
    segments.reserve(static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')));
    names.reserve(static_cast<std::size_t>(std::count(path.begin(), path.end(), '{')));
    // Invariant: text_[pos_] == '/' at the top of each iteration.
    while (pos_ < text_.size()) {
      std::size_t begin = ++pos_;
      if (begin == text_.size()) {
        segments.push_back({segment::kind::rest, {}});  // trailing slash
        break;
      }
      std::size_t end = text_.find('/', begin);
      if (end == std::string_view::npos) end = text_.size();
      std::string_view raw = text_.substr(begin, end - begin);
      pos_ = end;
      if (raw.empty() || raw == "." || raw == "..")
        fail(pattern_errc::unclean_path, begin,
             "the path is not clean (empty, \".\" or \"..\" segment) and could never match");
      // A request segment that decodes to a dot segment is cleaned away, and one whose %2F
      // joins a dot piece is refused: a literal spelled so could never match either. Only
      // an escape can make either happen past the check above, and most segments have
      // none: skipping their escape passes takes a tenth off registration.
      bool escaped = raw.find('%') != std::string_view::npos;
      if (escaped && (dot_segment_length(raw) != 0 || escaped_slash_joins_dot(raw)))
        fail(pattern_errc::unclean_path, begin,
             "the segment decodes to \".\" or \"..\", or joins one with %2F, and could never "
             "match");
      if (raw.find('{') == std::string_view::npos) {
        segments.push_back(literal(raw, begin, escaped));
        continue;
      }
      segments.push_back(wildcard(raw, begin, names));
      const segment& s = segments.back();
      bool last = pos_ == text_.size();
      if (s.type == segment::kind::rest && !last)
        fail(pattern_errc::rest_not_last, begin, "a {name...} wildcard must be the last segment");
      if (s.type == segment::kind::end && !last)
        fail(pattern_errc::end_not_last, begin, "{$} must be the last segment");
    }
    return segments;
  }

 private:
  [[noreturn]] void fail(pattern_errc code, std::size_t offset, std::string_view problem) const {
    throw pattern_error(code, offset, text_, problem);
  }

  segment literal(std::string_view raw, std::size_t begin, bool escaped) const {
    if (std::size_t brace = raw.find('}'); brace != std::string_view::npos)
      fail(pattern_errc::unmatched_brace, begin + brace, "'}' without a matching '{'");
    if (!escaped) return {segment::kind::literal, std::string(raw)};
    if (std::size_t bad = find_invalid_escape(raw); bad != std::string_view::npos)
      fail(pattern_errc::invalid_escape, begin + bad, "invalid percent-escape (want %XX, X hex)");
    std::string decoded(raw.size(), '\0');
    decoded.resize(percent_decode(raw, decoded.data()));
    return {segment::kind::literal, std::move(decoded)};
  }

  segment wildcard(std::string_view raw, std::size_t begin, std::vector<std::string>& names) const {
    std::size_t open = raw.find('{');
    std::size_t close = raw.find('}');
    if (open != 0)
      fail(pattern_errc::partial_segment, begin + open, "a wildcard must be a whole path segment");
    if (close == std::string_view::npos)
      fail(pattern_errc::unclosed_brace, begin, "'{' is never closed");
    if (close != raw.size() - 1)
      fail(pattern_errc::partial_segment, begin, "a wildcard must be a whole path segment");
    std::string_view name = raw.substr(1, raw.size() - 2);
    if (name == "$") return {segment::kind::end, {}};
    bool rest = name.size() >= 3 && name.substr(name.size() - 3) == "...";
    if (rest) name.remove_suffix(3);
    if (name.empty()) fail(pattern_errc::empty_wildcard, begin, "a wildcard needs a name");
    if (!is_identifier(name))
      fail(pattern_errc::bad_wildcard_name, begin + 1,
           "bad wildcard name \"" + std::string(name) +
               "\" (want a letter or '_' followed by letters, digits or '_')");
    for (const auto& seen : names)
      if (seen == name)
        fail(pattern_errc::duplicate_name, begin + 1,
             "duplicate wildcard name \"" + std::string(name) + "\"");
    if (names.size() == max_wildcards)
      fail(pattern_errc::too_many_wildcards, begin,
           "more than " + std::to_string(max_wildcards) + " wildcards");
    names.emplace_back(name);
    return {rest ? segment::kind::rest : segment::kind::wildcard, std::string(name)};
  }

  std::string_view text_;
  std::size_t pos_;
};

}  // namespace detail

WAYPOINT_INLINE pattern parse_pattern(std::string_view text) {
  auto fail = [&](pattern_errc code, std::size_t offset, std::string_view problem) {
    throw pattern_error(code, offset, text, problem);
  };
  if (text.empty()) fail(pattern_errc::empty, 0, "the pattern is empty");

  pattern p;
  p.text_ = std::string(text);
  std::size_t path_start = 0;
  std::size_t space = text.find_first_of(" \t");
  std::string_view host_and_path = text;
  if (space != std::string_view::npos) {
    std::string_view method = text.substr(0, space);
    for (std::size_t i = 0; i < method.size(); ++i)
      if (!detail::is_token_byte(method[i]))
        fail(pattern_errc::bad_method, i, "the method is not an HTTP token");
    p.method_ = std::string(method);
    std::size_t after = text.find_first_not_of(" \t", space);
    if (after == std::string_view::npos)
      fail(pattern_errc::missing_slash, text.size(), "the path is missing");
    path_start = after;
    host_and_path = text.substr(after);
  }
  std::size_t slash = host_and_path.find('/');
  if (slash == std::string_view::npos)
    fail(pattern_errc::missing_slash, path_start, "the path must begin with '/'");
  std::string_view host = host_and_path.substr(0, slash);
  if (std::size_t brace = host.find_first_of("{}"); brace != std::string_view::npos)
    fail(pattern_errc::brace_in_host, path_start + brace,
         "the host holds a brace (is the leading '/' of the path missing?)");
  if (std::size_t blank = host.find_first_of(" \t"); blank != std::string_view::npos)
    fail(pattern_errc::missing_slash, path_start + blank,
         "the host holds a space (is '/' missing?)");
  p.host_ = std::string(host);
  p.segments_ = detail::path_parser(text, path_start + slash).parse(p.names_);
  return p;
}

namespace detail {

WAYPOINT_INLINE relation compare_segments(const segment& a, const segment& b) noexcept {
  using k = segment::kind;
  if (a.type == k::rest || b.type == k::rest) {
    if (a.type == b.type) return relation::equivalent;
    return a.type == k::rest ? relation::more_general : relation::more_specific;
  }
  if (a.type == k::end || b.type == k::end)
    return a.type == b.type ? relation::equivalent : relation::disjoint;
  if (a.type == k::wildcard || b.type == k::wildcard) {
    if (a.type == b.type) return relation::equivalent;
    return a.type == k::wildcard ? relation::more_general : relation::more_specific;
  }
  return a.text == b.text ? relation::equivalent : relation::disjoint;
}

}  // namespace detail

WAYPOINT_INLINE relation compare_paths(const pattern& a, const pattern& b) noexcept {
  const auto& sa = a.segments();
  const auto& sb = b.segments();
  if (sa.size() != sb.size() && !a.ends_in_rest() && !b.ends_in_rest()) return relation::disjoint;
  relation r = relation::equivalent;
  std::size_t n = sa.size() < sb.size() ? sa.size() : sb.size();
  for (std::size_t i = 0; i < n; ++i) {
    r = combine(r, detail::compare_segments(sa[i], sb[i]));
    if (r == relation::disjoint) return r;
  }
  if (sa.size() == sb.size()) return r;
  // Only a rest wildcard in the shorter pattern can cover the longer one's extra segments;
  // it was compared against the longer one's segment at its own position.
  if (sa.size() < sb.size() && a.ends_in_rest()) return combine(r, relation::more_general);
  if (sb.size() < sa.size() && b.ends_in_rest()) return combine(r, relation::more_specific);
  return relation::disjoint;
}

WAYPOINT_INLINE relation compare(const pattern& a, const pattern& b) noexcept {
  relation r = combine(detail::compare_hosts(a.host(), b.host()),
                       detail::compare_methods(a.method(), b.method()));
  if (r == relation::disjoint) return r;
  return combine(r, compare_paths(a, b));
}

WAYPOINT_INLINE bool conflicts(const pattern& a, const pattern& b) noexcept {
  if (a.host() != b.host()) return false;
  relation r = compare(a, b);
  return r == relation::equivalent || r == relation::overlaps;
}

WAYPOINT_INLINE bool precedes(const pattern& a, const pattern& b) noexcept {
  if (a.host().empty() != b.host().empty()) return !a.host().empty();
  return compare(a, b) == relation::more_specific;
}

namespace detail {

WAYPOINT_INLINE void append_escaped(std::string& out, std::string_view text) {
  append_percent_encoded(out, text, is_path_byte);
}

inline void append_segment_example(std::string& out, const segment& s) {
  out += '/';
  // Invariant: no literal is "." or ".." (the parser refuses them), so none is cleaned away.
  if (s.type == segment::kind::literal) append_escaped(out, s.text);
  if (s.type == segment::kind::wildcard) out += s.text;
}

}  // namespace detail

WAYPOINT_INLINE std::string example_path(const pattern& a, const pattern& b) {
  std::string out;
  const auto& sa = a.segments();
  const auto& sb = b.segments();
  for (std::size_t i = 0;; ++i) {
    bool a_done = i == sa.size(), b_done = i == sb.size();
    if (a_done || b_done) break;
    const segment& x = sa[i];
    const segment& y = sb[i];
    if (x.type == segment::kind::rest || y.type == segment::kind::rest) {
      const auto& other = x.type == segment::kind::rest ? sb : sa;
      if (x.type == y.type) out += '/';
      for (std::size_t j = i; j < other.size() && !(x.type == y.type); ++j)
        detail::append_segment_example(out, other[j]);
      return out;
    }
    detail::append_segment_example(out, x.type == segment::kind::literal ? x : y);
  }
  return out;
}

WAYPOINT_INLINE bool matches(const pattern& p, std::string_view host, std::string_view method,
                    std::string_view path) {
  if (!p.host().empty() && p.host() != host) return false;
  if (!p.method().empty() && p.method() != method && !(p.method() == "GET" && method == "HEAD"))
    return false;
  std::size_t pos = 0;  // Invariant: pos == path.size() or path[pos] == '/'.
  for (const segment& s : p.segments()) {
    if (pos == path.size()) return false;
    if (s.type == segment::kind::rest) return true;
    if (s.type == segment::kind::end) return pos + 1 == path.size();
    std::size_t end = path.find('/', pos + 1);
    if (end == std::string_view::npos) end = path.size();
    std::string_view raw = path.substr(pos + 1, end - pos - 1);
    if (raw.empty()) return false;
    if (s.type == segment::kind::literal) {
      std::string decoded(raw.size(), '\0');
      decoded.resize(detail::percent_decode(raw, decoded.data()));
      if (decoded != s.text) return false;
    }
    pos = end;
  }
  return pos == path.size();
}

namespace detail {

WAYPOINT_INLINE std::string describe(const segment& s) {
  switch (s.type) {
    case segment::kind::literal:
      return "literal \"" + s.text + "\"";
    case segment::kind::wildcard:
      return "wildcard {" + s.text + "}";
    case segment::kind::rest:
      return s.text.empty() ? "a trailing slash" : "wildcard {" + s.text + "...}";
    case segment::kind::end:
      return "{$}";
  }
  return "?";
}

}  // namespace detail

WAYPOINT_INLINE std::string describe_precedence(const pattern& winner, const pattern& loser) {
  std::string out;
  auto add = [&](const std::string& part) {
    if (!out.empty()) out += "; ";
    out += part;
  };
  if (!winner.host().empty() && loser.host().empty())
    add("it names the host \"" + std::string(winner.host()) + "\"");
  if (detail::compare_methods(winner.method(), loser.method()) == relation::more_specific)
    add("method " + std::string(winner.method()) + " is more specific than " +
        (loser.method().empty() ? std::string("any method") : std::string(loser.method())));
  const auto& w = winner.segments();
  const auto& l = loser.segments();
  for (std::size_t i = 0; i < w.size() && i < l.size(); ++i) {
    if (detail::compare_segments(w[i], l[i]) != relation::more_specific) continue;
    add("at segment " + std::to_string(i + 1) + ", " + detail::describe(w[i]) +
        " is more specific than " + detail::describe(l[i]));
    break;
  }
  return out;
}

}  // namespace waypoint
