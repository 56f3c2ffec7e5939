// Compiles the definitions of waypoint/detail/router_tree.hpp once, into waypoint_core.
#include "waypoint/impl/router_tree.ipp"
