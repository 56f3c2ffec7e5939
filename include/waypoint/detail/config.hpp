// How the core's non-template code is built: compiled once into the waypoint_core library
// (the default), or, with WAYPOINT_HEADER_ONLY defined, included by the headers and inline
// in every translation unit, as {fmt}'s FMT_HEADER_ONLY does. The CMake option of the same
// name defines the macro for every user of waypoint::core, and waypoint-core.pc's Cflags
// carry it when the install is header-only.
//
// Each header declares; the definitions live in waypoint/impl/NAME.ipp, marked
// WAYPOINT_INLINE, which src/core/NAME.cpp compiles or the header includes at its end.
#pragma once

#ifdef WAYPOINT_HEADER_ONLY
#define WAYPOINT_INLINE inline
#else
#define WAYPOINT_INLINE
#endif
