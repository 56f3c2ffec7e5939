// Whether a request can upgrade (websocket.hpp): on its own, so that the session (and its
// fuzzer, which compiles the session's sources alone) need not link the WebSocket session.
// The framework's WebSocket routes ask the same function, so that a request its route takes
// is one the server hands to Beast.
#include "waypoint/beast/websocket.hpp"

#include <boost/beast/http/rfc7230.hpp>

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

// Whether the first `name` field lists `token` as Beast's accept reads it: as a list of
// tokens (http::token_list), whose reading ends at the first element that is not a token,
// so that in "h2c/1, websocket" or "a:b, websocket" it never reaches websocket.
bool lists_token(const request& req, http::field name, std::string_view token) noexcept {
  return http::token_list(req[name]).exists(token);
}

}  // namespace

handshake_defect websocket_handshake_defect(const request& req) noexcept {
  // Beast's accept reads the first Connection and Upgrade fields only, as token lists, and
  // takes HTTP/1.1 alone; so does this, so that a request this takes is one Beast answers
  // with 101.
  if (req.method() != http::verb::get) return handshake_defect::not_get;
  if (req.version() != 11) return handshake_defect::not_http_1_1;
  if (req.count(http::field::host) == 0) return handshake_defect::no_host;
  if (!lists_token(req, http::field::connection, "upgrade"))
    return handshake_defect::no_connection_upgrade;
  if (!lists_token(req, http::field::upgrade, "websocket"))
    return handshake_defect::no_upgrade_websocket;
  // RFC 6455 §11.3.1 and §11.3.5: each appears once in a request.
  if (req.count(http::field::sec_websocket_version) != 1 ||
      req[http::field::sec_websocket_version] != "13")
    return handshake_defect::bad_version;
  if (req.count(http::field::sec_websocket_key) != 1 ||
      !is_websocket_key(req[http::field::sec_websocket_key]))
    return handshake_defect::bad_key;
  if (has_body(req)) return handshake_defect::has_body;
  return handshake_defect::none;
}

std::string_view describe(handshake_defect defect) noexcept {
  switch (defect) {
    case handshake_defect::none: return {};
    case handshake_defect::not_get: return "a WebSocket opening handshake is a GET request";
    case handshake_defect::not_http_1_1:
      return "a WebSocket opening handshake is an HTTP/1.1 request";
    case handshake_defect::no_host: return "a WebSocket opening handshake needs a Host field";
    case handshake_defect::no_connection_upgrade:
      return "the Connection field must list the token upgrade, in a list of tokens";
    case handshake_defect::no_upgrade_websocket:
      return "the Upgrade field must list websocket, in a list of tokens";
    case handshake_defect::bad_version:
      return "send exactly one Sec-WebSocket-Version field, 13: the only version served";
    case handshake_defect::bad_key:
      return "send exactly one Sec-WebSocket-Key field, the base64 of 16 random bytes "
             "(24 characters ending in ==)";
    case handshake_defect::has_body: return "a WebSocket opening handshake has no body";
  }
  return {};
}

bool is_websocket_upgrade(const request& req) noexcept {
  return websocket_handshake_defect(req) == handshake_defect::none;
}

}  // namespace waypoint::beast
