// Runs one scenario through basic_router and the reference servemux and reports the first
// place they disagree: a pattern one accepts and the other refuses, or a request whose
// outcome (status, winning pattern, values, Allow, redirect) differs. A disagreement can be
// shrunk (patterns and request details dropped while it persists) and printed with all
// that a row of tests/reference/servemux_test.cpp needs.
#pragma once

#include "../support/quoted.hpp"
#include "scenario.hpp"

#include <waypoint/reference/outcome.hpp>
#include <waypoint/reference/servemux.hpp>
#include <waypoint/router.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace waypoint::testing {

// How a registration ended: "accepted", "conflict", or "pattern_error <code>".
template <class Mux>
std::string register_pattern(Mux& mux, const std::string& text, int handler) {
  try {
    mux.add(text, handler);
    return "accepted";
  } catch (const conflict_error&) {
    return "conflict";
  } catch (const pattern_error& e) {
    return "pattern_error " + std::to_string(static_cast<int>(e.code()));
  }
}

struct disagreement {
  std::vector<std::string> patterns;  // registered in this order
  std::optional<request> on;          // empty when registration itself disagreed
  int redirect_status = 307;          // the reference's; the router keeps its default, 307
  std::string router;                 // the router's outcome
  std::string reference;              // the reference's outcome

  // A reproduction: the table, the request and both outcomes.
  std::string to_string() const {
    std::string out = "  table:";
    for (const auto& p : patterns) out += " " + quoted(p);
    if (on) {
      out += "\n  request: method " + quoted(on->method) + " path " + quoted(on->path) + " host " +
             quoted(on->host);
      if (on->path.size() > 80) out += " (path of " + std::to_string(on->path.size()) + " bytes)";
    } else {
      out += "\n  registering the last pattern";
    }
    if (redirect_status != 307) out += "\n  redirect status " + std::to_string(redirect_status);
    out += "\n  router:    " + router + "\n  reference: " + reference;
    return out;
  }
};

struct run_counts {
  std::size_t registrations = 0;
  std::size_t requests = 0;
  std::size_t by_status[5] = {};  // indexed by match_status
};

// Registers `patterns` in both, then matches `requests` in both; returns the first
// disagreement. `reference_redirect_status` exists so a test can prove the check bites.
inline std::optional<disagreement> compare(const std::vector<std::string>& patterns,
                                           const std::vector<request>& requests,
                                           run_counts* counts = nullptr,
                                           int reference_redirect_status = 307) {
  basic_router<int> router;
  reference::servemux<int> mux;
  mux.set_redirect_status(reference_redirect_status);
  std::vector<std::string> registered;  // every pattern offered so far
  for (const std::string& text : patterns) {
    registered.push_back(text);
    std::string by_router = register_pattern(router, text, static_cast<int>(registered.size()));
    std::string by_reference = register_pattern(mux, text, static_cast<int>(registered.size()));
    if (counts) ++counts->registrations;
    if (by_router != by_reference)
      return disagreement{registered, {}, reference_redirect_status, by_router, by_reference};
  }
  router.freeze();
  for (const request& r : requests) {
    auto by_router = reference::outcome_of(router.match(r.method, r.path, r.host));
    auto by_reference = reference::outcome_of(mux.match(r.method, r.path, r.host));
    if (counts) {
      ++counts->requests;
      ++counts->by_status[static_cast<int>(by_router.status)];
    }
    if (by_router != by_reference)
      return disagreement{registered, r, reference_redirect_status, by_router.to_string(),
                          by_reference.to_string()};
  }
  return std::nullopt;
}

// Re-runs a disagreement; any disagreement on the same (possibly simplified) input counts.
inline std::optional<disagreement> replay(const std::vector<std::string>& patterns,
                                          const std::optional<request>& on, int redirect_status) {
  std::vector<request> requests;
  if (on) requests.push_back(*on);
  auto d = compare(patterns, requests, nullptr, redirect_status);
  // A registration disagreement must stay one: a request needs the full table.
  if (d && on && !d->on) return std::nullopt;
  return d;
}

// Drops patterns, then simplifies the request, as long as the two still disagree.
inline disagreement shrink(disagreement d) {
  for (std::size_t i = d.patterns.size(); i-- > 0;) {
    if (i >= d.patterns.size()) continue;  // a registration disagreement came earlier
    auto fewer = d.patterns;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
    if (auto smaller = replay(fewer, d.on, d.redirect_status)) d = *smaller;
  }
  if (!d.on) return d;
  for (std::string host : {std::string(), std::string(detail::strip_port(d.on->host))}) {
    request simpler = *d.on;
    simpler.host = host;
    if (simpler.host == d.on->host) continue;
    if (auto smaller = replay(d.patterns, simpler, d.redirect_status)) d = *smaller;
  }
  for (std::string method : {"GET", "POST"}) {
    request simpler = *d.on;
    simpler.method = method;
    if (simpler.method == d.on->method) continue;
    if (auto smaller = replay(d.patterns, simpler, d.redirect_status)) {
      d = *smaller;
      break;
    }
  }
  return d;
}

}  // namespace waypoint::testing
