// The typed routes' codec for callers built without JSON_DIAGNOSTICS (json_codec.ipp).
#include "app/typed/json_codec.ipp"
