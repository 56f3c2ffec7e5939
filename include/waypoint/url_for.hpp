// Reverse routing: the request path that a registered pattern matches with given wildcard
// values, and route names to build it by (Flask's url_for, echo's Reverse).
//
//   waypoint::router r;
//   waypoint::route_names names;
//   names.add("user", r.add("GET /users/{id}", show_user).pattern);
//   names.add("file", r.add("GET /files/{path...}", send_file).pattern);
//   names.url_for("user", {{"id", "a b/c"}});                  // "/users/a%20b%2Fc"
//   names.url_for("file", {{"path", "docs/a b.txt"}});         // "/files/docs/a%20b.txt"
//   names.url_for("user", {{"id", "42"}}, {{"tab", "posts"}});  // "/users/42?tab=posts"
//
// Each value is escaped for its segment: a {x} value becomes one segment, its '/' escaped as
// %2F; a {x...} value keeps its slashes, each piece escaped. What no request path could carry
// is refused with a url_error rather than built wrong: a missing, repeated or unknown
// value, an empty {x} value, a value that is or would make a dot segment (the router cleans
// or refuses those), an empty piece inside a rest value ("a//b" would be redirected), a path
// longer than max_path_length. The built path is escaped as on a request line and routes
// back to the same pattern with the same percent-decoded values (tests/core/url_for_test.cpp
// checks it for every route of bench/tables/mix1000.routes). A pattern's host is not part of
// the path; a caller serving several hosts prefixes it.
#pragma once

#include "waypoint/detail/config.hpp"
#include "waypoint/pattern.hpp"
#include "waypoint/route.hpp"
#include "waypoint/router.hpp"  // max_path_length, and the routes a name refers to
#include "waypoint/source_location.hpp"

#include <cstddef>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint {

// One wildcard value, or one query parameter, by name.
struct url_param {
  std::string_view name;
  std::string_view value;
};

// A URL that cannot be built: the message names the route (pattern and name) and the value.
class url_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A route name given twice: the message names both routes and both sites.
class route_name_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The escaped path `p` matches with `values`, then "?" and `query` (name=value pairs, each
// escaped) when there is one. Throws url_error as described above.
std::string build_path(const pattern& p, std::span<const url_param> values,
                       std::span<const url_param> query = {});

inline std::string build_path(const pattern& p, std::initializer_list<url_param> values,
                              std::initializer_list<url_param> query = {}) {
  return build_path(p, std::span<const url_param>(values.begin(), values.size()),
                    std::span<const url_param>(query.begin(), query.size()));
}

// Names for registered routes, unique; each refers to a pattern that must outlive it (a
// router's routes() are stable). Not synchronised: name routes before serving, then call
// url_for from any thread.
class route_names {
 public:
  // Names `p`. Throws route_name_error when `name` is empty or already names a route,
  // naming both patterns and both sites.
  void add(std::string_view name, const pattern& p,
           source_location where = source_location::current());

  // The pattern called `name`, nullptr when none is.
  const pattern* find(std::string_view name) const noexcept {
    const entry* e = find_entry(name);
    return e ? e->route : nullptr;
  }

  // build_path() for the route called `name`; url_error when there is none.
  std::string url_for(std::string_view name, std::span<const url_param> values,
                      std::span<const url_param> query = {}) const;
  std::string url_for(std::string_view name, std::initializer_list<url_param> values = {},
                      std::initializer_list<url_param> query = {}) const {
    return url_for(name, std::span<const url_param>(values.begin(), values.size()),
                   std::span<const url_param>(query.begin(), query.size()));
  }

  std::size_t size() const noexcept { return entries_.size(); }

 private:
  struct entry {
    std::string name;
    const pattern* route;
    registration_site site;
  };

  // A scan: route tables name tens of routes, and url_for is not the hot path.
  const entry* find_entry(std::string_view name) const noexcept {
    for (const entry& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }

  std::vector<entry> entries_;
};

}  // namespace waypoint

#ifdef WAYPOINT_HEADER_ONLY
#include "waypoint/impl/url_for.ipp"
#endif
