// The fuzzers' assertion: a broken invariant prints what broke and the input's context,
// then aborts so that libFuzzer saves the input. Not assert(), which the fuzz preset's
// NDEBUG would remove.
#pragma once

#include "../tests/support/quoted.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace waypoint::fuzzing {

inline void require(bool holds, std::string_view invariant, const std::string& context) {
  if (holds) return;
  std::fprintf(stderr, "\n*** invariant broken: %.*s\n%s\n", static_cast<int>(invariant.size()),
               invariant.data(), context.c_str());
  std::abort();
}

using testing::quoted;

}  // namespace waypoint::fuzzing
