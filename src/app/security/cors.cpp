// CORS (security/cors.hpp): the policy an origin is checked against, and the preflight.
#include "waypoint/app/security/cors.hpp"

#include "waypoint/app/application.hpp"
#include "waypoint/detail/escape.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace waypoint::app {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

// cors_options with what every request would otherwise recompute worked out once.
struct cors_policy {
  cors_options options;
  bool any_origin = false;
  std::string methods;         // joined options.methods, empty when not configured
  std::string headers;         // joined options.headers
  std::string expose_headers;  // joined options.expose_headers
  std::string max_age;

  explicit cors_policy(cors_options o) : options(std::move(o)) {
    any_origin =
        std::find(options.origins.begin(), options.origins.end(), "*") != options.origins.end();
    methods = join(options.methods);
    headers = join(options.headers);
    expose_headers = join(options.expose_headers);
    max_age = std::to_string(options.max_age.count());
  }

  // Compared decoded, as the router matches literal segments: "/%6Detrics" reaches the
  // /metrics route, so it must be skipped too. (A decoded "%2F" reads as '/', which can
  // only make a prefix skip more.)
  bool skips(std::string_view path) const {
    return std::any_of(options.skip_paths.begin(), options.skip_paths.end(),
                       [path](const std::string& skip) { return decoded_matches(path, skip); });
  }

  // `path` decoded as it is read, without a copy (this runs on every request with an
  // Origin), against `skip`: the whole path, or its start when `skip` ends in '/'.
  static bool decoded_matches(std::string_view path, std::string_view skip) noexcept {
    std::size_t at = 0, matched = 0;
    while (at < path.size() && matched < skip.size()) {
      char c = path[at];
      if (c == '%' && waypoint::detail::escape_at(path, at)) {
        c = static_cast<char>(waypoint::detail::hex_value(path[at + 1]) * 16 +
                              waypoint::detail::hex_value(path[at + 2]));
        at += 3;
      } else {
        ++at;
      }
      if (c != skip[matched++]) return false;
    }
    return matched == skip.size() && (skip.ends_with('/') || at == path.size());
  }

  bool allows(std::string_view origin) const {
    return any_origin || std::find(options.origins.begin(), options.origins.end(), origin) !=
                             options.origins.end();
  }
};

// The methods a preflight allows when none are configured: those the path serves, asked
// of the router. The preflight's own match already holds them when it was a 405; when its
// OPTIONS matched a route, the router walks the path once more for them. A method-less
// route serves every method, the one asked for included.
std::string served_methods(const context& ctx) {
  path_methods served{false, ctx.outcome().allow};
  if (ctx.outcome().kind != match_status::method_not_allowed)
    served = ctx.app().router().methods_at(ctx.path(), ctx.host());
  if (served.any) return std::string(ctx.header(http::field::access_control_request_method));
  return served.named.to_string();
}

void set_allow_origin(context& ctx, const cors_policy& policy, std::string_view origin) {
  const cors_options& options = policy.options;
  response_builder& res = ctx.response();
  if (policy.any_origin && !options.credentials) {
    res.header(http::field::access_control_allow_origin, "*");
    return;
  }
  res.header(http::field::access_control_allow_origin, origin);
  res.append_header("Vary", "Origin");  // the answer depends on who asks
  if (options.credentials) res.header(http::field::access_control_allow_credentials, "true");
}

void answer_preflight(context& ctx, const cors_policy& policy, std::string_view origin) {
  set_allow_origin(ctx, policy, origin);
  response_builder& res = ctx.response();
  if (policy.methods.empty())
    res.header(http::field::access_control_allow_methods, served_methods(ctx));
  else
    res.header(http::field::access_control_allow_methods, policy.methods);
  std::string_view asked = ctx.header(http::field::access_control_request_headers);
  if (!policy.headers.empty())
    res.header(http::field::access_control_allow_headers, policy.headers);
  else if (!asked.empty())
    res.header(http::field::access_control_allow_headers, asked);
  res.header(http::field::access_control_max_age, policy.max_age);
  res.status(http::status::no_content);  // finish_body() drops any body
}

}  // namespace

middleware cors(cors_options options) {
  return layer_hooks{
      [policy = cors_policy(std::move(options))](context& ctx) {
        std::string_view origin = ctx.header(http::field::origin);
        if (origin.empty() || policy.skips(ctx.path())) return true;
        if (!policy.allows(origin)) {
          // A cache must not hand this answer to an allowed origin, nor the reverse.
          ctx.response().append_header("Vary", "Origin");
          return true;
        }
        bool preflight = ctx.method() == "OPTIONS" &&
                         !ctx.header(http::field::access_control_request_method).empty();
        bool path_has_routes = ctx.outcome().kind == match_status::matched ||
                               ctx.outcome().kind == match_status::method_not_allowed;
        if (preflight && path_has_routes) {
          answer_preflight(ctx, policy, origin);
          return false;
        }
        if (!preflight) {
          set_allow_origin(ctx, policy, origin);
          if (!policy.expose_headers.empty())
            ctx.response().header(http::field::access_control_expose_headers,
                                  policy.expose_headers);
        }
        return true;
      },
      {}};
}

}  // namespace waypoint::app
