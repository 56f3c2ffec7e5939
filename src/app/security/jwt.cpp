// JSON Web Tokens (jwt.hpp): keys from PEM or a JWK Set, compact JWS verified with OpenSSL 3
// (EVP), the claims checked, and the bearer_auth() layer that asks for a token.
//
// verify_jwt() goes in an order that lets nothing unauthenticated reach more than it must:
//   1. shape: the length bound, three parts, each canonical base64url;
//   2. header: a JSON object without repeated members, `alg` named and not "none", no
//      `crit`, `kid` choosing the key, and `alg` exactly that key's algorithm;
//   3. signature, over the first two parts as sent; the OpenSSL error queue is emptied after
//      every check, so nothing of a failure leaks into the thread's next TLS call;
//   4. claims, parsed only once the signature holds: a JSON object, dates that are numbers,
//      exp, nbf, iss and aud as the options say.
#include "waypoint/app/security/jwt.hpp"

#include "waypoint/app/context.hpp"
#include "waypoint/app/route_doc.hpp"

#include "app/security/authorization.hpp"
#include "app/detail/client_json.hpp"
#include "app/detail/base64url.hpp"
#include "app/detail/crypto.hpp"
#include "app/detail/openssl_handles.hpp"

#include <nlohmann/json.hpp>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace waypoint::app {

namespace openssl = detail::openssl;

// The claims' private parts, filled in here only.
struct jwt_claims_access {
  static std::string& subject(jwt_claims& c) { return c.subject_; }
  static std::vector<std::string>& scopes(jwt_claims& c) { return c.scopes_; }
  static std::string& key_id(jwt_claims& c) { return c.key_id_; }
  static std::string& json(jwt_claims& c) { return c.json_; }
};

namespace {

using json = nlohmann::json;

// A token's header and claims are a few members deep at most (an `address` claim, a
// `realm_access` object with a roles array); 32 levels leaves room and keeps nlohmann/json's
// recursive copies and dumps shallow. A JWK Set is flatter still.
constexpr std::size_t max_json_nesting = 32;
constexpr std::size_t min_rsa_bits = 2048;  // RFC 7518 §3.3
constexpr std::size_t min_hmac_secret = 32;  // RFC 7518 §3.2: at least the hash's size
constexpr std::size_t p256_coordinate = detail::p256_scalar_size;
constexpr std::size_t ed25519_key = 32;
constexpr std::size_t fixed_signature = 64;  // ES256's r || s, and Ed25519's
// Shown in errors: a kid or an alg from a token is anyone's bytes.
constexpr std::size_t shown_bytes = 64;

using detail::bytes_of;
using detail::openssl::bignum_ptr;

// `text` cut short, each byte outside a kid's usual alphabet shown as '?': safe inside a
// quoted-string of WWW-Authenticate and in a log line.
std::string shown(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < shown_bytes; ++i) {
    char c = text[i];
    bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 std::string_view("-._~+/=:@").find(c) != std::string_view::npos;
    out.push_back(plain ? c : '?');
  }
  if (text.size() > shown_bytes) out += "...";
  return out;
}

// ---- JSON with a nesting bound and without repeated members ----------------------------

// nlohmann/json keeps the last of repeated members; another parser may keep the first, so
// a header with two `alg`s could mean two things. Refused, as RFC 7515 §5.2 allows.
struct json_refusal {
  std::string what;
};

// The document; else nullopt, and `error` a clause to follow the document's name ("is not
// JSON", "repeats the member alg"), free of quotes so that it can go in a quoted-string.
std::optional<json> parse_strict(std::string_view text, std::string& error) {
  std::vector<std::vector<std::string>> members;  // the keys seen, per open object
  // The depth is parse_client_json's to bound (json_depth.hpp's rule, with this tighter
  // limit); the callback sees each key for repeats.
  auto check = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        members.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!members.empty()) members.pop_back();
        break;
      case json::parse_event_t::key: {
        const std::string& key = parsed.get_ref<const std::string&>();
        auto& seen = members.back();
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
          throw json_refusal{"repeats the member " + shown(key)};
        seen.push_back(key);
        break;
      }
      default:
        break;
    }
    return true;
  };
  try {
    json doc;
    detail::parse_client_json(text, doc, {.max_depth = max_json_nesting}, check);
    return doc;
  } catch (const json_refusal& refusal) {
    error = refusal.what;
  } catch (const detail::client_json_error& e) {
    error = e.fault() == detail::json_fault::too_deep ? "is " + std::string(e.what())
                                                      : "is not JSON";
  }
  return std::nullopt;
}

// ---- keys ------------------------------------------------------------------------------

// Why `key` cannot verify `alg`, or empty when it can.
std::string unfit(EVP_PKEY* key, jwt_algorithm alg) {
  switch (alg) {
    case jwt_algorithm::rs256:
      if (EVP_PKEY_is_a(key, "RSA") != 1) return "not an RSA key";
      if (EVP_PKEY_get_bits(key) < static_cast<int>(min_rsa_bits))
        return "an RSA key of " + std::to_string(EVP_PKEY_get_bits(key)) +
               " bits; RS256 takes 2048 or more";
      return {};
    case jwt_algorithm::es256:
      return detail::is_p256_key(key) ? std::string() : "not a P-256 EC key";
    case jwt_algorithm::eddsa:
      return EVP_PKEY_is_a(key, "ED25519") == 1 ? std::string() : "not an Ed25519 key";
    case jwt_algorithm::hs256:
      break;
  }
  return "HS256 takes a secret, not a key pair";
}

// OpenSSL's own check of a public key built from a JWK's numbers: the point on the curve,
// the RSA modulus and exponent plausible.
bool passes_public_check(EVP_PKEY* key) {
  openssl::pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr));
  bool ok = ctx && EVP_PKEY_public_check(ctx.get()) == 1;
  ERR_clear_error();
  return ok;
}

std::optional<jwt_algorithm> algorithm_named(std::string_view name) noexcept {
  for (auto alg : {jwt_algorithm::rs256, jwt_algorithm::es256, jwt_algorithm::eddsa,
                   jwt_algorithm::hs256})
    if (name_of(alg) == name) return alg;
  return std::nullopt;
}

}  // namespace

std::string_view name_of(jwt_algorithm alg) noexcept {
  switch (alg) {
    case jwt_algorithm::rs256:
      return "RS256";
    case jwt_algorithm::es256:
      return "ES256";
    case jwt_algorithm::eddsa:
      return "EdDSA";
    case jwt_algorithm::hs256:
      break;
  }
  return "HS256";
}

// A key: a public key for the signatures, a secret for HMAC. Immutable once made.
struct jwt_keys::key {
  std::string kid;
  jwt_algorithm alg = jwt_algorithm::hs256;
  openssl::pkey_ptr pkey;       // RS256, ES256, EdDSA
  detail::secret_bytes secret;  // HS256
};

jwt_keys& jwt_keys::add(std::shared_ptr<const key> k) {
  // A repeated kid would make the choice of key depend on the order of the set.
  for (const auto& held : keys_)
    if (held->kid == k->kid)
      throw std::invalid_argument("JWT key \"" + shown(k->kid) + "\": the kid is already taken");
  keys_.push_back(std::move(k));
  return *this;
}

jwt_keys& jwt_keys::add_pem(std::string kid, jwt_algorithm alg, std::string_view pem) {
  auto refuse = [&](const std::string& why) {
    return std::invalid_argument("JWT key \"" + shown(kid) + "\" for " +
                                 std::string(name_of(alg)) + ": " + why);
  };
  if (alg == jwt_algorithm::hs256) throw refuse("HS256 takes a secret (add_secret), not PEM");
  if (pem.size() > static_cast<std::size_t>(INT_MAX)) throw refuse("the text is too long");
  openssl::pkey_ptr pkey = detail::read_pem_public_key(pem);
  if (!pkey) throw refuse("the text is not a PEM public key (-----BEGIN PUBLIC KEY-----)");
  if (std::string why = unfit(pkey.get(), alg); !why.empty()) throw refuse(why);
  auto k = std::make_shared<key>();
  k->kid = std::move(kid);
  k->alg = alg;
  k->pkey = std::move(pkey);
  return add(std::move(k));
}

jwt_keys& jwt_keys::add_secret(std::string kid, std::string_view secret) {
  if (secret.size() < min_hmac_secret)
    throw std::invalid_argument("JWT key \"" + shown(kid) + "\" for HS256: a secret of " +
                                std::to_string(min_hmac_secret) + " bytes or more, not " +
                                std::to_string(secret.size()));
  auto k = std::make_shared<key>();
  k->kid = std::move(kid);
  k->alg = jwt_algorithm::hs256;
  k->secret.assign(secret);
  return add(std::move(k));
}

const jwt_keys::key* jwt_keys::find(std::optional<std::string_view> kid) const noexcept {
  if (!kid) return keys_.size() == 1 ? keys_.front().get() : nullptr;
  for (const auto& k : keys_)
    if (k->kid == *kid) return k.get();
  return nullptr;
}

namespace {

// ---- a JWK (RFC 7517 §4, RFC 7518 §6, RFC 8037 §2) as a key ------------------------------

struct jwk_reader {
  const json& jwk;
  std::string where;  // "keys[2]"

  [[noreturn]] void refuse(const std::string& why) const {
    throw std::invalid_argument("JWKS " + where + ": " + why);
  }

  std::optional<std::string> text(const char* name) const {
    auto it = jwk.find(name);
    if (it == jwk.end()) return std::nullopt;
    if (!it->is_string()) refuse(std::string("\"") + name + "\" is not a string");
    return it->get<std::string>();
  }

  std::string bytes(const char* name) const {
    std::optional<std::string> encoded = text(name);
    if (!encoded) refuse(std::string("\"") + name + "\" is missing");
    std::optional<std::string> decoded = detail::base64url_decode(*encoded);
    if (!decoded || decoded->empty())
      refuse(std::string("\"") + name + "\" is not base64url without padding");
    return *decoded;
  }

  std::string bytes(const char* name, std::size_t size) const {
    std::string out = bytes(name);
    if (out.size() != size)
      refuse(std::string("\"") + name + "\" is " + std::to_string(out.size()) +
             " bytes, not " + std::to_string(size));
    return out;
  }

  void require_curve(const char* curve) const {
    std::optional<std::string> crv = text("crv");
    if (crv != curve)
      refuse("\"crv\" is " + (crv ? "\"" + shown(*crv) + "\"" : std::string("missing")) +
             "; only " + curve + " is read");
  }

  // A set that publishes private members by mistake is refused rather than used: whoever
  // fetched it from a URL has the private key too.
  void refuse_private_members() const {
    for (const char* name : {"d", "p", "q", "dp", "dq", "qi", "oth"})
      if (jwk.contains(name))
        refuse(std::string("holds the private member \"") + name +
               "\"; a JWK Set for verifying holds public keys only");
  }

  openssl::pkey_ptr from_params(const char* type, OSSL_PARAM_BLD* bld) const {
    openssl::params_ptr params(OSSL_PARAM_BLD_to_param(bld));
    openssl::pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
    EVP_PKEY* made = nullptr;
    bool ok = params && ctx && EVP_PKEY_fromdata_init(ctx.get()) == 1 &&
              EVP_PKEY_fromdata(ctx.get(), &made, EVP_PKEY_PUBLIC_KEY, params.get()) == 1;
    ERR_clear_error();
    openssl::pkey_ptr key(made);
    if (!ok || !key || !passes_public_check(key.get())) refuse("not a valid public key");
    return key;
  }

  openssl::pkey_ptr rsa() const {
    std::string n = bytes("n"), e = bytes("e");
    bignum_ptr bn_n(BN_bin2bn(bytes_of(n), static_cast<int>(n.size()), nullptr));
    bignum_ptr bn_e(BN_bin2bn(bytes_of(e), static_cast<int>(e.size()), nullptr));
    openssl::param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bn_n || !bn_e || !bld ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
      ERR_clear_error();
      refuse("not a valid RSA public key");
    }
    return from_params("RSA", bld.get());
  }

  openssl::pkey_ptr p256() const {
    require_curve("P-256");
    std::string point = "\x04" + bytes("x", p256_coordinate) + bytes("y", p256_coordinate);
    openssl::param_bld_ptr bld(OSSL_PARAM_BLD_new());
    if (!bld ||
        OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                         point.size()) != 1) {
      ERR_clear_error();
      refuse("not a valid P-256 public key");
    }
    return from_params("EC", bld.get());
  }

  openssl::pkey_ptr ed25519() const {
    require_curve("Ed25519");
    std::string x = bytes("x", ed25519_key);
    openssl::pkey_ptr key(EVP_PKEY_new_raw_public_key_ex(nullptr, "ED25519", nullptr, bytes_of(x), x.size()));
    ERR_clear_error();
    if (!key) refuse("not a valid Ed25519 public key");
    return key;
  }

  // The key, or null for one that only encrypts.
  std::shared_ptr<jwt_keys::key> read() const {
    if (!jwk.is_object()) refuse("not a JSON object");
    if (text("use") == "enc") return nullptr;
    std::optional<std::string> kty = text("kty");
    if (!kty) refuse("\"kty\" is missing");
    auto k = std::make_shared<jwt_keys::key>();
    k->kid = text("kid").value_or("");
    if (*kty == "RSA") {
      k->alg = jwt_algorithm::rs256;
    } else if (*kty == "EC") {
      k->alg = jwt_algorithm::es256;
    } else if (*kty == "OKP") {
      k->alg = jwt_algorithm::eddsa;
    } else if (*kty == "oct") {
      k->alg = jwt_algorithm::hs256;
    } else {
      refuse("\"kty\" is \"" + shown(*kty) + "\"; RSA, EC, OKP and oct are read");
    }
    if (std::optional<std::string> alg = text("alg"); alg && *alg != name_of(k->alg))
      refuse("\"alg\" is \"" + shown(*alg) + "\"; a " + *kty + " key here verifies " +
             std::string(name_of(k->alg)) +
             (algorithm_named(*alg) ? "" : " (RS256, ES256, EdDSA and HS256 are verified)"));
    if (k->alg == jwt_algorithm::hs256) {
      std::string secret = bytes("k");
      if (secret.size() < min_hmac_secret)
        refuse("\"k\" is " + std::to_string(secret.size()) + " bytes; HS256 takes " +
               std::to_string(min_hmac_secret) + " or more");
      k->secret.assign(secret);
      OPENSSL_cleanse(secret.data(), secret.size());
      return k;
    }
    refuse_private_members();
    k->pkey = k->alg == jwt_algorithm::rs256   ? rsa()
              : k->alg == jwt_algorithm::es256 ? p256()
                                               : ed25519();
    if (std::string why = unfit(k->pkey.get(), k->alg); !why.empty()) refuse(why);
    return k;
  }
};

}  // namespace

jwt_keys jwt_keys::from_jwks(std::string_view json_text) {
  std::string error;
  std::optional<json> doc = parse_strict(json_text, error);
  if (!doc) throw std::invalid_argument("JWKS: the document " + error);
  if (!doc->is_object() || !doc->contains("keys") || !(*doc)["keys"].is_array())
    throw std::invalid_argument("JWKS: not an object with a \"keys\" array (RFC 7517 §5)");
  jwt_keys out;
  const json& keys = (*doc)["keys"];
  for (std::size_t i = 0; i < keys.size(); ++i) {
    jwk_reader reader{keys[i], "keys[" + std::to_string(i) + "]"};
    if (auto k = reader.read()) {
      try {
        out.add(std::move(k));
      } catch (const std::invalid_argument& e) {
        reader.refuse(e.what());
      }
    }
  }
  return out;
}

jwt_key_store::jwt_key_store(jwt_keys keys)
    : keys_(std::make_shared<const jwt_keys>(std::move(keys))) {}

void jwt_key_store::reload(jwt_keys keys) {
  auto next = std::make_shared<const jwt_keys>(std::move(keys));
  std::lock_guard lock(mutex_);
  keys_.swap(next);
  // The old set is released outside the lock, when `next` goes.
}

std::shared_ptr<const jwt_keys> jwt_key_store::current() const {
  std::lock_guard lock(mutex_);
  return keys_;
}

// ---- the claims ------------------------------------------------------------------------

bool jwt_claims::has_scope(std::string_view scope) const noexcept {
  return std::find(scopes_.begin(), scopes_.end(), scope) != scopes_.end();
}

std::optional<std::string> jwt_claims::claim(std::string_view name) const {
  // Parsed again on each call: the text is what the handler keeps, and a handler reads a
  // claim or two. The text was parsed once with the same bound.
  auto claims = nlohmann::json::parse(json_, nullptr, false);
  auto it = claims.find(name);
  if (it == claims.end()) return std::nullopt;
  return it->dump();
}

std::optional<std::string> jwt_claims::string_claim(std::string_view name) const {
  auto claims = nlohmann::json::parse(json_, nullptr, false);
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

namespace {

// ---- verification ----------------------------------------------------------------------

struct refused {
  std::string why;
};

bool signature_matches(const jwt_keys::key& k, std::string_view data, std::string_view signature) {
  if (k.alg == jwt_algorithm::hs256)
    return detail::hmac_sha256_matches(k.secret, {data}, signature);
  std::optional<std::string> der;
  if (k.alg != jwt_algorithm::rs256) {
    if (signature.size() != fixed_signature) return false;
    if (k.alg == jwt_algorithm::es256) {
      // JWS's ECDSA signature is r || s (RFC 7518 §3.4); OpenSSL's is DER.
      der = detail::ecdsa_der_from_r_s(signature);
      if (!der) return false;
      signature = *der;
    }
  }
  // Ed25519 signs the message itself: no digest (a null md).
  const EVP_MD* md = k.alg == jwt_algorithm::eddsa ? nullptr : EVP_sha256();
  return detail::verify_signature(k.pkey.get(), md, data, signature);
}

std::string decoded_part(std::string_view text, const char* part) {
  std::optional<std::string> bytes = detail::base64url_decode(text);
  if (!bytes) throw refused{std::string("the ") + part + " is not base64url without padding"};
  return std::move(*bytes);
}

json parsed_object(std::string_view text, const char* part) {
  std::string error;
  std::optional<json> doc = parse_strict(text, error);
  if (!doc) throw refused{std::string("the ") + part + " " + error};
  if (!doc->is_object()) throw refused{std::string("the ") + part + " is not a JSON object"};
  return std::move(*doc);
}

// The key the header chooses, its algorithm checked.
const jwt_keys::key& chosen_key(const json& header, const jwt_keys& keys) {
  auto alg = header.find("alg");
  if (alg == header.end() || !alg->is_string()) throw refused{"the header has no alg"};
  const std::string& alg_name = alg->get_ref<const std::string&>();
  if (alg_name == "none") throw refused{"alg none is refused: the token is not signed"};
  if (header.contains("crit"))
    throw refused{"the header has crit: no extension is understood here"};
  std::optional<std::string_view> kid;
  if (auto it = header.find("kid"); it != header.end()) {
    if (!it->is_string()) throw refused{"the header's kid is not a string"};
    kid = it->get_ref<const std::string&>();
  }
  const jwt_keys::key* k = keys.find(kid);
  if (!k)
    throw refused{kid ? "kid " + shown(*kid) + " names no key"
                      : "the token has no kid, and there are " + std::to_string(keys.size()) +
                            " keys to choose from"};
  // One algorithm per key: an HS256 token under an RSA key's kid is never checked as HMAC
  // with the key's public bytes.
  if (alg_name != name_of(k->alg))
    throw refused{"alg " + shown(alg_name) + " is not " + std::string(name_of(k->alg)) +
                  ", the algorithm of key " + shown(k->kid)};
  return *k;
}

// A NumericDate (RFC 7519 §2): seconds since the epoch, a JSON number.
std::optional<double> numeric_date(const json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end()) return std::nullopt;
  if (!it->is_number()) throw refused{std::string("the claim ") + name + " is not a number"};
  return it->get<double>();
}

void check_times(const json& claims, const jwt_options& options) {
  auto now = options.now ? options.now() : std::chrono::system_clock::now();
  double seconds = std::chrono::duration<double>(now.time_since_epoch()).count();
  auto skew = static_cast<double>(options.clock_skew.count());
  std::optional<double> exp = numeric_date(claims, "exp");
  std::optional<double> nbf = numeric_date(claims, "nbf");
  numeric_date(claims, "iat");  // not checked against the clock, but a number when present
  if (!exp && options.require_expiry) throw refused{"the token has no exp"};
  if (exp && seconds >= *exp + skew) throw refused{"the token expired"};
  if (nbf && seconds < *nbf - skew) throw refused{"the token is not valid yet (nbf)"};
}

void check_issuer_and_audience(const json& claims, const jwt_options& options) {
  auto iss = claims.find("iss");
  if (iss != claims.end() && !iss->is_string()) throw refused{"the claim iss is not a string"};
  if (!options.issuer.empty() &&
      (iss == claims.end() || iss->get_ref<const std::string&>() != options.issuer))
    throw refused{"the token is not from the expected issuer"};
  auto aud = claims.find("aud");
  if (aud == claims.end()) {
    if (!options.audiences.empty()) throw refused{"the token has no aud"};
    return;
  }
  auto ours = [&](const json& value) {
    return value.is_string() &&
           std::find(options.audiences.begin(), options.audiences.end(),
                     value.get_ref<const std::string&>()) != options.audiences.end();
  };
  bool well_formed = aud->is_string() ||
                     (aud->is_array() && std::all_of(aud->begin(), aud->end(), [](const json& v) {
                        return v.is_string();
                      }));
  if (!well_formed) throw refused{"the claim aud is not a string or an array of strings"};
  bool named = aud->is_string() ? ours(*aud) : std::any_of(aud->begin(), aud->end(), ours);
  if (!named) throw refused{"the token's aud does not name this service"};
}

std::vector<std::string> split_scopes(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// `scope` as RFC 8693 §4.2 writes it, else `scp` (an array, or a string as Azure AD sends).
std::vector<std::string> granted_scopes(const json& claims) {
  for (const char* name : {"scope", "scp"}) {
    auto it = claims.find(name);
    if (it == claims.end()) continue;
    if (it->is_string()) return split_scopes(it->get_ref<const std::string&>());
    if (!it->is_array()) throw refused{std::string("the claim ") + name + " is not a string"};
    std::vector<std::string> out;
    for (const json& v : *it) {
      if (!v.is_string())
        throw refused{std::string("the claim ") + name + " holds a value that is not a string"};
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  return {};
}

jwt_claims verified(std::string_view token, const jwt_keys& keys, const jwt_options& options) {
  if (token.size() > options.max_token_bytes)
    throw refused{"the token is longer than " + std::to_string(options.max_token_bytes) +
                  " bytes"};
  std::size_t first = token.find('.');
  std::size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos ||
      token.find('.', second + 1) != std::string_view::npos)
    throw refused{"the token is not three base64url parts separated by dots"};
  json header = parsed_object(decoded_part(token.substr(0, first), "header"), "header");
  const jwt_keys::key& k = chosen_key(header, keys);
  std::string signature = decoded_part(token.substr(second + 1), "signature");
  if (!signature_matches(k, token.substr(0, second), signature))
    throw refused{"the signature did not verify"};
  std::string payload = decoded_part(token.substr(first + 1, second - first - 1), "payload");
  json claims = parsed_object(payload, "payload");
  check_times(claims, options);
  check_issuer_and_audience(claims, options);
  auto sub = claims.find("sub");
  if (sub != claims.end() && !sub->is_string()) throw refused{"the claim sub is not a string"};
  jwt_claims out;
  jwt_claims_access::scopes(out) = granted_scopes(claims);
  if (sub != claims.end()) jwt_claims_access::subject(out) = sub->get<std::string>();
  jwt_claims_access::key_id(out) = k.kid;
  jwt_claims_access::json(out) = std::move(payload);
  return out;
}

}  // namespace

jwt_result verify_jwt(std::string_view token, const jwt_keys& keys, const jwt_options& options) {
  jwt_result result;
  try {
    result.claims = verified(token, keys, options);
  } catch (const refused& r) {
    result.error = r.why;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception&) {
    // nlohmann/json's conversions are guarded above; anything else is still a refusal.
    result.error = "the token could not be read";
  }
  return result;
}

// ---- issuing ---------------------------------------------------------------------------

std::string sign_jwt(std::string_view claims_json, std::string_view secret, std::string_view kid) {
  if (secret.size() < min_hmac_secret)
    throw std::invalid_argument("sign_jwt: a secret of " + std::to_string(min_hmac_secret) +
                                " bytes or more, not " + std::to_string(secret.size()));
  std::string error;
  std::optional<json> claims = parse_strict(claims_json, error);
  if (!claims || !claims->is_object())
    throw std::invalid_argument("sign_jwt: the claims " +
                                (error.empty() ? std::string("are not a JSON object") : error));
  json header = {{"alg", "HS256"}, {"typ", "JWT"}};
  if (!kid.empty()) header["kid"] = kid;
  std::string token = detail::base64url_encode(header.dump()) + '.' +
                      detail::base64url_encode(claims_json);
  detail::hmac_sha256_tag mac = detail::hmac_sha256(detail::byte_span(secret), {token});
  token += '.';
  token += detail::base64url_encode(mac.data(), mac.size());
  return token;
}

// ---- the layer -------------------------------------------------------------------------

namespace {

struct bearer_policy {
  std::shared_ptr<const jwt_key_store> keys;
  jwt_options verify;
  std::string challenge;  // Bearer realm="..."
  std::vector<std::string> required_scopes;
  std::string scope_list;  // the required scopes, space-separated

  explicit bearer_policy(bearer_auth_options o)
      : keys(std::move(o.keys)),
        verify(std::move(o.verify)),
        required_scopes(std::move(o.required_scopes)) {
    if (!keys) throw std::invalid_argument("bearer_auth: no keys (bearer_auth_options::keys)");
    if (!detail::is_plain_quoted(o.realm))
      throw std::invalid_argument(
          "bearer_auth: the realm holds a quote, a backslash or a control byte");
    challenge = "Bearer realm=\"" + o.realm + "\"";
    for (const std::string& scope : required_scopes) {
      // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
      if (scope.empty() || !detail::is_plain_quoted(scope) || scope.find(' ') != std::string::npos)
        throw std::invalid_argument("bearer_auth: the required scope \"" + shown(scope) +
                                    "\" is not a scope token (RFC 6749 §3.3)");
      scope_list += (scope_list.empty() ? "" : " ") + scope;
    }
  }

  // Answers `status` with a problem document and WWW-Authenticate; `error` empty for a
  // request without a token (RFC 6750 §3.1: no error code then).
  void refuse(context& ctx, int status, std::string_view error, const std::string& why) const {
    std::string field = challenge;
    if (!error.empty()) {
      field += ", error=\"" + std::string(error) + "\", error_description=\"" +
               detail::plain_quoted(why) + "\"";
      if (status == 403) field += ", scope=\"" + scope_list + "\"";
    }
    detail::refuse_credentials(ctx, status, field, why);
  }

  bool admit(context& ctx) const {
    // RFC 6750 §2.1: the scheme in any case, then one or more spaces.
    std::optional<std::string_view> token =
        authorization_credentials(ctx.header(http::field::authorization), "bearer");
    if (!token) {
      refuse(ctx, 401, "", "this resource needs a bearer token: Authorization: Bearer <token>");
      return false;
    }
    if (token->empty()) {
      refuse(ctx, 401, "invalid_token", "the Authorization field has no token after Bearer");
      return false;
    }
    jwt_result result = verify_jwt(*token, *keys->current(), verify);
    if (!result) {
      refuse(ctx, 401, "invalid_token", result.error);
      return false;
    }
    for (const std::string& scope : required_scopes)
      if (!result.claims->has_scope(scope)) {
        refuse(ctx, 403, "insufficient_scope",
               "the token does not grant the scope " + scope);
        return false;
      }
    ctx.set(std::move(*result.claims));
    return true;
  }
};

}  // namespace

middleware bearer_auth(bearer_auth_options options) {
  auto policy = std::make_shared<const bearer_policy>(std::move(options));
  auto requirement = std::make_shared<const security_requirement>(security_requirement{
      .name = "bearerAuth",
      .scheme = R"({"type":"http","scheme":"bearer","bearerFormat":"JWT"})",
      .scopes = policy->required_scopes});
  middleware layer = layer_hooks{[policy](context& ctx) { return policy->admit(ctx); }, {}};
  layer.require_security(std::move(requirement));
  return layer;
}

}  // namespace waypoint::app
