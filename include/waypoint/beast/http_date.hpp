// HTTP dates as the server writes them (RFC 9110 §5.6.7), for fields a framework sets:
// Last-Modified, Expires, a cookie's Expires attribute.
#pragma once

#include <cstdint>
#include <string>

namespace waypoint::beast {

// `second` (since the epoch) as an HTTP date (IMF-fixdate, in English whatever the locale):
// "Tue, 01 Dec 2026 16:58:06 GMT", for Last-Modified and the like.
std::string http_date(std::int64_t second);

}  // namespace waypoint::beast
