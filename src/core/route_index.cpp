// Compiles the definitions of waypoint/detail/route_index.hpp once, into waypoint_core.
#include "waypoint/impl/route_index.ipp"
