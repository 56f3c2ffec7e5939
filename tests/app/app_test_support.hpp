// Helpers shared by the waypoint::app tests: requests built in one call, responses answered
// without sockets, and problem documents read back as JSON.
#pragma once

#include <waypoint/app/application.hpp>

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace waypoint::app::testing {

struct header_field {
  std::string_view name;
  std::string_view value;
};

// An HTTP/1.1 request for `target` with Host: example.com unless a Host header is given.
inline request make_request(std::string_view method, std::string_view target,
                            std::initializer_list<header_field> headers = {},
                            std::string body = {}) {
  request req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  bool has_host = false;
  for (const header_field& h : headers) {
    req.insert(h.name, h.value);
    if (h.name == "Host") has_host = true;
  }
  if (!has_host) req.set(http::field::host, "example.com");
  req.body() = std::move(body);
  return req;
}

// A POST (or `method`) with a JSON body.
inline request json_request(std::string_view method, std::string_view target, std::string body,
                            std::string_view content_type = "application/json") {
  return make_request(method, target, {{"Content-Type", content_type}}, std::move(body));
}

inline response answer(application& app, const request& req) { return app.respond(req); }

inline response answer(application& app, std::string_view method, std::string_view target) {
  return app.respond(make_request(method, target));
}

inline std::string field(const response& res, std::string_view name) {
  auto it = res.find(name);
  return it == res.end() ? std::string() : std::string(it->value());
}

// The body as JSON; a discarded value when it is not JSON.
inline nlohmann::json body_json(const response& res) {
  return nlohmann::json::parse(res.body(), nullptr, false);
}

}  // namespace waypoint::app::testing
