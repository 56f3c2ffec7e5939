// What a matcher answered for one request, in one shape for the router and the reference
// matcher, so that `match` and `match --reference` print comparable lines.
#pragma once

#include "request.hpp"

#include <waypoint/reference/outcome.hpp>
#include <waypoint/reference/servemux.hpp>
#include <waypoint/router.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace waypoint::route_tool {

// Handlers are the route's line in the route table.
using line_router = basic_router<std::size_t>;
using line_reference = reference::servemux<std::size_t>;

// The comparable outcome the differential test uses, plus what the tool prints besides:
// the matched route's line, the reason of a bad_request, and a redirect's location with
// "?query" when the request had one.
struct outcome : reference::outcome {
  std::size_t line = 0;  // matched: the route's line in the table
  std::string error;     // bad_request
};

outcome bad_request_outcome(std::string error);

// The router's answer to `r`.
outcome answer(const line_router& router, const request& r);
// The reference matcher's answer: what Go's ServeMux would do.
outcome answer(const line_reference& reference, const request& r);

// One line of `match` output, e.g. {"kind":"match","pattern":"GET /a/{x}","values":{"x":"1"}}.
std::string to_json(const outcome& o);

}  // namespace waypoint::route_tool
