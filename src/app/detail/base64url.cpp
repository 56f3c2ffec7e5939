// base64url without padding, and standard base64's decoding (base64url.hpp). Written here
// rather than through OpenSSL's EVP_EncodeBlock and EVP_DecodeBlock, which write the standard
// alphabet with padding and decode leniently (whitespace skipped, padding counted as bytes).
#include "app/detail/base64url.hpp"

#include "app/detail/crypto.hpp"

#include <openssl/rand.h>

#include <cstdint>
#include <string>

namespace waypoint::app::detail {
namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// The two alphabets differ in their last two characters only.
struct alphabet_tail {
  char at_62;
  char at_63;
};
constexpr alphabet_tail url_tail{'-', '_'};
constexpr alphabet_tail standard_tail{'+', '/'};

int value_of(char c, alphabet_tail tail = url_tail) noexcept {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == tail.at_62) return 62;
  if (c == tail.at_63) return 63;
  return -1;
}

std::optional<std::string> decode(std::string_view text, alphabet_tail tail) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t bits = 0;
  int held = 0;
  for (char c : text) {
    int v = value_of(c, tail);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out.push_back(static_cast<char>((bits >> held) & 0xFF));
    }
  }
  if ((bits & ((1u << held) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::uint32_t bits = 0;
  int held = 0;
  for (char c : bytes) {
    bits = (bits << 8) | static_cast<unsigned char>(c);
    held += 8;
    while (held >= 6) {
      held -= 6;
      out.push_back(alphabet[(bits >> held) & 63]);
    }
  }
  if (held > 0) out.push_back(alphabet[(bits << (6 - held)) & 63]);
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  return decode(text, url_tail);
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.ends_with('=')) {
    if (text.size() % 4 != 0) return std::nullopt;
    text.remove_suffix(1);
    if (text.ends_with('=')) text.remove_suffix(1);
  }
  return decode(text, standard_tail);
}

bool is_base64url_character(char c) noexcept { return value_of(c) >= 0; }

std::string random_base64url(std::size_t bytes) {
  std::string raw(bytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1)
    throw_openssl_failure("waypoint::app", "RAND_bytes");
  return base64url_encode(raw);
}

}  // namespace waypoint::app::detail
