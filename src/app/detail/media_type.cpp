// Media types and parameters (media_type.hpp): one scanner walks the parameters, checking
// them when a value is parsed and handing them out afterwards, so that what is checked and
// what is read cannot differ.
#include "app/detail/media_type.hpp"

#include "waypoint/detail/http_grammar.hpp"

#include <array>

namespace waypoint::app::detail {
namespace {

using waypoint::detail::iequals;
using waypoint::detail::is_ows;
using waypoint::detail::is_token_byte;
using waypoint::detail::trim;

// qdtext and the byte of a quoted-pair (RFC 9110 §5.6.4): HTAB, SP, VCHAR and obs-text;
// quoted-pair also takes '"' and '\', which qdtext leaves to it.
bool is_quotable(char c) noexcept {
  auto u = static_cast<unsigned char>(c);
  return c == '\t' || (u >= 0x20 && u != 0x7F);
}

std::size_t token_length(std::string_view text) noexcept {
  std::size_t n = 0;
  while (n < text.size() && is_token_byte(text[n])) ++n;
  return n;
}

// The length of the quoted-string at the front of `text` (which starts with '"'), quotes
// included; 0 when it is not closed or holds a control byte.
std::size_t quoted_length(std::string_view text) noexcept {
  for (std::size_t i = 1; i < text.size(); ++i) {
    if (text[i] == '"') return i + 1;
    if (!is_quotable(text[i])) return 0;
    if (text[i] == '\\' && (++i == text.size() || !is_quotable(text[i]))) return 0;
  }
  return 0;
}

// Appended piece by piece: GCC 12 at -O3 takes "\"" + std::string(...) for an overlapping
// memcpy (-Wrestrict, a known false positive) and the release build fails on it.
std::string shown(std::string_view name) {
  std::string out(1, '"');
  out.append(name.substr(0, 64));
  out.append(name.size() > 64 ? "...\"" : "\"");
  return out;
}

void skip_ows(std::string_view& text) noexcept {
  while (!text.empty() && is_ows(text.front())) text.remove_prefix(1);
}

enum class scanned { end, parameter, malformed };

// The parameter at the front of `rest`, which starts at a ';' or is empty; empty parameters
// ("a/b;;c=d;") are skipped, as §5.6.6 allows them. On malformed, `why` (when given) says why.
scanned scan_parameter(std::string_view& rest, raw_parameter& out, std::string* why) {
  // The message is made only when asked for: a caller that only wants a yes or no (Accept's
  // ranges, a response's type) allocates nothing.
  auto fail = [why](auto&& message) {
    if (why) *why = message();
    return scanned::malformed;
  };
  for (;;) {
    skip_ows(rest);
    if (rest.empty()) return scanned::end;
    if (rest.front() != ';') return fail([&] { return "has " + shown(rest) + " where a ';' should be"; });
    rest.remove_prefix(1);
    skip_ows(rest);
    if (!rest.empty() && rest.front() != ';') break;
  }
  std::size_t name_length = token_length(rest);
  if (name_length == 0) return fail([] { return std::string("has a parameter that does not start with a name"); });
  out.name = rest.substr(0, name_length);
  rest.remove_prefix(name_length);
  skip_ows(rest);  // Go's reader allows spaces around '=', and browsers never send them
  if (rest.empty() || rest.front() != '=')
    return fail([&] { return "has the parameter " + shown(out.name) + " without '=' and a value"; });
  rest.remove_prefix(1);
  skip_ows(rest);
  std::size_t value_length = !rest.empty() && rest.front() == '"' ? quoted_length(rest) : token_length(rest);
  if (value_length == 0)
    return fail([&] {
      return "has the parameter " + shown(out.name) +
             " without a value that is a token or a closed quoted-string";
    });
  out.value = rest.substr(0, value_length);
  rest.remove_prefix(value_length);
  return scanned::parameter;
}

// Whether `parameters` parse, with no name twice and at most max_media_parameters.
bool check_parameters(std::string_view parameters, std::string* why) {
  std::array<std::string_view, max_media_parameters> seen;
  std::size_t count = 0;
  raw_parameter p;
  for (;;) {
    scanned s = scan_parameter(parameters, p, why);
    if (s == scanned::end) return true;
    if (s == scanned::malformed) return false;
    for (std::size_t i = 0; i < count; ++i)
      if (iequals(seen[i], p.name)) {
        if (why) *why = "names the parameter " + shown(p.name) + " twice";
        return false;
      }
    if (count == seen.size()) {
      if (why) *why = "has more than " + std::to_string(max_media_parameters) + " parameters";
      return false;
    }
    seen[count++] = p.name;
  }
}

// `text` split at its first ';' into a value and its parameters, which are checked.
std::optional<parameterized> split(std::string_view text, std::string* why) {
  std::size_t semicolon = text.find(';');
  parameterized out;
  out.value = trim(text.substr(0, semicolon));
  if (semicolon != std::string_view::npos) out.parameters = text.substr(semicolon);
  if (out.value.empty()) {
    if (why) *why = "is empty before its parameters";
    return std::nullopt;
  }
  if (!check_parameters(out.parameters, why)) return std::nullopt;
  return out;
}

}  // namespace

std::optional<raw_parameter> next_parameter(std::string_view& rest) noexcept {
  raw_parameter p;
  if (scan_parameter(rest, p, nullptr) != scanned::parameter) return std::nullopt;
  return p;
}

std::string unquoted(std::string_view value) {
  if (value.empty() || value.front() != '"') return std::string(value);
  std::string out;
  for (std::size_t i = 1; i + 1 < value.size(); ++i) {
    if (value[i] == '\\') ++i;
    out += value[i];
  }
  return out;
}

std::optional<std::string> parameterized::parameter(std::string_view name) const {
  std::string_view rest = parameters;
  while (std::optional<raw_parameter> p = next_parameter(rest))
    if (iequals(p->name, name)) return unquoted(p->value);
  return std::nullopt;
}

bool media_type::is(std::string_view essence) const noexcept {
  std::size_t slash = essence.find('/');
  return slash != std::string_view::npos && iequals(type, essence.substr(0, slash)) &&
         iequals(subtype, essence.substr(slash + 1));
}

std::string media_type::essence() const {
  std::string out;
  out.reserve(type.size() + 1 + subtype.size());
  for (char c : type) out += waypoint::detail::ascii_lower(c);
  out += '/';
  for (char c : subtype) out += waypoint::detail::ascii_lower(c);
  return out;
}

std::string_view media_type::suffix() const noexcept {
  std::size_t plus = subtype.rfind('+');
  return plus == std::string_view::npos ? std::string_view() : subtype.substr(plus + 1);
}

std::optional<media_type> parse_media_type(std::string_view text, std::string* why) {
  std::optional<parameterized> split_text = split(text, why);
  if (!split_text) return std::nullopt;
  media_type out;
  static_cast<parameterized&>(out) = *split_text;
  std::string_view value = out.value;
  std::size_t slash = value.find('/');
  out.type = value.substr(0, slash);
  if (slash != std::string_view::npos) out.subtype = value.substr(slash + 1);
  bool tokens = !out.type.empty() && !out.subtype.empty() &&
                token_length(out.type) == out.type.size() &&
                token_length(out.subtype) == out.subtype.size();
  if (!tokens) {
    if (why) *why = "is not a type and a subtype, each a token, joined by '/'";
    return std::nullopt;
  }
  return out;
}

std::optional<parameterized> parse_parameterized(std::string_view text, std::string* why) {
  std::optional<parameterized> out = split(text, why);
  if (out && token_length(out->value) != out->value.size()) {
    if (why) *why = "does not start with a token";
    return std::nullopt;
  }
  return out;
}

}  // namespace waypoint::app::detail
