// The outcomes of a match, shared by the router and the reference matcher that checks it
// (which therefore needs nothing of the router but this vocabulary), and the redirect
// statuses both accept.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string_view>

namespace waypoint {

enum class match_status : std::uint8_t {
  matched,             // handler() and the values are set
  not_found,           // 404
  method_not_allowed,  // 405: allowed() lists what other methods would match
  redirect,            // redirect_status() to location_path() (append the request's query)
  bad_request,         // 400: error() says what is wrong with the path
};

constexpr std::string_view to_string(match_status s) noexcept {
  switch (s) {
    case match_status::matched:
      return "match";
    case match_status::not_found:
      return "not_found";
    case match_status::method_not_allowed:
      return "method_not_allowed";
    case match_status::redirect:
      return "redirect";
    case match_status::bad_request:
      return "bad_request";
  }
  return "?";
}

namespace detail {
// The redirect statuses a router may use: 307 and 308 keep the method and body, 301 is
// what older clients expect.
inline int checked_redirect_status(int status) {
  if (status != 301 && status != 307 && status != 308)
    throw std::invalid_argument("waypoint: redirect status must be 301, 307 or 308");
  return status;
}
}  // namespace detail

}  // namespace waypoint
