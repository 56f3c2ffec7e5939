// Whether bytes are UTF-8: one rule for the CBOR reader's text strings and HTTP Basic
// credentials (RFC 7617 §2.1's charset="UTF-8").
#pragma once

#include <string_view>

namespace waypoint::app::detail {

// RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF.
bool is_utf8(std::string_view text) noexcept;

}  // namespace waypoint::app::detail
