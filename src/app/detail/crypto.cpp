// The definitions of crypto.hpp: OpenSSL 3 calls only, each checked, none keeping a key.
#include "app/detail/crypto.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <climits>
#include <stdexcept>

namespace waypoint::app::detail {
namespace {

// Who the shared functions' own failures name.
constexpr std::string_view framework = "waypoint::app";

// Fetched once: EVP_MAC objects are immutable and reference-counted, so threads share one,
// and a fetch by name on every call would search the provider's algorithms each time.
EVP_MAC* hmac_algorithm() {
  static const openssl::mac_ptr hmac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!hmac) throw_openssl_failure(framework, "EVP_MAC_fetch(HMAC)");
  return hmac.get();
}

int no_passphrase(char*, int, int, void*) { return -1; }

using pem_reader = EVP_PKEY* (*)(BIO*, EVP_PKEY**, pem_password_cb*, void*);

openssl::pkey_ptr read_pem(std::string_view text, pem_reader read) {
  // BIO_new_mem_buf refuses a null pointer, which an empty view may hold: no key in no text.
  if (text.empty() || text.size() > static_cast<std::size_t>(INT_MAX)) return nullptr;
  openssl::bio_ptr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  if (!bio) throw_openssl_failure(framework, "BIO_new_mem_buf");
  openssl::pkey_ptr key(read(bio.get(), nullptr, no_passphrase, nullptr));
  ERR_clear_error();
  return key;
}

}  // namespace

void secret_bytes::assign(std::string_view bytes) {
  wipe();  // before assign() may free the old buffer
  bytes_.assign(bytes_of(bytes), bytes_of(bytes) + bytes.size());
}

void secret_bytes::wipe() noexcept {
  if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
}

[[noreturn]] void throw_openssl_failure(std::string_view who, std::string_view what) {
  unsigned long code = ERR_get_error();
  char reason[256] = "unknown error";
  if (code != 0) ERR_error_string_n(code, reason, sizeof reason);
  ERR_clear_error();
  throw std::runtime_error(std::string(who) + ": OpenSSL's " + std::string(what) + " failed (" +
                           reason + ")");
}

hmac_sha256_tag hmac_sha256(std::span<const unsigned char> key,
                            std::initializer_list<std::string_view> parts) {
  openssl::mac_ctx_ptr ctx(EVP_MAC_CTX_new(hmac_algorithm()));
  if (!ctx) throw_openssl_failure(framework, "EVP_MAC_CTX_new");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  bool ok = EVP_MAC_init(ctx.get(), key.data(), key.size(), params) == 1;
  for (std::string_view part : parts)
    ok = ok && EVP_MAC_update(ctx.get(), bytes_of(part), part.size()) == 1;
  hmac_sha256_tag tag{};
  std::size_t written = 0;
  if (!ok || EVP_MAC_final(ctx.get(), tag.data(), &written, tag.size()) != 1 ||
      written != tag.size())
    throw_openssl_failure(framework, "HMAC-SHA-256");
  return tag;
}

bool hmac_sha256_matches(std::span<const unsigned char> key,
                         std::initializer_list<std::string_view> parts, std::string_view tag) {
  if (tag.size() != hmac_sha256_size) return false;
  hmac_sha256_tag expected = hmac_sha256(key, parts);
  bool same = CRYPTO_memcmp(expected.data(), tag.data(), expected.size()) == 0;
  OPENSSL_cleanse(expected.data(), expected.size());
  return same;
}

bool is_p256_key(const EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "EC") != 1) return false;
  char group[64] = {};
  std::size_t length = 0;
  bool named = EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                              &length) == 1;
  ERR_clear_error();
  return named && std::string_view(group, length) == "prime256v1";
}

std::optional<std::string> ecdsa_der_from_r_s(std::string_view r_s) {
  if (r_s.size() != p256_signature_size) return std::nullopt;
  openssl::ecdsa_sig_ptr sig(ECDSA_SIG_new());
  openssl::bignum_ptr r(BN_bin2bn(bytes_of(r_s), p256_scalar_size, nullptr));
  openssl::bignum_ptr s(BN_bin2bn(bytes_of(r_s) + p256_scalar_size, p256_scalar_size, nullptr));
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1) {
    ERR_clear_error();
    return std::nullopt;
  }
  r.release();  // owned by sig now
  s.release();
  unsigned char* der = nullptr;
  int length = i2d_ECDSA_SIG(sig.get(), &der);
  if (length <= 0) {
    ERR_clear_error();
    return std::nullopt;
  }
  std::string out(reinterpret_cast<const char*>(der), static_cast<std::size_t>(length));
  OPENSSL_free(der);
  return out;
}

std::optional<std::string> ecdsa_r_s_from_der(std::string_view der) {
  if (der.size() > static_cast<std::size_t>(LONG_MAX)) return std::nullopt;
  const unsigned char* p = bytes_of(der);
  openssl::ecdsa_sig_ptr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())));
  ERR_clear_error();
  // d2i refuses a negative r or s, reads the first signature and leaves what follows: a
  // trailer makes it not one signature.
  if (!sig || p != bytes_of(der) + der.size()) return std::nullopt;
  const BIGNUM *r = nullptr, *s = nullptr;
  ECDSA_SIG_get0(sig.get(), &r, &s);
  std::string out(p256_signature_size, '\0');
  auto* data = reinterpret_cast<unsigned char*>(out.data());
  // BN_bn2binpad refuses (-1) a number wider than the 32 bytes asked for.
  bool fits = BN_bn2binpad(r, data, p256_scalar_size) == p256_scalar_size &&
              BN_bn2binpad(s, data + p256_scalar_size, p256_scalar_size) == p256_scalar_size;
  ERR_clear_error();
  if (!fits) return std::nullopt;
  return out;
}

bool verify_signature(EVP_PKEY* key, const EVP_MD* digest, std::string_view data,
                      std::string_view signature) {
  openssl::md_ctx_ptr ctx(EVP_MD_CTX_new());
  bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, digest, nullptr, key) == 1 &&
            EVP_DigestVerify(ctx.get(), bytes_of(signature), signature.size(), bytes_of(data),
                             data.size()) == 1;
  ERR_clear_error();
  return ok;
}

openssl::pkey_ptr read_pem_private_key(std::string_view text) {
  return read_pem(text, PEM_read_bio_PrivateKey);
}

openssl::pkey_ptr read_pem_public_key(std::string_view text) {
  return read_pem(text, PEM_read_bio_PUBKEY);
}

}  // namespace waypoint::app::detail
