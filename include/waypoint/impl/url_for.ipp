// The definitions of waypoint/url_for.hpp: compiled once by src/core/url_for.cpp, or
// included by the header with WAYPOINT_HEADER_ONLY (detail/config.hpp).
#pragma once

#include "waypoint/url_for.hpp"

#include "waypoint/detail/escape.hpp"

#include <utility>

namespace waypoint {
namespace detail {

[[noreturn]] inline void refuse_url(const pattern& p, std::string problem) {
  throw url_error("cannot build a path for \"" + std::string(p.text()) + "\": " + problem);
}

inline void append_query_escaped(std::string& out, std::string_view text) {
  append_percent_encoded(out, text, is_unreserved);
}

// Appends "/" + `value` escaped as one segment, refusing what would not read back.
inline void append_value_segment(std::string& out, const pattern& p, std::string_view name,
                                 std::string_view value, bool rest_piece) {
  std::string what = (rest_piece ? "a piece of {" : "{") + std::string(name) +
                     (rest_piece ? "...}" : "}");
  if (value.empty())
    refuse_url(p, "the value of " + what + " is empty" +
                      (rest_piece ? std::string(" (\"a//b\" is not a clean path)")
                                  : std::string(", and a wildcard matches a non-empty segment")));
  std::size_t start = out.size() + 1;
  out += '/';
  append_escaped(out, value);
  std::string_view segment = std::string_view(out).substr(start);
  // A dot segment is cleaned away by the router, one that an escaped '/' joins to a dot is
  // refused: the same rules the pattern parser applies to literals.
  if (value == "." || value == ".." || dot_segment_length(segment) != 0 ||
      escaped_slash_joins_dot(segment))
    refuse_url(p, "the value \"" + std::string(value) + "\" of " + what +
                      " is or holds a dot segment, which no request path carries");
}

inline const url_param* find_param(std::span<const url_param> values, std::string_view name) {
  const url_param* found = nullptr;
  for (const url_param& v : values)
    if (v.name == name) {
      if (found) throw url_error("the value of {" + std::string(name) + "} is given twice");
      found = &v;
    }
  return found;
}

// Refuses a value whose name is none of the pattern's wildcards.
inline void refuse_unknown_values(const pattern& p, std::span<const url_param> values) {
  for (const url_param& v : values) {
    const auto& names = p.wildcard_names();
    bool known = false;
    for (const auto& n : names) known = known || n == v.name;
    if (!known) refuse_url(p, "it has no wildcard {" + std::string(v.name) + "} (extra value)");
  }
}

// A rest value keeps its slashes: each piece is one segment. Empty, it matches "/"; a
// trailing '/' in it is kept (the path then ends in '/').
inline void append_rest_value(std::string& out, const pattern& p, std::string_view name,
                              std::string_view rest) {
  if (rest.empty()) {
    out += '/';
    return;
  }
  while (true) {
    std::size_t slash = rest.find('/');
    append_value_segment(out, p, name, rest.substr(0, slash), true);
    if (slash == std::string_view::npos) return;
    rest.remove_prefix(slash + 1);
    if (rest.empty()) {
      out += '/';
      return;
    }
  }
}

// Appends one segment of the pattern, a wildcard's from its value in `values`.
inline void append_pattern_segment(std::string& out, const pattern& p, const segment& s,
                                   std::span<const url_param> values) {
  if (s.type == segment::kind::literal) {
    out += '/';
    append_escaped(out, s.text);
    return;
  }
  // A wildcard without a name is a trailing slash: the prefix itself is the shortest match.
  if (s.type == segment::kind::end || s.text.empty()) {
    out += '/';
    return;
  }
  const url_param* v = find_param(values, s.text);
  if (!v) refuse_url(p, "no value for {" + s.text + "}");
  if (s.type == segment::kind::wildcard)
    append_value_segment(out, p, s.text, v->value, false);
  else
    append_rest_value(out, p, s.text, v->value);
}

// "?name=value&..." with both escaped; nothing when there is no query.
inline void append_query(std::string& out, std::span<const url_param> query) {
  for (std::size_t i = 0; i < query.size(); ++i) {
    out += i == 0 ? '?' : '&';
    append_query_escaped(out, query[i].name);
    out += '=';
    append_query_escaped(out, query[i].value);
  }
}

}  // namespace detail

WAYPOINT_INLINE std::string build_path(const pattern& p, std::span<const url_param> values,
                                       std::span<const url_param> query) {
  detail::refuse_unknown_values(p, values);
  std::string out;
  for (const segment& s : p.segments()) detail::append_pattern_segment(out, p, s, values);
  if (out.size() > max_path_length)
    detail::refuse_url(p, "the path would be " + std::to_string(out.size()) +
                              " bytes, longer than max_path_length");
  detail::append_query(out, query);
  return out;
}

WAYPOINT_INLINE void route_names::add(std::string_view name, const pattern& p,
                                      source_location where) {
  if (name.empty()) throw route_name_error("a route name must not be empty");
  registration_site site = registration_site::from(where);
  if (const entry* other = find_entry(name))
    throw route_name_error("route name \"" + std::string(name) + "\" given to \"" +
                           std::string(p.text()) + "\" (at " + site.to_string() +
                           ") already names \"" + std::string(other->route->text()) + "\" (at " +
                           other->site.to_string() + ")");
  entries_.push_back({std::string(name), &p, std::move(site)});
}

WAYPOINT_INLINE std::string route_names::url_for(std::string_view name,
                                                 std::span<const url_param> values,
                                                 std::span<const url_param> query) const {
  const pattern* p = find(name);
  if (!p) throw url_error("no route is named \"" + std::string(name) + "\"");
  return build_path(*p, values, query);
}

}  // namespace waypoint
