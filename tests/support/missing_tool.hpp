// A test whose outside tool or package (curl, python3-websockets, redis-server, ...) is
// missing: one rule for every C++ test. On a machine with less installed the test skips, so
// the rest still runs; under the README's test command (scripts/test installs every group
// the suite uses, and CI runs it first) WAYPOINT_REQUIRE_ALL is set and the same absence
// fails, so a missing install step cannot pass as a skip. tests/support/missing_tool.py is
// the same rule for the Python drivers, and the shell checks test the variable themselves.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

namespace waypoint::testing {

// True when WAYPOINT_REQUIRE_ALL is set and not empty.
inline bool every_tool_required() {
  const char* value = std::getenv("WAYPOINT_REQUIRE_ALL");
  return value != nullptr && *value != '\0';
}

}  // namespace waypoint::testing

// Skips the current test for `what` missing, or fails it under WAYPOINT_REQUIRE_ALL. Returns
// from the test body either way, as GTEST_SKIP does.
#define WAYPOINT_SKIP_MISSING(what)                                                       \
  do {                                                                                    \
    if (::waypoint::testing::every_tool_required()) {                                     \
      GTEST_FAIL() << (what) << " is missing, and WAYPOINT_REQUIRE_ALL is set (scripts/"  \
                   << "install-deps with scripts/test's groups installs it)";             \
    }                                                                                     \
    GTEST_SKIP() << (what) << " is missing";                                              \
  } while (false)

