// The value of the Date field (RFC 9110 §5.6.7, IMF-fixdate), formatted by hand: strftime's
// %a and %b follow the process locale, and the field must read "Tue, 01 Dec 2026 ...", in
// English, whatever setlocale() a program called. Linux: CLOCK_REALTIME_COARSE, gmtime_r.
#pragma once

#include <time.h>

#include <cstddef>
#include <string_view>

namespace waypoint::beast::detail {

// Writes the IMF-fixdate of `second` (seconds since the epoch) into `out`, which holds at
// least 29 bytes; returns the length written (29).
std::size_t format_http_date(time_t second, char* out) noexcept;

// The Date value, recomputed when the second changes; one per server thread.
class date_cache {
 public:
  std::string_view get() noexcept {
    timespec now{};
    clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (now.tv_sec != second_) {
      length_ = format_http_date(now.tv_sec, text_);
      second_ = now.tv_sec;
    }
    return {text_, length_};
  }

 private:
  time_t second_ = -1;
  char text_[32] = {};
  std::size_t length_ = 0;
};

}  // namespace waypoint::beast::detail
