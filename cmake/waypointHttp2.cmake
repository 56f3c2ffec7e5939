# libnghttp2, which waypoint::beast links privately for its HTTP/2 connections
# (src/beast/h2_connection.cpp): framing, HPACK, flow control and SETTINGS are the library's.
# Used by the build and, installed beside waypointConfig.cmake, by consumers of the static
# library, which must link it too. Debian's libnghttp2-dev ships a pkg-config file but no
# CMake package, so it is found by header and library name into an imported target of our
# own. Sets waypoint_http2_FOUND.
include_guard(GLOBAL)

find_path(waypoint_nghttp2_include nghttp2/nghttp2.h)
find_library(waypoint_nghttp2_library nghttp2)
mark_as_advanced(waypoint_nghttp2_include waypoint_nghttp2_library)

set(waypoint_http2_FOUND FALSE)
if(waypoint_nghttp2_include AND waypoint_nghttp2_library)
  set(waypoint_http2_FOUND TRUE)
  if(NOT TARGET waypoint::nghttp2)
    add_library(waypoint::nghttp2 INTERFACE IMPORTED)
    target_include_directories(waypoint::nghttp2 INTERFACE ${waypoint_nghttp2_include})
    target_link_libraries(waypoint::nghttp2 INTERFACE ${waypoint_nghttp2_library})
  endif()
endif()
