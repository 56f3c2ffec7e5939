// The small rules of HTTP's grammar (RFC 9110 §5.6), written once for every layer that reads
// a field or writes a head: token bytes, optional whitespace, comma-separated lists, the
// case-insensitive comparison of tokens, and decimal numbers written into a head. Standard
// library only, so that the core (a pattern's method), the server and the framework share
// them.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace waypoint::detail {

// tchar (RFC 9110 §5.6.2): the bytes of a token such as a method or a field name.
constexpr bool is_token_byte(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// OWS (RFC 9110 §5.6.3): a space or a horizontal tab.
constexpr bool is_ows(char c) noexcept { return c == ' ' || c == '\t'; }

// `s` without the optional whitespace around it.
constexpr std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

constexpr char ascii_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// `text` with its ASCII letters lowered and every other byte kept: methods, media types and
// file extensions are ASCII, and no locale may change what they compare equal to.
inline std::string ascii_lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

// Tokens, field names and media types compare without regard to ASCII case.
constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

constexpr bool istarts_with(std::string_view text, std::string_view prefix) noexcept {
  return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

// Calls visit(element) for each element of a comma-separated list (RFC 9110 §5.6.1:
// `#element`), trimmed; empty elements are skipped, as a recipient must.
template <class Visit>
constexpr void for_each_list_element(std::string_view list, Visit&& visit) {
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    std::string_view element = trim(list.substr(0, comma));
    if (!element.empty()) visit(element);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// Whether a list of tokens (Connection, Upgrade, Transfer-Encoding) names `token`.
constexpr bool list_has_token(std::string_view list, std::string_view token) noexcept {
  bool found = false;
  for_each_list_element(list, [&](std::string_view element) {
    found = found || iequals(element, token);
  });
  return found;
}

// A qvalue (RFC 9110 §12.4.2: "0" or "1", or either with up to three decimals, not above
// 1) in thousandths; -1 for anything else ("0.1234", "1.5", "-1", "nan").
constexpr int parse_qvalue(std::string_view text) noexcept {
  if (text.empty() || text.size() > 5 || (text[0] != '0' && text[0] != '1')) return -1;
  int value = (text[0] - '0') * 1000;
  if (text.size() == 1) return value;
  if (text[1] != '.') return -1;
  int scale = 100;
  for (char c : text.substr(2)) {
    if (c < '0' || c > '9') return -1;
    value += (c - '0') * scale;
    scale /= 10;
  }
  return value > 1000 ? -1 : value;
}

// One element of an Accept, Accept-Encoding or Accept-Language list: what it names, and its
// weight in thousandths (1000 without a q parameter, -1 when its q does not parse). The
// one reader of weights for content negotiation and content codings alike.
struct weighted_element {
  std::string_view value;
  int q = 1000;
};
constexpr weighted_element parse_weighted_element(std::string_view element) noexcept {
  std::size_t semi = element.find(';');
  weighted_element out{trim(element.substr(0, semi))};
  while (semi != std::string_view::npos) {
    element.remove_prefix(semi + 1);
    semi = element.find(';');
    std::string_view param = trim(element.substr(0, semi));
    std::size_t eq = param.find('=');
    if (eq != std::string_view::npos && iequals(trim(param.substr(0, eq)), "q"))
      out.q = parse_qvalue(trim(param.substr(eq + 1)));
  }
  return out;
}

// If-None-Match (RFC 9110 §13.1.2): whether `field` (a list of entity tags, or "*") names
// `etag`, weakly. The one rule of static files, typed routes and the OpenAPI document.
constexpr bool etag_listed(std::string_view field, std::string_view etag) noexcept {
  auto opaque = [](std::string_view tag) { return tag.starts_with("W/") ? tag.substr(2) : tag; };
  bool listed = false;
  for_each_list_element(field, [&](std::string_view tag) {
    listed = listed || tag == "*" || opaque(tag) == opaque(etag);
  });
  return listed;
}

// If-Match (RFC 9110 §8.8.3.2, §13.1.1): whether `field` names `etag` strongly (a weak tag
// matches nothing; "*" matches any current representation).
constexpr bool etag_listed_strongly(std::string_view field, std::string_view etag) noexcept {
  bool listed = false;
  for_each_list_element(field, [&](std::string_view tag) {
    listed = listed || tag == "*" || (!etag.starts_with("W/") && tag == etag);
  });
  return listed;
}

// Appends `n` in decimal (a status code, a Content-Length, a metric's count).
inline void append_decimal(std::string& out, std::uint64_t n) {
  char digits[20];  // 2^64 - 1 has 20 digits
  out.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
}

}  // namespace waypoint::detail
