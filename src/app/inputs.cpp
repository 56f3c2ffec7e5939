// The non-template parts of typed inputs (waypoint/app/inputs.hpp): finding an input's text
// and the 400s for a missing, malformed or unknown one.
#include "waypoint/app/inputs.hpp"

#include <algorithm>
#include <string>

namespace waypoint::app::detail {
namespace {

std::string_view trim_spaces(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The value of cookie `name` in one Cookie field ("a=1; b=2", RFC 6265 5.4); a value in
// double quotes is given without them. Pairs without '=' are skipped, as browsers send none.
std::optional<std::string_view> cookie_in(std::string_view field, std::string_view name) {
  while (!field.empty()) {
    std::size_t end = field.find(';');
    std::string_view pair = trim_spaces(field.substr(0, end));
    field = end == std::string_view::npos ? std::string_view() : field.substr(end + 1);
    std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos || trim_spaces(pair.substr(0, eq)) != name) continue;
    std::string_view value = trim_spaces(pair.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    return value;
  }
  return std::nullopt;
}

}  // namespace

std::string_view input_source_name(input_source source) noexcept {
  switch (source) {
    case input_source::path: return "path";
    case input_source::query: return "query";
    case input_source::header: return "header";
    case input_source::cookie: return "cookie";
    case input_source::body: return "body";
  }
  return "input";
}

std::optional<std::string_view> input_text(context& ctx, input_source source,
                                           std::string_view name) {
  switch (source) {
    case input_source::path:
      return ctx.path_value(name);
    case input_source::query:
      return ctx.query(name);
    case input_source::header: {
      auto it = ctx.request().find(name);
      if (it == ctx.request().end()) return std::nullopt;
      return std::string_view(it->value());
    }
    case input_source::cookie:
      for (auto [it, end] = ctx.request().equal_range(http::field::cookie); it != end; ++it)
        if (auto value = cookie_in(it->value(), name)) return value;
      return std::nullopt;
    case input_source::body:
      break;
  }
  return std::nullopt;
}

std::string input_named(std::string_view source, std::string_view name) {
  std::string named(source);
  named += source == "query" ? " parameter \"" : source == "path" ? " value \"" : " \"";
  named.append(name);
  named += '"';
  return named;
}


void throw_missing_input(input_source source, std::string_view name) {
  throw http_error(400, "missing " + input_named(input_source_name(source), name));
}

void throw_bad_input(input_source source, std::string_view name, std::string_view text,
                     std::string_view expected) {
  // The client's text, clipped: it is echoed back, and a header may be long.
  constexpr std::size_t shown = 64;
  std::string detail = input_named(input_source_name(source), name) + " must be " + std::string(expected) +
                       ", not \"" + std::string(text.substr(0, shown)) +
                       (text.size() > shown ? "...\"" : "\"");
  throw http_error(400, std::move(detail));
}

void check_query_keys(context& ctx, std::span<const std::string_view> known) {
  if (application_access::options(ctx.app()).unknown_query_parameters != unknown_members::refuse)
    return;
  std::string unknown;
  for (const query_param& p : ctx.query_params()) {
    if (std::find(known.begin(), known.end(), p.name) != known.end()) continue;
    std::string quoted = "\"" + std::string(p.name.substr(0, 64)) + "\"";
    if (unknown.find(quoted) != std::string::npos) continue;
    unknown += (unknown.empty() ? "" : ", ") + quoted;
  }
  if (unknown.empty()) return;
  std::string accepted;
  for (std::string_view k : known) accepted += (accepted.empty() ? "\"" : ", \"") + std::string(k) + "\"";
  throw http_error(400, "unknown query parameter" +
                            std::string(unknown.find(',') == std::string::npos ? " " : "s ") +
                            unknown + "; this route reads " +
                            (accepted.empty() ? std::string("none") : accepted));
}

}  // namespace waypoint::app::detail
