// The built-in layers: recover, request id, access log and CORS.
#include "waypoint/app/middleware.hpp"

#include <waypoint/detail/json_string.hpp>

#include <algorithm>
#include <chrono>

namespace waypoint::app {
namespace {

std::string access_line(context& ctx, int status, std::chrono::steady_clock::duration elapsed) {
  std::string line;
  line.reserve(160);
  line += "{\"method\":";
  waypoint::detail::append_json_string(line, ctx.method());
  line += ",\"path\":";
  waypoint::detail::append_json_string(line, ctx.path());
  line += ",\"route\":";
  if (ctx.route_pattern().empty())
    line += "null";
  else
    waypoint::detail::append_json_string(line, ctx.route_pattern());
  line += ",\"status\":";
  line += std::to_string(status);
  line += ",\"duration_us\":";
  line += std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
  line += ",\"request_id\":";
  waypoint::detail::append_json_string(line, ctx.request_id());
  line += '}';
  return line;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

bool origin_allowed(const cors_options& options, std::string_view origin) {
  return std::any_of(
      options.origins.begin(), options.origins.end(),
      [&](const std::string& allowed) { return allowed == "*" || allowed == origin; });
}

bool any_origin(const cors_options& options) {
  return std::find(options.origins.begin(), options.origins.end(), "*") != options.origins.end();
}

// The methods a preflight allows when none are configured: what the path serves.
std::string served_methods(const context& ctx) {
  if (ctx.route_status() == match_status::method_not_allowed)
    return ctx.allowed_methods().to_string();
  std::string_view pattern = ctx.route_pattern();
  std::size_t blank = pattern.find_first_of(" \t");
  if (blank == std::string_view::npos || pattern.find('/') < blank)
    return "GET, HEAD, POST, PUT, PATCH, DELETE";  // a route of every method
  std::string method(pattern.substr(0, blank));
  return method == "GET" ? "GET, HEAD" : method;
}

void set_allow_origin(context& ctx, const cors_options& options, std::string_view origin) {
  response_builder& res = ctx.response();
  if (any_origin(options) && !options.credentials) {
    res.header(http::field::access_control_allow_origin, "*");
    return;
  }
  res.header(http::field::access_control_allow_origin, origin);
  res.append_header("Vary", "Origin");  // the answer depends on who asks
  if (options.credentials) res.header(http::field::access_control_allow_credentials, "true");
}

void answer_preflight(context& ctx, const cors_options& options, std::string_view origin) {
  set_allow_origin(ctx, options, origin);
  response_builder& res = ctx.response();
  res.header(http::field::access_control_allow_methods,
             options.methods.empty() ? served_methods(ctx) : join(options.methods));
  std::string_view asked = ctx.header(http::field::access_control_request_headers);
  if (!options.headers.empty())
    res.header(http::field::access_control_allow_headers, join(options.headers));
  else if (!asked.empty())
    res.header(http::field::access_control_allow_headers, asked);
  res.header(http::field::access_control_max_age, std::to_string(options.max_age.count()));
  res.no_content();
}

}  // namespace

middleware recover() {
  return [](context& ctx, next inner) {
    try {
      inner();
    } catch (...) {
      answer_current_exception(ctx);
    }
  };
}

middleware request_id() {
  return [](context& ctx, next inner) {
    std::string_view incoming = ctx.header("X-Request-Id");
    if (incoming.empty() || !ctx.set_request_id(incoming)) (void)ctx.request_id();
    // Set before the inner layers run: error answers keep the fields already set.
    ctx.response().header("X-Request-Id", ctx.request_id());
    inner();
  };
}

middleware access_log(access_log_options options) {
  return [options = std::move(options)](context& ctx, next inner) {
    auto start = std::chrono::steady_clock::now();
    auto write = [&](int status) {
      std::string line = access_line(ctx, status, std::chrono::steady_clock::now() - start);
      if (options.sink)
        options.sink(line);
      else
        ctx.app().log(line);
    };
    try {
      inner();
    } catch (...) {
      write(current_exception_status());
      throw;
    }
    write(ctx.response().status());
  };
}

middleware cors(cors_options options) {
  return [options = std::move(options)](context& ctx, next inner) {
    std::string_view origin = ctx.header(http::field::origin);
    if (origin.empty()) return inner();
    if (!origin_allowed(options, origin)) {
      // A cache must not hand this answer to an allowed origin, nor the reverse.
      ctx.response().append_header("Vary", "Origin");
      return inner();
    }
    bool preflight = ctx.method() == "OPTIONS" &&
                     !ctx.header(http::field::access_control_request_method).empty();
    bool path_has_routes = ctx.route_status() == match_status::matched ||
                           ctx.route_status() == match_status::method_not_allowed;
    if (preflight && path_has_routes) return answer_preflight(ctx, options, origin);
    if (!preflight) {
      set_allow_origin(ctx, options, origin);
      if (!options.expose_headers.empty())
        ctx.response().header(http::field::access_control_expose_headers,
                              join(options.expose_headers));
    }
    inner();
  };
}

}  // namespace waypoint::app
