// Cross-site request forgery protection, as one layer, by what browsers say about where a
// request comes from (Fetch Metadata's Sec-Fetch-Site, else Origin), the way Go 1.25's
// net/http CrossOriginProtection decides:
//
//   app.use(waypoint::app::csrf_protection());
//   app.use(waypoint::app::csrf_protection({.trusted_origins = {"https://admin.example.com"}}));
//   app.use(waypoint::app::csrf_protection({.double_submit = true}));   // for old browsers too
//
// GET, HEAD and OPTIONS always pass: they must not change anything (RFC 9110 §9.2.1), and
// CORS governs who reads their answers. Another method passes when
//   1. Sec-Fetch-Site is `same-origin` or `none` (the user typed the address, or a bookmark);
//      `same-site` and `cross-site` are refused: a sibling subdomain is another origin;
//   2. else, without Sec-Fetch-Site (browsers before 2020-2023), Origin names the request's
//      own host (and scheme, when `scheme` says which one the server is reached by);
//      `Origin: null` (sandboxed frames, some redirects) never does;
//   3. else, with neither field, the request is not from a browser (curl, a server, a
//      mobile app): a forged request is one a browser sends with the victim's cookies, and
//      every browser that runs scripts sends one of the two on a cross-origin POST.
// An origin in trusted_origins passes whatever Sec-Fetch-Site says. A refusal is a 403
// problem document saying which rule refused it.
//
// double_submit adds a token for browsers that send neither field (and proxies that strip
// them): see csrf_options. docs/framework.md, "Cross-site request forgery", says more.
#pragma once

#include "waypoint/app/security/cookies.hpp"
#include "waypoint/app/handler.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

class context;

struct csrf_options {
  // Origins allowed to make unsafe requests from another site, compared ignoring ASCII case
  // with the Origin field as browsers write it: "https://admin.example.com[:port]", no path.
  std::vector<std::string> trusted_origins{};
  // How clients reach this server ("https" or "http"): an Origin of the other scheme is then
  // another origin. Empty (unknown, e.g. behind a TLS-terminating proxy that says nothing):
  // Origin's host and port are compared with Host alone, as Go does.
  std::string scheme{};

  // Double-submit token mode. The layer gives every request without the token cookie a
  // fresh one (32 random bytes, base64url), and an unsafe request with neither
  // Sec-Fetch-Site nor Origin (rule 3) must carry the cookie's value in `token_header`, or,
  // in an application/x-www-form-urlencoded body, in the field `token_field`; compared in
  // constant time. (A streamed body is not read: send the header.) Another site can make a browser send the cookie but cannot read it, so it
  // cannot write it into the request. Non-browser clients must then fetch a page first and
  // echo the cookie: the price of covering browsers that send neither header.
  bool double_submit = false;
  // The cookie's attributes; the layer fills in the value. __Host- binds it to this host
  // alone (Secure, Path=/, no Domain): a sibling subdomain cannot plant its own token.
  set_cookie token_cookie{.name = "__Host-csrf-token", .value = {}};
  std::string token_header = "X-CSRF-Token";
  std::string token_field = "csrf_token";
};

// The layer: layer_hooks, no coroutine. Throws std::invalid_argument for a scheme other than
// "", "http" or "https", a trusted origin with a path or without a scheme, or a token cookie
// render() refuses.
middleware csrf_protection(csrf_options options = {});

// With double_submit: the token of this request, to write into a form's hidden field or a
// page's <meta> for scripts (the cookie is HttpOnly by default); empty outside the layer.
std::string_view csrf_token(const context& ctx) noexcept;

}  // namespace waypoint::app
