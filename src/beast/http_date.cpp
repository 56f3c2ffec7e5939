// format_http_date: day and month names from fixed tables, never from the locale.
#include "http_date.hpp"

#include "waypoint/beast/http_date.hpp"

namespace waypoint::beast::detail {
namespace {

constexpr char day_names[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr char month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

char* put_name(char* out, const char (&name)[4]) noexcept {
  for (int i = 0; i < 3; ++i) *out++ = name[i];
  return out;
}

char* put_digits(char* out, int value, int width) noexcept {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  return out + width;
}

}  // namespace

std::size_t format_http_date(time_t second, char* out) noexcept {
  tm parts{};
  gmtime_r(&second, &parts);
  char* p = put_name(out, day_names[parts.tm_wday % 7]);
  *p++ = ',';
  *p++ = ' ';
  p = put_digits(p, parts.tm_mday, 2);
  *p++ = ' ';
  p = put_name(p, month_names[parts.tm_mon % 12]);
  *p++ = ' ';
  p = put_digits(p, parts.tm_year + 1900, 4);
  *p++ = ' ';
  p = put_digits(p, parts.tm_hour, 2);
  *p++ = ':';
  p = put_digits(p, parts.tm_min, 2);
  *p++ = ':';
  p = put_digits(p, parts.tm_sec, 2);
  for (char c : {' ', 'G', 'M', 'T'}) *p++ = c;
  return static_cast<std::size_t>(p - out);
}

}  // namespace waypoint::beast::detail

namespace waypoint::beast {

std::string http_date(std::int64_t second) {
  char text[32];
  return std::string(text, detail::format_http_date(static_cast<time_t>(second), text));
}

}  // namespace waypoint::beast
