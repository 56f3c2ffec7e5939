// A blocking HTTP/1.1 client over a raw loopback socket, for tests that must send bytes no
// well-behaved client would (half requests, garbage, pipelined batches). Every wait is
// bounded by `patience`, so a server bug fails a test instead of hanging it.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::testing {

using reply = boost::beast::http::response<boost::beast::http::string_body>;

// Generous: a liveness bound for slow CI machines and sanitizers, not a speed check.
inline constexpr std::chrono::milliseconds patience{10'000};

enum class loopback { v4, v6 };  // 127.0.0.1 or ::1

class test_client {
 public:
  // Connects to the loopback address's port; throws std::runtime_error when it cannot.
  explicit test_client(std::uint16_t port, loopback family = loopback::v4);
  ~test_client();
  test_client(test_client&& other) noexcept;
  test_client& operator=(test_client&&) = delete;

  // Connects to a unix stream socket: "/path", or "@name" for an abstract one; throws
  // std::runtime_error when it cannot.
  static test_client over_unix(const std::string& address);

  // Tries to connect; returns the errno of a failure (ECONNREFUSED...) or 0.
  static int try_connect(std::uint16_t port);

  // Sends all of `bytes`; false when the connection broke.
  bool send(std::string_view bytes);
  // Reads one response (without a body for a HEAD request); nothing when the connection
  // closed or broke first, or the response is malformed.
  std::optional<reply> read(bool head = false);
  // Waits for the server to close the connection; true when it did within `wait`, with no
  // further response bytes.
  bool closed_by_server(std::chrono::milliseconds wait = patience);
  // Sends `bytes` as consecutive writes of the given sizes (the last piece takes what is
  // left), pausing `gap` between them so that each tends to arrive as a read of its own.
  bool send_in_pieces(std::string_view bytes, const std::vector<std::size_t>& sizes,
                      std::chrono::microseconds gap);
  // Everything the server sends until it closes the connection; nothing when `wait` runs
  // out first.
  std::optional<std::string> read_until_closed(std::chrono::milliseconds wait = patience);
  // Closes this end now (the destructor would too).
  void close();

 private:
  explicit test_client(int connected_fd) noexcept : fd_(connected_fd) {}
  // Appends what arrives within `wait`; returns 0 on end of stream or error, -1 on timeout.
  long receive(std::chrono::milliseconds wait);

  int fd_ = -1;
  std::string buffered_;
};

// "METHOD TARGET HTTP/1.1" with a Host field, the given extra lines and an optional body.
std::string request_text(std::string_view method, std::string_view target,
                         std::string_view extra_fields = {}, std::string_view body = {});

}  // namespace waypoint::testing
