// The security headers layer (waypoint/app/security/security_headers.hpp).
#include "waypoint/app/security/security_headers.hpp"

#include "waypoint/app/context.hpp"

#include "app/detail/media_type.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace waypoint::app {
namespace {

struct header_value {
  std::string name;
  std::string value;
};

// The options as the layer uses them: the headers to send, empty ones dropped, checked once.
struct security_policy {
  std::vector<header_value> always;  // every response
  std::string csp_name;              // Content-Security-Policy[-Report-Only]; empty: no CSP
  std::string csp;
  std::vector<std::string> csp_types;  // essences, compared without regard to case

  explicit security_policy(security_headers_options o) {
    add("Strict-Transport-Security", std::move(o.strict_transport_security));
    add("X-Content-Type-Options", std::move(o.content_type_options));
    add("Referrer-Policy", std::move(o.referrer_policy));
    add("X-Frame-Options", std::move(o.frame_options));
    add("Cross-Origin-Opener-Policy", std::move(o.cross_origin_opener_policy));
    add("Cross-Origin-Resource-Policy", std::move(o.cross_origin_resource_policy));
    add("Cross-Origin-Embedder-Policy", std::move(o.cross_origin_embedder_policy));
    if (!o.content_security_policy.empty()) {
      csp_name = o.content_security_policy_report_only ? "Content-Security-Policy-Report-Only"
                                                       : "Content-Security-Policy";
      check(csp_name, o.content_security_policy);
      csp = std::move(o.content_security_policy);
    }
    csp_types = std::move(o.csp_content_types);
  }

  void add(std::string name, std::string value) {
    if (value.empty()) return;
    check(name, value);
    always.push_back({std::move(name), std::move(value)});
  }

  // A control byte would end the field early or smuggle another (CR LF), so it is refused
  // when the layer is made rather than left to the writer.
  static void check(std::string_view name, std::string_view value) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      auto c = static_cast<unsigned char>(value[i]);
      if ((c < 0x20 && c != '\t') || c == 0x7F)
        throw std::invalid_argument("security_headers: the " + std::string(name) +
                                    " value holds control byte " + std::to_string(c) +
                                    " at byte " + std::to_string(i));
    }
  }

  // Whether `content_type` (parameters and case aside) is a document type the CSP is for.
  bool is_document(std::string_view content_type) const {
    std::optional<detail::media_type> type = detail::parse_media_type(content_type);
    return type && std::any_of(csp_types.begin(), csp_types.end(),
                               [&](const std::string& essence) { return type->is(essence); });
  }
};

// Sets `name` unless an outer layer already did: the first layer to speak wins, as the
// handler does over this layer by setting the field after it.
void set_if_absent(response& res, std::string_view name, std::string_view value) {
  if (res.find(name) == res.end()) res.set(name, value);
}

}  // namespace

middleware security_headers(security_headers_options options) {
  auto policy = std::make_shared<const security_policy>(std::move(options));
  return layer_hooks{
      // Before the handler: a streamed body's head goes out with its first chunk, and what a
      // layer sets after that is not sent.
      [policy](context& ctx) {
        response& res = ctx.response().message();
        for (const header_value& h : policy->always) set_if_absent(res, h.name, h.value);
        if (!policy->csp_name.empty()) set_if_absent(res, policy->csp_name, policy->csp);
        return true;
      },
      // After: the CSP comes off answers that are not documents, unless the handler chose
      // its own value. An exception passing through will be answered with a problem
      // document, which is not one either.
      [policy](context& ctx, std::exception_ptr& error) {
        if (policy->csp_name.empty()) return;
        response& res = ctx.response().message();
        auto csp = res.find(policy->csp_name);
        if (csp == res.end() || std::string_view(csp->value()) != policy->csp) return;
        if (error || !policy->is_document(std::string_view(res[http::field::content_type])))
          res.erase(csp);
      }};
}

}  // namespace waypoint::app
