// is_websocket_upgrade (waypoint/beast/websocket.hpp): which requests are a WebSocket
// opening handshake (RFC 6455 §4.2.1), the one rule for the server's exchange::upgrade()
// and the framework's WebSocket routes, and which defect a refused one has.
#include <waypoint/beast/websocket.hpp>

#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace waypoint::beast;

struct upgrade_row {
  std::string_view rule;
  // Set (a value) or erased (""); a name preceded by `twice` is added a second time.
  std::vector<std::pair<http::field, std::string_view>> changes;
  handshake_defect defect;
  http::verb method = http::verb::get;
  unsigned version = 11;
  std::string_view body = "";
  std::vector<std::pair<http::field, std::string_view>> twice = {};
};

request handshake(const upgrade_row& row) {
  request req{row.method, "/chat", row.version};
  req.set(http::field::host, "example.com");
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::sec_websocket_version, "13");
  req.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");  // RFC 6455 §1.3
  for (auto [name, value] : row.changes) {
    if (value.empty())
      req.erase(name);
    else
      req.set(name, value);
  }
  for (auto [name, value] : row.twice) req.insert(name, value);
  req.body() = row.body;
  return req;
}

// The rows marked "was" are those the server used to pass on to Beast's handshake (which
// answered 400 or 426 itself) while the framework took them as upgrades; "#29" marks those
// it took until issue 29 (Beast refused the duplicates' second value, or the missing Host).
TEST(WebSocketUpgrade, IsWebSocketUpgradeFollowsRfc6455) {
  using f = http::field;
  using d = handshake_defect;
  std::vector<upgrade_row> rows{
      {"the RFC's sample handshake", {}, d::none},
      {"connection tokens are a list", {{f::connection, "keep-alive, Upgrade"}}, d::none},
      {"tokens compare without case", {{f::connection, "UPGRADE"}, {f::upgrade, "WebSocket"}}, d::none},
      {"upgrade may list other protocols", {{f::upgrade, "h2c, websocket"}}, d::none},
      {"a zero Content-Length is no body", {{f::content_length, "0"}}, d::none},
      {"only GET", {}, d::not_get, http::verb::post},
      {"not HTTP/1.0", {}, d::not_http_1_1, http::verb::get, 10},
      // The server's parser refuses HTTP/1.2 itself; a request made by hand is refused here.
      {"not HTTP/1.2, which Beast's accept refuses", {}, d::not_http_1_1, http::verb::get, 12},
      {"#29: Host is required", {{f::host, ""}}, d::no_host},
      {"Connection must name upgrade", {{f::connection, "keep-alive"}}, d::no_connection_upgrade},
      {"a token, not a prefix", {{f::connection, "upgrade-insecure"}}, d::no_connection_upgrade},
      {"Upgrade must name websocket", {{f::upgrade, "h2c"}}, d::no_upgrade_websocket},
      {"no Upgrade field", {{f::upgrade, ""}}, d::no_upgrade_websocket},
      {"no Connection field", {{f::connection, ""}}, d::no_connection_upgrade},
      // Beast reads a list of tokens no further than its first element that is not one.
      {"was: websocket after a protocol version", {{f::upgrade, "h2c/1, websocket"}},
       d::no_upgrade_websocket},
      {"was: websocket after a broken element", {{f::upgrade, ", rade:, websocket"}},
       d::no_upgrade_websocket},
      {"was: upgrade after a broken element", {{f::connection, "a:b, upgrade"}},
       d::no_connection_upgrade},
      {"websocket before a broken element", {{f::upgrade, "websocket, h2c/1"}}, d::none},
      {"was: version 13 only", {{f::sec_websocket_version, "8"}}, d::bad_version},
      {"was: a version is required", {{f::sec_websocket_version, ""}}, d::bad_version},
      {"a version list is not one version", {{f::sec_websocket_version, "13, 8"}}, d::bad_version},
      {"#29: exactly one version field", {}, d::bad_version, http::verb::get, 11, "",
       {{f::sec_websocket_version, "13"}}},
      {"#29: exactly one version field, even when the second differs", {}, d::bad_version,
       http::verb::get, 11, "", {{f::sec_websocket_version, "8"}}},
      {"was: a key is required", {{f::sec_websocket_key, ""}}, d::bad_key},
      {"was: a key is 16 bytes, not 15", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub25j"}}, d::bad_key},
      {"was: a key is 16 bytes, not 17", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZWE="}}, d::bad_key},
      {"was: a key is 16 bytes, not 5", {{f::sec_websocket_key, "c2hvcnQ="}}, d::bad_key},
      {"was: a key is base64", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub25j*Q=="}}, d::bad_key},
      {"was: a key's pad bits are zero", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZR=="}}, d::bad_key},
      {"a key has no padding inside", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub2=jZQ=="}}, d::bad_key},
      {"#29: exactly one key field", {}, d::bad_key, http::verb::get, 11, "",
       {{f::sec_websocket_key, "AAAAAAAAAAAAAAAAAAAAAA=="}}},
      {"no body", {{f::content_length, "5"}}, d::has_body, http::verb::get, 11, "hello"},
      {"no body announced (a streamed one is not in body())", {{f::content_length, "5"}}, d::has_body},
      {"no chunked body", {{f::transfer_encoding, "chunked"}}, d::has_body},
  };
  for (const upgrade_row& row : rows) {
    request req = handshake(row);
    EXPECT_EQ(websocket_handshake_defect(req), row.defect) << row.rule;
    EXPECT_EQ(is_websocket_upgrade(req), row.defect == d::none) << row.rule;
    EXPECT_EQ(describe(row.defect).empty(), row.defect == d::none) << row.rule;
  }
}

}  // namespace
