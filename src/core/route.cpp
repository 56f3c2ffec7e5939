// Compiles the definitions of waypoint/route.hpp once, into waypoint_core.
#include "waypoint/impl/route.ipp"
