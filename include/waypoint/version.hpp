// waypoint's version. The one place it is written: the top-level CMakeLists.txt reads these
// three lines for project(VERSION), so the CMake package, waypoint-core.pc and this header
// always agree. Compare with, e.g.,
//   #if WAYPOINT_VERSION_MAJOR > 0 || WAYPOINT_VERSION_MINOR >= 2
#pragma once

#define WAYPOINT_VERSION_MAJOR 0
#define WAYPOINT_VERSION_MINOR 1
#define WAYPOINT_VERSION_PATCH 0
