// waypoint::source_location: where a route was registered, taken from the call site of
// `add` (and of the framework's `get`, `post`, ...) through a defaulted argument.
//
// It is waypoint's own type rather than an alias of std::source_location for two reasons:
// - clang before 15 with libstdc++ (Debian 12's clang 14) has no std::source_location, since
//   libstdc++ declares it only when the compiler has __builtin_source_location; the
//   __builtin_FILE family used here exists in GCC and in every clang that compiles C++20.
// - The compiled libraries (waypoint::app) take it in their signatures, so one type, whatever
//   the compiler, keeps them linkable from code built by another compiler.
// Where the standard library has std::source_location, one converts to this type, so a
// wrapper can forward its own std::source_location::current().
#pragma once

#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

namespace waypoint {

struct source_location {
  // The caller's location when used as a defaulted argument:
  //   void add(..., waypoint::source_location where = waypoint::source_location::current());
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           unsigned line = __builtin_LINE()) noexcept {
    return source_location(file, function, line);
  }

  constexpr source_location() noexcept = default;
#if defined(__cpp_lib_source_location)
  // Implicit, so that a std::source_location is accepted wherever this type is.
  constexpr source_location(const std::source_location& where) noexcept  // NOLINT
      : file_(where.file_name()), function_(where.function_name()), line_(where.line()) {}
#endif

  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr unsigned line() const noexcept { return line_; }

 private:
  constexpr source_location(const char* file, const char* function, unsigned line) noexcept
      : file_(file), function_(function), line_(line) {}

  // Invariant: never null (string literals of the compiler, or "").
  const char* file_ = "";
  const char* function_ = "";
  unsigned line_ = 0;
};

}  // namespace waypoint
