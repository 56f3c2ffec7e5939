// A registered route and the error raised when a new one conflicts with it.
#pragma once

#include "waypoint/detail/config.hpp"
#include "waypoint/pattern.hpp"
#include "waypoint/source_location.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace waypoint {

// Where a route was registered: the add call's source location. The file name is the
// compiler's string literal (source_location's invariant), so it is viewed, not copied:
// one allocation fewer for every route registered.
struct registration_site {
  std::string_view file;
  unsigned line = 0;

  static registration_site from(const source_location& where) {
    return {where.file_name(), where.line()};
  }
  std::string to_string() const;  // "file:line"
};

// A pattern bound to a handler. `position` is its registration order, from 0.
template <class Handler>
struct basic_route {
  waypoint::pattern pattern;
  Handler handler;
  std::size_t position = 0;
  registration_site site;
};

// A pattern refused because it conflicts with (or repeats) a registered one.
class conflict_error : public std::invalid_argument {
 public:
  conflict_error(const pattern& added, const registration_site& added_at, const pattern& existing,
                 const registration_site& existing_at);

  const std::string& added() const noexcept { return added_; }
  const std::string& existing() const noexcept { return existing_; }
  // A request path that both patterns match.
  const std::string& example() const noexcept { return example_; }
  bool equivalent() const noexcept { return equivalent_; }

 private:
  conflict_error(const pattern& added, const registration_site& added_at, const pattern& existing,
                 const registration_site& existing_at, std::string example, bool equivalent);

  static std::string format(const pattern& added, const registration_site& added_at,
                            const pattern& existing, const registration_site& existing_at,
                            const std::string& example, bool equivalent);

  std::string added_;
  std::string existing_;
  std::string example_;
  bool equivalent_;
};

}  // namespace waypoint

#ifdef WAYPOINT_HEADER_ONLY
#include "waypoint/impl/route.ipp"
#endif
