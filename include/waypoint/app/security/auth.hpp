// Credentials other than bearer tokens (jwt.hpp): API keys and HTTP Basic (RFC 7617), each a
// layer that asks every request it wraps for them and tells the handler who they belong to:
//
//   auto api = app.group("/v1", waypoint::app::api_key_auth({
//       .keys = {{.key = read_secret("billing.key"), .principal = "billing"}}}));
//   auto admin = app.group("/admin", waypoint::app::basic_auth({
//       .realm = "admin",
//       .check = [&](std::string_view user, std::string_view password) {
//         return users.verify(user, password);  // a slow hash: argon2id, scrypt, bcrypt
//       }}));
//   api.get("/me", [](waypoint::app::context& ctx) {
//     ctx.response().body(ctx.get<waypoint::app::authenticated_principal>().name);
//   });
//
// Secrets the application hands over (keys, passwords) are kept only as SHA-256 digests,
// and a presented one is digested and compared with every digest held, each comparison in
// constant time (CRYPTO_memcmp) and none cut short, so how long a check takes says nothing
// of which bytes or which key came close. A refusal is a 401 with a problem document naming
// what was wrong (never echoing the secret) and WWW-Authenticate naming the scheme.
// docs/framework.md, "API keys" and "HTTP Basic", has the rest.
#pragma once

#include "waypoint/app/handler.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

// Who a request's credentials belong to: what api_key_auth() and basic_auth() leave for the
// handler, ctx.get<authenticated_principal>().
struct authenticated_principal {
  enum class method : std::uint8_t { api_key, basic };
  // The key's principal (api_key::principal, or the callback's answer); Basic's user name.
  std::string name;
  method by = method::api_key;
};

// --- API keys ---------------------------------------------------------------------------

// Where a request carries its API key.
enum class api_key_location : std::uint8_t {
  header,  // a field: X-API-Key: <key>
  query,   // a query parameter, percent-decoded: ?api_key=<key> (written into access logs
           // and browser histories: prefer a header)
  cookie,  // a cookie: Cookie: api_key=<key>
};

// One key the application accepts and whom it names.
struct api_key {
  std::string key;
  std::string principal;
};

struct api_key_auth_options {
  api_key_location in = api_key_location::header;
  // The field, parameter or cookie name: a token for a field or a cookie, non-empty.
  std::string name = "X-API-Key";
  // The keys accepted, held as SHA-256 digests once the layer is made. A key of fewer than
  // 16 bytes is refused (std::invalid_argument): a key is a random secret, not a password.
  std::vector<api_key> keys{};
  // Asked for a key none of `keys` is (a database, a key service): the principal, or
  // nullopt to refuse. Called on the serving thread; it may not block for long.
  std::function<std::optional<std::string>(std::string_view key)> check{};
  // The realm in WWW-Authenticate (a quoted-string: no quote, backslash or control byte).
  std::string realm = "api";
  // The security scheme's name in the OpenAPI document; two layers that read keys from
  // different places need two names.
  std::string scheme_name = "apiKeyAuth";
  // Longer keys are refused before they are digested.
  std::size_t max_key_bytes = 1024;
};

// The layer: layer_hooks, so it costs no coroutine. Reads the key where `in` and `name` say;
// when one of `keys` (or `check`) accepts it, sets authenticated_principal for the handler.
// Otherwise it answers 401 with a problem document and `WWW-Authenticate: APIKey
// realm="api"`, and the handler does not run: the detail says whether the key was missing
// ("this resource needs an API key in the header X-API-Key"), too long or not accepted,
// never what it was. Throws std::invalid_argument for options it cannot use: neither keys
// nor check, a short or repeated key, a bad name or realm.
// Like bearer_auth(), it guards an application's own OPTIONS routes too (the automatic
// OPTIONS answer comes before group layers): put cors() outside it (app.use).
// In the OpenAPI document the routes behind it require `scheme_name`,
// {"type":"apiKey","in":"header","name":"X-API-Key"}.
middleware api_key_auth(api_key_auth_options options);

// --- HTTP Basic -------------------------------------------------------------------------

// One user name and password the application accepts.
struct basic_user {
  std::string name;
  std::string password;
};

struct basic_auth_options {
  // The realm in WWW-Authenticate (a quoted-string: no quote, backslash or control byte).
  std::string realm = "api";
  // The users accepted, each password held as a SHA-256 digest once the layer is made. A
  // fast digest is what a short list in the application's own configuration needs; a
  // deployment that stores many users' passwords should keep them under a slow hash
  // (argon2id, scrypt, bcrypt) and check them in `check`.
  std::vector<basic_user> users{};
  // Asked when the user name is none of `users`: whether the password is right.
  std::function<bool(std::string_view user, std::string_view password)> check{};
  // Longer credentials (the base64 after "Basic ") are refused before they are decoded.
  std::size_t max_credentials_bytes = 4096;
};

// The layer (layer_hooks). Reads `Authorization: Basic <base64 of user:password>` (RFC 7617:
// the scheme in any case; the user name ends at the first colon, so a password may hold
// colons; both UTF-8, as `charset="UTF-8"` asks clients to send them) and, when the pair is
// accepted, sets authenticated_principal (the user name) for the handler. Otherwise it
// answers 401 with a problem document and `WWW-Authenticate: Basic realm="api",
// charset="UTF-8"`: credentials missing, not base64, without a colon, not UTF-8, holding a
// control character, or not accepted (which of user and password was wrong is not said).
// It answers OPTIONS too. In the OpenAPI document the routes behind it require basicAuth,
// {"type":"http","scheme":"basic"}.
middleware basic_auth(basic_auth_options options);

// --- reading Authorization --------------------------------------------------------------

// The credentials of an Authorization field value `field` in `scheme`: what follows the
// scheme and the one or more spaces after it (RFC 9110 §11.4), the scheme compared without
// regard to case (§11.1: "Bearer", "bearer" and "BEARER" are one scheme). Empty when nothing
// follows the scheme; nullopt when the field is empty or names another scheme. The one
// reading of the field that bearer_auth() and basic_auth() use, for a layer of the
// application's own (examples/account.hpp's API token):
//   auto token = authorization_credentials(ctx.header(http::field::authorization), "Bearer");
std::optional<std::string_view> authorization_credentials(std::string_view field,
                                                          std::string_view scheme) noexcept;

}  // namespace waypoint::app
