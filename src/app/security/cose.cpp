// COSE_Encrypt0, COSE_Mac0 and COSE_Sign1 (cose.hpp): the messages written with the CBOR
// writer and read with the strict reader of cbor.hpp, the primitives OpenSSL 3's (EVP): the
// AEADs and signing here, HMAC, ECDSA's r || s, PEM and verification shared (detail/crypto.hpp).
//
// Opening a message is three stages, and the status says which one refused it:
//   1. structure (400): the bytes are one COSE message of a kind this library reads, with
//      well-formed headers; every refusal names the byte and the rule;
//   2. key (401): the kid names a key of the keyring, the message is the kind that key makes,
//      and the protected algorithm is the key's;
//   3. protection (401): the AEAD tag, MAC or signature checks out. Which part of a check
//      failed is never said ("did not verify"), and the OpenSSL error queue is emptied so
//      nothing of it leaks into the thread's next TLS call.
#include <waypoint/app/security/cose.hpp>
#include <waypoint/detail/hex.hpp>

#include "app/typed/cbor.hpp"
#include "app/detail/crypto.hpp"
#include "app/detail/openssl_handles.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <climits>
#include <cstring>

#include <unistd.h>

namespace waypoint::app::cose {

namespace cbor = detail::cbor;
namespace openssl = detail::openssl;

namespace {

// RFC 9052 §3.1 header labels this library reads.
constexpr std::int64_t label_alg = 1, label_crit = 2, label_kid = 4, label_iv = 5,
                       label_partial_iv = 6;
constexpr std::size_t iv_size = 12;         // both AEADs' nonce (RFC 9053 §4.1, §4.3)
constexpr std::size_t aead_tag_size = 16;   // both AEADs' full tag
constexpr std::size_t hmac_size = detail::hmac_sha256_size;  // HMAC 256/256: not truncated
constexpr std::size_t signature_size = 64;  // ES256's r || s and Ed25519's signature alike
// Header maps this library reads hold a handful of parameters; a bound keeps the duplicate
// check (a scan of the labels seen) linear in practice and a hostile map cheap to refuse.
constexpr std::size_t max_header_parameters = 32;

using detail::bytes_of;

bool is_aead(algorithm alg) noexcept {
  return alg == algorithm::a256gcm || alg == algorithm::chacha20_poly1305;
}

message_type type_of(algorithm alg) noexcept {
  switch (alg) {
    case algorithm::a256gcm:
    case algorithm::chacha20_poly1305:
      return message_type::encrypt0;
    case algorithm::hmac_256:
      return message_type::mac0;
    case algorithm::es256:
    case algorithm::eddsa:
      break;
  }
  return message_type::sign1;
}

std::string_view name_of(message_type type) noexcept {
  switch (type) {
    case message_type::encrypt0:
      return "COSE_Encrypt0";
    case message_type::mac0:
      return "COSE_Mac0";
    case message_type::sign1:
      break;
  }
  return "COSE_Sign1";
}

std::size_t item_count(message_type type) noexcept {
  return type == message_type::encrypt0 ? 3 : 4;
}

// A failed OpenSSL call while protecting: the library's state, not the caller's input.
[[noreturn]] void openssl_failure(const char* what) { detail::throw_openssl_failure("COSE", what); }

// The int-sized lengths EVP's AEAD calls take.
int checked_int(std::size_t size, const char* what) {
  if (size > static_cast<std::size_t>(INT_MAX) - aead_tag_size)
    throw std::invalid_argument(std::string("COSE: the ") + what + " is too long for one message");
  return static_cast<int>(size);
}

// Shown in errors: a key id is the caller's text; a kid from a message is anyone's bytes, so
// it is quoted with every byte outside printable ASCII escaped, and cut short.
std::string quoted(std::string_view id) {
  constexpr std::size_t shown = 64;
  std::string out = "\"";
  for (std::size_t i = 0; i < id.size() && i < shown; ++i) {
    auto c = static_cast<unsigned char>(id[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      waypoint::detail::append_hex(out, c);
    }
  }
  if (id.size() > shown) out += "...";
  return out + "\"";
}

}  // namespace

// The key's bytes or OpenSSL key; immutable once made, shared by the key's copies.
struct key::material {
  std::string id;
  cose::algorithm alg = algorithm::hmac_256;
  detail::secret_bytes secret;  // symmetric keys
  openssl::pkey_ptr pkey;       // ES256 and EdDSA keys
  bool is_private = false;
};

std::string_view name_of(algorithm alg) noexcept {
  switch (alg) {
    case algorithm::a256gcm:
      return "A256GCM";
    case algorithm::chacha20_poly1305:
      return "ChaCha20/Poly1305";
    case algorithm::hmac_256:
      return "HMAC 256/256";
    case algorithm::es256:
      return "ES256";
    case algorithm::eddsa:
      break;
  }
  return "EdDSA";
}

namespace {

void require_id(const std::string& id, algorithm alg) {
  // The kid header is how a message names its key: a key without one could never be chosen.
  if (id.empty())
    throw std::invalid_argument("COSE key for " + std::string(name_of(alg)) +
                                ": the id is empty (the kid header names the key)");
}

// A PEM private key, else a PEM public key; null when the text is neither.
openssl::pkey_ptr read_pem(std::string_view text, bool& is_private) {
  openssl::pkey_ptr key = detail::read_pem_private_key(text);
  is_private = key != nullptr;
  return key ? std::move(key) : detail::read_pem_public_key(text);
}

// Whether `key` is the one kind of key `alg` takes: a P-256 EC key, or an Ed25519 key.
bool fits(EVP_PKEY* key, algorithm alg) {
  if (alg == algorithm::eddsa) return EVP_PKEY_is_a(key, "ED25519") == 1;
  return detail::is_p256_key(key);
}

}  // namespace

key key::symmetric(std::string id, algorithm alg, std::string_view secret) {
  auto refuse = [&](const std::string& wanted) {
    return std::invalid_argument("COSE key " + quoted(id) + " for " + std::string(name_of(alg)) +
                                 ": " + wanted + ", not " + std::to_string(secret.size()) +
                                 " bytes");
  };
  if (type_of(alg) == message_type::sign1)
    throw std::invalid_argument("COSE key " + quoted(id) + ": " + std::string(name_of(alg)) +
                                " takes a key pair in PEM (key::pem), not a symmetric secret");
  require_id(id, alg);
  if (is_aead(alg) && secret.size() != 32) throw refuse("a key of 32 bytes");
  if (alg == algorithm::hmac_256 && secret.size() < 32) throw refuse("a key of 32 bytes or more");
  auto held = std::make_shared<material>();
  held->id = std::move(id);
  held->alg = alg;
  held->secret.assign(secret);
  held->is_private = true;
  return key(std::move(held));
}

key key::pem(std::string id, algorithm alg, std::string_view text) {
  if (type_of(alg) != message_type::sign1)
    throw std::invalid_argument("COSE key " + quoted(id) + ": " + std::string(name_of(alg)) +
                                " takes a symmetric secret (key::symmetric), not PEM");
  require_id(id, alg);
  bool is_private = false;
  openssl::pkey_ptr pkey = read_pem(text, is_private);
  if (!pkey)
    throw std::invalid_argument("COSE key " + quoted(id) + " for " + std::string(name_of(alg)) +
                                ": the text is not an unencrypted PEM private key or public key");
  if (!fits(pkey.get(), alg))
    throw std::invalid_argument(
        "COSE key " + quoted(id) + " for " + std::string(name_of(alg)) + ": " +
        (alg == algorithm::es256 ? "not a P-256 EC key" : "not an Ed25519 key"));
  auto held = std::make_shared<material>();
  held->id = std::move(id);
  held->alg = alg;
  held->pkey = std::move(pkey);
  held->is_private = is_private;
  return key(std::move(held));
}

const std::string& key::id() const noexcept { return material_->id; }
algorithm key::alg() const noexcept { return material_->alg; }
message_type key::type() const noexcept { return type_of(material_->alg); }
bool key::can_protect() const noexcept { return material_->is_private; }

namespace {

// ---- The primitives -------------------------------------------------------------------

// The cipher, fetched once: EVP_aes_256_gcm() and EVP_chacha20_poly1305() make OpenSSL 3
// look the algorithm up by name in its provider store at every init (an "implicit fetch"),
// which perf showed as a third of a COSE answer's OpenSSL time (BENCHMARKS.md §19).
const EVP_CIPHER* cipher_of(algorithm alg) {
  static const openssl::cipher_ptr gcm(
      EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr));
  static const openssl::cipher_ptr chacha(
      EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr));
  const EVP_CIPHER* cipher = alg == algorithm::a256gcm ? gcm.get() : chacha.get();
  if (!cipher) openssl_failure("EVP_CIPHER_fetch");
  return cipher;
}

// The thread's cipher context, reused from message to message: a new one allocates the
// provider's state every time. EVP_CipherInit_ex2 with a key and IV resets what the last
// message left; both AEADs' default IV length is COSE's 12 bytes.
EVP_CIPHER_CTX* thread_cipher_context() {
  thread_local const openssl::cipher_ctx_ptr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) openssl_failure("EVP_CIPHER_CTX_new");
  return ctx.get();
}

// Random nonces from OpenSSL's generator, drawn nonces_per_draw at a time: RAND_bytes costs
// about 0.8 µs a call whatever the length (perf on BM_RecordWriteCodec/cose: an eighth of a
// COSE request's time), the same for 12 bytes as for 768. The bytes are the generator's
// either way; each is handed out once. fork() would copy the pool into the child, which would
// then send the parent's next nonces: the pool is drawn again whenever the process id is not
// the one it was drawn in, the check OpenSSL's own generator makes.
constexpr std::size_t nonces_per_draw = 64;

void fresh_nonce(unsigned char* out) {
  struct pool {
    unsigned char bytes[nonces_per_draw * iv_size];
    std::size_t used = sizeof bytes;
    pid_t drawn_in = 0;
  };
  thread_local pool nonces;
  pid_t process = getpid();
  if (nonces.used == sizeof nonces.bytes || nonces.drawn_in != process) {
    if (RAND_bytes(nonces.bytes, static_cast<int>(sizeof nonces.bytes)) != 1)
      openssl_failure("RAND_bytes");
    nonces.used = 0;
    nonces.drawn_in = process;
  }
  std::memcpy(out, nonces.bytes + nonces.used, iv_size);
  nonces.used += iv_size;
}

// ciphertext || tag.
std::string aead_seal(const key::material& k, std::string_view iv, std::string_view aad,
                      std::string_view plaintext) {
  int aad_length = checked_int(aad.size(), "external AAD");
  int length = checked_int(plaintext.size(), "payload");
  EVP_CIPHER_CTX* ctx = thread_cipher_context();
  std::string out(plaintext.size() + aead_tag_size, '\0');
  auto* data = reinterpret_cast<unsigned char*>(out.data());
  int written = 0, final_written = 0;
  if (iv.size() != iv_size ||
      EVP_CipherInit_ex2(ctx, cipher_of(k.alg), k.secret.data(), bytes_of(iv), 1, nullptr) != 1 ||
      EVP_EncryptUpdate(ctx, nullptr, &written, bytes_of(aad), aad_length) != 1 ||
      EVP_EncryptUpdate(ctx, data, &written, bytes_of(plaintext), length) != 1 ||
      EVP_EncryptFinal_ex(ctx, data + written, &final_written) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(aead_tag_size),
                          data + plaintext.size()) != 1)
    openssl_failure("AEAD encryption");
  return out;
}

// The plaintext, or false when the tag does not verify (nothing of the plaintext is kept).
bool aead_open(const key::material& k, std::string_view iv, std::string_view aad,
               std::string_view sealed, std::string& plaintext) {
  std::string_view ciphertext = sealed.substr(0, sealed.size() - aead_tag_size);
  std::string tag(sealed.substr(ciphertext.size()));
  EVP_CIPHER_CTX* ctx = thread_cipher_context();
  plaintext.assign(ciphertext.size(), '\0');
  auto* data = reinterpret_cast<unsigned char*>(plaintext.data());
  int written = 0, final_written = 0;
  bool ok = iv.size() == iv_size &&
            EVP_CipherInit_ex2(ctx, cipher_of(k.alg), k.secret.data(), bytes_of(iv), 0,
                               nullptr) == 1 &&
            aad.size() <= static_cast<std::size_t>(INT_MAX) &&
            ciphertext.size() <= static_cast<std::size_t>(INT_MAX) &&
            EVP_DecryptUpdate(ctx, nullptr, &written, bytes_of(aad),
                              static_cast<int>(aad.size())) == 1 &&
            EVP_DecryptUpdate(ctx, data, &written, bytes_of(ciphertext),
                              static_cast<int>(ciphertext.size())) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, static_cast<int>(aead_tag_size),
                                tag.data()) == 1 &&
            EVP_DecryptFinal_ex(ctx, data + written, &final_written) == 1;
  if (!ok) {
    // Unauthenticated plaintext is nobody's to see.
    OPENSSL_cleanse(plaintext.data(), plaintext.size());
    plaintext.clear();
    ERR_clear_error();
  }
  return ok;
}

// COSE_Mac0's tag: HMAC 256/256 is HMAC-SHA-256, not truncated.
std::string mac_tag(const key::material& k, std::string_view data) {
  detail::hmac_sha256_tag tag = detail::hmac_sha256(k.secret, {data});
  return std::string(reinterpret_cast<const char*>(tag.data()), tag.size());
}

// ES256 hashes with SHA-256; Ed25519 signs the message itself (no digest: a null md).
const EVP_MD* digest_of(algorithm alg) noexcept {
  return alg == algorithm::es256 ? EVP_sha256() : nullptr;
}

std::string sign(const key::material& k, std::string_view data) {
  openssl::md_ctx_ptr ctx(EVP_MD_CTX_new());
  if (!ctx) openssl_failure("EVP_MD_CTX_new");
  std::size_t length = 0;
  if (EVP_DigestSignInit(ctx.get(), nullptr, digest_of(k.alg), nullptr, k.pkey.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &length, bytes_of(data), data.size()) != 1)
    openssl_failure("EVP_DigestSign");
  std::string out(length, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &length,
                     bytes_of(data), data.size()) != 1)
    openssl_failure("EVP_DigestSign");
  out.resize(length);
  if (k.alg != algorithm::es256) return out;
  // COSE's ECDSA signature is r || s (RFC 9053 §2.1); OpenSSL's is DER.
  std::optional<std::string> r_s = detail::ecdsa_r_s_from_der(out);
  if (!r_s) openssl_failure("ECDSA signature (DER to r || s)");
  return std::move(*r_s);
}

bool verify(const key::material& k, std::string_view data, std::string_view signature) {
  std::optional<std::string> der;
  if (k.alg == algorithm::es256) {
    der = detail::ecdsa_der_from_r_s(signature);
    if (!der) return false;
    signature = *der;
  }
  return detail::verify_signature(k.pkey.get(), digest_of(k.alg), data, signature);
}

// ---- The structures that are protected (RFC 9052 §4.4, §5.3, §6.3) --------------------

std::string enc_structure(std::string_view protected_bytes, std::string_view external_aad) {
  std::string out;
  cbor::writer w(out);
  w.array(3);
  w.text("Encrypt0");
  w.bytes(protected_bytes);
  w.bytes(external_aad);
  return out;
}

std::string to_be_protected(std::string_view context, std::string_view protected_bytes,
                            std::string_view external_aad, std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + external_aad.size() + protected_bytes.size() + 32);
  cbor::writer w(out);
  w.array(4);
  w.text(context);  // "MAC0" or "Signature1"
  w.bytes(protected_bytes);
  w.bytes(external_aad);
  w.bytes(payload);
  return out;
}

std::string protected_header(algorithm alg) {
  std::string out;
  cbor::writer w(out);
  w.map(1);
  w.integer(label_alg);
  w.integer(static_cast<std::int64_t>(alg));
  return out;
}

// ---- Reading a message -----------------------------------------------------------------

[[noreturn]] void malformed(std::size_t byte, const std::string& rule) {
  throw error(400, "malformed COSE at byte " + std::to_string(byte) + ": " + rule);
}

[[noreturn]] void unauthorized(const std::string& why) { throw error(401, why); }

// A header label: an integer (as CBOR's major type and argument, so every int64 and
// beyond compares exactly) or text.
struct label {
  cbor::kind type = cbor::kind::null;
  std::uint64_t argument = 0;
  std::string_view text;

  bool is(std::int64_t value) const noexcept {
    return value >= 0 ? type == cbor::kind::unsigned_integer &&
                            argument == static_cast<std::uint64_t>(value)
                      : type == cbor::kind::negative_integer &&
                            argument == ~static_cast<std::uint64_t>(value);
  }
  friend bool operator==(const label& a, const label& b) noexcept {
    return a.type == b.type && a.argument == b.argument && a.text == b.text;
  }
  std::string shown() const {
    if (type == cbor::kind::text_string) return quoted(text);
    if (type == cbor::kind::unsigned_integer) return std::to_string(argument);
    return argument < static_cast<std::uint64_t>(INT64_MAX)
               ? std::to_string(-1 - static_cast<std::int64_t>(argument))
               : "-1-" + std::to_string(argument);
  }
};

// What the headers say, from both buckets.
struct headers {
  bool has_alg = false, alg_protected = false, alg_is_integer = false;
  std::int64_t alg = 0;
  bool has_kid = false;
  std::string_view kid;
  bool has_iv = false;
  std::string_view iv;
  std::size_t iv_at = 0;
  label seen[2 * max_header_parameters];  // every label of both buckets, for duplicates
  std::size_t seen_count = 0;
};

struct message {
  bool tagged = false;
  message_type type = message_type::encrypt0;  // meaningless for 4 untagged items until a key says
  std::size_t items = 0;
  std::string_view protected_bytes;
  headers header;
  std::string_view content;  // the payload, or the ciphertext || tag
  std::string_view tag;      // Mac0's tag, Sign1's signature
  std::size_t tag_at = 0, content_at = 0;
};

std::size_t offset_in(std::string_view whole, std::string_view part) noexcept {
  return static_cast<std::size_t>(part.data() - whole.data());
}

// alg (label 1): an integer, ours or not (text names one that is never ours).
void read_alg(const cbor::item& value, bool is_protected, std::size_t base, headers& h) {
  if (value.type == cbor::kind::unsigned_integer || value.type == cbor::kind::negative_integer) {
    h.alg_is_integer = value.argument <= static_cast<std::uint64_t>(INT64_MAX);
    h.alg = value.type == cbor::kind::unsigned_integer
                ? static_cast<std::int64_t>(value.argument)
                : -1 - static_cast<std::int64_t>(value.argument);
  } else if (value.type != cbor::kind::text_string) {  // text: a name, never one of ours
    malformed(base + value.offset, "alg (label 1) is neither an integer nor text");
  }
  h.has_alg = true;
  h.alg_protected = is_protected;
}

// RFC 9052 §3.1: crit lists headers the reader must understand to process the message;
// every one of ours is a standard header, so any crit names an extension we do not know.
[[noreturn]] void refuse_crit(const cbor::item& value, bool is_protected, std::size_t base) {
  if (!is_protected) malformed(base + value.offset, "crit (label 2) outside the protected header");
  if (value.type != cbor::kind::array || value.argument == 0)
    malformed(base + value.offset, "crit (label 2) is not a non-empty array of labels");
  malformed(base + value.offset, "crit (label 2) names headers this library does not understand");
}

// kid (label 4) or IV (label 5): byte strings.
void read_kid_or_iv(const cbor::item& value, bool is_kid, std::size_t base, headers& h) {
  if (value.type != cbor::kind::byte_string)
    malformed(base + value.offset,
              is_kid ? "kid (label 4) is not a byte string" : "IV (label 5) is not a byte string");
  if (is_kid) {
    h.has_kid = true;
    h.kid = value.content;
  } else {
    h.has_iv = true;
    h.iv = value.content;
    h.iv_at = base + value.offset;
  }
}

// One header parameter's value, for the labels this library reads; others are skipped.
void read_parameter(cbor::reader& r, const label& name, bool is_protected, std::size_t base,
                    headers& h) {
  // A text label is never one of ours (is() compares integers only).
  bool ours = name.is(label_alg) || name.is(label_crit) || name.is(label_kid) ||
              name.is(label_iv) || name.is(label_partial_iv);
  if (!ours) return r.skip();
  cbor::item value = r.next();
  if (name.is(label_alg)) return read_alg(value, is_protected, base, h);
  if (name.is(label_crit)) refuse_crit(value, is_protected, base);
  if (name.is(label_partial_iv))
    malformed(base + value.offset,
              "Partial IV (label 6) needs a Base IV, which these keys do not have");
  read_kid_or_iv(value, name.is(label_kid), base, h);
}

// One header map (RFC 9052 §3): labels integers or text, each once across both buckets.
// `base` is where r's bytes start in the message, for the offsets in errors.
void read_header_map(cbor::reader& r, bool is_protected, std::size_t base, headers& h) {
  const char* which = is_protected ? "protected header" : "unprotected header";
  cbor::item map = r.next();
  if (map.type != cbor::kind::map)
    malformed(base + map.offset, std::string(which) + " is not a map");
  if (map.argument > max_header_parameters)
    malformed(base + map.offset, std::string(which) + " has more than " +
                                     std::to_string(max_header_parameters) + " parameters");
  r.enter(map);
  for (std::uint64_t i = 0; i < map.argument; ++i) {
    cbor::item key = r.next();
    if (key.type != cbor::kind::unsigned_integer && key.type != cbor::kind::negative_integer &&
        key.type != cbor::kind::text_string)
      malformed(base + key.offset, std::string(which) + " label is neither an integer nor text");
    label name{key.type, key.type == cbor::kind::text_string ? 0 : key.argument, key.content};
    for (std::size_t k = 0; k < h.seen_count; ++k)
      if (h.seen[k] == name)
        malformed(base + key.offset, "header label " + name.shown() +
                                         " appears twice (within or across the two headers)");
    h.seen[h.seen_count++] = name;
    read_parameter(r, name, is_protected, base, h);
  }
  r.leave();
}

message_type type_of_tag(std::uint64_t tag, std::size_t at) {
  switch (tag) {
    case 16:
      return message_type::encrypt0;
    case 17:
      return message_type::mac0;
    case 18:
      return message_type::sign1;
    default:
      malformed(at, "tag " + std::to_string(tag) +
                        " is not COSE_Encrypt0 (16), COSE_Mac0 (17) or COSE_Sign1 (18)");
  }
}

std::string_view read_bytes(cbor::reader& r, const char* what, std::size_t& at) {
  cbor::item item = r.next();
  at = item.offset;
  if (item.type != cbor::kind::byte_string)
    malformed(item.offset, std::string(what) + " is not a byte string");
  return item.content;
}

// The message's head: an optional tag, then the array of 3 or 4 items. Returns the array.
cbor::item read_message_head(cbor::reader& r, message& m) {
  cbor::item first = r.next();
  if (first.type == cbor::kind::tag) {
    m.tagged = true;
    m.type = type_of_tag(first.argument, first.offset);
    first = r.next();
  }
  if (first.type != cbor::kind::array) malformed(first.offset, "a COSE message is an array");
  m.items = first.argument;
  if (m.tagged && m.items != item_count(m.type))
    malformed(first.offset, std::string(name_of(m.type)) + " is an array of " +
                                std::to_string(item_count(m.type)) + " items, not " +
                                std::to_string(m.items));
  if (m.items != 3 && m.items != 4)
    malformed(first.offset,
              "a COSE_Encrypt0 is an array of 3 items, a COSE_Mac0 or COSE_Sign1 "
              "of 4, not " +
                  std::to_string(m.items));
  if (m.items == 3) m.type = message_type::encrypt0;
  return first;
}

// The protected header: a byte string holding a map, its errors at their offsets in `bytes`.
void read_protected_header(cbor::reader& r, std::string_view bytes, message& m) {
  std::size_t protected_at = 0;
  m.protected_bytes = read_bytes(r, "the protected header", protected_at);
  if (m.protected_bytes.empty()) return;  // an empty string is an empty map (RFC 9052 §3)
  std::size_t base = offset_in(bytes, m.protected_bytes);
  cbor::reader inner(m.protected_bytes);
  try {
    read_header_map(inner, true, base, m.header);
    inner.expect_end();
  } catch (const cbor::malformed& e) {
    malformed(base + e.byte(), std::string(e.what()) + " (in the protected header)");
  }
}

// The payload or ciphertext, which must be in the message, then the tag or signature.
void read_content_and_tag(cbor::reader& r, message& m) {
  cbor::item content = r.next();
  m.content_at = content.offset;
  if (content.type == cbor::kind::null)
    malformed(content.offset, "detached payload (nil): the payload must be in the message");
  if (content.type != cbor::kind::byte_string)
    malformed(content.offset, m.items == 3 ? "the ciphertext is not a byte string"
                                           : "the payload is not a byte string");
  m.content = content.content;
  if (m.items == 4) m.tag = read_bytes(r, "the tag or signature", m.tag_at);
}

// A COSE_Encrypt0 (tagged or not) has an IV of the AEADs' size and room for their tag.
void check_encrypt0(const message& m, std::size_t array_at) {
  if (!m.header.has_iv) malformed(array_at, "COSE_Encrypt0 without an IV (label 5)");
  if (m.header.iv.size() != iv_size)
    malformed(m.header.iv_at, "IV (label 5) of " + std::to_string(m.header.iv.size()) +
                                  " bytes; the AEADs take " + std::to_string(iv_size));
  if (m.content.size() < aead_tag_size)
    malformed(m.content_at, "ciphertext of " + std::to_string(m.content.size()) +
                                " bytes is shorter than its 16-byte tag");
}

// The structure of the message (stage 1): everything that can be checked without a key.
message parse(std::string_view bytes) {
  message m;
  cbor::reader r(bytes);
  cbor::item array = read_message_head(r, m);
  r.enter(array);
  read_protected_header(r, bytes, m);
  read_header_map(r, false, 0, m.header);
  read_content_and_tag(r, m);
  r.leave();
  r.expect_end();
  if (m.items == 3) check_encrypt0(m, array.offset);
  return m;
}

// Stage 1 of open(): the message's structure, a CBOR error reported as the message's.
message parse_message(std::string_view bytes) {
  try {
    return parse(bytes);
  } catch (const cbor::malformed& e) {
    malformed(e.byte(), e.what());
  }
}

// Stage 2 of open(): the message is one `k` opens, with the algorithm protected and the
// tag or signature of the size the algorithm makes. Sets the message's type to the key's.
void check_key_fits(message& m, const key& k) {
  const key::material& held = k.held();
  // A well-formed message of another kind than the key makes is refused as a wrong algorithm
  // is (401): the message is readable, it is just not one this key opens.
  bool kind_fits =
      m.tagged ? m.type == k.type() : (m.items == 3) == (k.type() == message_type::encrypt0);
  if (!kind_fits)
    unauthorized("COSE: key " + quoted(held.id) + " opens " + std::string(name_of(k.type())) +
                 " messages, not " +
                 std::string(name_of(m.tagged ? m.type : message_type::encrypt0)));
  m.type = k.type();
  // The algorithm must be protected: the one this library writes, and the one the MAC,
  // signature or AEAD tag then covers.
  if (!m.header.has_alg || !m.header.alg_protected)
    unauthorized("COSE: no algorithm (alg, label 1) in the protected header");
  if (!m.header.alg_is_integer || m.header.alg != static_cast<std::int64_t>(held.alg))
    unauthorized("COSE: the message's algorithm is not " + std::string(name_of(held.alg)) +
                 ", key " + quoted(held.id) + "'s");
  std::size_t wanted = m.type == message_type::mac0 ? hmac_size : signature_size;
  if (m.type != message_type::encrypt0 && m.tag.size() != wanted)
    malformed(m.tag_at, std::string(m.type == message_type::mac0 ? "MAC tag" : "signature") +
                            " of " + std::to_string(m.tag.size()) + " bytes; " +
                            std::string(name_of(held.alg)) + " makes " + std::to_string(wanted));
}

// Stage 3 of open(): the protection. True, with the payload, when the message verifies.
bool verify_message(const key::material& held, const message& m, std::string_view external_aad,
                    std::string& payload) {
  bool verified = false;
  switch (m.type) {
    case message_type::encrypt0:
      return aead_open(held, m.header.iv, enc_structure(m.protected_bytes, external_aad), m.content,
                       payload);
    case message_type::mac0:
      verified = detail::hmac_sha256_matches(
          held.secret, {to_be_protected("MAC0", m.protected_bytes, external_aad, m.content)},
          m.tag);
      break;
    case message_type::sign1:
      verified = verify(
          held, to_be_protected("Signature1", m.protected_bytes, external_aad, m.content), m.tag);
      break;
  }
  if (verified) payload.assign(m.content);
  return verified;
}

// What protect() writes after the headers: an Encrypt0's IV and ciphertext, or a Mac0's
// tag or a Sign1's signature over the payload.
struct protection {
  std::string iv, content, tag;
};

protection protect_payload(const key::material& held, message_type type,
                           std::string_view protected_bytes, std::string_view payload,
                           std::string_view external_aad) {
  protection p;
  switch (type) {
    case message_type::encrypt0:
      // A fresh random nonce per message: with 96 random bits, a repeat under one key is
      // negligible well past any key's life (NIST SP 800-38D §8.3 bounds a key to 2^32
      // messages), and a repeat is the one way these AEADs fail catastrophically.
      p.iv.assign(iv_size, '\0');
      fresh_nonce(reinterpret_cast<unsigned char*>(p.iv.data()));
      p.content = aead_seal(held, p.iv, enc_structure(protected_bytes, external_aad), payload);
      break;
    case message_type::mac0:
      p.tag = mac_tag(held, to_be_protected("MAC0", protected_bytes, external_aad, payload));
      break;
    case message_type::sign1:
      p.tag = sign(held, to_be_protected("Signature1", protected_bytes, external_aad, payload));
      break;
  }
  return p;
}

// The tagged message: [protected, {kid, IV for Encrypt0}, ciphertext or payload, tag].
std::string encode_message(const key::material& held, message_type type,
                           std::string_view protected_bytes, std::string_view payload,
                           const protection& p) {
  std::string out;
  out.reserve(payload.size() + protected_bytes.size() + held.id.size() + 128);
  cbor::writer w(out);
  w.tag(static_cast<std::uint64_t>(type));
  w.array(item_count(type));
  w.bytes(protected_bytes);
  // Deterministic order (RFC 8949 §4.2.1): kid (4) before IV (5).
  w.map(type == message_type::encrypt0 ? 2 : 1);
  w.integer(label_kid);
  w.bytes(held.id);
  if (type == message_type::encrypt0) {
    w.integer(label_iv);
    w.bytes(p.iv);
    w.bytes(p.content);
  } else {
    w.bytes(payload);
    w.bytes(p.tag);
  }
  return out;
}

}  // namespace

std::string protect(const key& k, std::string_view payload, std::string_view external_aad) {
  const key::material& held = k.held();
  if (!k.can_protect())
    throw std::invalid_argument("COSE key " + quoted(held.id) +
                                " is a public key: it verifies, it cannot sign");
  std::string protected_bytes = protected_header(held.alg);
  message_type type = type_of(held.alg);
  protection p = protect_payload(held, type, protected_bytes, payload, external_aad);
  return encode_message(held, type, protected_bytes, payload, p);
}

keyring& keyring::current(key k) {
  if (!k.can_protect())
    throw std::invalid_argument(
        "COSE keyring: the current key " + quoted(k.id()) +
        " is a public key, which cannot protect answers (add it with grace())");
  for (std::size_t i = has_current_ ? 1 : 0; i < keys_.size(); ++i)
    if (keys_[i].id() == k.id())
      throw std::invalid_argument("COSE keyring: the key id " + quoted(k.id()) + " is given twice");
  if (has_current_)
    keys_[0] = std::move(k);
  else
    keys_.insert(keys_.begin(), std::move(k));
  has_current_ = true;
  return *this;
}

keyring& keyring::grace(key k) {
  if (find(k.id()) != nullptr)
    throw std::invalid_argument("COSE keyring: the key id " + quoted(k.id()) + " is given twice");
  keys_.push_back(std::move(k));
  return *this;
}

const key* keyring::current_key() const noexcept { return has_current_ ? &keys_[0] : nullptr; }

const key* keyring::find(std::string_view id) const noexcept {
  for (const key& k : keys_)
    if (k.id() == id) return &k;
  return nullptr;
}

std::string keyring::open(std::string_view bytes, std::string_view external_aad) const {
  message m = parse_message(bytes);
  if (!m.header.has_kid)
    unauthorized("COSE: no key id (kid, label 4): no key to open the message with");
  const key* k = find(m.header.kid);
  if (k == nullptr) unauthorized("COSE: no key has the id " + quoted(m.header.kid));
  check_key_fits(m, *k);
  std::string payload;
  if (!verify_message(k->held(), m, external_aad, payload))
    unauthorized("COSE: authentication failed: the message did not verify with key " +
                 quoted(k->held().id));
  return payload;
}

std::string keyring::protect(std::string_view payload, std::string_view external_aad) const {
  if (!has_current_) throw std::logic_error("COSE keyring: no current key to protect with");
  return cose::protect(keys_[0], payload, external_aad);
}

}  // namespace waypoint::app::cose
