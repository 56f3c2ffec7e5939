// Compiles the definitions of waypoint/url_for.hpp once, into waypoint_core.
#include "waypoint/impl/url_for.ipp"
