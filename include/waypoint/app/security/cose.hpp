// COSE (RFC 9052; algorithms from RFC 9053 and RFC 8037) for bodies whose two ends share
// keys: devices, mobile apps, services that do not trust the TLS terminator between them.
// One message carries one payload (a typed route's deterministic CBOR), protected by one key:
//
//   COSE_Encrypt0 (tag 16)  AES-256-GCM or ChaCha20-Poly1305; a fresh random 12-byte nonce
//                           per message, in the unprotected IV header (label 5)
//   COSE_Mac0     (tag 17)  HMAC with SHA-256, the full 32-byte tag
//   COSE_Sign1    (tag 18)  ES256 (P-256, the signature as r || s) or EdDSA (Ed25519)
//
// The protected header holds the algorithm (label 1) alone; the unprotected header the key
// id (label 4) and, for Encrypt0, the IV. Messages are written tagged and read tagged or not.
// Every primitive is OpenSSL 3's (EVP); nothing here is home-made cryptography.
//
//   auto keys = std::make_shared<cose::keyring>();
//   keys->current(cose::key::symmetric("2026-12", cose::algorithm::chacha20_poly1305, secret))
//        .grace(cose::key::symmetric("2026-11", cose::algorithm::chacha20_poly1305, old));
//   app_options.cose_keys = keys;   // typed routes now read and answer application/cose
//
// A keyring is immutable once shared with an application; rotating keys is a restart with
// the new key current and the old one in grace (docs/framework.md, "COSE").
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app::cose {

// IANA "COSE Algorithms" values.
enum class algorithm : std::int64_t {
  a256gcm = 3,             // Encrypt0; a 32-byte key
  chacha20_poly1305 = 24,  // Encrypt0; a 32-byte key
  hmac_256 = 5,            // Mac0 (HMAC 256/256); a key of 32 bytes or more
  es256 = -7,              // Sign1; a P-256 key in PEM
  eddsa = -8,              // Sign1; an Ed25519 key in PEM
};

// The message a key makes and opens; the value is its CBOR tag (RFC 9052 §2).
enum class message_type : std::uint8_t { encrypt0 = 16, mac0 = 17, sign1 = 18 };

// The algorithm's name as IANA registers it ("ChaCha20/Poly1305", "A256GCM", "HMAC 256/256",
// "ES256", "EdDSA").
std::string_view name_of(algorithm alg) noexcept;

// A key, its id (the kid header) and its algorithm. Copies share the key material, which is
// held by OpenSSL and freed with the last copy.
class key {
 public:
  // A symmetric key of raw bytes: 32 for the AEADs, 32 or more for HMAC. Throws
  // std::invalid_argument naming the id, the algorithm and the length it wanted (and for an
  // empty id, or a signature algorithm).
  static key symmetric(std::string id, algorithm alg, std::string_view secret);
  // An ES256 or EdDSA key from PEM text: a private key signs and verifies, a public key
  // (SubjectPublicKeyInfo) only verifies. Throws std::invalid_argument when the text is not
  // such a key, or its curve is not the algorithm's.
  static key pem(std::string id, algorithm alg, std::string_view text);

  const std::string& id() const noexcept;
  algorithm alg() const noexcept;
  message_type type() const noexcept;
  // False for a public key: it verifies requests but cannot protect answers.
  bool can_protect() const noexcept;

  struct material;  // cose.cpp
  const material& held() const noexcept { return *material_; }

 private:
  explicit key(std::shared_ptr<const material> held) noexcept : material_(std::move(held)) {}
  std::shared_ptr<const material> material_;
};

// Why a message was not opened. status(): 400 when the bytes are not a COSE message this
// library reads (the detail names the byte and the rule), 401 when there is no key id or it
// names no key of the keyring, the message is not of the key's kind or algorithm (alg must
// be in the protected header), or the protection does not verify.
class error : public std::runtime_error {
 public:
  error(int status, const std::string& what) : std::runtime_error(what), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

// The tagged message protecting `payload` with `k` (which must can_protect(); else
// std::invalid_argument). `external_aad` is authenticated, not sent (RFC 9052 §4.3).
std::string protect(const key& k, std::string_view payload, std::string_view external_aad = {});

// The keys a service accepts, and the one it answers with.
class keyring {
 public:
  // The key answers are protected with; requests may use it too. Replaces the current key.
  // It must can_protect() (a public key goes in grace(): it only verifies); else, or when its
  // id is a grace key's, std::invalid_argument.
  keyring& current(key k);
  // A key requests may use, never answers: the previous key while clients move to the new
  // one. Several may be added; an id given twice is std::invalid_argument.
  keyring& grace(key k);

  bool empty() const noexcept { return keys_.empty(); }
  // Null before current() is called.
  const key* current_key() const noexcept;
  const key* find(std::string_view id) const noexcept;

  // The payload of `message` (tagged or not), after its protection is checked with the key
  // its kid names. Throws error: 400 malformed, 401 no such key or the check failed.
  std::string open(std::string_view message, std::string_view external_aad = {}) const;
  // protect() with the current key; std::logic_error when there is none.
  std::string protect(std::string_view payload, std::string_view external_aad = {}) const;

 private:
  std::vector<key> keys_;  // keys_[0] is the current key once current() was called
  bool has_current_ = false;
};

}  // namespace waypoint::app::cose
