// Bearer tokens: JSON Web Tokens (RFC 7519) signed as compact JWS (RFC 7515), verified
// with public keys (or an HMAC secret) the application holds, and the layer that asks for
// one on every request it wraps (RFC 6750):
//
//   auto keys = std::make_shared<waypoint::app::jwt_key_store>(
//       waypoint::app::jwt_keys::from_jwks(read_file("jwks.json")));
//   auto api = app.group("/v1", waypoint::app::bearer_auth({
//       .keys = keys,
//       .verify = {.issuer = "https://login.example.com", .audiences = {"orders"}},
//       .required_scopes = {"orders:read"}}));
//   api.get("/me", [](waypoint::app::context& ctx) {
//     ctx.response().body(ctx.get<waypoint::app::jwt_claims>().subject());
//   });
//   ...
//   keys->reload(waypoint::app::jwt_keys::from_jwks(read_file("jwks.json")));  // rotation
//
// What is accepted is narrow on purpose. A key verifies exactly one algorithm, and a token
// whose header names another is refused: that closes `alg: none` and the classic confusion
// of an HS256 token "signed" with an RSA public key's PEM as the HMAC secret. A `crit`
// header is refused (no extension is understood). The claims are checked as RFC 7519 §4.1
// says: exp and nbf with a clock skew, iss and aud when the options name them, and a
// token that names an audience is refused when none is configured (§4.1.3). Every refusal
// says what was wrong in words safe to send back in WWW-Authenticate; which part of a
// signature failed is never said. docs/framework.md, "Bearer tokens (JWT)", has the rest.
#pragma once

#include "waypoint/app/handler.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

// The JWS algorithms (RFC 7518 §3, RFC 8037) a key may verify.
enum class jwt_algorithm : std::uint8_t {
  rs256,  // RSASSA-PKCS1-v1_5 with SHA-256; an RSA public key of 2048 bits or more
  es256,  // ECDSA on P-256 with SHA-256; the signature is r || s, 64 bytes
  eddsa,  // Ed25519
  hs256,  // HMAC with SHA-256; a secret of 32 bytes or more (RFC 7518 §3.2)
};

// "RS256", "ES256", "EdDSA", "HS256": the `alg` header's value.
std::string_view name_of(jwt_algorithm alg) noexcept;

// The keys tokens are verified with, each named by its key id (the token header's `kid`)
// and bound to one algorithm. Immutable once built, so one set is shared by every request;
// jwt_key_store swaps a whole set for another.
class jwt_keys {
 public:
  struct key;  // src/app/security/jwt.cpp

  jwt_keys() noexcept = default;

  // A public key in PEM ("-----BEGIN PUBLIC KEY-----", SubjectPublicKeyInfo) for RS256,
  // ES256 (P-256) or EdDSA (Ed25519). Throws std::invalid_argument for text that is not such
  // a key, a key of another kind or size than `alg` takes, HS256 (add_secret), or a kid
  // already present.
  jwt_keys& add_pem(std::string kid, jwt_algorithm alg, std::string_view pem);
  // An HS256 secret: the bytes as they are (not base64). Throws std::invalid_argument for
  // fewer than 32 bytes or a kid already present.
  jwt_keys& add_secret(std::string kid, std::string_view secret);
  // A JWK Set (RFC 7517 §5) as JSON text: {"keys":[...]} with RSA keys (n, e), EC keys on
  // P-256 (crv, x, y), OKP keys on Ed25519 (crv, x) and oct keys (k), their base64url
  // without padding. `alg`, when present, must be the one the key type implies (RS256,
  // ES256, EdDSA, HS256); without it that one is taken. Keys whose `use` is "enc" are
  // skipped (they encrypt, they do not sign). Throws std::invalid_argument naming the key
  // ("keys[2]") and the member at fault for anything else: not JSON, a missing or malformed
  // member, a private key's members (d, p, q...), an algorithm this library does not verify,
  // a repeated kid.
  static jwt_keys from_jwks(std::string_view json_text);

  std::size_t size() const noexcept { return keys_.size(); }
  bool empty() const noexcept { return keys_.empty(); }
  // The key named `kid`; with no kid (`kid` nullopt) the one key when there is exactly one.
  // Null otherwise.
  const key* find(std::optional<std::string_view> kid) const noexcept;

 private:
  jwt_keys& add(std::shared_ptr<const key> k);

  std::vector<std::shared_ptr<const key>> keys_;
};

// The keys a bearer_auth() layer uses, replaceable while it serves: reload() swaps in a new
// set at once (under a mutex held for a pointer copy); a request that already took the old
// set finishes with it. Load the new set first, so that a malformed document throws and
// leaves the current keys in place.
class jwt_key_store {
 public:
  explicit jwt_key_store(jwt_keys keys);
  void reload(jwt_keys keys);
  std::shared_ptr<const jwt_keys> current() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const jwt_keys> keys_;  // guarded by mutex_; never null
};

struct jwt_options {
  // The `iss` a token must carry; empty: not checked.
  std::string issuer{};
  // The audiences this service answers to: a token's `aud` (a string or an array of them)
  // must hold one. Empty: a token that has an `aud` is refused (RFC 7519 §4.1.3), one
  // without is accepted.
  std::vector<std::string> audiences{};
  // How far the clocks of the issuer and this server may disagree: a token is still taken
  // `clock_skew` after its exp, and already `clock_skew` before its nbf.
  std::chrono::seconds clock_skew{60};
  // A token without `exp` is refused: one that never expires cannot be taken back.
  bool require_expiry = true;
  // Longer tokens are refused before anything is decoded. 8 KiB is four times what a token
  // with a few dozen claims and an RSA-4096 signature takes, and what servers commonly
  // allow a whole header field.
  std::size_t max_token_bytes = 8192;
  // The current time; empty: the system clock. For tests.
  std::function<std::chrono::system_clock::time_point()> now{};
};

// The verified claims of a token: what bearer_auth() leaves for the handler,
// ctx.get<jwt_claims>().
class jwt_claims {
 public:
  // `sub`, empty when the token has none.
  const std::string& subject() const noexcept { return subject_; }
  // The scopes granted: `scope`, space-separated (RFC 8693 §4.2), else the array `scp`.
  const std::vector<std::string>& scopes() const noexcept { return scopes_; }
  bool has_scope(std::string_view scope) const noexcept;
  // The kid of the key that verified the token (empty when the key has none).
  const std::string& key_id() const noexcept { return key_id_; }
  // The claims set as JSON text, as the token carried it.
  const std::string& json() const noexcept { return json_; }
  // One claim's value as JSON text ("\"ada\"", "42", "[\"a\",\"b\"]"); nullopt when absent.
  std::optional<std::string> claim(std::string_view name) const;
  // One claim's value when it is a string; nullopt when absent or not a string.
  std::optional<std::string> string_claim(std::string_view name) const;

 private:
  friend struct jwt_claims_access;  // src/app/security/jwt.cpp

  std::string subject_;
  std::vector<std::string> scopes_;
  std::string key_id_;
  std::string json_;
};

// verify_jwt's answer: the claims, or why the token was refused.
struct jwt_result {
  std::optional<jwt_claims> claims;  // set exactly when the token verified
  std::string error;                 // empty exactly when it did
  explicit operator bool() const noexcept { return claims.has_value(); }
};

// Verifies a compact JWS token (header.payload.signature, each canonical base64url without
// padding) with `keys` and checks its claims under `options`. Never throws for anything in
// the token; the error is printable ASCII without quotes or backslashes (RFC 6750 §3's
// error_description), the kid it names cut short and escaped.
jwt_result verify_jwt(std::string_view token, const jwt_keys& keys,
                      const jwt_options& options = {});

// Issues a token for this service's own clients (a login that answers a bearer token):
// `claims_json`, a JSON object's text, carried as given, signed with HS256 under `secret`
// (32 bytes or more, as add_secret takes), the header naming `kid` unless it is empty. The
// service verifies it with a jwt_keys holding the same secret under the same kid. Throws
// std::invalid_argument for a shorter secret or claims that are not a JSON object. Tokens an
// identity provider issues are only verified here: their private keys are theirs.
std::string sign_jwt(std::string_view claims_json, std::string_view secret,
                     std::string_view kid = {});

struct bearer_auth_options {
  // Required: the layer throws std::invalid_argument without keys.
  std::shared_ptr<const jwt_key_store> keys{};
  jwt_options verify{};
  // The realm in WWW-Authenticate (a quoted-string: no quote, backslash or control byte).
  std::string realm = "api";
  // Scopes a token must grant, every one of them; missing ones are a 403.
  std::vector<std::string> required_scopes{};
};

// The layer: layer_hooks, so it costs no coroutine. Reads `Authorization: Bearer <token>`
// (the scheme's case aside) and, when the token verifies, sets jwt_claims for the handler.
// Otherwise it answers, with a problem document, and the handler does not run:
//   401  no Authorization with the Bearer scheme:  WWW-Authenticate: Bearer realm="api"
//   401  a token that does not verify:  WWW-Authenticate: Bearer realm="api",
//        error="invalid_token", error_description="the token expired"
//   403  a token without every required scope:  ... error="insufficient_scope",
//        error_description="...", scope="orders:read orders:write"
// Register it on the groups that need it; it answers OPTIONS too, so put cors() outside it
// (app.use), where preflights are answered before they reach it.
// In the OpenAPI document (openapi.hpp), the routes behind it require the security scheme
// bearerAuth, {"type":"http","scheme":"bearer","bearerFormat":"JWT"}, with the required
// scopes.
middleware bearer_auth(bearer_auth_options options);

}  // namespace waypoint::app
