// Compiles the definitions of waypoint/router.hpp once, into waypoint_core.
#include "waypoint/impl/router.ipp"
