// The typed routes' codec for callers built with JSON_DIAGNOSTICS=1, whose nlohmann types
// live in another inline namespace (json_codec.ipp). Defined before any include, so every
// nlohmann type below is the diagnostics one.
#define JSON_DIAGNOSTICS 1
#include "app/typed/json_codec.ipp"
