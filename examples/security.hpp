// The gateway's sign-in routes, built from the framework's security layers (jwt.hpp,
// sessions.hpp, csrf.hpp, rate_limit.hpp):
//
//   $ curl -i localhost:8080/v1/auth/token -d username=ada -d password=PW   # {"access_token":...}
//   $ curl -i localhost:8080/v1/me -H 'Authorization: Bearer TOKEN'         # {"subject":"ada",...}
//   $ curl -i -c jar localhost:8080/v1/session -d username=ada -d password=PW   # a session cookie
//   $ curl -i -b jar localhost:8080/v1/session                              # {"user":"ada"}
//
// One demonstration user, ada, whose password and the token-signing secret are drawn afresh
// at each start (nothing to leak from the source), and printed with a token made for ada so
// that the protected route can be tried at once. Both password routes share one rate limit
// per client address, the guard against guessing; the session routes refuse cross-site
// writes (csrf_protection), since a browser sends their cookie on any site's form post.
#pragma once

#include "account.hpp"

#include <waypoint/app/application.hpp>
#include <waypoint/app/security/csrf.hpp>
#include <waypoint/app/http_error.hpp>
#include <waypoint/app/typed/inputs.hpp>
#include <waypoint/app/typed/json.hpp>
#include <waypoint/app/security/jwt.hpp>
#include <waypoint/app/security/rate_limit.hpp>
#include <waypoint/app/route_doc.hpp>
#include <waypoint/app/security/sessions.hpp>

#include <openssl/rand.h>
#include <unistd.h>

#include <chrono>
#include <ostream>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace waypoint::examples {

struct sign_in {
  std::string username;
  std::string password;
  static constexpr auto inputs =
      app::inputs(app::from::form("username", &sign_in::username).describe("ada"),
                  app::from::form("password", &sign_in::password)
                      .describe("the password the gateway printed when it started"));
};

// OAuth 2's token answer (RFC 6749 §5.1), which clients already know how to read.
struct issued_token {
  std::string access_token;
  std::string token_type;
  std::int64_t expires_in = 0;  // seconds
};
WAYPOINT_JSON_OBJECT(issued_token, access_token, token_type, expires_in)

struct token_holder {
  std::string subject;
  std::vector<std::string> scopes;
};
WAYPOINT_JSON_OBJECT(token_holder, subject, scopes)

struct signed_in_user {
  std::string user;
};
WAYPOINT_JSON_OBJECT(signed_in_user, user)

// What the gateway prints, and the stores N gateways share (null: each its own, in memory).
struct security_setup {
  std::shared_ptr<app::session_store> sessions{};
  std::shared_ptr<app::rate_limit_store> limits{};
};

class demo_security {
 public:
  static constexpr const char* user = "ada";
  static constexpr const char* issuer = "waypoint-gateway";
  static constexpr std::chrono::seconds token_lifetime{3600};
  static constexpr std::chrono::hours printed_token_lifetime{24};

  demo_security() : password_(random_hex(12)), secret_(random_hex(32)) {}

  const std::string& password() const noexcept { return password_; }

  // A token for ada, valid `lifetime` from now.
  std::string token(std::chrono::seconds lifetime) const {
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    std::string claims = R"({"sub":")" + std::string(user) + R"(","iss":")" + issuer +
                         R"(","aud":")" + issuer + R"(","iat":)" + std::to_string(now) +
                         R"(,"exp":)" + std::to_string(now + lifetime.count()) +
                         R"(,"scope":"profile"})";
    return app::sign_jwt(claims, secret_, key_id);
  }

  void add_routes(app::application& app, const security_setup& setup) const {
    // Ten guesses at once, then one a second, per client: shared by both password routes.
    auto guesses = std::make_shared<app::rate_limiter>(
        app::rate_limit_options{
            .rate = 1, .burst = 10, .policy_name = "sign-in", .store = setup.limits});
    auto self = std::make_shared<const demo_security>(*this);

    app.group("/v1/auth", guesses->layer())
        .post<sign_in, issued_token>("/token", [self](sign_in in) {
          self->check(in);
          return issued_token{self->token(token_lifetime), "Bearer", token_lifetime.count()};
        })
        .describe({.summary = "A bearer token for /v1/me",
                   .description = "The gateway's user ada and the password it printed; "
                                  "rate limited per client (429 past 10 at once)."});

    app::jwt_keys keys;
    keys.add_secret(key_id, secret_);
    app.group("/v1/me",
              app::bearer_auth({.keys = std::make_shared<app::jwt_key_store>(std::move(keys)),
                                .verify = {.issuer = issuer, .audiences = {issuer}},
                                .realm = issuer}))
        .get<token_holder>("", [](app::context& ctx) {
          const auto& claims = ctx.get<app::jwt_claims>();
          return token_holder{claims.subject(), claims.scopes()};
        })
        .describe({.summary = "Who the bearer token names"});

    // The gateway serves plain HTTP, where a browser keeps no Secure cookie: so not the
    // layer's __Host- default, which a deployment behind TLS keeps. The store is shared by
    // the two groups: sign-in alone is rate limited.
    app::session_options sessions{
        .store = setup.sessions ? setup.sessions : std::make_shared<app::memory_session_store>(),
        .cookie = {.name = "gateway-session", .value = {}, .secure = false}};
    app.group("POST /v1/session", guesses->layer(), app::csrf_protection(),
              app::sessions(sessions))
        .post<sign_in, signed_in_user>("", [self](app::context& ctx, sign_in in) {
          self->check(in);
          auto& s = ctx.get<app::session>();
          s.rotate();  // a new id at sign-in: one planted before is worth nothing
          s.set("user", in.username);
          return signed_in_user{in.username};
        })
        .describe({.summary = "Sign in: a session cookie",
                   .description = "Cross-site posts are refused (403); rate limited per "
                                  "client with /v1/auth/token."});
    auto session = app.group("/v1/session", app::csrf_protection(), app::sessions(sessions),
                             signed_in(sessions.cookie.name));
    session
        .get<signed_in_user>("", [](app::context& ctx) {
          return signed_in_user{std::string(*ctx.get<app::session>().get("user"))};
        })
        .describe({.summary = "Who the session cookie names"});
    session.del("", [](app::context& ctx) {
      ctx.get<app::session>().destroy();
      ctx.response().status(204);
    });
  }

 private:
  static constexpr const char* key_id = "gateway-dev";

  // Inside sessions(): a 401 unless the session names a user. Documented as the cookie
  // security scheme OpenAPI has for it (an apiKey "in": "cookie"), so the document says which
  // routes need a signed-in browser.
  static app::middleware signed_in(const std::string& cookie) {
    app::middleware layer = app::layer_hooks{[](app::context& ctx) {
      if (ctx.get<app::session>().get("user")) return true;
      ctx.response().problem(401, "not signed in: POST /v1/session first");
      return false;
    }};
    layer.require_security(std::make_shared<const app::security_requirement>(
        app::security_requirement{.name = "sessionCookie",
                                  .scheme = R"({"type":"apiKey","in":"cookie","name":")" +
                                            cookie + R"("})"}));
    return layer;
  }

  static std::string random_hex(std::size_t bytes) {
    std::vector<unsigned char> random(bytes);
    if (RAND_bytes(random.data(), static_cast<int>(bytes)) != 1)
      throw std::runtime_error("RAND_bytes failed");
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : random) {
      out += digits[b >> 4];
      out += digits[b & 15];
    }
    return out;
  }

  void check(const sign_in& in) const {
    // Both compared whole, whatever the first says: the time taken tells nothing.
    bool known = same_secret(in.username, user);
    bool right = same_secret(in.password, password_);
    if (!(known && right)) throw http_error(401, "unknown user or wrong password");
  }

  std::string password_;
  std::string secret_;  // HS256's, as hex text: 64 bytes
};

// The curl lines: a token and its use, then a sign-in whose cookie curl keeps in a jar
// (named for this process, so that two gateways never share one).
inline void print_security_examples(std::ostream& out, const std::string& base,
                                    const demo_security& security) {
  std::string credentials = std::string(" -d username=") + demo_security::user +
                            " -d password=" + security.password();
  std::string jar = "/tmp/waypoint-gateway-" + std::to_string(::getpid()) + ".cookies";
  out << "  curl -i " << base << "/v1/auth/token" << credentials
      << "   # issues a bearer token (rate limited: RateLimit fields, 429 past 10 at once)\n";
  out << "  curl -i " << base << "/v1/me -H 'Authorization: Bearer "
      << security.token(demo_security::printed_token_lifetime)
      << "'   # protected by a bearer token (this one made at start, valid 24 h)\n";
  out << "  curl -i -c " << jar << " " << base << "/v1/session" << credentials
      << "   # sign in: a session cookie, kept in curl's jar\n";
  out << "  curl -i -b " << jar << " " << base << "/v1/session   # the session the cookie names\n";
}

}  // namespace waypoint::examples
