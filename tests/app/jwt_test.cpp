// Bearer tokens (waypoint/app/security/jwt.hpp): verify_jwt's refusals row by row, keys from PEM and
// from JWK Sets (every key type, every malformed member refused by name), the bearer_auth()
// layer's 401 and 403 answers (WWW-Authenticate as RFC 6750 §3 writes it, the problem
// document, HEAD), the claims a handler reads, keys swapped by reload(), and the OpenAPI
// security scheme. The tokens here are signed with OpenSSL directly; jwt_interop.py and
// tests/jwt/interop.mjs check tokens PyJWT and jose make.
#include "app_test_support.hpp"

#include <waypoint/app/context.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/security/jwt.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using json = nlohmann::json;

constexpr std::int64_t now_seconds = 1'800'000'000;
const std::string secret(32, 's');

std::string b64(std::string_view bytes) {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t bits = 0;
  int held = 0;
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c;
    held += 8;
    while (held >= 6) {
      held -= 6;
      out.push_back(alphabet[(bits >> held) & 63]);
    }
  }
  if (held > 0) out.push_back(alphabet[(bits << (6 - held)) & 63]);
  return out;
}

struct pkey_free {
  void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
using pkey_ptr = std::shared_ptr<EVP_PKEY>;

pkey_ptr generate(jwt_algorithm alg) {
  EVP_PKEY* key = alg == jwt_algorithm::rs256   ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{2048})
                  : alg == jwt_algorithm::es256 ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                                                : EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (!key) throw std::runtime_error("keygen failed");
  return pkey_ptr(key, pkey_free{});
}

std::string public_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  return out;
}

std::string sign(jwt_algorithm alg, EVP_PKEY* key, std::string_view data) {
  if (alg == jwt_algorithm::hs256) {
    unsigned char mac[32];
    std::size_t length = 0;
    EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, secret.data(), secret.size(),
              reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, sizeof mac,
              &length);
    return std::string(reinterpret_cast<char*>(mac), length);
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::size_t length = 0;
  const EVP_MD* md = alg == jwt_algorithm::eddsa ? nullptr : EVP_sha256();
  EVP_DigestSignInit(ctx, nullptr, md, nullptr, key);
  EVP_DigestSign(ctx, nullptr, &length, reinterpret_cast<const unsigned char*>(data.data()),
                 data.size());
  std::string out(length, '\0');
  EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(out.data()), &length,
                 reinterpret_cast<const unsigned char*>(data.data()), data.size());
  EVP_MD_CTX_free(ctx);
  out.resize(length);
  if (alg != jwt_algorithm::es256) return out;
  // JWS's ECDSA signature is r || s (RFC 7518 §3.4); OpenSSL's is DER.
  const unsigned char* p = reinterpret_cast<const unsigned char*>(out.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(out.size()));
  std::string fixed(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(fixed.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(fixed.data()) + 32, 32);
  ECDSA_SIG_free(sig);
  return fixed;
}

json default_claims() {
  return {{"sub", "ada"}, {"iss", "https://issuer.example"}, {"aud", "orders"},
          {"exp", now_seconds + 600}, {"scope", "orders:read profile"}};
}

// One key of each algorithm, kids "rsa", "ec", "ed", "hs"; tokens made and keys exported.
struct signer {
  pkey_ptr rsa = generate(jwt_algorithm::rs256);
  pkey_ptr ec = generate(jwt_algorithm::es256);
  pkey_ptr ed = generate(jwt_algorithm::eddsa);

  EVP_PKEY* key_of(jwt_algorithm alg) const {
    return alg == jwt_algorithm::rs256   ? rsa.get()
           : alg == jwt_algorithm::es256 ? ec.get()
           : alg == jwt_algorithm::eddsa ? ed.get()
                                         : nullptr;
  }

  static std::string kid_of(jwt_algorithm alg) {
    return alg == jwt_algorithm::rs256   ? "rsa"
           : alg == jwt_algorithm::es256 ? "ec"
           : alg == jwt_algorithm::eddsa ? "ed"
                                         : "hs";
  }

  // header and claims as JSON text, signed with `alg`'s key.
  std::string token_text(jwt_algorithm alg, const std::string& header, const std::string& claims) const {
    std::string input = b64(header) + "." + b64(claims);
    return input + "." + b64(sign(alg, key_of(alg), input));
  }

  std::string token(jwt_algorithm alg, const json& claims = default_claims()) const {
    json header = {{"alg", std::string(name_of(alg))}, {"kid", kid_of(alg)}, {"typ", "JWT"}};
    return token_text(alg, header.dump(), claims.dump());
  }

  jwt_keys keys() const {
    jwt_keys out;
    out.add_pem("rsa", jwt_algorithm::rs256, public_pem(rsa.get()));
    out.add_pem("ec", jwt_algorithm::es256, public_pem(ec.get()));
    out.add_pem("ed", jwt_algorithm::eddsa, public_pem(ed.get()));
    out.add_secret("hs", secret);
    return out;
  }
};

const signer& keys_for_tests() {
  static const signer s;
  return s;
}

jwt_options options_for_tests() {
  return {.issuer = "https://issuer.example",
          .audiences = {"orders"},
          .now = [] { return std::chrono::system_clock::time_point(std::chrono::seconds(now_seconds)); }};
}

constexpr jwt_algorithm all_algorithms[] = {jwt_algorithm::rs256, jwt_algorithm::es256,
                                            jwt_algorithm::eddsa, jwt_algorithm::hs256};

// ---- verify_jwt ------------------------------------------------------------------------

TEST(VerifyJwt, AcceptsEachAlgorithmWithItsKey) {
  const signer& s = keys_for_tests();
  jwt_keys keys = s.keys();
  for (jwt_algorithm alg : all_algorithms) {
    jwt_result result = verify_jwt(s.token(alg), keys, options_for_tests());
    ASSERT_TRUE(result) << name_of(alg) << ": " << result.error;
    EXPECT_EQ(result.claims->subject(), "ada");
    EXPECT_EQ(result.claims->key_id(), signer::kid_of(alg));
    EXPECT_EQ(result.claims->scopes(), (std::vector<std::string>{"orders:read", "profile"}));
  }
}

struct refusal_row {
  const char* rule;
  std::string token;
  const char* error;  // a part of the error
};

std::string with_claims(json changes, jwt_algorithm alg = jwt_algorithm::hs256) {
  json claims = default_claims();
  for (auto& [name, value] : changes.items()) {
    if (value.is_null())
      claims.erase(name);
    else
      claims[name] = value;
  }
  return keys_for_tests().token(alg, claims);
}

std::string with_header(const std::string& header, jwt_algorithm alg = jwt_algorithm::hs256) {
  return keys_for_tests().token_text(alg, header, default_claims().dump());
}

// `token` with the last character's lowest bit set: an HS256 signature (32 bytes, 43
// characters) leaves two bits of it unused, which canonical base64url keeps zero.
std::string with_unused_bit_set(std::string token) {
  static constexpr std::string_view alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  token.back() = alphabet[alphabet.find(token.back()) | 1];
  return token;
}

std::string nested(int levels) {
  std::string inner(static_cast<std::size_t>(levels), '[');
  inner += std::string(static_cast<std::size_t>(levels), ']');
  return R"({"sub":"ada","aud":"orders","iss":"https://issuer.example","exp":1800000600,"deep":)" +
         inner + "}";
}

TEST(VerifyJwt, RefusesEachBrokenRule) {
  const signer& s = keys_for_tests();
  std::string good = s.token(jwt_algorithm::es256);
  std::string ec_head = good.substr(0, good.find('.'));
  std::string hs_good = s.token(jwt_algorithm::hs256);
  const std::vector<refusal_row> rows = {
      {"too long", std::string(8193, 'a'), "longer than 8192 bytes"},
      {"two parts", good.substr(0, good.rfind('.')), "three base64url parts"},
      {"four parts", good + ".x", "three base64url parts"},
      {"padding", good + "=", "signature is not base64url"},
      {"standard base64 alphabet", "+" + good.substr(1), "header is not base64url"},
      {"unused bits set", with_unused_bit_set(hs_good), "the signature is not base64url"},
      {"header not JSON", b64("alg") + ".e30.AAAA", "the header is not JSON"},
      {"header an array", b64("[]") + ".e30.AAAA", "header is not a JSON object"},
      {"header repeats alg", with_header(R"({"alg":"none","alg":"HS256","kid":"hs"})"),
       "the header repeats the member alg"},
      {"no alg", with_header(R"({"kid":"hs"})"), "no alg"},
      {"alg none", b64(R"({"alg":"none","kid":"hs"})") + "." + b64(default_claims().dump()) + ".",
       "alg none is refused"},
      {"crit", with_header(R"({"alg":"HS256","kid":"hs","crit":["exp"],"exp":1})"), "crit"},
      {"kid not a string", with_header(R"({"alg":"HS256","kid":7})"), "kid is not a string"},
      {"unknown kid", with_header(R"({"alg":"HS256","kid":"hs-2"})"), "kid hs-2 names no key"},
      {"kid shown safely", with_header(R"({"alg":"HS256","kid":"a\"b\\c"})"),
       "kid a?b?c names no key"},
      {"no kid among many keys", with_header(R"({"alg":"HS256"})"), "no kid, and there are 4 keys"},
      {"alg not the key's", with_header(R"({"alg":"HS256","kid":"rsa"})"),
       "alg HS256 is not RS256, the algorithm of key rsa"},
      {"ES256 under an EdDSA kid", with_header(R"({"alg":"ES256","kid":"ed"})", jwt_algorithm::es256),
       "alg ES256 is not EdDSA"},
      {"payload changed", ec_head + "." + b64(R"({"sub":"eve"})") + good.substr(good.rfind('.')),
       "signature did not verify"},
      {"header changed", b64(R"({"alg":"ES256","kid":"ec","typ":"jwt"})") + good.substr(good.find('.')),
       "signature did not verify"},
      {"ES256 signature of 63 bytes", good.substr(0, good.rfind('.') + 1) + b64(std::string(63, 'x')),
       "signature did not verify"},
      {"claims an array", s.token_text(jwt_algorithm::hs256, R"({"alg":"HS256","kid":"hs"})", "[1]"),
       "payload is not a JSON object"},
      {"claims repeat sub", s.token_text(jwt_algorithm::hs256, R"({"alg":"HS256","kid":"hs"})",
                                         R"({"sub":"ada","sub":"root","exp":1800000600})"),
       "the payload repeats the member sub"},
      {"claims nested too deep",
       s.token_text(jwt_algorithm::hs256, R"({"alg":"HS256","kid":"hs"})", nested(40)),
       "the payload is nested deeper than 32 levels"},
      {"expired", with_claims({{"exp", now_seconds - 61}}), "expired"},
      {"not yet valid", with_claims({{"nbf", now_seconds + 61}}), "not valid yet"},
      {"no exp", with_claims({{"exp", nullptr}}), "no exp"},
      {"exp a string", with_claims({{"exp", std::to_string(now_seconds + 600)}}),
       "exp is not a number"},
      {"nbf a bool", with_claims({{"nbf", true}}), "nbf is not a number"},
      {"iat a string", with_claims({{"iat", "yesterday"}}), "iat is not a number"},
      {"wrong issuer", with_claims({{"iss", "https://evil.example"}}), "expected issuer"},
      {"no issuer", with_claims({{"iss", nullptr}}), "expected issuer"},
      {"issuer a number", with_claims({{"iss", 3}}), "iss is not a string"},
      {"wrong audience", with_claims({{"aud", "billing"}}), "does not name this service"},
      {"audience array without ours", with_claims({{"aud", json::array({"a", "b"})}}),
       "does not name this service"},
      {"audience array with a number", with_claims({{"aud", json::array({"orders", 3})}}),
       "not a string or an array of strings"},
      {"no audience", with_claims({{"aud", nullptr}}), "no aud"},
      {"sub a number", with_claims({{"sub", 42}}), "sub is not a string"},
      {"scope a number", with_claims({{"scope", 42}}), "scope is not a string"},
      {"scp holding a number", with_claims({{"scope", nullptr}, {"scp", json::array({"a", 1})}}),
       "scp holds a value that is not a string"},
  };
  jwt_keys keys = s.keys();
  for (const refusal_row& row : rows) {
    jwt_result result = verify_jwt(row.token, keys, options_for_tests());
    EXPECT_FALSE(result) << row.rule;
    EXPECT_NE(result.error.find(row.error), std::string::npos)
        << row.rule << ": " << result.error;
    for (char c : result.error)
      EXPECT_TRUE(c >= 0x20 && c < 0x7F && c != '"' && c != '\\') << row.rule << ": " << result.error;
  }
}

TEST(VerifyJwt, RefusesEveryChangedCharacter) {
  // Each character of a good token replaced by another of the alphabet, or by a dot: the
  // header, the claims and the signature are all covered, and canonical base64url leaves no
  // character whose change decodes to the same bytes.
  static constexpr std::string_view alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const signer& s = keys_for_tests();
  jwt_keys keys = s.keys();
  for (jwt_algorithm alg : all_algorithms) {
    const std::string good = s.token(alg);
    ASSERT_TRUE(verify_jwt(good, keys, options_for_tests())) << name_of(alg);
    for (std::size_t i = 0; i < good.size(); ++i) {
      if (good[i] == '.') continue;
      std::string changed = good;
      changed[i] = alphabet[(alphabet.find(good[i]) + 1 + i % 63) % alphabet.size()];
      EXPECT_FALSE(verify_jwt(changed, keys, options_for_tests())) << name_of(alg) << " at " << i;
      changed[i] = '.';
      EXPECT_FALSE(verify_jwt(changed, keys, options_for_tests())) << name_of(alg) << " at " << i;
    }
  }
}

TEST(VerifyJwt, TakesTheClockSkewAtBothEnds) {
  struct row {
    const char* rule;
    json changes;
    std::chrono::seconds skew;
    bool accepted;
  };
  const std::vector<row> rows = {
      {"expired within the skew", {{"exp", now_seconds - 59}}, std::chrono::seconds(60), true},
      {"expired at the skew", {{"exp", now_seconds - 60}}, std::chrono::seconds(60), false},
      {"not before within the skew", {{"nbf", now_seconds + 60}}, std::chrono::seconds(60), true},
      {"not before past the skew", {{"nbf", now_seconds + 61}}, std::chrono::seconds(60), false},
      {"expired without skew", {{"exp", now_seconds}}, std::chrono::seconds(0), false},
      {"a fractional exp", {{"exp", now_seconds + 0.5}}, std::chrono::seconds(0), true},
  };
  jwt_keys keys = keys_for_tests().keys();
  for (const row& r : rows) {
    jwt_options options = options_for_tests();
    options.clock_skew = r.skew;
    jwt_result result = verify_jwt(with_claims(r.changes), keys, options);
    EXPECT_EQ(static_cast<bool>(result), r.accepted) << r.rule << ": " << result.error;
  }
}

TEST(VerifyJwt, ChecksAudienceAndExpiryAsConfigured) {
  jwt_keys keys = keys_for_tests().keys();
  jwt_options none = options_for_tests();
  none.audiences.clear();
  // RFC 7519 §4.1.3: a token naming an audience is refused by a service that names none.
  EXPECT_FALSE(verify_jwt(with_claims({}), keys, none));
  EXPECT_TRUE(verify_jwt(with_claims({{"aud", nullptr}}), keys, none));
  jwt_options many = options_for_tests();
  many.audiences = {"billing", "orders"};
  EXPECT_TRUE(verify_jwt(with_claims({{"aud", json::array({"x", "orders"})}}), keys, many));
  jwt_options lax = options_for_tests();
  lax.require_expiry = false;
  EXPECT_TRUE(verify_jwt(with_claims({{"exp", nullptr}}), keys, lax));
  jwt_options any_issuer = options_for_tests();
  any_issuer.issuer.clear();
  EXPECT_TRUE(verify_jwt(with_claims({{"iss", nullptr}}), keys, any_issuer));
  jwt_options short_tokens = options_for_tests();
  short_tokens.max_token_bytes = 64;
  EXPECT_EQ(verify_jwt(with_claims({}), keys, short_tokens).error,
            "the token is longer than 64 bytes");
}

TEST(VerifyJwt, TakesTheOneKeyWhenTheTokenNamesNone) {
  const signer& s = keys_for_tests();
  jwt_keys one;
  one.add_pem("ed", jwt_algorithm::eddsa, public_pem(s.ed.get()));
  std::string token = s.token_text(jwt_algorithm::eddsa, R"({"alg":"EdDSA"})", default_claims().dump());
  EXPECT_TRUE(verify_jwt(token, one, options_for_tests()));
  EXPECT_FALSE(verify_jwt(token, s.keys(), options_for_tests()));
  EXPECT_FALSE(verify_jwt(token, jwt_keys{}, options_for_tests()));
}

// ---- sign_jwt --------------------------------------------------------------------------

TEST(SignJwt, MakesTokensVerifyJwtAcceptsUnderTheSameSecretAndKid) {
  std::string claims = default_claims().dump();
  std::string token = sign_jwt(claims, secret, "hs");
  jwt_result verified = verify_jwt(token, keys_for_tests().keys(), options_for_tests());
  ASSERT_TRUE(verified) << verified.error;
  EXPECT_EQ(verified.claims->json(), claims);
  EXPECT_EQ(verified.claims->key_id(), "hs");

  jwt_keys other;
  other.add_secret("hs", std::string(32, 'o'));
  EXPECT_FALSE(verify_jwt(token, other, options_for_tests()));
  EXPECT_FALSE(verify_jwt(sign_jwt(claims, secret, "another-kid"), keys_for_tests().keys(),
                          options_for_tests()));
}

TEST(SignJwt, RefusesAShortSecretAndClaimsThatAreNotAnObject) {
  struct row {
    const char* rule;
    std::string claims;
    std::string secret;
    const char* said;
  };
  const row rows[] = {
      {"a secret under 32 bytes", "{}", std::string(31, 's'), "32 bytes or more, not 31"},
      {"claims that are not JSON", "{", secret, "is not JSON"},
      {"claims that are an array", "[1]", secret, "are not a JSON object"},
      {"claims repeating a member", R"({"sub":"a","sub":"b"})", secret, "repeats the member"},
  };
  for (const row& r : rows) {
    try {
      sign_jwt(r.claims, r.secret);
      ADD_FAILURE() << r.rule << ": signed";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.said), std::string::npos) << r.rule << ": " << e.what();
    }
  }
}

// ---- keys ------------------------------------------------------------------------------

std::string bn_param(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  EVP_PKEY_get_bn_param(key, name, &bn);
  std::string out(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return b64(out);
}

// The public JWK of `alg`'s test key (the HMAC secret for HS256).
json jwk_of(jwt_algorithm alg) {
  const signer& s = keys_for_tests();
  json jwk = {{"kid", signer::kid_of(alg)}, {"alg", std::string(name_of(alg))}};
  switch (alg) {
    case jwt_algorithm::rs256:
      jwk["kty"] = "RSA";
      jwk["n"] = bn_param(s.rsa.get(), OSSL_PKEY_PARAM_RSA_N);
      jwk["e"] = bn_param(s.rsa.get(), OSSL_PKEY_PARAM_RSA_E);
      break;
    case jwt_algorithm::es256: {
      unsigned char point[65];
      std::size_t length = 0;
      EVP_PKEY_get_octet_string_param(s.ec.get(), OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point,
                                      sizeof point, &length);
      jwk["kty"] = "EC";
      jwk["crv"] = "P-256";
      jwk["x"] = b64(std::string(reinterpret_cast<char*>(point) + 1, 32));
      jwk["y"] = b64(std::string(reinterpret_cast<char*>(point) + 33, 32));
      break;
    }
    case jwt_algorithm::eddsa: {
      unsigned char raw[32];
      std::size_t length = sizeof raw;
      EVP_PKEY_get_raw_public_key(s.ed.get(), raw, &length);
      jwk["kty"] = "OKP";
      jwk["crv"] = "Ed25519";
      jwk["x"] = b64(std::string(reinterpret_cast<char*>(raw), length));
      break;
    }
    case jwt_algorithm::hs256:
      jwk["kty"] = "oct";
      jwk["k"] = b64(secret);
      break;
  }
  return jwk;
}

json jwks_of_all() {
  json keys = json::array();
  for (jwt_algorithm alg : all_algorithms) keys.push_back(jwk_of(alg));
  return {{"keys", keys}};
}

TEST(JwtKeys, ReadsEveryKeyTypeFromAJwks) {
  const signer& s = keys_for_tests();
  jwt_keys keys = jwt_keys::from_jwks(jwks_of_all().dump());
  EXPECT_EQ(keys.size(), 4u);
  for (jwt_algorithm alg : all_algorithms) {
    jwt_result result = verify_jwt(s.token(alg), keys, options_for_tests());
    EXPECT_TRUE(result) << name_of(alg) << ": " << result.error;
  }
  // alg is optional: the key type implies it. A key that encrypts is skipped.
  json without_alg = jwks_of_all();
  for (json& k : without_alg["keys"]) k.erase("alg");
  without_alg["keys"].push_back({{"kty", "RSA"}, {"use", "enc"}, {"kid", "enc"}});
  keys = jwt_keys::from_jwks(without_alg.dump());
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_TRUE(verify_jwt(s.token(jwt_algorithm::es256), keys, options_for_tests()));
}

TEST(JwtKeys, RefusesMalformedJwksNamingKeyAndMember) {
  auto with = [](jwt_algorithm alg, json changes) {
    json jwk = jwk_of(alg);
    for (auto& [name, value] : changes.items()) {
      if (value.is_null())
        jwk.erase(name);
      else
        jwk[name] = value;
    }
    return json{{"keys", json::array({jwk_of(jwt_algorithm::hs256), jwk})}}.dump();
  };
  pkey_ptr small_rsa(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{1024}), pkey_free{});
  json off_curve = jwk_of(jwt_algorithm::es256);
  std::string y = off_curve["y"];
  y[5] = y[5] == 'A' ? 'B' : 'A';
  off_curve["y"] = y;
  struct row {
    const char* rule;
    std::string text;
    const char* error;
  };
  const std::vector<row> rows = {
      {"not JSON", "{keys:[]}", "JWKS: the document is not JSON"},
      {"repeated member", R"({"keys":[],"keys":[]})", "JWKS: the document repeats the member keys"},
      {"no keys array", R"({"keys":{}})", "\"keys\" array"},
      {"a key not an object", R"({"keys":[1]})", "keys[0]: not a JSON object"},
      {"no kty", with(jwt_algorithm::rs256, {{"kty", nullptr}}), "keys[1]: \"kty\" is missing"},
      {"unknown kty", with(jwt_algorithm::rs256, {{"kty", "DSA"}}), "keys[1]: \"kty\" is \"DSA\""},
      {"alg of another kty", with(jwt_algorithm::es256, {{"alg", "RS256"}}),
       "keys[1]: \"alg\" is \"RS256\"; a EC key here verifies ES256"},
      {"alg not verified here", with(jwt_algorithm::rs256, {{"alg", "PS256"}}),
       "RS256, ES256, EdDSA and HS256 are verified"},
      {"n missing", with(jwt_algorithm::rs256, {{"n", nullptr}}), "keys[1]: \"n\" is missing"},
      {"n padded", with(jwt_algorithm::rs256, {{"n", jwk_of(jwt_algorithm::rs256)["n"].get<std::string>() + "="}}),
       "\"n\" is not base64url"},
      {"e a number", with(jwt_algorithm::rs256, {{"e", 65537}}), "\"e\" is not a string"},
      {"RSA of 1024 bits", with(jwt_algorithm::rs256, {{"n", bn_param(small_rsa.get(), OSSL_PKEY_PARAM_RSA_N)}}),
       "keys[1]: an RSA key of 1024 bits; RS256 takes 2048 or more"},
      {"private RSA member", with(jwt_algorithm::rs256, {{"d", "AQAB"}}),
       "private member \"d\""},
      {"EC on P-384", with(jwt_algorithm::es256, {{"crv", "P-384"}}), "only P-256 is read"},
      {"EC x short", with(jwt_algorithm::es256, {{"x", b64(std::string(31, 'x'))}}),
       "\"x\" is 31 bytes, not 32"},
      {"EC point off the curve", json{{"keys", json::array({off_curve})}}.dump(), "not a valid public key"},
      {"OKP X25519", with(jwt_algorithm::eddsa, {{"crv", "X25519"}}), "only Ed25519 is read"},
      {"OKP private d", with(jwt_algorithm::eddsa, {{"d", b64(std::string(32, 'd'))}}),
       "private member \"d\""},
      {"oct short", with(jwt_algorithm::hs256, {{"kid", "hs2"}, {"k", b64(std::string(31, 'k'))}}),
       "\"k\" is 31 bytes; HS256 takes 32 or more"},
      {"repeated kid", with(jwt_algorithm::hs256, {}), "keys[1]: JWT key \"hs\": the kid is already taken"},
  };
  for (const row& r : rows) {
    try {
      jwt_keys::from_jwks(r.text);
      ADD_FAILURE() << r.rule << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.error), std::string::npos)
          << r.rule << ": " << e.what();
    }
  }
}

TEST(JwtKeys, RefusesPemOfAnotherKind) {
  const signer& s = keys_for_tests();
  pkey_ptr small_rsa(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{1024}), pkey_free{});
  struct row {
    const char* rule;
    jwt_algorithm alg;
    std::string pem;
    const char* error;
  };
  const std::vector<row> rows = {
      {"not PEM", jwt_algorithm::rs256, "hello", "not a PEM public key"},
      {"RSA of 1024 bits", jwt_algorithm::rs256, public_pem(small_rsa.get()),
       "an RSA key of 1024 bits; RS256 takes 2048 or more"},
      {"EC key for RS256", jwt_algorithm::rs256, public_pem(s.ec.get()), "not an RSA key"},
      {"Ed25519 key for ES256", jwt_algorithm::es256, public_pem(s.ed.get()), "not a P-256 EC key"},
      {"RSA key for EdDSA", jwt_algorithm::eddsa, public_pem(s.rsa.get()), "not an Ed25519 key"},
      {"PEM for HS256", jwt_algorithm::hs256, public_pem(s.rsa.get()), "HS256 takes a secret"},
  };
  for (const row& r : rows) {
    try {
      jwt_keys().add_pem("k", r.alg, r.pem);
      ADD_FAILURE() << r.rule << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.error), std::string::npos) << r.rule << ": " << e.what();
    }
  }
  EXPECT_THROW(jwt_keys().add_secret("hs", std::string(31, 'x')), std::invalid_argument);
  jwt_keys twice;
  twice.add_secret("hs", secret);
  EXPECT_THROW(twice.add_pem("hs", jwt_algorithm::eddsa, public_pem(s.ed.get())),
               std::invalid_argument);
}

// ---- the layer -------------------------------------------------------------------------

struct guarded_app {
  std::shared_ptr<jwt_key_store> keys = std::make_shared<jwt_key_store>(keys_for_tests().keys());
  application app;

  explicit guarded_app(std::vector<std::string> scopes = {"orders:read"}) {
    app.get("/open", [](context& ctx) { ctx.response().body("open"); });
    auto api = app.group("/api", bearer_auth({.keys = keys,
                                              .verify = options_for_tests(),
                                              .realm = "orders",
                                              .required_scopes = std::move(scopes)}));
    api.get("/me", [](context& ctx) {
      const jwt_claims& claims = ctx.get<jwt_claims>();
      ctx.response().json({{"sub", claims.subject()},
                           {"scopes", claims.scopes()},
                           {"kid", claims.key_id()},
                           {"iss", claims.string_claim("iss").value_or("")},
                           {"exp", claims.claim("exp").value_or("")},
                           {"missing", claims.claim("missing").has_value()},
                           {"json", json::parse(claims.json())}});
    });
  }

  response get(std::string_view target, std::string_view authorization,
               std::string_view method = "GET") {
    if (authorization.empty()) return answer(app, make_request(method, target));
    return answer(app, make_request(method, target, {{"Authorization", authorization}}));
  }
};

TEST(BearerAuth, AsksForATokenWithoutAnErrorCode) {
  guarded_app g;
  for (std::string_view authorization : {"", "Basic YWRhOnB3", "Bearertoken"}) {
    response res = g.get("/api/me", authorization);
    EXPECT_EQ(res.result_int(), 401) << authorization;
    // RFC 6750 §3.1: a request without a token gets no error code.
    EXPECT_EQ(field(res, "WWW-Authenticate"), "Bearer realm=\"orders\"") << authorization;
    EXPECT_EQ(field(res, "Content-Type"), "application/problem+json");
    EXPECT_EQ(body_json(res)["status"], 401);
    EXPECT_NE(body_json(res)["detail"].get<std::string>().find("Authorization: Bearer"),
              std::string::npos);
  }
  EXPECT_EQ(g.get("/open", "").result_int(), 200);
}

TEST(BearerAuth, RefusesAnInvalidTokenWithItsDescription) {
  guarded_app g;
  struct row {
    const char* rule;
    std::string authorization;
    std::string description;
  };
  const std::vector<row> rows = {
      {"expired", "Bearer " + with_claims({{"exp", now_seconds - 3600}}), "the token expired"},
      {"empty token", "Bearer ", "the Authorization field has no token after Bearer"},
      {"garbage", "Bearer a.b", "the token is not three base64url parts separated by dots"},
      {"a kid with quotes", "Bearer " + with_header(R"({"alg":"HS256","kid":"x\"y"})"),
       "kid x?y names no key"},
  };
  for (const row& r : rows) {
    response res = g.get("/api/me", r.authorization);
    EXPECT_EQ(res.result_int(), 401) << r.rule;
    EXPECT_EQ(field(res, "WWW-Authenticate"),
              "Bearer realm=\"orders\", error=\"invalid_token\", error_description=\"" +
                  r.description + "\"")
        << r.rule;
    EXPECT_EQ(body_json(res)["detail"], r.description) << r.rule;
  }
}

TEST(BearerAuth, AnswersMissingScopesWith403) {
  guarded_app g({"orders:read", "orders:write"});
  response res = g.get("/api/me", "Bearer " + with_claims({}, jwt_algorithm::rs256));
  EXPECT_EQ(res.result_int(), 403);
  EXPECT_EQ(field(res, "WWW-Authenticate"),
            "Bearer realm=\"orders\", error=\"insufficient_scope\", error_description=\"the "
            "token does not grant the scope orders:write\", scope=\"orders:read orders:write\"");
  EXPECT_EQ(body_json(res)["status"], 403);
  EXPECT_EQ(g.get("/api/me", "Bearer " + with_claims({{"scope", nullptr},
                                                       {"scp", json::array({"orders:write", "orders:read"})}}))
                .result_int(),
            200);
}

TEST(BearerAuth, AnswersHeadWithTheSameFieldsAndNoBody) {
  guarded_app g;
  response missing = g.get("/api/me", "", "HEAD");
  EXPECT_EQ(missing.result_int(), 401);
  EXPECT_EQ(field(missing, "WWW-Authenticate"), "Bearer realm=\"orders\"");
  EXPECT_TRUE(missing.body().empty());
  response expired = g.get("/api/me", "Bearer " + with_claims({{"exp", 1}}), "HEAD");
  EXPECT_EQ(expired.result_int(), 401);
  EXPECT_NE(field(expired, "WWW-Authenticate").find("error=\"invalid_token\""), std::string::npos);
  EXPECT_TRUE(expired.body().empty());
  response ok = g.get("/api/me", "Bearer " + with_claims({}), "HEAD");
  EXPECT_EQ(ok.result_int(), 200);
  EXPECT_TRUE(ok.body().empty());
}

TEST(BearerAuth, HandsTheClaimsToTheHandler) {
  guarded_app g;
  for (std::string_view scheme : {"Bearer ", "bearer ", "BEARER   "}) {
    response res = g.get("/api/me", std::string(scheme) + with_claims({{"n", json::array({1, 2})}}, jwt_algorithm::eddsa));
    ASSERT_EQ(res.result_int(), 200) << scheme << res.body();
    json body = body_json(res);
    EXPECT_EQ(body["sub"], "ada");
    EXPECT_EQ(body["scopes"], json::array({"orders:read", "profile"}));
    EXPECT_EQ(body["kid"], "ed");
    EXPECT_EQ(body["iss"], "https://issuer.example");
    EXPECT_EQ(body["exp"], std::to_string(now_seconds + 600));
    EXPECT_EQ(body["missing"], false);
    EXPECT_EQ(body["json"]["n"], json::array({1, 2}));
  }
}

TEST(BearerAuth, RefusesOptionsItCannotUse) {
  auto store = std::make_shared<jwt_key_store>(jwt_keys{});
  EXPECT_THROW(bearer_auth({}), std::invalid_argument);
  EXPECT_THROW(bearer_auth({.keys = store, .realm = "a\"b"}), std::invalid_argument);
  EXPECT_THROW(bearer_auth({.keys = store, .required_scopes = {"a b"}}), std::invalid_argument);
  EXPECT_THROW(bearer_auth({.keys = store, .required_scopes = {""}}), std::invalid_argument);
  EXPECT_NO_THROW(bearer_auth({.keys = store, .required_scopes = {"orders:read"}}));
}

TEST(JwtKeyStore, ReloadSwapsTheKeysForTheNextRequest) {
  const signer& s = keys_for_tests();
  guarded_app g;
  std::string old_token = "Bearer " + with_claims({}, jwt_algorithm::es256);
  ASSERT_EQ(g.get("/api/me", old_token).result_int(), 200);
  std::shared_ptr<const jwt_keys> before = g.keys->current();

  // The new set: another EC key under the same kid, as a rotation publishes it.
  signer rotated;
  jwt_keys next;
  next.add_pem("ec", jwt_algorithm::es256, public_pem(rotated.ec.get()));
  g.keys->reload(std::move(next));
  EXPECT_EQ(g.get("/api/me", old_token).result_int(), 401);
  EXPECT_EQ(g.get("/api/me", "Bearer " + rotated.token(jwt_algorithm::es256, default_claims()))
                .result_int(),
            200);
  // A request that took the old set keeps it whole.
  EXPECT_TRUE(verify_jwt(s.token(jwt_algorithm::es256), *before, options_for_tests()));
  // A malformed document throws while loading: the store is never touched.
  EXPECT_THROW(g.keys->reload(jwt_keys::from_jwks("{")), std::invalid_argument);
  EXPECT_EQ(g.keys->current()->size(), 1u);
}

TEST(BearerAuth, DocumentsTheSchemeOnTheRoutesBehindIt) {
  guarded_app g({"orders:read", "orders:write"});
  json doc = openapi(g.app);
  EXPECT_EQ(doc["components"]["securitySchemes"],
            json::parse(R"({"bearerAuth":{"type":"http","scheme":"bearer","bearerFormat":"JWT"}})"));
  EXPECT_EQ(doc["paths"]["/api/me"]["get"]["security"],
            json::parse(R"([{"bearerAuth":["orders:read","orders:write"]}])"));
  EXPECT_FALSE(doc["paths"]["/open"]["get"].contains("security"));
  EXPECT_EQ(doc["security"], json::array());

  application plain;
  plain.get("/open", [](context& ctx) { ctx.response().body("open"); });
  EXPECT_FALSE(openapi(plain)["components"].contains("securitySchemes"));
}

}  // namespace
