// API keys and HTTP Basic (auth.hpp), and the pieces every credential layer shares
// (authorization.hpp): reading Authorization, and the 401 with WWW-Authenticate.
//
// Secrets are compared as SHA-256 digests (OpenSSL's EVP) with CRYPTO_memcmp. Digesting
// first makes every comparison the same 32 bytes whatever the lengths, so neither a key's
// length nor the first byte that differs shows in the time taken; every held digest is
// compared, none skipped once one matches, so neither does which key matched.
#include "waypoint/app/security/auth.hpp"

#include "waypoint/app/context.hpp"
#include "waypoint/app/security/cookies.hpp"
#include "waypoint/app/route_doc.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include "app/security/authorization.hpp"
#include "app/detail/base64url.hpp"
#include "app/detail/sha256.hpp"
#include "app/detail/utf8.hpp"

#include <nlohmann/json.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace waypoint::app {

// ---- shared by the credential layers ---------------------------------------------------

namespace detail {

bool is_plain_quoted(std::string_view text) noexcept {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
  });
}

std::string plain_quoted(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (!is_plain_quoted(std::string_view(&c, 1))) c = '?';
  return out;
}

void refuse_credentials(context& ctx, int status, std::string_view challenge,
                        std::string_view detail) {
  ctx.response().problem(status, detail);
  ctx.response().message().set(http::field::www_authenticate, challenge);
}

}  // namespace detail

namespace {

using detail::sha256_digest;

bool same_digest(const sha256_digest& a, const sha256_digest& b) noexcept {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string challenge_for(std::string_view layer, std::string_view scheme, const std::string& realm) {
  if (!detail::is_plain_quoted(realm))
    throw std::invalid_argument(std::string(layer) +
                                ": the realm holds a quote, a backslash or a control byte");
  return std::string(scheme) + " realm=\"" + realm + "\"";
}

// ---- API keys --------------------------------------------------------------------------

// A key under 16 bytes could be found by trying: 128 bits is the least a random secret has.
constexpr std::size_t min_api_key_bytes = 16;

std::string_view location_name(api_key_location in) noexcept {
  switch (in) {
    case api_key_location::header: return "header";
    case api_key_location::query: return "query";
    case api_key_location::cookie: return "cookie";
  }
  return "header";
}

struct api_key_policy {
  api_key_location in;
  std::string name;
  std::vector<sha256_digest> digests;
  std::vector<std::string> principals;  // principals[i] is whom digests[i] names
  std::function<std::optional<std::string>(std::string_view)> check;
  std::string challenge;
  std::size_t max_key_bytes;
  std::string where;  // "the header X-API-Key", for the answers

  explicit api_key_policy(api_key_auth_options o)
      : in(o.in),
        name(std::move(o.name)),
        check(std::move(o.check)),
        challenge(challenge_for("api_key_auth", "APIKey", o.realm)),
        max_key_bytes(o.max_key_bytes) {
    bool named = !name.empty();
    if (in == api_key_location::header)
      named = named && std::all_of(name.begin(), name.end(), waypoint::detail::is_token_byte);
    if (in == api_key_location::cookie) named = is_cookie_name(name);
    if (!named)
      throw std::invalid_argument("api_key_auth: \"" + detail::plain_quoted(name) +
                                  "\" cannot name a " + std::string(location_name(in)));
    if (o.keys.empty() && !check)
      throw std::invalid_argument("api_key_auth: neither keys nor check accepts any key");
    if (o.scheme_name.empty()) throw std::invalid_argument("api_key_auth: no scheme_name");
    for (std::size_t i = 0; i < o.keys.size(); ++i) {
      const api_key& k = o.keys[i];
      std::string which = "api_key_auth: keys[" + std::to_string(i) + "]";
      if (k.key.size() < min_api_key_bytes)
        throw std::invalid_argument(which + " is shorter than " +
                                    std::to_string(min_api_key_bytes) + " bytes");
      if (k.key.size() > max_key_bytes)
        throw std::invalid_argument(which + " is longer than max_key_bytes");
      sha256_digest d = detail::sha256(k.key);
      if (std::any_of(digests.begin(), digests.end(),
                      [&](const sha256_digest& e) { return same_digest(d, e); }))
        throw std::invalid_argument(which + " repeats an earlier key");
      digests.push_back(d);
      principals.push_back(k.principal);
    }
    where = in == api_key_location::query ? "the query parameter " + name
                                          : "the " + std::string(location_name(in)) + " " + name;
  }

  // The key where the options say; empty when there is none.
  std::string_view presented(context& ctx) const {
    switch (in) {
      case api_key_location::header: return ctx.header(name);
      case api_key_location::query: return ctx.query(name).value_or(std::string_view());
      case api_key_location::cookie:
        return cookies(ctx.request()).find(name).value_or(std::string_view());
    }
    return {};
  }

  // The principal `key` names among the keys held; every digest is compared.
  const std::string* held(std::string_view key) const {
    sha256_digest d = detail::sha256(key);
    std::size_t match = principals.size();
    for (std::size_t i = 0; i < digests.size(); ++i) {
      bool same = same_digest(d, digests[i]);
      match = same ? i : match;
    }
    return match < principals.size() ? &principals[match] : nullptr;
  }

  bool admit(context& ctx) const {
    std::string_view key = presented(ctx);
    if (key.empty()) {
      detail::refuse_credentials(ctx, 401, challenge, "this resource needs an API key in " + where);
      return false;
    }
    if (key.size() > max_key_bytes) {
      detail::refuse_credentials(ctx, 401, challenge,
                                 "the API key in " + where + " is longer than " +
                                     std::to_string(max_key_bytes) + " bytes");
      return false;
    }
    std::optional<std::string> principal;
    if (const std::string* p = digests.empty() ? nullptr : held(key)) principal = *p;
    else if (check) principal = check(key);
    if (!principal) {
      detail::refuse_credentials(ctx, 401, challenge, "the API key in " + where + " is not accepted");
      return false;
    }
    ctx.set(authenticated_principal{std::move(*principal), authenticated_principal::method::api_key});
    return true;
  }
};

// ---- HTTP Basic ------------------------------------------------------------------------

// RFC 7617 §2: user-id and password hold no control characters.
bool has_control_byte(std::string_view text) noexcept {
  return std::any_of(text.begin(), text.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7F;
  });
}

struct basic_policy {
  std::unordered_map<std::string, sha256_digest> users;
  std::function<bool(std::string_view, std::string_view)> check;
  std::string challenge;  // Basic realm="...", charset="UTF-8"
  std::size_t max_credentials_bytes;
  // Compared with when the user is unknown, so that the answer takes as long as a wrong
  // password's.
  sha256_digest unknown_user = detail::sha256("waypoint: no such user");

  explicit basic_policy(basic_auth_options o)
      : check(std::move(o.check)),
        challenge(challenge_for("basic_auth", "Basic", o.realm) + ", charset=\"UTF-8\""),
        max_credentials_bytes(o.max_credentials_bytes) {
    if (o.users.empty() && !check)
      throw std::invalid_argument("basic_auth: neither users nor check accepts anyone");
    for (std::size_t i = 0; i < o.users.size(); ++i) {
      const basic_user& u = o.users[i];
      std::string which = "basic_auth: users[" + std::to_string(i) + "]";
      if (u.name.find(':') != std::string::npos)
        throw std::invalid_argument(which + ": a user name cannot hold ':' (RFC 7617 §2)");
      if (has_control_byte(u.name) || has_control_byte(u.password))
        throw std::invalid_argument(which + " holds a control character (RFC 7617 §2)");
      if (!users.emplace(u.name, detail::sha256(u.password)).second)
        throw std::invalid_argument(which + " repeats the user \"" +
                                    detail::plain_quoted(u.name) + "\"");
    }
  }

  void refuse(context& ctx, std::string_view why) const {
    detail::refuse_credentials(ctx, 401, challenge, why);
  }

  bool accepts(std::string_view user, std::string_view password) const {
    auto it = users.find(std::string(user));
    bool right = same_digest(detail::sha256(password), it == users.end() ? unknown_user : it->second);
    if (it != users.end()) return right;
    return check && check(user, password);
  }

  // Why decoded credentials cannot be read as "user:password", or empty when they can.
  static std::string_view decoded_defect(std::string_view decoded) {
    if (decoded.find(':') == std::string_view::npos)
      return "the Basic credentials have no ':' between user name and password";
    if (!detail::is_utf8(decoded)) return "the Basic credentials are not UTF-8";
    if (has_control_byte(decoded))
      return "the Basic credentials hold a control character (RFC 7617 §2)";
    return {};
  }

  // The credentials after "Basic", decoded; nothing, the request refused, when they are
  // missing, too long or not "user:password".
  std::optional<std::string> decode_credentials(context& ctx,
                                                std::optional<std::string_view> encoded) const {
    if (!encoded) {
      refuse(ctx, "this resource needs a user name and password: Authorization: Basic "
                  "<base64 of user:password>");
      return std::nullopt;
    }
    if (encoded->empty()) {
      refuse(ctx, "the Authorization field has no credentials after Basic");
      return std::nullopt;
    }
    if (encoded->size() > max_credentials_bytes) {
      refuse(ctx, "the Basic credentials are longer than " +
                      std::to_string(max_credentials_bytes) + " bytes");
      return std::nullopt;
    }
    std::optional<std::string> decoded = detail::base64_decode(*encoded);
    std::string_view why =
        decoded ? decoded_defect(*decoded) : "the Basic credentials are not base64 (RFC 4648 §4)";
    if (why.empty()) return decoded;
    refuse(ctx, why);
    return std::nullopt;
  }

  bool admit(context& ctx) const {
    std::optional<std::string> decoded = decode_credentials(
        ctx, authorization_credentials(ctx.header(http::field::authorization), "basic"));
    if (!decoded) return false;
    std::size_t colon = decoded->find(':');
    std::string_view user = std::string_view(*decoded).substr(0, colon);
    if (!accepts(user, std::string_view(*decoded).substr(colon + 1))) {
      refuse(ctx, "the user name or password is not accepted");
      return false;
    }
    ctx.set(authenticated_principal{std::string(user), authenticated_principal::method::basic});
    return true;
  }
};

}  // namespace

std::optional<std::string_view> authorization_credentials(std::string_view field,
                                                          std::string_view scheme) noexcept {
  std::size_t space = field.find(' ');
  if (!waypoint::detail::iequals(field.substr(0, space), scheme)) return std::nullopt;
  if (space == std::string_view::npos) return std::string_view();
  std::string_view credentials = field.substr(space);
  while (!credentials.empty() && credentials.front() == ' ') credentials.remove_prefix(1);
  return credentials;
}

middleware api_key_auth(api_key_auth_options options) {
  std::string scheme = nlohmann::json{{"type", "apiKey"},
                                      {"in", std::string(location_name(options.in))},
                                      {"name", options.name}}
                           .dump();
  std::string scheme_name = options.scheme_name;
  auto policy = std::make_shared<const api_key_policy>(std::move(options));
  middleware layer = layer_hooks{[policy](context& ctx) { return policy->admit(ctx); }, {}};
  layer.require_security(std::make_shared<const security_requirement>(
      security_requirement{.name = std::move(scheme_name), .scheme = std::move(scheme)}));
  return layer;
}

middleware basic_auth(basic_auth_options options) {
  auto policy = std::make_shared<const basic_policy>(std::move(options));
  middleware layer = layer_hooks{[policy](context& ctx) { return policy->admit(ctx); }, {}};
  layer.require_security(std::make_shared<const security_requirement>(
      security_requirement{.name = "basicAuth", .scheme = R"({"type":"http","scheme":"basic"})"}));
  return layer;
}

}  // namespace waypoint::app
