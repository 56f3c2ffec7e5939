// A typed route behind an authentication layer, which the gateway serves with --api-token:
//
//   $ curl -i localhost:8080/v1/account -H 'Authorization: Bearer TOKEN'  # 200 {"subject":...}
//   $ curl -i localhost:8080/v1/account                                   # 401, the layer's
//
// The layer belongs to the route's group, so every way in meets it: the REST request, and the
// route's MCP tool getAccount, whose call carries the caller's Authorization (mcp.hpp) and is
// refused by the same layer without it (tests/mcp/sdk_test.mjs).
#pragma once

#include <waypoint/app/application.hpp>
#include <waypoint/app/security/auth.hpp>
#include <waypoint/app/typed/json.hpp>

#include <openssl/crypto.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace waypoint::examples {

struct account {
  std::string subject;  // who holds the token
};
WAYPOINT_JSON_OBJECT(account, subject)

// Whether `given` equals `expected`, in a time that depends on their lengths only (OpenSSL's
// CRYPTO_memcmp): a compare that stops at the first difference tells a caller how much of a
// token it has guessed.
inline bool same_secret(std::string_view given, std::string_view expected) noexcept {
  return given.size() == expected.size() &&
         CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

// Registers GET /v1/account in a group whose layer answers 401 (with WWW-Authenticate) unless
// the request carries `Authorization: Bearer <token>`, read as bearer_auth() reads it (the
// scheme in any case, any number of spaces after it: auth.hpp's authorization_credentials).
inline void add_account_route(app::application& app, std::string token) {
  auto authenticated = app.group(
      "/v1/account", app::layer_hooks{[expected = std::move(token)](app::context& ctx) {
        std::optional<std::string_view> given =
            app::authorization_credentials(ctx.header(app::http::field::authorization), "Bearer");
        if (given && same_secret(*given, expected)) return true;
        ctx.response().header("WWW-Authenticate", "Bearer realm=\"waypoint-gateway\"");
        ctx.response().problem(401, "a bearer token (the gateway's --api-token) is required");
        return false;
      }});
  authenticated.get<account>("", [](app::context&) { return account{"api-token holder"}; })
      .describe({.name = "getAccount",
                 .summary = "Who the caller is",
                 .description = "Answers who holds the bearer token; without it the group's "
                                "layer refuses the request (401)."});
}

}  // namespace waypoint::examples
