# Strict warnings for waypoint's own targets. Applied per target, never through an
# INTERFACE property, so projects that consume waypoint keep their own flags.
# -Werror is added only with WAYPOINT_WERROR (declared, and explained, in the top-level
# CMakeLists.txt).
function(waypoint_strict_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    if(WAYPOINT_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
