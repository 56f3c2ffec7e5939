// Compiles the definitions of waypoint/json_string.hpp once, into waypoint_core.
#include "waypoint/impl/json_string.ipp"
