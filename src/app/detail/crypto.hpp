// The cryptographic rules JWT (jwt.cpp), COSE (cose.cpp) and sealed cookies (cookies.cpp)
// share, each written once over OpenSSL 3 (EVP): HMAC-SHA-256 and its constant-time check,
// ECDSA on P-256 (the key check, r ‖ s ↔ DER, verification), PEM keys, and how a failed
// OpenSSL call is reported. Every function leaves this thread's OpenSSL error queue empty, so
// nothing of a refusal leaks into the thread's next TLS call.
#pragma once

#include "app/detail/openssl_handles.hpp"

#include <array>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app::detail {

// OpenSSL takes bytes as unsigned char; the framework holds them in strings.
inline const unsigned char* bytes_of(std::string_view bytes) noexcept {
  return reinterpret_cast<const unsigned char*>(bytes.data());
}
inline std::span<const unsigned char> byte_span(std::string_view bytes) noexcept {
  return {bytes_of(bytes), bytes.size()};
}

// A key's secret bytes (an HMAC or AEAD key), wiped when dropped or replaced, with
// OPENSSL_cleanse (which the compiler may not elide). Not copyable: no copy is left behind.
class secret_bytes {
 public:
  secret_bytes() = default;
  secret_bytes(const secret_bytes&) = delete;
  secret_bytes& operator=(const secret_bytes&) = delete;
  ~secret_bytes() { wipe(); }

  void assign(std::string_view bytes);
  const unsigned char* data() const noexcept { return bytes_.data(); }
  std::size_t size() const noexcept { return bytes_.size(); }
  operator std::span<const unsigned char>() const noexcept { return bytes_; }

 private:
  void wipe() noexcept;
  std::vector<unsigned char> bytes_;
};

// ---- OpenSSL's failures ------------------------------------------------------------------

// A failed call that is OpenSSL's state (memory, a missing algorithm), never the caller's
// input: std::runtime_error "<who>: OpenSSL's <what> failed (<OpenSSL's reason>)".
[[noreturn]] void throw_openssl_failure(std::string_view who, std::string_view what);

// ---- HMAC-SHA-256 (RFC 2104) ---------------------------------------------------------------

inline constexpr std::size_t hmac_sha256_size = 32;
using hmac_sha256_tag = std::array<unsigned char, hmac_sha256_size>;

// The tag of `parts`, taken as one message (so no part needs copying into one buffer).
hmac_sha256_tag hmac_sha256(std::span<const unsigned char> key,
                            std::initializer_list<std::string_view> parts);

// Whether `tag` is the tag of `parts`, compared in constant time: false for a tag of any
// other length.
bool hmac_sha256_matches(std::span<const unsigned char> key,
                         std::initializer_list<std::string_view> parts, std::string_view tag);

// ---- ECDSA on P-256 (ES256) ---------------------------------------------------------------

inline constexpr std::size_t p256_scalar_size = 32;
inline constexpr std::size_t p256_signature_size = 2 * p256_scalar_size;  // r ‖ s

// Whether `key` is an EC key on P-256 (prime256v1), the one curve ES256 takes.
bool is_p256_key(const EVP_PKEY* key);

// JWS (RFC 7518 §3.4) and COSE (RFC 9053 §2.1) send an ECDSA signature as r ‖ s, each
// big-endian and left-padded to 32 bytes; OpenSSL reads and writes DER (a SEQUENCE of two
// INTEGERs). nullopt unless `r_s` is 64 bytes.
std::optional<std::string> ecdsa_der_from_r_s(std::string_view r_s);
// nullopt unless `der` is exactly one DER signature whose r and s are non-negative and fit
// 32 bytes.
std::optional<std::string> ecdsa_r_s_from_der(std::string_view der);

// Whether `signature` (in OpenSSL's form: DER for ECDSA) signs `data` under `key`, hashed
// with `digest` (null for Ed25519, which signs the message itself).
bool verify_signature(EVP_PKEY* key, const EVP_MD* digest, std::string_view data,
                      std::string_view signature);

// ---- PEM keys ------------------------------------------------------------------------------
// Null when the text is not one. An encrypted private key is refused, never asked a
// passphrase for on a terminal.

openssl::pkey_ptr read_pem_private_key(std::string_view text);
openssl::pkey_ptr read_pem_public_key(std::string_view text);  // -----BEGIN PUBLIC KEY-----

}  // namespace waypoint::app::detail
