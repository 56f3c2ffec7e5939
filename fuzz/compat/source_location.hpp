// Force-included into the fuzzers when the compiler is clang older than 15. The core uses
// std::source_location, which libstdc++ 12 only declares when the compiler has
// __builtin_source_location (clang 15 and later); Debian 12's default clang is 14. This
// stand-in, built on the __builtin_FILE family that clang 14 has, lets the `fuzz` preset
// build with the clang the project installs. With a newer clang it declares nothing.
#pragma once

#if defined(__clang__) && !__has_builtin(__builtin_source_location)
namespace std {

struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           unsigned line = __builtin_LINE(),
                                           unsigned column = __builtin_COLUMN()) noexcept {
    source_location where;
    where.file_ = file;
    where.function_ = function;
    where.line_ = line;
    where.column_ = column;
    return where;
  }
  constexpr source_location() noexcept = default;
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }
  constexpr unsigned line() const noexcept { return line_; }
  constexpr unsigned column() const noexcept { return column_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  unsigned line_ = 0;
  unsigned column_ = 0;
};

}  // namespace std
#endif
