// base64url (RFC 4648 §5) without padding, as JWS (RFC 7515 §2), cookies and session ids
// write it, and the standard alphabet's decoding for HTTP Basic. Decoding takes the canonical form
// only: the bits past the last byte must be zero, so each byte string has one spelling and a
// changed character always changes the bytes (what is signed is the text).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace waypoint::app::detail {

std::string base64url_encode(std::string_view bytes);
inline std::string base64url_encode(const unsigned char* bytes, std::size_t size) {
  return base64url_encode(std::string_view(reinterpret_cast<const char*>(bytes), size));
}
// nullopt for a character outside the alphabet, padding, a length no encoding has (4n + 1),
// or unused low bits set.
std::optional<std::string> base64url_decode(std::string_view text);
bool is_base64url_character(char c) noexcept;
// Base64 in the standard alphabet (RFC 4648 §4), as HTTP Basic credentials carry it: '='
// padding, when present, must complete the last group; without it the text is read as if it
// did. Canonical as base64url_decode is; nullopt for anything else.
std::optional<std::string> base64_decode(std::string_view text);
// `bytes` random bytes from OpenSSL's generator, base64url: session ids, CSRF tokens.
std::string random_base64url(std::size_t bytes);

}  // namespace waypoint::app::detail
