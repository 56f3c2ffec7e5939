// Cookies (waypoint/app/security/cookies.hpp): the Cookie field reader, the Set-Cookie writer and its
// refusals, and the signed and encrypted values (OpenSSL 3: HKDF, HMAC-SHA256, AES-256-GCM).
#include "waypoint/app/security/cookies.hpp"

#include "waypoint/beast/http_date.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include "app/detail/base64url.hpp"
#include "app/detail/crypto.hpp"
#include "app/detail/openssl_handles.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace waypoint::app {

// A key's id and the two keys HKDF derives from its secret; wiped when dropped.
struct cookie_keys::derived {
  std::uint8_t id = 0;
  std::array<unsigned char, 32> mac_key{};
  std::array<unsigned char, 32> cipher_key{};

  derived() = default;
  derived(const derived&) = default;
  derived& operator=(const derived&) = default;
  ~derived() {
    OPENSSL_cleanse(mac_key.data(), mac_key.size());
    OPENSSL_cleanse(cipher_key.data(), cipher_key.size());
  }
};

namespace {

// --- reading --------------------------------------------------------------------------------

// RFC 6265 §4.1.1 cookie-octet: printable US-ASCII but space, '"', ',', ';' and '\'.
constexpr bool is_cookie_octet(unsigned char c) noexcept {
  return c == 0x21 || (c >= 0x23 && c <= 0x2B) || (c >= 0x2D && c <= 0x3A) ||
         (c >= 0x3C && c <= 0x5B) || (c >= 0x5D && c <= 0x7E);
}

// RFC 6265bis §5.6 step 1: a cookie holding a control character but tab is ignored.
constexpr bool is_control(unsigned char c) noexcept { return (c < 0x20 && c != '\t') || c == 0x7F; }

// One trimmed, non-empty `name=value` pair as a cookie, or nullopt when it names none.
std::optional<cookie> read_pair(std::string_view pair) noexcept {
  std::size_t eq = pair.find('=');
  if (eq == std::string_view::npos) return std::nullopt;  // a nameless cookie's value
  std::string_view name = waypoint::detail::trim(pair.substr(0, eq));
  if (!is_cookie_name(name)) return std::nullopt;
  std::string_view value = waypoint::detail::trim(pair.substr(eq + 1));
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
    value = value.substr(1, value.size() - 2);
  if (std::any_of(value.begin(), value.end(),
                  [](char c) { return is_control(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  return cookie{name, value};
}

// --- writing --------------------------------------------------------------------------------

// "' ' (0x20) at byte 3": the offending byte, shown as itself only when printable.
std::string byte_at(std::string_view text, std::size_t at) {
  auto c = static_cast<unsigned char>(text[at]);
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(c));
  // Appended piece by piece: GCC 12 at -O3 reports the same expression written with
  // operator+ as overlapping copies (-Wrestrict, a false positive).
  std::string shown;
  if (c >= 0x20 && c < 0x7F) {
    shown += '\'';
    shown += text[at];
    shown += "' (";
    shown += hex;
    shown += ')';
  } else {
    shown = hex;
  }
  shown += " at byte ";
  shown += std::to_string(at);
  return shown;
}

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw std::invalid_argument("Set-Cookie \"" + name + "\": " + why);
}

// "__Host-" and friends compared ignoring case, as browsers check prefixes (RFC 6265bis
// §5.6 steps 21-22): a "__host-" cookie is held to the same rules.
bool has_prefix(std::string_view name, std::string_view prefix) noexcept {
  return waypoint::detail::istarts_with(name, prefix);
}

// Path and Domain: RFC 6265 §4.1.1 av-octet (no control byte, no ';'), at most
// max_cookie_attribute_bytes.
void check_attribute(const set_cookie& c, std::string_view attribute, std::string_view text) {
  if (text.size() > max_cookie_attribute_bytes)
    refuse(c.name, std::string(attribute) + " is " + std::to_string(text.size()) +
                       " bytes; browsers ignore one over " +
                       std::to_string(max_cookie_attribute_bytes));
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto b = static_cast<unsigned char>(text[i]);
    if (b == ';' || b < 0x20 || b == 0x7F)
      refuse(c.name, std::string(attribute) + " holds " + byte_at(text, i) +
                         ", which ends or breaks the attribute (RFC 6265 §4.1.1 av-octet)");
  }
}

void check_name_and_value(const set_cookie& c) {
  if (c.name.empty()) refuse(c.name, "the name is empty");
  for (std::size_t i = 0; i < c.name.size(); ++i)
    if (!waypoint::detail::is_token_byte(c.name[i]))
      refuse(c.name, "the name holds " + byte_at(c.name, i) + ", not a token character (RFC 9110 §5.6.2)");
  for (std::size_t i = 0; i < c.value.size(); ++i)
    if (!is_cookie_octet(static_cast<unsigned char>(c.value[i])))
      refuse(c.name, "the value holds " + byte_at(c.value, i) +
                         ", not a cookie-octet (RFC 6265 §4.1.1): seal or encode the value");
  if (c.name.size() + c.value.size() > max_cookie_name_value_bytes)
    refuse(c.name, "name and value are " + std::to_string(c.name.size() + c.value.size()) +
                       " bytes; browsers ignore a cookie over " +
                       std::to_string(max_cookie_name_value_bytes));
}

// The attributes that depend on one another: SameSite=None, Partitioned and the prefixes.
void check_attribute_rules(const set_cookie& c) {
  if (c.max_age && c.max_age->count() < 0)
    refuse(c.name, "Max-Age is negative; 0 deletes the cookie");
  if (c.same_site == same_site_policy::none && !c.secure)
    refuse(c.name, "SameSite=None needs Secure (browsers drop it without)");
  if (c.partitioned && !c.secure) refuse(c.name, "Partitioned needs Secure (CHIPS)");
  if (has_prefix(c.name, "__Secure-") && !c.secure)
    refuse(c.name, "a __Secure- cookie needs Secure (RFC 6265bis §4.1.3.1)");
  if (has_prefix(c.name, "__Host-")) {
    if (!c.secure) refuse(c.name, "a __Host- cookie needs Secure (RFC 6265bis §4.1.3.2)");
    if (c.path != "/") refuse(c.name, "a __Host- cookie needs Path=/ (RFC 6265bis §4.1.3.2)");
    if (!c.domain.empty())
      refuse(c.name, "a __Host- cookie has no Domain (RFC 6265bis §4.1.3.2)");
  }
}

std::string_view same_site_text(same_site_policy p) noexcept {
  switch (p) {
    case same_site_policy::lax: return "; SameSite=Lax";
    case same_site_policy::strict: return "; SameSite=Strict";
    case same_site_policy::none: return "; SameSite=None";
    case same_site_policy::unset: break;
  }
  return {};
}

// --- sealing --------------------------------------------------------------------------------

constexpr std::size_t id_size = 1;
constexpr std::size_t time_size = 8;
constexpr std::size_t mac_size = detail::hmac_sha256_size;
constexpr std::size_t nonce_size = 12;  // GCM's 96-bit IV, the size it is built for
constexpr std::size_t tag_size = 16;    // GCM's full tag
// Values sealed this far in the future still open under max_age: clocks of the servers
// sharing the keys differ by seconds, not minutes.
constexpr std::chrono::seconds clock_skew{60};

using detail::bytes_of;

[[noreturn]] void openssl_failure(const char* what) {
  detail::throw_openssl_failure("cookie_keys", what);
}

void put_time(unsigned char* out, std::chrono::system_clock::time_point t) noexcept {
  auto seconds = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
  for (std::size_t i = 0; i < time_size; ++i)
    out[i] = static_cast<unsigned char>(seconds >> (8 * (time_size - 1 - i)));
}

std::chrono::system_clock::time_point get_time(const unsigned char* in) noexcept {
  std::uint64_t seconds = 0;
  for (std::size_t i = 0; i < time_size; ++i) seconds = (seconds << 8) | in[i];
  return std::chrono::system_clock::time_point(
      std::chrono::seconds(static_cast<std::int64_t>(seconds)));
}

// Whether a value sealed at `sealed_at` may still be opened.
bool fresh(std::chrono::system_clock::time_point sealed_at,
           std::optional<std::chrono::seconds> max_age,
           std::chrono::system_clock::time_point now) noexcept {
  if (!max_age) return true;
  // At the seconds the value carries: a value sealed exactly max_age ago still opens.
  auto at = std::chrono::floor<std::chrono::seconds>(now);
  return sealed_at <= at + clock_skew && at - sealed_at <= *max_age;
}

// HKDF-SHA256 (RFC 5869) of `secret`, with `label` as its info: one key per purpose.
void derive(std::string_view secret, std::string_view label, std::array<unsigned char, 32>& out) {
  detail::openssl::kdf_ptr kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  if (!kdf) openssl_failure("EVP_KDF_fetch(HKDF)");
  detail::openssl::kdf_ctx_ptr ctx(EVP_KDF_CTX_new(kdf.get()));
  if (!ctx) openssl_failure("EVP_KDF_CTX_new");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(secret.data()),
                                        secret.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(label.data()),
                                        label.size()),
      OSSL_PARAM_construct_end()};
  if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1)
    openssl_failure("EVP_KDF_derive(HKDF)");
}

// HMAC-SHA256 over id || time || name '=' value. The name is a token, so it holds no '=' and
// the split between name and value is unambiguous.
detail::hmac_sha256_tag mac_of(const std::array<unsigned char, 32>& key,
                               const unsigned char* id_and_time, std::string_view name,
                               std::string_view value) {
  std::string_view id_time(reinterpret_cast<const char*>(id_and_time), id_size + time_size);
  return detail::hmac_sha256(key, {id_time, name, "=", value});
}

// AAD: the key id and the cookie's name, so a value cannot be moved to another cookie.
bool gcm_aad(EVP_CIPHER_CTX* ctx, std::uint8_t id, std::string_view name, bool encrypt) {
  int written = 0;
  auto update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate;
  return update(ctx, nullptr, &written, &id, 1) == 1 &&
         update(ctx, nullptr, &written, bytes_of(name), static_cast<int>(name.size())) == 1;
}

}  // namespace

// --- cookie_list --------------------------------------------------------------------------

void cookie_list::iterator::advance() noexcept {
  for (;;) {
    while (rest_.empty()) {
      if (field_ == fields_end_) {
        done_ = true;
        return;
      }
      // equal_range() spans Beast's field list from the first Cookie field to the last;
      // Beast keeps fields of one name together there, whatever was sent between them, so
      // the test is a guard against that changing, not a filter this needs today.
      if (field_->name() == http::field::cookie) rest_ = std::string_view(field_->value());
      ++field_;
    }
    if (pairs_ == max_request_cookies) {
      done_ = true;
      return;
    }
    std::size_t semicolon = rest_.find(';');
    std::string_view pair = waypoint::detail::trim(rest_.substr(0, semicolon));
    rest_ = semicolon == std::string_view::npos ? std::string_view() : rest_.substr(semicolon + 1);
    if (pair.empty()) continue;
    ++pairs_;
    if (std::optional<cookie> found = read_pair(pair)) {
      current_ = *found;
      return;
    }
  }
}

cookie_list::iterator cookie_list::begin() const noexcept {
  iterator it;
  if (fields_) {
    auto [first, last] = fields_->equal_range(http::field::cookie);
    it.field_ = first;
    it.fields_end_ = last;
  } else {
    it.rest_ = field_;
  }
  it.done_ = false;
  it.advance();
  return it;
}

std::optional<std::string_view> cookie_list::find(std::string_view name) const noexcept {
  for (const cookie& c : *this)
    if (c.name == name) return c.value;
  return std::nullopt;
}

// --- Set-Cookie -----------------------------------------------------------------------------

bool is_cookie_name(std::string_view name) noexcept {
  return !name.empty() && std::all_of(name.begin(), name.end(), waypoint::detail::is_token_byte);
}

bool is_cookie_value(std::string_view value) noexcept {
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return is_cookie_octet(static_cast<unsigned char>(c)); });
}

std::string render(const set_cookie& c) {
  check_name_and_value(c);
  check_attribute(c, "Path", c.path);
  check_attribute(c, "Domain", c.domain);
  check_attribute_rules(c);
  std::string out = c.name + "=" + c.value;
  if (!c.path.empty()) out += "; Path=" + c.path;
  if (!c.domain.empty()) out += "; Domain=" + c.domain;
  if (c.max_age) out += "; Max-Age=" + std::to_string(c.max_age->count());
  if (c.expires)
    out += "; Expires=" +
           beast::http_date(std::chrono::duration_cast<std::chrono::seconds>(
                                c.expires->time_since_epoch())
                                .count());
  if (c.secure) out += "; Secure";
  if (c.http_only) out += "; HttpOnly";
  out += same_site_text(c.same_site);
  if (c.partitioned) out += "; Partitioned";
  return out;
}

void add_cookie(response_builder& res, const set_cookie& cookie) {
  res.append_header("Set-Cookie", render(cookie));
}

// --- cookie_keys --------------------------------------------------------------------------

cookie_key cookie_key::generate(std::uint8_t id) {
  cookie_key key{id, std::string(32, '\0')};
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.secret.data()), 32) != 1)
    openssl_failure("RAND_bytes");
  return key;
}

cookie_keys::cookie_keys(std::vector<cookie_key> keys) {
  if (keys.empty()) throw std::invalid_argument("cookie_keys: no key given");
  keys_.reserve(keys.size());  // no reallocation leaves an unwiped copy behind
  for (cookie_key& key : keys) {
    if (key.secret.size() < 32)
      throw std::invalid_argument("cookie_keys: key " + std::to_string(key.id) + " has " +
                                  std::to_string(key.secret.size()) +
                                  " bytes of secret; at least 32 random bytes are needed");
    if (find(key.id))
      throw std::invalid_argument("cookie_keys: two keys have the id " + std::to_string(key.id));
    derived& d = keys_.emplace_back();
    d.id = key.id;
    derive(key.secret, "waypoint cookie HMAC-SHA256 v1", d.mac_key);
    derive(key.secret, "waypoint cookie AES-256-GCM v1", d.cipher_key);
    OPENSSL_cleanse(key.secret.data(), key.secret.size());
  }
}

cookie_keys::~cookie_keys() = default;

const cookie_keys::derived* cookie_keys::find(std::uint8_t id) const noexcept {
  for (const derived& d : keys_)
    if (d.id == id) return &d;
  return nullptr;
}

std::string cookie_keys::seal_signed(std::string_view name, std::string_view value,
                                     std::chrono::system_clock::time_point sealed_at) const {
  if (!is_cookie_name(name))
    throw std::invalid_argument("seal_signed: the cookie name \"" + std::string(name) +
                                "\" is not a token");
  for (std::size_t i = 0; i < value.size(); ++i)
    if (!is_cookie_octet(static_cast<unsigned char>(value[i])))
      throw std::invalid_argument("seal_signed: the value of \"" + std::string(name) +
                                  "\" holds " + byte_at(value, i) +
                                  ", not a cookie-octet: encode it, or seal_encrypted() it");
  const derived& key = keys_.front();
  std::array<unsigned char, id_size + time_size + mac_size> tag{};
  tag[0] = key.id;
  put_time(tag.data() + id_size, sealed_at);
  auto mac = mac_of(key.mac_key, tag.data(), name, value);
  std::copy(mac.begin(), mac.end(), tag.begin() + id_size + time_size);
  return std::string(value) + "." + detail::base64url_encode(tag.data(), tag.size());
}

std::optional<std::string> cookie_keys::open_signed(std::string_view name, std::string_view sealed,
                                                    std::optional<std::chrono::seconds> max_age,
                                                    std::chrono::system_clock::time_point now) const {
  std::size_t dot = sealed.rfind('.');
  if (dot == std::string_view::npos || !is_cookie_name(name)) return std::nullopt;
  std::string_view value = sealed.substr(0, dot);
  std::optional<std::string> tag = detail::base64url_decode(sealed.substr(dot + 1));
  if (!tag || tag->size() != id_size + time_size + mac_size) return std::nullopt;
  const auto* bytes = bytes_of(*tag);
  const derived* key = find(bytes[0]);
  if (!key) return std::nullopt;
  auto mac = mac_of(key->mac_key, bytes, name, value);
  if (CRYPTO_memcmp(mac.data(), bytes + id_size + time_size, mac_size) != 0) return std::nullopt;
  if (!fresh(get_time(bytes + id_size), max_age, now)) return std::nullopt;
  return std::string(value);
}

std::string cookie_keys::seal_encrypted(std::string_view name, std::string_view value,
                                        std::chrono::system_clock::time_point sealed_at) const {
  if (!is_cookie_name(name))
    throw std::invalid_argument("seal_encrypted: the cookie name \"" + std::string(name) +
                                "\" is not a token");
  std::size_t raw_size = id_size + nonce_size + time_size + value.size() + tag_size;
  if (name.size() + (raw_size * 4 + 2) / 3 > max_cookie_name_value_bytes)
    throw std::invalid_argument("seal_encrypted: the value of \"" + std::string(name) + "\" is " +
                                std::to_string(value.size()) + " bytes; sealed, the cookie would be over " +
                                std::to_string(max_cookie_name_value_bytes) +
                                " bytes, which browsers ignore");
  const derived& key = keys_.front();
  std::string out(raw_size, '\0');
  auto* data = reinterpret_cast<unsigned char*>(out.data());
  data[0] = key.id;
  unsigned char* nonce = data + id_size;
  unsigned char* body = nonce + nonce_size;
  if (RAND_bytes(nonce, static_cast<int>(nonce_size)) != 1) openssl_failure("RAND_bytes");
  // The plaintext, time then value, is written in place and encrypted over itself.
  put_time(body, sealed_at);
  std::copy(value.begin(), value.end(), reinterpret_cast<char*>(body + time_size));
  int length = static_cast<int>(time_size + value.size());
  detail::openssl::cipher_ctx_ptr ctx(EVP_CIPHER_CTX_new());
  int written = 0, final_written = 0;
  if (!ctx ||
      EVP_EncryptInit_ex2(ctx.get(), EVP_aes_256_gcm(), key.cipher_key.data(), nonce, nullptr) != 1 ||
      !gcm_aad(ctx.get(), key.id, name, true) ||
      EVP_EncryptUpdate(ctx.get(), body, &written, body, length) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), body + written, &final_written) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, static_cast<int>(tag_size),
                          body + length) != 1)
    openssl_failure("AES-256-GCM encryption");
  return detail::base64url_encode(data, out.size());
}

std::optional<std::string> cookie_keys::open_encrypted(std::string_view name,
                                                       std::string_view sealed,
                                                       std::optional<std::chrono::seconds> max_age,
                                                       std::chrono::system_clock::time_point now) const {
  std::optional<std::string> raw = detail::base64url_decode(sealed);
  if (!raw || raw->size() < id_size + nonce_size + time_size + tag_size) return std::nullopt;
  auto* data = reinterpret_cast<unsigned char*>(raw->data());
  const derived* key = find(data[0]);
  if (!key) return std::nullopt;
  const unsigned char* nonce = data + id_size;
  unsigned char* body = data + id_size + nonce_size;
  int length = static_cast<int>(raw->size() - id_size - nonce_size - tag_size);
  detail::openssl::cipher_ctx_ptr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) openssl_failure("EVP_CIPHER_CTX_new");
  int written = 0, final_written = 0;
  // The tag comparison inside EVP_DecryptFinal_ex is constant-time (CRYPTO_memcmp).
  bool ok = EVP_DecryptInit_ex2(ctx.get(), EVP_aes_256_gcm(), key->cipher_key.data(), nonce,
                                nullptr) == 1 &&
            gcm_aad(ctx.get(), key->id, name, false) &&
            EVP_DecryptUpdate(ctx.get(), body, &written, body, length) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, static_cast<int>(tag_size),
                                body + length) == 1 &&
            EVP_DecryptFinal_ex(ctx.get(), body + written, &final_written) == 1;
  if (!ok) {
    OPENSSL_cleanse(body, static_cast<std::size_t>(length));  // unauthenticated plaintext
    return std::nullopt;
  }
  if (!fresh(get_time(body), max_age, now)) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(body + time_size),
                     static_cast<std::size_t>(length) - time_size);
}

}  // namespace waypoint::app
