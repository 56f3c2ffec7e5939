// The request-target rules of the Beast adapter are the core's (waypoint/target.hpp): the
// names stay here so that code written against waypoint::beast keeps compiling.
#pragma once

#include "waypoint/target.hpp"

namespace waypoint::beast {

using waypoint::request_head;
using waypoint::request_target;
using waypoint::resolve_target;

}  // namespace waypoint::beast
