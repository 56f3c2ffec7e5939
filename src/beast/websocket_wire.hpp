// websocket_wire: the layer between Beast's websocket::stream and the connection's transport
// (plain or TLS, so it sees the frames in the clear). It passes every byte through unchanged
// and watches two things Beast does not:
// - On the way in, the headers of the frames the client sends, so that a message of more
//   than `max_message_frames` frames is refused. Beast reassembles a message inside
//   async_read, and reads zero-length continuation frames in a loop without returning, so a
//   limit on frames can only be kept below it. Frames are counted as their headers arrive,
//   possibly ahead of what Beast has parsed; control frames (ping, pong, close) interleaved in
//   a message are not counted.
// - On the way out, when the kernel last took bytes, which the session's write timeout
//   compares against: a write makes progress while the peer reads, however slowly.
#pragma once

#include "transport.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/role.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace waypoint::beast::detail {

// The frame headers of a client's byte stream (RFC 6455 §5.2), read incrementally: the
// header bytes are gathered one at a time, the payload is skipped in bulk.
class frame_counter {
 public:
  explicit frame_counter(std::size_t max_message_frames) noexcept : max_(max_message_frames) {}

  // Counts the frames whose headers `bytes` complete; false once a message has more than
  // the limit (and from then on). Headers are still read past the limit, so that the
  // lingering close after the refusal sees the peer's close frame.
  bool observe(const unsigned char* bytes, std::size_t size) noexcept {
    while (size > 0) {
      if (payload_left_ > 0) {
        std::size_t skip = payload_left_ < size ? static_cast<std::size_t>(payload_left_) : size;
        payload_left_ -= skip;
        bytes += skip;
        size -= skip;
        continue;
      }
      header_[have_++] = *bytes++;
      --size;
      if (have_ == header_size()) on_header();
    }
    return !exceeded_;
  }

  bool exceeded() const noexcept { return exceeded_; }
  // The peer has sent a close frame's header (its payload, at most 125 bytes, follows).
  bool close_seen() const noexcept { return close_seen_; }

 private:
  // The header's length once its second byte is known: 2, the extended length (2 or 8
  // bytes, for 126 and 127), the masking key (4 bytes; every client frame has one, and one
  // without is Beast's to refuse).
  std::size_t header_size() const noexcept {
    if (have_ < 2) return 2;
    std::size_t size = 2 + ((header_[1] & 0x80) ? 4 : 0);
    std::uint8_t length = header_[1] & 0x7f;
    return size + (length == 126 ? 2 : length == 127 ? 8 : 0);
  }

  void on_header() noexcept {
    bool fin = (header_[0] & 0x80) != 0;
    std::uint8_t opcode = header_[0] & 0x0f;
    std::uint8_t length = header_[1] & 0x7f;
    payload_left_ = length;
    if (length >= 126) {
      std::size_t bytes = length == 126 ? 2 : 8;
      payload_left_ = 0;
      for (std::size_t i = 0; i < bytes; ++i) payload_left_ = (payload_left_ << 8) | header_[2 + i];
    }
    have_ = 0;
    if (opcode == 0x8) close_seen_ = true;
    if (opcode & 0x8) return;  // a control frame: not part of the message
    // Opcode 0 continues the message; text and binary (and reserved data opcodes, which
    // Beast refuses) start one.
    frames_ = opcode == 0 ? frames_ + 1 : 1;
    if (frames_ > max_) exceeded_ = true;
    if (fin) frames_ = 0;
  }

  std::size_t max_;
  std::size_t frames_ = 0;         // frames of the message in progress
  std::uint64_t payload_left_ = 0;  // payload bytes of the current frame not yet seen
  unsigned char header_[14] = {};
  std::size_t have_ = 0;  // header bytes gathered; invariant: < header_size() between calls
  bool exceeded_ = false;
  bool close_seen_ = false;
};

class websocket_wire {
 public:
  using executor_type = transport::executor_type;
  using clock = std::chrono::steady_clock;

  websocket_wire(transport& next, std::size_t max_message_frames) noexcept
      : next_(next), frames_(max_message_frames) {}

  transport& next_layer() noexcept { return next_; }
  executor_type get_executor() noexcept { return next_.get_executor(); }

  // Bytes the transport delivered before this layer read (read past the upgrade request).
  void observe(std::string_view bytes) noexcept {
    frames_.observe(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  }
  // A message arrived with more frames than the limit: reads fail with message_size.
  bool frame_limit_exceeded() const noexcept { return frames_.exceeded(); }

  // The server's lingering close once its close frame is sent: the peer's input is read
  // (and dropped, counted here as frames) until the peer's close frame has come, then the
  // transport's lingering close. The frames this layer has passed up count: Beast may have
  // read the peer's close frame already (a close the peer started, or answered).
  void async_linger(done_handler handler) {
    if (frames_.close_seen()) return next_.async_linger(std::move(handler));
    next_.async_linger_after(
        [this](const unsigned char* bytes, std::size_t size) {
          frames_.observe(bytes, size);
          return frames_.close_seen();
        },
        std::move(handler));
  }

  // When a write last handed bytes to the kernel (or began: note_write_start()).
  clock::time_point last_write_progress() const noexcept { return last_write_progress_; }
  void note_write_start() noexcept { last_write_progress_ = clock::now(); }

  template <class MutableBufferSequence, class ReadToken>
  auto async_read_some(const MutableBufferSequence& buffers, ReadToken&& token) {
    // async_compose keeps the caller's executor, allocator and cancellation slot.
    return asio::async_compose<ReadToken, void(error_code, std::size_t)>(
        [this, buffers, started = false](auto& self, error_code ec = {},
                                         std::size_t n = 0) mutable {
          if (!started) {
            started = true;
            if (frames_.exceeded()) return self.complete(asio::error::message_size, 0);
            return next_.async_read_some(buffers, std::move(self));
          }
          if (!observe(buffers, n) && !ec) ec = asio::error::message_size;
          self.complete(ec, n);
        },
        token, next_);
  }

  template <class ConstBufferSequence, class WriteToken>
  auto async_write_some(const ConstBufferSequence& buffers, WriteToken&& token) {
    return asio::async_compose<WriteToken, void(error_code, std::size_t)>(
        [this, buffers, started = false](auto& self, error_code ec = {},
                                         std::size_t n = 0) mutable {
          if (!started) {
            started = true;
            return next_.async_write_some(buffers, std::move(self));
          }
          if (n > 0) last_write_progress_ = clock::now();
          self.complete(ec, n);
        },
        token, next_);
  }

 private:
  template <class MutableBufferSequence>
  bool observe(const MutableBufferSequence& buffers, std::size_t n) noexcept {
    for (auto it = asio::buffer_sequence_begin(buffers); n > 0 && it != asio::buffer_sequence_end(buffers);
         ++it) {
      asio::mutable_buffer b(*it);
      std::size_t take = b.size() < n ? b.size() : n;
      if (!frames_.observe(static_cast<const unsigned char*>(b.data()), take)) return false;
      n -= take;
    }
    return !frames_.exceeded();
  }

  transport& next_;
  frame_counter frames_;
  clock::time_point last_write_progress_{};
};

// Beast's websocket::stream closes through its next layer's teardown, found by ADL: the
// transport's.
inline void teardown(boost::beast::role_type role, websocket_wire& wire, error_code& ec) {
  teardown(role, wire.next_layer(), ec);
}

// The server's is the wire's lingering close, which waits for the peer's close frame.
template <class TeardownHandler>
void async_teardown(boost::beast::role_type role, websocket_wire& wire, TeardownHandler&& handler) {
  if (role == boost::beast::role_type::server)
    return wire.async_linger(done_handler(std::forward<TeardownHandler>(handler)));
  async_teardown(role, wire.next_layer(), std::forward<TeardownHandler>(handler));
}

inline void beast_close_socket(websocket_wire& wire) { beast_close_socket(wire.next_layer()); }

}  // namespace waypoint::beast::detail
