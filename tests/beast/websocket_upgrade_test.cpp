// is_websocket_upgrade (waypoint/beast/websocket.hpp): which requests are a WebSocket
// opening handshake (RFC 6455 §4.2.1), the one rule for the server's exchange::upgrade()
// and the framework's WebSocket routes. The rows marked "was" are those the server used to
// pass on to Beast's handshake (which answered 400 or 426 itself) while the framework took
// them as upgrades: now neither takes them.
#include <waypoint/beast/websocket.hpp>

#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace waypoint::beast;

struct upgrade_row {
  std::string_view rule;
  std::vector<std::pair<http::field, std::string_view>> changes;  // "" erases the field
  bool upgrades;
  http::verb method = http::verb::get;
  unsigned version = 11;
  std::string_view body = "";
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
  req.body() = row.body;
  return req;
}

TEST(WebSocketUpgrade, IsWebSocketUpgradeFollowsRfc6455) {
  using f = http::field;
  std::vector<upgrade_row> rows{
      {"the RFC's sample handshake", {}, true},
      {"connection tokens are a list", {{f::connection, "keep-alive, Upgrade"}}, true},
      {"tokens compare without case", {{f::connection, "UPGRADE"}, {f::upgrade, "WebSocket"}}, true},
      {"upgrade may list other protocols", {{f::upgrade, "h2c, websocket"}}, true},
      {"a zero Content-Length is no body", {{f::content_length, "0"}}, true},
      {"only GET", {}, false, http::verb::post},
      {"only HTTP/1.1 or later", {}, false, http::verb::get, 10},
      {"Connection must name upgrade", {{f::connection, "keep-alive"}}, false},
      {"a token, not a prefix", {{f::connection, "upgrade-insecure"}}, false},
      {"Upgrade must name websocket", {{f::upgrade, "h2c"}}, false},
      {"no Connection field", {{f::connection, ""}}, false},
      {"was: version 13 only", {{f::sec_websocket_version, "8"}}, false},
      {"was: a version is required", {{f::sec_websocket_version, ""}}, false},
      {"was: a key is required", {{f::sec_websocket_key, ""}}, false},
      {"was: a key is 16 bytes, not 15", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub25j"}}, false},
      {"was: a key is 16 bytes, not 17", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZWE="}}, false},
      {"was: a key is base64", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub25j*Q=="}}, false},
      {"was: a key's pad bits are zero", {{f::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZR=="}}, false},
      {"no body", {{f::content_length, "5"}}, false, http::verb::get, 11, "hello"},
      {"no body announced (a streamed one is not in body())", {{f::content_length, "5"}}, false},
      {"no chunked body", {{f::transfer_encoding, "chunked"}}, false},
  };
  for (const upgrade_row& row : rows)
    EXPECT_EQ(is_websocket_upgrade(handshake(row)), row.upgrades) << row.rule;
}

}  // namespace
