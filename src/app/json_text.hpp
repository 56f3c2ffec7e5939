// Writing JSON strings by hand, for the few documents waypoint::app writes on every error
// or log line (problem documents, access-log lines): cheaper than building a
// nlohmann::json object for four members. Private to src/app.
#pragma once

#include <string>
#include <string_view>

namespace waypoint::app::detail {

// Appends `text` as a JSON string literal: quotes, backslashes and control bytes escaped,
// valid UTF-8 kept, each byte of an invalid sequence replaced by U+FFFD (as nlohmann/json's
// error_handler_t::replace does), so the output is valid JSON whatever the input bytes.
void append_json_string(std::string& out, std::string_view text);

}  // namespace waypoint::app::detail
