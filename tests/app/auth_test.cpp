// API keys and HTTP Basic (auth.hpp): keys read from a header, the query or a cookie; each
// held key naming its principal and a callback for the others; Basic credentials as clients
// encode them (the scheme in any case, colons in passwords, UTF-8 user names) and every
// malformed form refused with its reason; HEAD and OPTIONS answered as bearer_auth answers
// them; the OpenAPI schemes, per-operation security and 401/403 answers; and curl's -u
// against a loopback server.
#include "app_test_support.hpp"
#include "loopback_client.hpp"
#include "../support/missing_tool.hpp"

#include "account.hpp"  // examples/: the gateway's --api-token layer

#include <waypoint/app/context.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/security/auth.hpp>
#include <waypoint/app/security/jwt.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using json = nlohmann::json;

// Base64 as RFC 4648 §4 writes it, padded: what curl -u sends. Written out here rather than
// borrowed from the library, so that the test does not check the decoder with itself.
std::string base64(std::string_view bytes) {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t group = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) group |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) group |= static_cast<unsigned char>(bytes[i + 2]);
    out += alphabet[(group >> 18) & 63];
    out += alphabet[(group >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(group >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? alphabet[group & 63] : '=';
  }
  return out;
}

const std::string billing_key = "k-billing-0123456789abcdef";
const std::string reports_key = "k-reports-0123456789abcdef";

// "who:method" of the principal the layer left, as the handler sees it.
void whoami(context& ctx) {
  const auto& who = ctx.get<authenticated_principal>();
  ctx.response().body(who.name + (who.by == authenticated_principal::method::basic ? ":basic"
                                                                                    : ":api_key"));
}

// /open, and /api/me behind the layer.
struct keyed_app {
  application app;
  explicit keyed_app(api_key_auth_options options) {
    app.get("/open", [](context& ctx) { ctx.response().body("open"); });
    app.group("/api", api_key_auth(std::move(options))).get("/me", whoami);
  }
};

api_key_auth_options held_keys(api_key_location in = api_key_location::header,
                               std::string name = "X-API-Key") {
  return {.in = in,
          .name = std::move(name),
          .keys = {{.key = billing_key, .principal = "billing"},
                   {.key = reports_key, .principal = "reports"}}};
}

// ---- API keys --------------------------------------------------------------------------

TEST(ApiKeyAuth, ReadsTheKeyWhereTheOptionsSay) {
  struct row {
    const char* rule;
    api_key_location in;
    const char* name;
    request with_key;     // carries billing_key where the layer reads it
    request elsewhere;    // carries it, but not where the layer reads it
    const char* missing;  // the detail without it
  };
  const std::vector<row> rows = {
      {"a header", api_key_location::header, "X-API-Key",
       make_request("GET", "/api/me", {{"x-api-key", billing_key}}),
       make_request("GET", "/api/me?X-API-Key=" + billing_key),
       "this resource needs an API key in the header X-API-Key"},
      {"a query parameter, percent-decoded", api_key_location::query, "api_key",
       make_request("GET", "/api/me?page=2&api_key=k-billing-0123456789%61bcdef"),
       make_request("GET", "/api/me", {{"api_key", billing_key}}),
       "this resource needs an API key in the query parameter api_key"},
      {"a cookie among others", api_key_location::cookie, "api_key",
       make_request("GET", "/api/me", {{"Cookie", "theme=dark; api_key=" + billing_key}}),
       make_request("GET", "/api/me?api_key=" + billing_key),
       "this resource needs an API key in the cookie api_key"},
  };
  for (const row& r : rows) {
    keyed_app g(held_keys(r.in, r.name));
    response ok = answer(g.app, r.with_key);
    EXPECT_EQ(ok.result_int(), 200) << r.rule << ok.body();
    EXPECT_EQ(ok.body(), "billing:api_key") << r.rule;
    response refused = answer(g.app, r.elsewhere);
    EXPECT_EQ(refused.result_int(), 401) << r.rule;
    EXPECT_EQ(field(refused, "WWW-Authenticate"), "APIKey realm=\"api\"") << r.rule;
    EXPECT_EQ(field(refused, "Content-Type"), "application/problem+json") << r.rule;
    EXPECT_EQ(body_json(refused)["detail"], r.missing) << r.rule;
    EXPECT_EQ(answer(g.app, "GET", "/open").result_int(), 200) << r.rule;
  }
}

TEST(ApiKeyAuth, RefusesKeysItDoesNotHoldWithoutEchoingThem) {
  keyed_app g(held_keys());
  struct row {
    const char* rule;
    std::string key;
    const char* detail;
  };
  const std::string not_accepted = "the API key in the header X-API-Key is not accepted";
  const std::vector<row> rows = {
      {"empty", "", "this resource needs an API key in the header X-API-Key"},
      {"another key", "k-other-0123456789abcdefgh", not_accepted.c_str()},
      {"the last byte changed", billing_key.substr(0, billing_key.size() - 1) + "g",
       not_accepted.c_str()},
      {"a prefix of a key", billing_key.substr(0, 20), not_accepted.c_str()},
      {"a key and more", billing_key + "x", not_accepted.c_str()},
      {"a key in another case", "K-BILLING-0123456789ABCDEF", not_accepted.c_str()},
      {"past max_key_bytes", std::string(1025, 'k'),
       "the API key in the header X-API-Key is longer than 1024 bytes"},
  };
  for (const row& r : rows) {
    response res = answer(g.app, make_request("GET", "/api/me", {{"X-API-Key", r.key}}));
    EXPECT_EQ(res.result_int(), 401) << r.rule;
    EXPECT_EQ(field(res, "WWW-Authenticate"), "APIKey realm=\"api\"") << r.rule;
    EXPECT_EQ(body_json(res)["detail"], r.detail) << r.rule;
    if (!r.key.empty()) {
      EXPECT_EQ(res.body().find(r.key.substr(0, 16)), std::string::npos) << r.rule;
    }
  }
}

TEST(ApiKeyAuth, EachHeldKeyNamesItsOwnPrincipal) {
  // Every digest is compared for every request: the last key matches as the first does.
  api_key_auth_options options = held_keys();
  for (int i = 0; i < 30; ++i)
    options.keys.push_back({.key = "k-filler-" + std::to_string(i) + "-0123456789",
                            .principal = "filler " + std::to_string(i)});
  options.keys.push_back({.key = "k-last-0123456789abcdef", .principal = "last"});
  keyed_app g(std::move(options));
  const std::vector<std::pair<std::string, std::string>> rows = {
      {billing_key, "billing:api_key"},
      {reports_key, "reports:api_key"},
      {"k-filler-17-0123456789", "filler 17:api_key"},
      {"k-last-0123456789abcdef", "last:api_key"},
  };
  for (const auto& [key, body] : rows) {
    response res = answer(g.app, make_request("GET", "/api/me", {{"X-API-Key", key}}));
    EXPECT_EQ(res.result_int(), 200) << key;
    EXPECT_EQ(res.body(), body) << key;
  }
}

TEST(ApiKeyAuth, AsksTheCallbackForKeysItDoesNotHold) {
  api_key_auth_options options = held_keys();
  std::vector<std::string> asked;
  options.check = [&asked](std::string_view key) -> std::optional<std::string> {
    asked.emplace_back(key);
    if (key == "k-from-the-database-0001") return "from db";
    return std::nullopt;
  };
  keyed_app g(std::move(options));
  auto status = [&](std::string_view key) {
    return answer(g.app, make_request("GET", "/api/me", {{"X-API-Key", key}})).result_int();
  };
  EXPECT_EQ(status(billing_key), 200);
  EXPECT_TRUE(asked.empty()) << "a held key is not passed on";
  EXPECT_EQ(status("k-from-the-database-0001"), 200);
  EXPECT_EQ(status("k-unknown-0000000000000"), 401);
  EXPECT_EQ(asked, (std::vector<std::string>{"k-from-the-database-0001", "k-unknown-0000000000000"}));

  // A callback alone: no keys held.
  keyed_app only({.check = [](std::string_view key) -> std::optional<std::string> {
    return key == "short" ? std::optional<std::string>("cb") : std::nullopt;
  }});
  response res = answer(only.app, make_request("GET", "/api/me", {{"X-API-Key", "short"}}));
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "cb:api_key");
}

TEST(ApiKeyAuth, RefusesOptionsItCannotUse) {
  struct row {
    const char* rule;
    api_key_auth_options options;
  };
  std::vector<row> rows;
  rows.push_back({"no keys and no check", {}});
  rows.push_back({"a short key", {.keys = {{.key = "short", .principal = "p"}}}});
  rows.push_back({"a repeated key", {.keys = {{.key = billing_key, .principal = "a"},
                                              {.key = billing_key, .principal = "b"}}}});
  rows.push_back({"a header name that is no token", held_keys(api_key_location::header, "X API Key")});
  rows.push_back({"an empty query name", held_keys(api_key_location::query, "")});
  rows.push_back({"a cookie name that is no token", held_keys(api_key_location::cookie, "api;key")});
  api_key_auth_options quoted = held_keys();
  quoted.realm = "a\"b";
  rows.push_back({"a realm with a quote", std::move(quoted)});
  for (row& r : rows) EXPECT_THROW(api_key_auth(std::move(r.options)), std::invalid_argument) << r.rule;
  EXPECT_NO_THROW(api_key_auth(held_keys(api_key_location::cookie, "api_key")));
}

// ---- HTTP Basic ------------------------------------------------------------------------

// /open, and /admin/me behind the layer.
struct basic_app {
  application app;
  explicit basic_app(basic_auth_options options) {
    app.get("/open", [](context& ctx) { ctx.response().body("open"); });
    app.group("/admin", basic_auth(std::move(options))).get("/me", whoami);
  }
};

basic_auth_options held_users() {
  return {.realm = "admin",
          .users = {{.name = "ada", .password = "pa:ss:word"},
                    {.name = "zo\xC3\xAB", .password = "\xC3\xA9t\xC3\xA9"},  // zoë, été
                    {.name = "bob", .password = ""}}};
}

response basic_get(application& app, std::string_view authorization,
                   std::string_view method = "GET") {
  if (authorization.empty()) return answer(app, make_request(method, "/admin/me"));
  return answer(app, make_request(method, "/admin/me", {{"Authorization", authorization}}));
}

TEST(BasicAuth, AcceptsCredentialsAsClientsEncodeThem) {
  basic_app g(held_users());
  struct row {
    const char* rule;
    std::string authorization;
    const char* body;
  };
  const std::vector<row> rows = {
      {"curl -u ada:pa:ss:word: the password keeps its colons",
       "Basic " + base64("ada:pa:ss:word"), "ada:basic"},
      {"the scheme in lower case", "basic " + base64("ada:pa:ss:word"), "ada:basic"},
      {"the scheme in upper case, spaces after it", "BASIC   " + base64("ada:pa:ss:word"),
       "ada:basic"},
      {"a UTF-8 user name and password", "Basic " + base64("zo\xC3\xAB:\xC3\xA9t\xC3\xA9"),
       "zo\xC3\xAB:basic"},
      {"an empty password", "Basic " + base64("bob:"), "bob:basic"},
      {"base64 without its padding", "Basic " + std::string("Ym9iOg"), "bob:basic"},
  };
  for (const row& r : rows) {
    response res = basic_get(g.app, r.authorization);
    EXPECT_EQ(res.result_int(), 200) << r.rule << ": " << res.body();
    EXPECT_EQ(res.body(), r.body) << r.rule;
  }
}

TEST(BasicAuth, RefusesMalformedCredentialsNamingWhy) {
  basic_app g(held_users());
  struct row {
    const char* rule;
    std::string authorization;
    const char* detail;
  };
  const std::vector<row> rows = {
      {"no Authorization", "",
       "this resource needs a user name and password: Authorization: Basic <base64 of "
       "user:password>"},
      {"another scheme", "Bearer abc.def.ghi",
       "this resource needs a user name and password: Authorization: Basic <base64 of "
       "user:password>"},
      {"the scheme run into the credentials", "Basic" + base64("ada:pa:ss:word"),
       "this resource needs a user name and password: Authorization: Basic <base64 of "
       "user:password>"},
      {"nothing after the scheme", "Basic", "the Authorization field has no credentials after Basic"},
      {"a byte outside base64", "Basic YWRh!nB3", "the Basic credentials are not base64 (RFC 4648 §4)"},
      {"base64url's alphabet", "Basic " + std::string("YWRhOj_-"),
       "the Basic credentials are not base64 (RFC 4648 §4)"},
      {"padding that does not complete a group", "Basic YWRhOnB3ZA=",
       "the Basic credentials are not base64 (RFC 4648 §4)"},
      {"padding inside", "Basic YQ==YWRh", "the Basic credentials are not base64 (RFC 4648 §4)"},
      {"a length no encoding has", "Basic YWRhO", "the Basic credentials are not base64 (RFC 4648 §4)"},
      {"no colon", "Basic " + base64("ada"),
       "the Basic credentials have no ':' between user name and password"},
      {"not UTF-8", "Basic " + base64("ad\xFF:pw"), "the Basic credentials are not UTF-8"},
      {"an overlong UTF-8 form", "Basic " + base64("\xC0\xAF:pw"), "the Basic credentials are not UTF-8"},
      {"a control character", "Basic " + base64("ada:pa\nss"),
       "the Basic credentials hold a control character (RFC 7617 §2)"},
      {"past max_credentials_bytes", "Basic " + std::string(4100, 'Q'),
       "the Basic credentials are longer than 4096 bytes"},
  };
  for (const row& r : rows) {
    response res = basic_get(g.app, r.authorization);
    EXPECT_EQ(res.result_int(), 401) << r.rule;
    EXPECT_EQ(field(res, "WWW-Authenticate"), "Basic realm=\"admin\", charset=\"UTF-8\"") << r.rule;
    EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << r.rule;
    EXPECT_EQ(body_json(res)["detail"], r.detail) << r.rule;
  }
  EXPECT_EQ(answer(g.app, "GET", "/open").result_int(), 200);
}

TEST(BasicAuth, RefusesWrongCredentialsWithoutSayingWhichPart) {
  basic_app g(held_users());
  for (std::string_view pair : {"ada:pa:ss", "ada:pa:ss:word ", "Ada:pa:ss:word", "eve:pa:ss:word",
                                "bob:x", ":", "zo\xC3\xAB:ete"}) {
    response res = basic_get(g.app, "Basic " + base64(pair));
    EXPECT_EQ(res.result_int(), 401) << pair;
    EXPECT_EQ(body_json(res)["detail"], "the user name or password is not accepted") << pair;
    EXPECT_EQ(field(res, "WWW-Authenticate"), "Basic realm=\"admin\", charset=\"UTF-8\"") << pair;
  }
}

TEST(BasicAuth, AsksTheCallbackForUsersItDoesNotHold) {
  basic_auth_options options = held_users();
  int asked = 0;
  options.check = [&asked](std::string_view user, std::string_view password) {
    ++asked;
    return user == "carol" && password == "from the slow hash";
  };
  basic_app g(std::move(options));
  EXPECT_EQ(basic_get(g.app, "Basic " + base64("carol:from the slow hash")).body(), "carol:basic");
  EXPECT_EQ(basic_get(g.app, "Basic " + base64("carol:guess")).result_int(), 401);
  EXPECT_EQ(asked, 2);
  // A held user's wrong password is refused there: the callback is not a second chance.
  EXPECT_EQ(basic_get(g.app, "Basic " + base64("ada:from the slow hash")).result_int(), 401);
  EXPECT_EQ(asked, 2);
}

TEST(BasicAuth, RefusesOptionsItCannotUse) {
  struct row {
    const char* rule;
    basic_auth_options options;
  };
  std::vector<row> rows;
  rows.push_back({"no users and no check", {}});
  rows.push_back({"a user name with a colon", {.users = {{.name = "a:b", .password = "x"}}}});
  rows.push_back({"a control character", {.users = {{.name = "a", .password = "x\ty"}}}});
  rows.push_back({"a repeated user", {.users = {{.name = "a", .password = "x"}, {.name = "a", .password = "y"}}}});
  rows.push_back({"a realm with a backslash", {.realm = "a\\b", .users = {{.name = "a", .password = "x"}}}});
  for (row& r : rows) EXPECT_THROW(basic_auth(std::move(r.options)), std::invalid_argument) << r.rule;
  EXPECT_NO_THROW(basic_auth(held_users()));
}

// ---- what the three layers do alike -----------------------------------------------------

// /bearer, /key and /basic behind the three layers: GET /me answering "in", and an
// OPTIONS route of the application's own, /own.
struct three_layers {
  application app;
  three_layers() {
    auto keys = std::make_shared<jwt_key_store>(jwt_keys{});
    auto in = [](context& ctx) { ctx.response().body("in"); };
    auto own = [](context& ctx) { ctx.response().body("own"); };
    app.group("/bearer", bearer_auth({.keys = keys, .required_scopes = {"orders:read"}}))
        .get("/me", in)
        .handle("OPTIONS /own", own);
    app.group("/key", api_key_auth(held_keys())).get("/me", in).handle("OPTIONS /own", own);
    app.group("/basic", basic_auth(held_users())).get("/me", in).handle("OPTIONS /own", own);
    app.get("/open", [](context& ctx) { ctx.response().body("open"); });
  }
};

TEST(CredentialLayers, AnswerHeadWithTheSameFieldsAndNoBody) {
  three_layers t;
  struct row {
    const char* rule;
    request refused;
    request admitted;
    const char* challenge;
  };
  const std::vector<row> rows = {
      {"api key", make_request("HEAD", "/key/me", {{"X-API-Key", reports_key + "x"}}),
       make_request("HEAD", "/key/me", {{"X-API-Key", reports_key}}), "APIKey realm=\"api\""},
      {"basic", make_request("HEAD", "/basic/me", {{"Authorization", "Basic !"}}),
       make_request("HEAD", "/basic/me", {{"Authorization", "Basic " + base64("ada:pa:ss:word")}}),
       "Basic realm=\"admin\", charset=\"UTF-8\""},
  };
  for (const row& r : rows) {
    response refused = answer(t.app, r.refused);
    EXPECT_EQ(refused.result_int(), 401) << r.rule;
    EXPECT_EQ(field(refused, "WWW-Authenticate"), r.challenge) << r.rule;
    EXPECT_EQ(field(refused, "Content-Type"), "application/problem+json") << r.rule;
    EXPECT_TRUE(refused.body().empty()) << r.rule;
    response admitted = answer(t.app, r.admitted);
    EXPECT_EQ(admitted.result_int(), 200) << r.rule;
    EXPECT_TRUE(admitted.body().empty()) << r.rule;
  }
}

TEST(CredentialLayers, AnswerOptionsAsBearerAuthDoes) {
  three_layers t;
  // The automatic OPTIONS answer (the route table's Allow) comes before any group's layers,
  // so none of the three asks for credentials there.
  response bearer = answer(t.app, "OPTIONS", "/bearer/me");
  for (std::string_view path : {"/key/me", "/basic/me"}) {
    response res = answer(t.app, "OPTIONS", path);
    EXPECT_EQ(res.result_int(), bearer.result_int()) << path;
    EXPECT_EQ(field(res, "Allow"), field(bearer, "Allow")) << path;
    EXPECT_EQ(field(res, "WWW-Authenticate"), field(bearer, "WWW-Authenticate")) << path;
  }
  // An OPTIONS route of the application's own is behind the layer like any other.
  for (std::string_view path : {"/bearer/own", "/key/own", "/basic/own"}) {
    response res = answer(t.app, "OPTIONS", path);
    EXPECT_EQ(res.result_int(), 401) << path;
    EXPECT_FALSE(field(res, "WWW-Authenticate").empty()) << path;
  }
  response admitted = answer(t.app, make_request("OPTIONS", "/key/own", {{"X-API-Key", billing_key}}));
  EXPECT_EQ(admitted.result_int(), 200);
  EXPECT_EQ(admitted.body(), "own");
}

TEST(CredentialLayers, DocumentSchemesSecurityAndTheirAnswers) {
  three_layers t;
  t.app.group("/cookie-key", api_key_auth({.in = api_key_location::cookie,
                                           .name = "api_key",
                                           .keys = {{.key = billing_key, .principal = "b"}},
                                           .scheme_name = "apiKeyCookie"}))
      .get("/me", [](context& ctx) { ctx.response().body("in"); });
  json doc = openapi(t.app);
  EXPECT_EQ(doc["components"]["securitySchemes"], json::parse(R"({
    "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
    "apiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
    "basicAuth": {"type": "http", "scheme": "basic"},
    "apiKeyCookie": {"type": "apiKey", "in": "cookie", "name": "api_key"}
  })"));
  struct row {
    const char* path;
    const char* security;
    bool forbidden;  // a 403 documented: a requirement with scopes
  };
  const std::vector<row> rows = {
      {"/bearer/me", R"([{"bearerAuth": ["orders:read"]}])", true},
      {"/key/me", R"([{"apiKeyAuth": []}])", false},
      {"/basic/me", R"([{"basicAuth": []}])", false},
      {"/cookie-key/me", R"([{"apiKeyCookie": []}])", false},
  };
  for (const row& r : rows) {
    const json& op = doc["paths"][r.path]["get"];
    EXPECT_EQ(op["security"], json::parse(r.security)) << r.path;
    EXPECT_EQ(op["responses"]["401"], json::parse(R"({"$ref": "#/components/responses/Unauthorized"})"))
        << r.path;
    EXPECT_EQ(op["responses"].contains("403"), r.forbidden) << r.path;
  }
  const json& open = doc["paths"]["/open"]["get"];
  EXPECT_FALSE(open.contains("security"));
  EXPECT_FALSE(open["responses"].contains("401"));
  const json& responses = doc["components"]["responses"];
  EXPECT_TRUE(responses["Unauthorized"]["headers"].contains("WWW-Authenticate"));
  EXPECT_EQ(responses["Forbidden"]["content"]["application/problem+json"]["schema"]["$ref"],
            "#/components/schemas/Problem");

  // Without security layers (and COSE), neither answer is a component.
  application plain;
  plain.get("/open", [](context& ctx) { ctx.response().body("open"); });
  json plain_doc = openapi(plain);
  EXPECT_FALSE(plain_doc["components"]["responses"].contains("Unauthorized"));
  EXPECT_FALSE(plain_doc["components"]["responses"].contains("Forbidden"));
  // Basic alone: a 401, no 403.
  basic_app basic_only(held_users());
  json basic_doc = openapi(basic_only.app);
  EXPECT_TRUE(basic_doc["components"]["responses"].contains("Unauthorized"));
  EXPECT_FALSE(basic_doc["components"]["responses"].contains("Forbidden"));
}

// ---- reading Authorization -------------------------------------------------------------

TEST(AuthorizationCredentials, ReadTheSchemeInAnyCaseAndTheSpacesAfterIt) {
  struct row {
    const char* rule;
    std::string_view field;
    std::optional<std::string_view> credentials;
  };
  const std::vector<row> rows = {
      {"as written by most clients", "Bearer abc", "abc"},
      {"the scheme in lower case (RFC 9110 §11.1)", "bearer abc", "abc"},
      {"the scheme in upper case", "BEARER abc", "abc"},
      {"two spaces after the scheme (1*SP)", "Bearer  abc", "abc"},
      {"the scheme alone", "Bearer", ""},
      {"another scheme", "Basic abc", std::nullopt},
      {"a scheme that starts like it", "Bearerx abc", std::nullopt},
      {"no field", "", std::nullopt},
  };
  for (const row& r : rows)
    EXPECT_EQ(authorization_credentials(r.field, "Bearer"), r.credentials) << r.rule;
}

// The gateway's --api-token layer (examples/account.hpp) reads the field with the same
// parser as bearer_auth: a client that writes the scheme in lower case or puts two spaces
// after it is admitted by both, or by neither.
TEST(AuthorizationCredentials, ExampleApiTokenReadsBearerAsBearerAuthDoes) {
  const std::string token = "t-0123456789abcdef";
  application app;
  waypoint::examples::add_account_route(app, token);
  struct row {
    const char* rule;
    std::string authorization;
    int status;
  };
  const std::vector<row> rows = {
      {"Bearer", "Bearer " + token, 200},
      {"bearer in lower case", "bearer " + token, 200},
      {"BEARER in upper case", "BEARER " + token, 200},
      {"two spaces after the scheme", "Bearer  " + token, 200},
      {"another token", "Bearer " + token + "x", 401},
      {"another scheme", "Basic " + token, 401},
      {"the token alone", token, 401},
      {"the scheme alone", "Bearer", 401},
  };
  for (const row& r : rows) {
    response res = answer(app, make_request("GET", "/v1/account", {{"Authorization", r.authorization}}));
    EXPECT_EQ(res.result_int(), r.status) << r.rule << ": " << res.body();
    if (r.status == 401) {
      EXPECT_EQ(field(res, "WWW-Authenticate"), "Bearer realm=\"waypoint-gateway\"") << r.rule;
    }
  }
}

// ---- through a real client ---------------------------------------------------------------

TEST(CredentialInterop, CurlSendsCredentialsTheLayersAccept) {
  if (std::system("command -v curl >/dev/null 2>&1") != 0) WAYPOINT_SKIP_MISSING("curl");
  three_layers t;
  loopback_server server(t.app);
  // -w prints the status after the body; -u is curl's own Basic encoding.
  auto curl = [&](const std::string& arguments, std::string_view path) {
    return command_output("curl -s -w ' %{http_code}' " + arguments + " " + server.url(path));
  };
  EXPECT_EQ(curl("-u 'ada:pa:ss:word'", "/basic/me"), "in 200");
  EXPECT_EQ(curl("-u 'zo\xC3\xAB:\xC3\xA9t\xC3\xA9'", "/basic/me"), "in 200");  // zoë:été
  EXPECT_EQ(curl("--basic -u 'bob:'", "/basic/me"), "in 200");
  std::string wrong = curl("-u 'ada:pa:ss'", "/basic/me");
  EXPECT_TRUE(wrong.ends_with(" 401")) << wrong;
  EXPECT_NE(wrong.find("the user name or password is not accepted"), std::string::npos) << wrong;
  EXPECT_EQ(command_output("curl -s -o /dev/null -D - " + server.url("/basic/me") +
                           " | grep -i '^www-authenticate' | tr -d '\\r'"),
            "WWW-Authenticate: Basic realm=\"admin\", charset=\"UTF-8\"\n");
  EXPECT_EQ(curl("-H 'X-API-Key: " + reports_key + "'", "/key/me"), "in 200");
  EXPECT_TRUE(curl("-H 'X-API-Key: nope'", "/key/me").ends_with(" 401"));
}

}  // namespace
