// The typed routes' codec for callers built with JSON_DIAGNOSTICS=1, whose nlohmann types
// live in another inline namespace (json_codec.ipp). Defined before any include, so every
// nlohmann type below is the diagnostics one.
#define JSON_DIAGNOSTICS 1
// GCC 12 at -O3 reports -Warray-bounds inside nlohmann/json's set_parents() (a std::map
// header read through a json whose object it has just allocated): a false positive of its
// middle end on library code, seen only with JSON_DIAGNOSTICS, which -Werror would turn into
// a failed Release build. Silenced for this unit alone; json_codec.cpp keeps the warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include "json_codec.ipp"
