// The one bound on how deep a value a client sends may nest, in JSON (json.hpp's typed
// routes, Phoenix frames, MCP messages) and in CBOR (typed routes, COSE payloads): every
// reader of a client's value refuses deeper before anything recurses over it. Standard
// library only, so that the CBOR reader shares the number without the JSON headers.
#pragma once

#include <cstddef>

namespace waypoint::app {

// The deepest nesting of arrays and objects (maps) a client's value may have; deeper is a
// 400. nlohmann/json parses and destroys iteratively, but copying, comparing and dumping a
// document recurse once per level: in a debug build a copy overflows an 8 MiB stack between
// 10,000 and 20,000 levels, a 1 MiB stack between 1,000 and 2,000 (about 500 bytes a
// level), and a from_json that copies a nlohmann::json member does exactly that. 256
// levels are about 128 KiB of stack, safe on small worker stacks, and far above what an
// API payload nests (serde_json's default limit is 128).
inline constexpr std::size_t max_json_depth = 256;

}  // namespace waypoint::app
