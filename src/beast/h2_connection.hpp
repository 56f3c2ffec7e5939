// h2_connection: one HTTP/2 connection (RFC 9113), TLS after ALPN chose h2 or plaintext
// after the client's preface (h2c by prior knowledge), handed over by the HTTP/1.1
// connection that accepted it. libnghttp2 does the framing, HPACK, flow control and
// SETTINGS; this reads and writes the socket, keeps the streams (h2_stream) and holds the
// limits of http2_options. Everything runs on the worker's thread.
#pragma once

#include "asio_types.hpp"
#include "h2_stream.hpp"
#include "transport.hpp"

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct nghttp2_session;

namespace waypoint::beast::detail {

class worker;

// A token bucket: `burst` events at once, refilled at `per_second`. For the rates a client
// may cause (resets, invalid frames).
class event_budget {
 public:
  event_budget(std::uint64_t burst, std::uint64_t per_second) noexcept
      : burst_(burst), per_second_(per_second), tokens_(burst), at_(clock::now()) {}
  // Takes one; false when the budget is spent.
  bool take(clock::time_point now) noexcept;

 private:
  std::uint64_t burst_;
  std::uint64_t per_second_;
  std::uint64_t tokens_;
  clock::time_point at_;
};

class h2_connection {
 public:
  // `preread`: bytes the HTTP/1.1 connection read before it saw the preface (h2c).
  h2_connection(worker& owner, std::unique_ptr<transport> stream, std::string preread,
                connection_endpoints endpoints);
  ~h2_connection();
  h2_connection(const h2_connection&) = delete;
  h2_connection& operator=(const h2_connection&) = delete;

  void start(std::list<h2_connection>::iterator self);
  // For the worker's sweep and shutdown.
  void on_deadline(clock::time_point now) noexcept;
  void drain() noexcept;
  void close() noexcept;

  // --- for the streams ---
  worker& owner() noexcept { return owner_; }
  const connection_endpoints& endpoints() const noexcept { return endpoints_; }
  asio::any_io_executor executor();
  // The stream's response is ready: its head goes out (with a body source unless
  // head_only()); false when the framing refused it (the stream is then reset).
  bool submit_response(h2_stream& stream);
  // The stream has more body (a chunk, or its end): the framing asks again.
  void resume(h2_stream& stream);
  // The stream's response cannot be completed: it is reset.
  void reset(h2_stream& stream, std::uint32_t error_code);
  // Body bytes the handler took: credited back to the client.
  void consume(h2_stream& stream, std::size_t bytes);
  // Runs once the bytes framed so far are with the kernel (a chunk writer's completion).
  void after_write(std::function<void()> done);
  // The stream's deferred response ended after nghttp2 closed it: it goes now.
  void forget(h2_stream& stream) noexcept;
  // Writes whatever the framing has queued.
  void flush();
  bool stopping() const noexcept;
  // The stream `id`, while the connection keeps it.
  h2_stream* find(std::int32_t id) noexcept;

  // --- nghttp2's callbacks (h2_connection.cpp) ---
  struct callbacks;

 private:
  void do_read();
  void on_read(error_code ec, std::size_t n);
  bool take(const std::uint8_t* data, std::size_t size);
  void on_write(error_code ec, std::size_t n);
  using streams = std::unordered_map<std::int32_t, std::unique_ptr<h2_stream>>;

  void go_away(std::uint32_t error_code);
  void send_final_goaway();
  void stall_check(h2_stream& stream, clock::time_point now) noexcept;
  void erase(streams::iterator it) noexcept;
  std::size_t held_body_bytes() const noexcept;
  void finish_if_done();

  worker& owner_;
  std::unique_ptr<transport> transport_;
  std::list<h2_connection>::iterator self_;
  connection_endpoints endpoints_;
  nghttp2_session* session_ = nullptr;
  streams streams_;
  // Connection credit held back while the streams' whole bodies are past their budget
  // (http2_options::max_buffered_body_bytes).
  std::size_t withheld_credit_ = 0;
  std::string input_;  // the preread, then each read's bytes
  std::unique_ptr<std::uint8_t[]> read_buffer_;
  std::string output_;                          // framed bytes being written
  std::vector<std::function<void()>> written_;  // run when output_ is written
  std::vector<std::function<void()>> writing_callbacks_;
  bool reading_ = false;
  bool writing_ = false;
  // Inside nghttp2's receiving, or a walk of the streams: flush() waits for its end (the
  // caller flushes), so nghttp2 is never re-entered and the walk never loses its stream.
  int holding_ = 0;
  // Ending: closed_ (no more frames taken), then the lingering close unless hard_ (the
  // socket closed at once), then gone once no handler holds a stream.
  bool closed_ = false;
  bool hard_ = false;
  bool lingering_ = false;
  bool lingered_ = false;
  bool draining_ = false;  // the shutdown notice went out; GOAWAY follows
  bool goaway_sent_ = false;
  clock::time_point idle_since_;  // since the last stream ended (max: one is open)
  clock::time_point write_deadline_ = clock::time_point::max();
  timer_type goaway_timer_;  // the drain's GOAWAY, a round trip after its notice
  event_budget invalid_frames_;
  std::size_t empty_frames_ = 0;
  friend struct callbacks;
};

}  // namespace waypoint::beast::detail
