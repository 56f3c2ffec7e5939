// The non-template parts of typed inputs (waypoint/app/typed/inputs.hpp): finding an input's text
// and the 400s for a missing, malformed or unknown one.
#include "waypoint/app/typed/inputs.hpp"
#include "waypoint/app/security/cookies.hpp"
#include "waypoint/json_string.hpp"

#include <algorithm>
#include <string>

namespace waypoint::app::detail {

std::string_view input_source_name(input_source source) noexcept {
  switch (source) {
    case input_source::path: return "path";
    case input_source::query: return "query";
    case input_source::header: return "header";
    case input_source::cookie: return "cookie";
    case input_source::body: return "body";
    case input_source::form: return "form";
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
      return cookies(ctx.request()).find(name);  // every Cookie field, the first pair named
    case input_source::body:
    case input_source::form:
      break;
  }
  return std::nullopt;
}

std::string_view input_where(std::string_view in) noexcept {
  if (in == "query") return "query parameter";
  if (in == "path") return "path value";
  if (in == "form") return "form field";
  return in;
}

std::string input_named(std::string_view in, std::string_view name) {
  std::string named(input_where(in));
  named += " \"";
  named.append(name);
  named += '"';
  return named;
}

void throw_missing_input(input_source source, std::string_view name) {
  throw http_error(400, "missing " + input_named(input_source_name(source), name));
}

void check_integer_range(input_source source, std::string_view name, std::string_view text,
                         std::string_view minimum, std::string_view maximum,
                         bool& negative_zero) {
  bool negative = text.starts_with('-');
  std::string_view digits = text.substr(negative ? 1 : 0);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return;
  if (digits.find_first_not_of('0') == std::string_view::npos) {
    negative_zero = true;  // the only integer text in range that from_chars refuses
    return;
  }
  // The client's text, clipped as a 400 clips it: a 10,000-digit number is echoed short.
  constexpr std::size_t shown = 64;
  std::string detail = input_named(input_source_name(source), name) + " is ";
  detail.append(text.substr(0, shown));
  if (text.size() > shown) detail += "...";
  detail += negative ? "; the minimum is " : "; the maximum is ";
  detail.append(negative ? minimum : maximum);
  throw validation_error(std::move(detail), std::nullopt, negative ? "minimum" : "maximum");
}

namespace {

// `"a", "b"`: each name as a JSON string (escaped and clipped: they are the client's), as
// throw_unknown_members lists a body's, without repeats.
template <class Names>
std::string quoted_list(const Names& names, std::size_t& count) {
  std::string list;
  std::vector<std::string_view> seen;
  for (std::string_view name : names) {
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    if (!list.empty()) list.append(", ");
    waypoint::append_json_string(list, name.substr(0, 64));
  }
  count = seen.size();
  return list;
}

}  // namespace

void check_query_keys(context& ctx, std::span<const std::string_view> known) {
  if (typed_options(ctx.app()).unknown_query_parameters != unknown_members::refuse) return;
  std::vector<std::string_view> unknown;
  for (const query_param& p : ctx.query())
    if (std::find(known.begin(), known.end(), p.name) == known.end()) unknown.push_back(p.name);
  if (unknown.empty()) return;
  std::size_t count = 0;
  std::string detail = "unknown query parameter";
  std::string names = quoted_list(unknown, count);
  detail.append(count == 1 ? " " : "s ");
  detail.append(names);
  detail.append("; this route reads ");
  std::string accepted = quoted_list(known, count);
  detail.append(accepted.empty() ? std::string_view("none") : std::string_view(accepted));
  throw http_error(400, std::move(detail));
}

}  // namespace waypoint::app::detail
