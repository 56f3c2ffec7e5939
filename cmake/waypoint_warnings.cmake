# Strict warnings for waypoint's own targets. Applied per target, never through an
# INTERFACE property, so projects that consume waypoint keep their own flags.
function(waypoint_strict_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
  endif()
endfunction()
