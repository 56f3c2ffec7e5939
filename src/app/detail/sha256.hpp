// SHA-256 through OpenSSL, for the framework's own keys and comparisons: API keys and Basic
// passwords (auth.cpp), long rate-limit keys (rate_limit.cpp), session ids as store keys
// (sessions.cpp). One place, so each caller gets the algorithm fetched once and a context
// per thread reused, not EVP_Digest's context made and freed (two allocations) per call.
#pragma once

#include <array>
#include <string_view>

namespace waypoint::app::detail {

using sha256_digest = std::array<unsigned char, 32>;

// Throws std::runtime_error when OpenSSL fails.
sha256_digest sha256(std::string_view bytes);

}  // namespace waypoint::app::detail
