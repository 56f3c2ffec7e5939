# Strict warnings for waypoint's own targets. Applied per target, never through an
# INTERFACE property, so projects that consume waypoint keep their own flags.
# -Werror is added only with WAYPOINT_WERROR (declared, and explained, in the top-level
# CMakeLists.txt).
function(waypoint_strict_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC (12 through 15 at least) reports every Asio coroutine frame as freed by a
      # mismatched function once the frame's operator new and sized operator delete are
      # inlined (GCC PR 109224); seen here under -O1 with the sanitizers. The pair is
      # matched, and any coroutine can trip it, so the warning cannot be scoped to files.
      target_compile_options(${target} PRIVATE -Wno-mismatched-new-delete)
    endif()
    if(WAYPOINT_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()

# waypoint_gcc_false_positive(<source> <warning> <first GCC version without it>)
# Turns one warning off in one source file, on GCC releases older than the given one, for
# an optimiser false positive in inlined library code. The last resort: rewriting the code
# so it does not trip the bug is better (tests/core/router_test.cpp does). Each call names
# the lines and the bug, so it can go when they change.
function(waypoint_gcc_false_positive source warning fixed_in)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS ${fixed_in})
    set_property(SOURCE ${source} APPEND PROPERTY COMPILE_OPTIONS -Wno-${warning})
  endif()
endfunction()
