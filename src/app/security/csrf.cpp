// The CSRF layer (waypoint/app/security/csrf.hpp): Fetch Metadata, then Origin against the request's
// host, then (double_submit) a cookie echoed in a header or form field.
#include "waypoint/app/security/csrf.hpp"

#include "waypoint/app/context.hpp"
#include "waypoint/app/content/form_parser.hpp"
#include "waypoint/detail/http_grammar.hpp"
#include "waypoint/detail/url.hpp"

#include "app/detail/base64url.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

namespace waypoint::app {
namespace {

using waypoint::detail::iequals;

// The request value csrf_token() reads: a view of the request's own cookie (the request
// outlives the value), or a token issued now, owned.
struct csrf_token_value {
  std::string_view sent;
  std::string issued;
  std::string_view token() const noexcept { return issued.empty() ? sent : std::string_view(issued); }
};

constexpr std::size_t token_bytes = 32;
constexpr std::size_t token_chars = 43;  // base64url of 32 bytes, unpadded

bool is_token(std::string_view t) noexcept {
  return t.size() == token_chars && std::all_of(t.begin(), t.end(), detail::is_base64url_character);
}

std::string new_token() { return detail::random_base64url(token_bytes); }

// Origin and trusted_origins are read by the one origin parser (waypoint/detail/url.hpp).
using waypoint::detail::origin_parts;
using waypoint::detail::split_origin;

// `authority` without the scheme's default port, which browsers leave out of Origin and
// clients may write in Host.
std::string_view without_default_port(std::string_view authority, std::string_view scheme) noexcept {
  std::string_view port = scheme == "https" ? ":443" : scheme == "http" ? ":80" : "";
  if (!port.empty() && authority.size() > port.size() && authority.ends_with(port))
    authority.remove_suffix(port.size());
  return authority;
}

struct csrf_policy {
  csrf_options options;

  explicit csrf_policy(csrf_options o) : options(std::move(o)) {
    if (!options.scheme.empty() && options.scheme != "http" && options.scheme != "https")
      throw std::invalid_argument("csrf_protection: scheme must be \"\", \"http\" or \"https\", not \"" +
                                  options.scheme + "\"");
    for (const std::string& origin : options.trusted_origins) {
      origin_parts parts;
      if (!split_origin(origin, parts))
        throw std::invalid_argument("csrf_protection: trusted origin \"" + origin +
                                    "\" is not scheme://host[:port] (no path, no trailing '/')");
    }
    if (options.double_submit) {
      set_cookie probe = options.token_cookie;
      probe.value = std::string(token_chars, 'A');
      (void)render(probe);  // throws now rather than on a request
      if (options.token_header.empty() && options.token_field.empty())
        throw std::invalid_argument("csrf_protection: double_submit needs a token header or field");
    }
  }

  bool trusted(std::string_view origin) const noexcept {
    return !origin.empty() &&
           std::any_of(options.trusted_origins.begin(), options.trusted_origins.end(),
                       [&](const std::string& t) { return iequals(t, origin); });
  }

  // Whether `origin` is the request's own: its scheme (when known) and host[:port].
  bool same_origin(std::string_view origin, std::string_view host) const noexcept {
    origin_parts parts;
    if (!split_origin(origin, parts)) return false;  // "null" and anything malformed
    if (!options.scheme.empty() && !iequals(parts.scheme, options.scheme)) return false;
    std::string_view scheme = options.scheme.empty() ? parts.scheme : std::string_view(options.scheme);
    return !host.empty() &&
           iequals(without_default_port(parts.authority, scheme), without_default_port(host, scheme));
  }

  // The token the request carries, from the header or the urlencoded body.
  std::string submitted_token(context& ctx) const {
    if (!options.token_header.empty()) {
      std::string_view value = ctx.header(options.token_header);
      if (!value.empty()) return std::string(value);
    }
    if (options.token_field.empty() ||
        !is_media_type(ctx.header(http::field::content_type), "application/x-www-form-urlencoded"))
      return {};
    form_error error;
    for (const form_field& f : parse_urlencoded(ctx.body(), form_limits{}, error))
      if (f.name == options.token_field) return f.value;
    return {};
  }

  // Refuses with a 403 problem; false, so that the hook stops there.
  static bool refuse(context& ctx, std::string_view why) {
    ctx.response().problem(403, "cross-site request refused: " + std::string(why));
    return false;
  }

  bool admit(context& ctx) const {
    std::string_view cookie_token;
    if (options.double_submit) cookie_token = issue_token(ctx);

    std::string_view method = ctx.method();
    if (method == "GET" || method == "HEAD" || method == "OPTIONS") return true;

    std::string_view origin = ctx.header(http::field::origin);
    std::string_view site = ctx.header("Sec-Fetch-Site");
    if (!site.empty()) {
      if (site == "same-origin" || site == "none") return true;
      if (trusted(origin)) return true;
      return refuse(ctx, "Sec-Fetch-Site is " + std::string(site.substr(0, 32)) +
                             " and the origin is not trusted");
    }
    if (!origin.empty()) {
      if (same_origin(origin, ctx.host()) || trusted(origin)) return true;
      return refuse(ctx, "the Origin is neither this host nor trusted");
    }
    if (!options.double_submit) return true;
    // Neither field: an old browser, a proxy that strips them, or a non-browser client.
    if (cookie_token.empty())
      return refuse(ctx, "no Sec-Fetch-Site or Origin, and no token cookie");
    std::string submitted = submitted_token(ctx);
    if (submitted.empty())
      return refuse(ctx, "no Sec-Fetch-Site or Origin, and no token in the " +
                             options.token_header + " header or " + options.token_field + " field");
    if (submitted.size() != cookie_token.size() ||
        CRYPTO_memcmp(submitted.data(), cookie_token.data(), submitted.size()) != 0)
      return refuse(ctx, "the submitted token does not match the token cookie");
    return true;
  }

  // The request's token cookie when it holds a well-formed one (returned; the request value
  // records it), else a new token set in the response (the request value records it, and
  // the cookie sent is returned empty: it cannot vouch for this request).
  std::string_view issue_token(context& ctx) const {
    std::optional<std::string_view> sent = cookies(ctx.request()).find(options.token_cookie.name);
    if (sent && is_token(*sent)) {
      ctx.set(csrf_token_value{*sent, {}});
      return *sent;
    }
    set_cookie cookie = options.token_cookie;
    cookie.value = new_token();
    add_cookie(ctx.response(), cookie);
    ctx.set(csrf_token_value{{}, std::move(cookie.value)});
    return {};
  }
};

}  // namespace

middleware csrf_protection(csrf_options options) {
  auto policy = std::make_shared<const csrf_policy>(std::move(options));
  return layer_hooks{[policy](context& ctx) { return policy->admit(ctx); }, {}};
}

std::string_view csrf_token(const context& ctx) noexcept {
  const csrf_token_value* value = ctx.find<csrf_token_value>();
  return value ? value->token() : std::string_view();
}

}  // namespace waypoint::app
