// waypoint::reference::outcome: one match outcome written out in plain values, so that a
// basic_router result and a reference servemux result can be compared field by field and
// printed in a failure message or a tool's report. It holds everything a response
// depends on: the status, the winning pattern and its values, the Allow header, the
// redirect, and whether the request was refused as bad.
#pragma once

#include "waypoint/match_status.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace waypoint::reference {

struct outcome {
  match_status status = match_status::not_found;
  std::string pattern;                                      // matched: the winning pattern's text
  std::vector<std::pair<std::string, std::string>> values;  // matched: name -> decoded value
  std::string allow;                                        // method_not_allowed
  int redirect_status = 0;                                  // redirect
  std::string location;                                     // redirect

  friend bool operator==(const outcome&, const outcome&) = default;

  // One line, e.g. `match "GET /a/{x}" x="b"`, `405 Allow: "GET, HEAD"`, `redirect 307 "/a/"`.
  std::string to_string() const {
    std::string out;
    switch (status) {
      case match_status::matched:
        out = "match \"" + pattern + "\"";
        for (const auto& [name, value] : values) out += " " + name + "=\"" + value + "\"";
        return out;
      case match_status::not_found:
        return "404";
      case match_status::method_not_allowed:
        return "405 Allow: \"" + allow + "\"";
      case match_status::redirect:
        return "redirect " + std::to_string(redirect_status) + " \"" + location + "\"";
      case match_status::bad_request:
        return "400";
    }
    return "?";
  }
};

// A basic_match_result, known by its members so that this header needs no router.
template <class Match>
requires requires(const Match& m) {
  m.status();
  m.route();
  m.value_count();
  m.allowed();
  m.location_path();
}
outcome outcome_of(const Match& m) {
  outcome out;
  out.status = m.status();
  switch (m.status()) {
    case match_status::matched: {
      out.pattern = std::string(m.route()->pattern.text());
      const auto& names = m.route()->pattern.wildcard_names();
      // A count mismatch shows up as a missing or an unnamed value, never silently.
      for (std::size_t i = 0; i < names.size() || i < m.value_count(); ++i)
        out.values.emplace_back(i < names.size() ? names[i] : std::string("?"),
                                std::string(m.value(i)));
      break;
    }
    case match_status::method_not_allowed:
      out.allow = m.allowed().to_string();
      break;
    case match_status::redirect:
      out.redirect_status = m.redirect_status();
      out.location = std::string(m.location_path());
      break;
    default:
      break;
  }
  return out;
}

// servemux<H>::result is a nested type whose Handler cannot be deduced, hence the
// constraint on its members rather than on its type.
template <class Result>
requires requires(const Result& r) {
  r.route->pattern;
  r.values;
  r.allow;
  r.location;
}
outcome outcome_of(const Result& r) {
  outcome out;
  out.status = r.status;
  switch (r.status) {
    case match_status::matched:
      out.pattern = std::string(r.route->pattern.text());
      out.values = r.values;
      break;
    case match_status::method_not_allowed:
      out.allow = r.allow;
      break;
    case match_status::redirect:
      out.redirect_status = r.redirect_status;
      out.location = r.location;
      break;
    default:
      break;
  }
  return out;
}

}  // namespace waypoint::reference
