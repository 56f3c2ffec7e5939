// Compiles the definitions of waypoint/pattern.hpp once, into waypoint_core.
#include "waypoint/impl/pattern.ipp"
