// The small parsers behind the static file server (static_files.hpp, detail): which path
// segments a request may name, Range, If-None-Match, IMF-fixdate, Accept-Encoding, and the
// built-in Content-Type table. Pure functions, tested by tables (static_files_test).
#include "waypoint/app/content/static_files.hpp"

#include "waypoint/detail/http_grammar.hpp"

#include <limits.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace waypoint::app::detail {
namespace {

using waypoint::detail::ascii_lower;
using waypoint::detail::for_each_list_element;
using waypoint::detail::iequals;
using waypoint::detail::trim;

bool parse_number(std::string_view text, std::uint64_t& out) noexcept {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return false;
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

struct extension_type {
  std::string_view extension;
  std::string_view type;
};

// What a front end ships, and what browsers need named exactly (module scripts, wasm, svg).
constexpr std::array<extension_type, 31> content_types = {{
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"json", "application/json"},
    {"map", "application/json"},
    {"txt", "text/plain; charset=utf-8"},
    {"md", "text/markdown; charset=utf-8"},
    {"csv", "text/csv; charset=utf-8"},
    {"xml", "application/xml"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"avif", "image/avif"},
    {"ico", "image/vnd.microsoft.icon"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"ttf", "font/ttf"},
    {"otf", "font/otf"},
    {"wasm", "application/wasm"},
    {"pdf", "application/pdf"},
    {"zip", "application/zip"},
    {"gz", "application/gzip"},
    {"mp4", "video/mp4"},
    {"webm", "video/webm"},
    {"mp3", "audio/mpeg"},
    {"wav", "audio/wav"},
}};

constexpr std::array<std::string_view, 12> month_names = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool two_digits(std::string_view s, int& out) noexcept {
  if (s.size() != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9') return false;
  out = (s[0] - '0') * 10 + (s[1] - '0');
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) noexcept {
  y -= m <= 2;
  std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  auto yoe = static_cast<unsigned>(y - era * 400);
  unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

std::string_view builtin_content_type(std::string_view name) noexcept {
  std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string_view ext = name.substr(dot + 1);
  for (const extension_type& e : content_types)
    if (iequals(e.extension, ext)) return e.type;
  return {};
}

std::optional<range_request> parse_range(std::string_view field, std::uint64_t size) noexcept {
  field = trim(field);
  if (field.size() < 6 || !iequals(field.substr(0, 6), "bytes=")) return std::nullopt;
  std::string_view spec = trim(field.substr(6));
  if (spec.find(',') != std::string_view::npos) return std::nullopt;  // several: sent whole
  std::size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view first_text = trim(spec.substr(0, dash));
  std::string_view last_text = trim(spec.substr(dash + 1));
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  if (first_text.empty()) {  // a suffix: the last N bytes
    if (!parse_number(last_text, last)) return std::nullopt;
    if (last == 0 || size == 0) return range_request{true, {}};
    std::uint64_t length = std::min(last, size);
    return range_request{false, {size - length, length}};
  }
  if (!parse_number(first_text, first)) return std::nullopt;
  if (last_text.empty()) {
    last = size == 0 ? 0 : size - 1;
  } else if (!parse_number(last_text, last) || last < first) {
    return std::nullopt;
  }
  if (first >= size) return range_request{true, {}};
  last = std::min(last, size - 1);
  return range_request{false, {first, last - first + 1}};
}

std::optional<std::time_t> parse_http_date(std::string_view text) noexcept {
  // "Sun, 06 Nov 1994 08:49:37 GMT": fixed positions.
  text = trim(text);
  if (text.size() != 29 || text[3] != ',' || text[4] != ' ' || text[7] != ' ' ||
      text[11] != ' ' || text[16] != ' ' || text[19] != ':' || text[22] != ':' ||
      text.substr(25) != " GMT")
    return std::nullopt;
  int day = 0, hour = 0, minute = 0, second = 0, century = 0, year_in = 0;
  if (!two_digits(text.substr(5, 2), day) || !two_digits(text.substr(12, 2), century) ||
      !two_digits(text.substr(14, 2), year_in) || !two_digits(text.substr(17, 2), hour) ||
      !two_digits(text.substr(20, 2), minute) || !two_digits(text.substr(23, 2), second))
    return std::nullopt;
  auto month = std::find(month_names.begin(), month_names.end(), text.substr(8, 3));
  if (month == month_names.end() || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 60)
    return std::nullopt;
  auto m = static_cast<unsigned>(month - month_names.begin() + 1);
  std::int64_t days = days_from_civil(century * 100 + year_in, m, static_cast<unsigned>(day));
  return static_cast<std::time_t>(days * 86400 + hour * 3600 + minute * 60 + second);
}

std::optional<std::vector<std::string_view>> safe_segments(std::string_view path,
                                                           bool hidden_files) {
  if (path.size() > PATH_MAX) return std::nullopt;
  std::vector<std::string_view> segments;
  for (;;) {
    std::size_t slash = path.find('/');
    std::string_view segment = path.substr(0, slash);
    bool last = slash == std::string_view::npos;
    bool allowed = (!segment.empty() || last) && segment != "." && segment != ".." &&
                   segment.size() <= NAME_MAX &&
                   segment.find_first_of(std::string_view("\0\\", 2)) == std::string_view::npos &&
                   (hidden_files || !segment.starts_with('.'));
    if (!allowed) return std::nullopt;
    segments.push_back(segment);
    if (last) return segments;
    path.remove_prefix(slash + 1);
  }
}

}  // namespace waypoint::app::detail
