// The response headers that turn on a browser's own defences, as one layer with safe
// defaults (the set helmet sends for Express, with a stricter framing rule):
//
//   app.use(waypoint::app::security_headers());
//   app.use(waypoint::app::security_headers({.content_security_policy =
//       "default-src 'self'; img-src 'self' https://cdn.example.com"}));
//   app.use(waypoint::app::security_headers({.strict_transport_security = ""}));  // off
//
// Each field is a header's value; an empty value leaves that header out. A handler or an
// inner layer that sets one of these headers itself keeps its own value, and one that erases
// it (ctx.response().message().erase(name)) sends none. docs/framework.md, "Security
// headers", says why each default is what it is.
#pragma once

#include "waypoint/app/handler.hpp"

#include <string>
#include <vector>

namespace waypoint::app {

struct security_headers_options {
  // HSTS (RFC 6797): a year, subdomains included. Sent on every response, over plain HTTP
  // too: browsers ignore it there (§8.1), and behind a TLS-terminating proxy the server
  // cannot tell how the browser connected. Add "; preload" only once the domain is ready for
  // the browsers' preload lists; "" where subdomains still serve plain HTTP sites.
  std::string strict_transport_security = "max-age=31536000; includeSubDomains";
  // CSP: same-origin resources only, no plugins, no <base> elsewhere, never framed. Sent on
  // the responses whose Content-Type is one of csp_content_types, the documents a browser
  // renders and runs scripts in: CSP governs what a document loads, so on JSON or an image
  // it does nothing but cost a hundred bytes. A page needing inline scripts, another
  // origin's assets or framing sets its own value (on its route, or here).
  std::string content_security_policy =
      "default-src 'self'; base-uri 'self'; frame-ancestors 'none'; object-src 'none'";
  // Content-Security-Policy-Report-Only instead: the browser reports what the policy would
  // block without blocking it, to try a policy on a live site.
  bool content_security_policy_report_only = false;
  // The media types (compared without parameters, ignoring case) that get the CSP: HTML,
  // XHTML, and SVG, which runs scripts when opened on its own.
  std::vector<std::string> csp_content_types{"text/html", "application/xhtml+xml",
                                             "image/svg+xml"};
  // No MIME sniffing: a JSON answer or an upload is never run as a script or a page.
  std::string content_type_options = "nosniff";
  // helmet's choice: no Referer from these pages, so URLs with tokens or ids never leak to
  // other sites. "strict-origin-when-cross-origin" (the browsers' default) where other sites
  // need to see where their visitors came from.
  std::string referrer_policy = "no-referrer";
  // The legacy form of frame-ancestors, for browsers without CSP level 2. DENY, to agree with
  // the default CSP's frame-ancestors 'none' (helmet's SAMEORIGIN pairs with its 'self').
  std::string frame_options = "DENY";
  // A window this site opens, or that opens it, gets no handle on the other (Spectre-class
  // leaks and tab-nabbing across origins). "same-origin-allow-popups" for OAuth popups.
  std::string cross_origin_opener_policy = "same-origin";
  // Other sites cannot embed these responses as no-cors subresources (<img>, <script>):
  // CORS requests, which the cors() layer answers, are not affected.
  std::string cross_origin_resource_policy = "same-origin";
  // Off by default, as in helmet: "require-corp" blocks every cross-origin resource without
  // CORP or CORS, which breaks most pages that embed anything. Set it (with the opener
  // policy) for cross-origin isolation (SharedArrayBuffer).
  std::string cross_origin_embedder_policy{};
};

// The layer: layer_hooks, so it costs no coroutine. The headers are set before the inner
// layers and the handler run, so every answer has them: errors and problem documents, 304s,
// redirects, unrouted 404s and 405s (with app.use()), HEAD, and streamed bodies, whose head
// goes out with the first chunk. The CSP is set then too, and taken off again once the
// handler is done when the Content-Type is not a document's (a streamed body keeps it: its
// head has gone). The server's own errors, answered before the application runs (a 431, a
// 413 for a too-long body), do not pass through layers. Throws std::invalid_argument for a
// value holding a control character.
middleware security_headers(security_headers_options options = {});

}  // namespace waypoint::app
