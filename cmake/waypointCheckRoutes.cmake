# waypoint_check_routes(<target> <table>...)
#
# Lints route tables with `waypoint-route check` (docs/route-tool.md) whenever <target> is
# built: a pattern that does not parse, or two patterns in conflict, fail the build with the
# tool's FILE:LINE messages. Each table is checked again only when it (or the tool) changes.
# Relative table paths are taken from the calling directory's source dir.
#
# Needs the waypoint::route-tool executable: installed waypoint built with
# WAYPOINT_BUILD_TOOLS (the default for a top-level build), or, with add_subdirectory or
# FetchContent, WAYPOINT_BUILD_TOOLS set ON before waypoint is added.
#
# Included by waypointConfig.cmake and by waypoint's own CMakeLists.txt.
include_guard(GLOBAL)

function(waypoint_check_routes target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "waypoint_check_routes: no target named ${target}")
  endif()
  if(NOT ARGN)
    message(FATAL_ERROR "waypoint_check_routes(${target}): no route table given")
  endif()
  if(NOT TARGET waypoint::route-tool)
    message(FATAL_ERROR "waypoint_check_routes: waypoint::route-tool is not available; build "
            "(and install) waypoint with WAYPOINT_BUILD_TOOLS=ON")
  endif()
  foreach(table IN LISTS ARGN)
    cmake_path(ABSOLUTE_PATH table BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
               OUTPUT_VARIABLE table_path)
    file(RELATIVE_PATH stem ${CMAKE_CURRENT_SOURCE_DIR} ${table_path})
    string(MAKE_C_IDENTIFIER "${stem}" stem)
    set(stamp ${CMAKE_CURRENT_BINARY_DIR}/waypoint_check_routes/${target}/${stem}.checked)
    add_custom_command(OUTPUT ${stamp}
      COMMAND waypoint::route-tool check ${table_path}
      COMMAND ${CMAKE_COMMAND} -E touch ${stamp}
      DEPENDS ${table_path} waypoint::route-tool
      COMMENT "Checking route table ${table}"
      VERBATIM)
    # A target per table, so that the function may be called more than once for a target.
    add_custom_target(waypoint_check_routes_${target}_${stem} DEPENDS ${stamp})
    add_dependencies(${target} waypoint_check_routes_${target}_${stem})
  endforeach()
endfunction()
