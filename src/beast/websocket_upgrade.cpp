// Whether a request can upgrade (websocket.hpp): on its own, so that the session (and its
// fuzzer, which compiles the session's sources alone) need not link the WebSocket session.
// The framework's WebSocket routes ask the same function, so that a request its route takes
// is one the server hands to Beast.
#include "waypoint/beast/websocket.hpp"

#include "waypoint/detail/http_grammar.hpp"

#include <string_view>

namespace waypoint::beast {
namespace {

constexpr bool is_base64_byte(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

// RFC 6455 §4.1: the key is a nonce of 16 bytes, base64-encoded: 22 characters, the last of
// which holds 2 bits and 4 zero bits (RFC 4648 §3.5: 'A', 'Q', 'g' or 'w'), then "==".
constexpr bool is_websocket_key(std::string_view key) noexcept {
  if (key.size() != 24 || key.substr(22) != "==") return false;
  for (char c : key.substr(0, 22))
    if (!is_base64_byte(c)) return false;
  return std::string_view("AQgw").find(key[21]) != std::string_view::npos;
}

// A body would be read as the first WebSocket frames. The body of a request whose body is
// streamed is not in req.body(): the Content-Length field says it follows.
bool has_body(const request& req) noexcept {
  if (!req.body().empty() || req.chunked()) return true;
  std::string_view length = req[http::field::content_length];
  return length.find_first_not_of('0') != std::string_view::npos;
}

}  // namespace

bool is_websocket_upgrade(const request& req) noexcept {
  using waypoint::detail::list_has_token;
  if (req.method() != http::verb::get || req.version() < 11) return false;
  if (has_body(req)) return false;
  return list_has_token(req[http::field::connection], "upgrade") &&
         list_has_token(req[http::field::upgrade], "websocket") &&
         req[http::field::sec_websocket_version] == "13" &&
         is_websocket_key(req[http::field::sec_websocket_key]);
}

}  // namespace waypoint::beast
