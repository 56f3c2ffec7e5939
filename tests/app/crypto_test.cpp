// Tests of src/app/detail/crypto.hpp, the private crypto unit JWT, COSE and cookies share:
// HMAC-SHA-256 against RFC 4231, r ‖ s ↔ DER at the edges of DER's INTEGER, the P-256 check
// against other curves and key types, PEM keys, signature checks, and OpenSSL's failures.
// Each function must also leave the thread's OpenSSL error queue empty.
#include "app/detail/crypto.hpp"

#include "hex_text.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

using namespace waypoint::app::detail;
using waypoint::app::testing::from_hex;
using waypoint::app::testing::to_hex;

std::string tag_text(const hmac_sha256_tag& tag) {
  return std::string(reinterpret_cast<const char*>(tag.data()), tag.size());
}

struct hmac_row {
  const char* name;
  std::string key, data;
  std::string_view tag_hex;  // the whole tag, or its first 128 bits (test case 5)
};

// RFC 4231 §4: the HMAC-SHA-256 results of its seven test cases.
std::vector<hmac_row> rfc4231_cases() {
  std::string key25;
  for (char b = 1; b <= 25; ++b) key25 += b;
  std::string long_key(131, '\xaa');
  return {{"1", std::string(20, '\x0b'), "Hi There",
           "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
          {"2 (a key shorter than the hash)", "Jefe", "what do ya want for nothing?",
           "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
          {"3", std::string(20, '\xaa'), std::string(50, '\xdd'),
           "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
          {"4", key25, std::string(50, '\xcd'),
           "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
          {"5 (truncated to 128 bits)", std::string(20, '\x0c'), "Test With Truncation",
           "a3b6167473100ee06e0c796c2955552b"},
          {"6 (a key longer than the block)", long_key,
           "Test Using Larger Than Block-Size Key - Hash Key First",
           "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
          {"7 (key and data longer than the block)", long_key,
           "This is a test using a larger than block-size key and a larger than block-size data. "
           "The key needs to be hashed before being used by the HMAC algorithm.",
           "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"}};
}

TEST(Hmac, Sha256MatchesRfc4231TestCases) {
  for (const auto& [name, key, data, tag_hex] : rfc4231_cases()) {
    std::string tag = to_hex(tag_text(hmac_sha256(byte_span(key), {data})));
    EXPECT_EQ(tag.substr(0, tag_hex.size()), tag_hex) << "RFC 4231 test case " << name;
  }
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST(Hmac, PartsAreOneMessageWhereverTheyAreSplit) {
  hmac_row first = rfc4231_cases()[0];
  hmac_sha256_tag whole = hmac_sha256(byte_span(first.key), {first.data});
  for (std::initializer_list<std::string_view> parts :
       {std::initializer_list<std::string_view>{"Hi", " There"},
        {"", "Hi There", ""},
        {"H", "i", " ", "T", "here"},
        {"Hi There"}})
    EXPECT_EQ(hmac_sha256(byte_span(first.key), parts), whole);
  EXPECT_NE(hmac_sha256(byte_span(first.key), {"Hi There", "."}), whole);
}

TEST(Hmac, MatchesAcceptsOnlyTheWholeTagOfTheSameMessage) {
  hmac_row row = rfc4231_cases()[1];
  std::string tag = from_hex(row.tag_hex);
  EXPECT_TRUE(hmac_sha256_matches(byte_span(row.key), {row.data}, tag));
  for (std::size_t bit = 0; bit < 8 * tag.size(); bit += 37) {
    std::string flipped = tag;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_FALSE(hmac_sha256_matches(byte_span(row.key), {row.data}, flipped)) << bit;
  }
  for (std::string_view wrong_length : {std::string_view(), std::string_view(tag).substr(0, 31),
                                        std::string_view(tag).substr(0, 16)})
    EXPECT_FALSE(hmac_sha256_matches(byte_span(row.key), {row.data}, wrong_length));
  EXPECT_FALSE(hmac_sha256_matches(byte_span(row.key), {row.data}, tag + '\0'));
  EXPECT_FALSE(hmac_sha256_matches(byte_span("Jefe!"), {row.data}, tag));  // another key
  EXPECT_FALSE(hmac_sha256_matches(byte_span(row.key), {row.data, "?"}, tag));
}

// r ‖ s and its DER, as hex. DER writes an INTEGER in the fewest bytes, with a 0x00 in front
// when the first byte has its high bit set (else it would read as negative).
struct ecdsa_row {
  const char* rule;
  std::string r_s, der;
};

std::vector<ecdsa_row> ecdsa_rows() {
  const std::string zeros31(62, '0');
  const std::string ffs32(64, 'f');
  return {{"leading zero bytes are dropped: r = s = 1", zeros31 + "01" + zeros31 + "01",
           "3006020101020101"},
          {"a high bit gets a 0x00 in front: r = 0x80 00..00, s = 0x7f ff..ff",
           "80" + zeros31 + "7f" + std::string(62, 'f'),
           "304502210080" + zeros31 + "02207f" + std::string(62, 'f')},
          {"both full width with the high bit set", ffs32 + ffs32,
           "3046022100" + ffs32 + "022100" + ffs32},
          {"a zero byte then a high bit: r = 0x00 80 00..00 keeps one 0x00",
           "0080" + std::string(60, '0') + zeros31 + "02",
           "302502200080" + std::string(60, '0') + "020102"},
          {"zero is one byte 0x00", zeros31 + "00" + zeros31 + "05", "3006020100020105"}};
}

TEST(Ecdsa, RAndSConvertToDerAndBackAtIntegerEdges) {
  for (const auto& [rule, r_s_hex, der_hex] : ecdsa_rows()) {
    std::string r_s = from_hex(r_s_hex), der = from_hex(der_hex);
    ASSERT_EQ(r_s.size(), p256_signature_size) << rule;
    std::optional<std::string> made = ecdsa_der_from_r_s(r_s);
    ASSERT_TRUE(made) << rule;
    EXPECT_EQ(to_hex(*made), der_hex) << rule;
    std::optional<std::string> back = ecdsa_r_s_from_der(der);
    ASSERT_TRUE(back) << rule;
    EXPECT_EQ(to_hex(*back), r_s_hex) << rule;
  }
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST(Ecdsa, RAndSOfAnyLengthButSixtyFourBytesIsRefused) {
  for (std::size_t size : {0u, 1u, 32u, 63u, 65u, 96u, 128u})
    EXPECT_FALSE(ecdsa_der_from_r_s(std::string(size, '\x01'))) << size;
}

TEST(Ecdsa, DerThatIsNotOneSignatureFittingP256IsRefused) {
  const std::string one = "020101";
  for (auto [rule, der_hex] : std::vector<std::pair<const char*, std::string>>{
           {"empty", ""},
           {"not DER", "00112233"},
           {"a trailer after the signature", "3006" + one + one + "00"},
           {"one INTEGER only", "3003" + one},
           {"cut short", "3006" + one + "0201"},
           {"a negative r", "30060201ff" + one},
           {"an r of 33 significant bytes", "3026022101" + std::string(64, '0') + one}}) {
    EXPECT_FALSE(ecdsa_r_s_from_der(from_hex(der_hex))) << rule;
    EXPECT_EQ(ERR_peek_error(), 0u) << rule;
  }
}

struct key_deleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using test_key = std::unique_ptr<EVP_PKEY, key_deleter>;

test_key checked(EVP_PKEY* key) {
  if (!key) throw std::runtime_error("EVP_PKEY_Q_keygen failed");
  return test_key(key);
}
test_key ec_key(const char* curve) {
  return checked(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", curve));
}

TEST(Ecdsa, P256CheckAcceptsPrime256v1AloneAmongCurvesAndKeyTypes) {
  EXPECT_TRUE(is_p256_key(ec_key("P-256").get()));
  EXPECT_TRUE(is_p256_key(ec_key("prime256v1").get()));
  for (const char* curve : {"P-224", "P-384", "P-521", "secp256k1"})
    EXPECT_FALSE(is_p256_key(ec_key(curve).get())) << curve;
  for (const char* type : {"ED25519", "X25519"})
    EXPECT_FALSE(is_p256_key(checked(EVP_PKEY_Q_keygen(nullptr, nullptr, type)).get())) << type;
  std::size_t rsa_bits = 2048;
  EXPECT_FALSE(is_p256_key(checked(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", rsa_bits)).get()));
  EXPECT_EQ(ERR_peek_error(), 0u);
}

std::string der_signature(EVP_PKEY* key, std::string_view data) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::size_t length = 0;
  EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key);
  EVP_DigestSign(ctx, nullptr, &length, bytes_of(data), data.size());
  std::string out(length, '\0');
  EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(out.data()), &length, bytes_of(data),
                 data.size());
  EVP_MD_CTX_free(ctx);
  out.resize(length);
  return out;
}

TEST(Ecdsa, SignaturesVerifyThroughRAndSAndNothingElseDoes) {
  test_key key = ec_key("P-256"), other = ec_key("P-256");
  for (int i = 0; i < 20; ++i) {  // r or s with a leading zero byte or a high bit, in turn
    std::string data = "message " + std::to_string(i);
    std::string der = der_signature(key.get(), data);
    std::optional<std::string> r_s = ecdsa_r_s_from_der(der);
    ASSERT_TRUE(r_s);
    std::optional<std::string> again = ecdsa_der_from_r_s(*r_s);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, der);
    EXPECT_TRUE(verify_signature(key.get(), EVP_sha256(), data, *again));
    EXPECT_FALSE(verify_signature(key.get(), EVP_sha256(), data + ".", der));
    EXPECT_FALSE(verify_signature(other.get(), EVP_sha256(), data, der));
    EXPECT_FALSE(verify_signature(key.get(), EVP_sha256(), data, *r_s));  // not DER
  }
  EXPECT_EQ(ERR_peek_error(), 0u);
}

std::string pem_of(EVP_PKEY* key, bool is_private, const char* passphrase = nullptr) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (!is_private)
    PEM_write_bio_PUBKEY(bio, key);
  else if (passphrase)
    PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), passphrase,
                                  static_cast<int>(std::string_view(passphrase).size()), nullptr,
                                  nullptr);
  else
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long length = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(length));
  BIO_free(bio);
  return out;
}

TEST(Pem, EachReaderTakesItsOwnKindAndRefusesTheRest) {
  test_key key = ec_key("P-256");
  std::string private_pem = pem_of(key.get(), true), public_pem = pem_of(key.get(), false);
  openssl::pkey_ptr read_private = read_pem_private_key(private_pem);
  openssl::pkey_ptr read_public = read_pem_public_key(public_pem);
  ASSERT_TRUE(read_private);
  ASSERT_TRUE(read_public);
  EXPECT_EQ(EVP_PKEY_eq(read_private.get(), key.get()), 1);
  EXPECT_EQ(EVP_PKEY_eq(read_public.get(), key.get()), 1);
  EXPECT_FALSE(read_pem_private_key(public_pem));
  EXPECT_FALSE(read_pem_public_key(private_pem));
  for (std::string_view text :
       {std::string_view(), std::string_view("not PEM"),
        std::string_view(public_pem).substr(0, public_pem.size() / 2),
        std::string_view("-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n")}) {
    EXPECT_FALSE(read_pem_private_key(text)) << text;
    EXPECT_FALSE(read_pem_public_key(text)) << text;
  }
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST(Pem, AnEncryptedPrivateKeyIsRefusedWithoutAskingForAPassphrase) {
  test_key key = ec_key("P-256");
  std::string encrypted = pem_of(key.get(), true, "correct horse battery staple");
  ASSERT_NE(encrypted.find("ENCRYPTED"), std::string::npos);
  EXPECT_FALSE(read_pem_private_key(encrypted));
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST(SecretBytes, HoldTheBytesGivenLastAndCannotBeCopied) {
  static_assert(!std::is_copy_constructible_v<secret_bytes>);
  static_assert(!std::is_copy_assignable_v<secret_bytes>);
  secret_bytes secret;
  EXPECT_EQ(secret.size(), 0u);
  secret.assign(std::string(40, 'k'));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(secret.data()), secret.size()),
            std::string(40, 'k'));
  secret.assign("Jefe");  // replaced, shorter
  std::span<const unsigned char> view = secret;
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.data()), view.size()), "Jefe");
  hmac_row row = rfc4231_cases()[1];  // a held secret keys HMAC as the bytes would
  EXPECT_TRUE(hmac_sha256_matches(secret, {row.data}, from_hex(row.tag_hex)));
}

TEST(OpensslFailure, NamesWhoWhatAndOpensslsReasonAndEmptiesTheQueue) {
  auto message = [](std::string_view who, std::string_view what) {
    try {
      throw_openssl_failure(who, what);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("nothing thrown");
  };
  EXPECT_EQ(message("COSE", "RAND_bytes"), "COSE: OpenSSL's RAND_bytes failed (unknown error)");
  // A real failure on the queue: its reason is named, and nothing of it is left behind.
  EXPECT_EQ(EVP_MD_fetch(nullptr, "no such digest", nullptr), nullptr);
  ASSERT_NE(ERR_peek_error(), 0u);
  std::string named = message("cookie_keys", "EVP_MD_fetch");
  EXPECT_TRUE(named.starts_with("cookie_keys: OpenSSL's EVP_MD_fetch failed (error:")) << named;
  EXPECT_EQ(ERR_peek_error(), 0u);
}

}  // namespace
