// WebSocket on waypoint::beast::server: the connection of an upgrade request is taken over
// after its dispatch. During the dispatch (or while its response is deferred), an
// exchange_function calls exchange::upgrade() with a websocket_upgrade; the server then
// sends no HTTP response of its own: once the dispatch is done and the earlier responses of
// the connection are written, Boost.Beast's websocket::stream takes the socket, answers
// the handshake (101, with the fields the dispatch set on the response), and runs
// `upgrade.run` as a coroutine on the connection's thread with a websocket_channel.
//
//   server s(options, [](exchange& x) {
//     websocket_upgrade up;
//     up.run = [](websocket_channel& ws) -> boost::asio::awaitable<void> {
//       while (auto m = co_await ws.read()) co_await ws.write(m->payload, m->binary);
//     };
//     if (!x.upgrade(up)) x.response().result(http::status::upgrade_required);
//   });
//
// The socket stays its worker's: it counts in max_connections and stats().open, and a stop
// closes it with 1001 (going away), or cuts it once drain_timeout is over. Beast enforces
// the protocol: a message past max_message_bytes closes with 1009, a frame that breaks RFC
// 6455 with 1002, text that is not UTF-8 with 1007, a message of more than
// max_message_frames frames with 1008; a write that makes no progress for write_timeout,
// or that would queue past max_queued_bytes, cuts the connection; pings are answered with
// pongs. A
// handler that returns leaves the connection closed with 1000, one that throws with 1011.
// This header carries no Beast WebSocket code: the stream lives in src/beast.
#pragma once

#include "waypoint/beast/server.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace boost::asio {
template <typename T, typename Executor>
class awaitable;
}  // namespace boost::asio

namespace waypoint::beast {

// RFC 6455 §7.4.1 status codes a close frame carries (or, for 1005 and 1006, what is
// reported when none was received).
enum class close_code : std::uint16_t {
  none = 0,               // the connection is open
  normal = 1000,
  going_away = 1001,      // the server is stopping
  protocol_error = 1002,  // a frame that breaks RFC 6455
  unknown_data = 1003,
  no_status = 1005,       // a close frame without a code
  abnormal = 1006,        // no close frame: the connection was cut, or timed out
  bad_payload = 1007,     // text that is not UTF-8
  policy_error = 1008,
  too_big = 1009,         // a message past max_message_bytes
  needs_extension = 1010,
  internal_error = 1011,  // the handler threw
  try_again_later = 1013,
};

struct websocket_options {
  // Largest message (all its fragments together) the server reads; past it, 1009.
  std::size_t max_message_bytes = 1024 * 1024;
  // Most frames one message may have (its first and its continuations); past it, 1008
  // (policy: the message need not be too big in bytes). Without it, a message of zero-length
  // continuation frames never ends and keeps the connection busy. 1,024: clients that
  // fragment do so at their write buffer, 4 KiB for Beast's and gorilla/websocket's, so a
  // 1 MiB message (the default max_message_bytes) is 256 frames; 1,024 leaves room for 1 KiB
  // fragments. Browsers send a message as one frame.
  std::size_t max_message_frames = 1024;
  // A write that hands no byte to the kernel for this long (a peer that stopped reading)
  // cuts the connection: the write throws boost::beast::error::timeout, closed_with() is
  // abnormal (1006: no close frame can reach such a peer). Beast's idle timeout watches
  // frames from the peer, not this.
  std::chrono::milliseconds write_timeout{30'000};
  // Payload bytes of the messages write() has accepted and not finished sending, the one
  // being sent included. A write that would go past it while another is pending cuts the
  // connection and throws boost::asio::error::no_buffer_space (a lone write of any size is
  // taken: its bytes are the handler's). A handler that would rather drop messages than
  // lose the peer reads websocket_channel::queued_bytes() first.
  std::size_t max_queued_bytes = 1024 * 1024;
  // Beast's idle timeout: with keep_alive_pings, a ping is sent after half of it without
  // a frame from the peer, and the connection is cut when the other half passes too.
  std::chrono::milliseconds idle_timeout{60'000};
  bool keep_alive_pings = true;
  // The 101 response, and a close handshake, must finish within this.
  std::chrono::milliseconds handshake_timeout{10'000};
  // permessage-deflate (RFC 7692), accepted when a client offers it (browsers and
  // python3-websockets do). Off by default for what it costs: zlib holds per connection about
  // 2^(window_bits+2) + 2^(mem_level+9) bytes to compress and 2^window_bits + 7 KiB to
  // decompress (zlib's zconf.h), 295 KiB at the defaults below, for as long as the connection
  // is open (Beast keeps the context between messages). deflate_window_bits 10 and
  // deflate_mem_level 4 bring it to 20 KiB, for less compression. Text that repeats
  // (JSON with the same keys) shrinks several times over; random bytes not at all, for the
  // CPU spent. A compressed message is limited by max_message_bytes once inflated.
  bool permessage_deflate = false;
  int deflate_window_bits = 15;  // 9..15: the LZ77 window, both directions
  int deflate_mem_level = 8;     // 1..9: zlib's memLevel for compressing
};

// One complete message: fragments are reassembled before read() returns.
struct websocket_message {
  std::string payload;
  bool binary = false;  // false: text (UTF-8, checked by Beast)
};

// The upgraded connection as the handler sees it, on the connection's thread. One read()
// may be pending at a time; writes may overlap (coroutines of the handler that write to the
// same peer): they go out one after another in the order they were called, within
// websocket_options::max_queued_bytes. close() may overlap them.
class websocket_channel {
 public:
  template <class T>
  using awaitable = boost::asio::awaitable<T, boost::asio::any_io_executor>;

  // The next message; nullopt once the connection is closed (by the peer, by the server's
  // drain, by a protocol error or a timeout): closed_with() then says why.
  virtual awaitable<std::optional<websocket_message>> read() = 0;
  // The same into `message`, whose payload's capacity is reused (no allocation per message
  // once it has grown); false once the connection is closed.
  virtual awaitable<bool> read(websocket_message& message) = 0;
  // Sends one message, after the writes pending before it; throws
  // boost::system::system_error when the connection is closed, when the write times out
  // (boost::beast::error::timeout), or when it would queue more than max_queued_bytes
  // (boost::asio::error::no_buffer_space; the connection is then cut, so that the peer never
  // sees a stream with a message missing). `payload` must stay valid until it completes.
  virtual awaitable<void> write(std::string_view payload, bool binary) = 0;
  // Payload bytes of the writes accepted and not complete (the one being sent included).
  virtual std::size_t queued_bytes() const noexcept = 0;
  // Starts the closing handshake and waits for it (does nothing once closing).
  virtual awaitable<void> close(close_code code, std::string_view reason) = 0;
  // close_code::none while open; else the code of the close frame received (the peer's),
  // or of the one the server sent first (1001, 1009, 1002...), or abnormal.
  virtual close_code closed_with() const noexcept = 0;
  virtual bool is_open() const noexcept = 0;

  // The upgrade request, and the response whose fields went out with the 101.
  virtual const beast::request& request() const noexcept = 0;
  virtual beast::response& response() noexcept = 0;
  // The connection as an exchange_host: its executor, endpoints, and a cancellation slot
  // emitted when the server cuts the connection.
  virtual exchange_host& host() noexcept = 0;

 protected:
  ~websocket_channel() = default;
};

// What exchange::upgrade() hands the server: how to run the connection once upgraded.
struct websocket_upgrade {
  websocket_options options;
  // Runs on the connection's thread after the handshake; destroyed unrun when the
  // handshake fails (Beast then answers 400 and the connection closes).
  std::function<boost::asio::awaitable<void, boost::asio::any_io_executor>(websocket_channel&)> run;
};

// Why a request is not a WebSocket opening handshake the server can answer with 101 (RFC
// 6455 §4.2.1), in the order they are checked; `none` when it is one.
enum class handshake_defect : std::uint8_t {
  none,
  not_get,                // the method is not GET
  not_http_1_1,           // HTTP/1.0, where Upgrade means nothing (RFC 9110 §7.8), or a
                          // version past 1.1 (1.2), which Beast's accept refuses
  no_host,                // no Host field
  // The first Connection (Upgrade) field does not list the token `upgrade` (`websocket`)
  // before any element that is not a token: Beast reads "h2c/1, websocket" no further than
  // h2c.
  no_connection_upgrade,
  no_upgrade_websocket,
  bad_version,            // not exactly one Sec-WebSocket-Version, or not 13: answered 426
  bad_key,                // not exactly one Sec-WebSocket-Key, the base64 of 16 bytes
  has_body,               // a body would be read as the first frames
};

handshake_defect websocket_handshake_defect(const request& req) noexcept;

// One sentence naming what is wrong, for the 400 (or 426) a refused handshake gets; empty
// for `none`.
std::string_view describe(handshake_defect defect) noexcept;

// Whether `req` is a WebSocket opening handshake the server can answer with 101 (RFC 6455
// §4.2.1): GET, HTTP/1.1, Host, a Connection field naming the token `upgrade`, an
// Upgrade field naming `websocket`, exactly one Sec-WebSocket-Version and it 13, exactly
// one Sec-WebSocket-Key and it the base64 of 16 bytes, and no body: Beast's accept refuses
// none of these. exchange::upgrade() takes no other request; the framework's WebSocket
// routes answer a request that asks for a WebSocket and is none with 400 naming the defect
// (426 for the version), and any other 426 with the version they speak.
bool is_websocket_upgrade(const request& req) noexcept;

}  // namespace waypoint::beast
