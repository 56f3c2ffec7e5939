// Compiles the definitions of waypoint/openapi_paths.hpp once, into waypoint_core.
#include "waypoint/impl/openapi_paths.ipp"
