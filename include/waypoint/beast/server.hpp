// waypoint::beast::server: a production HTTP/1.1 server on Boost.Asio that hands every
// request to one dispatch callable. Asio lives only in src/beast; this header carries
// Beast's message types and the standard library.
//
//   waypoint::beast::server_options options;           // 127.0.0.1:8080, one thread per core
//   waypoint::beast::server s(options, [](const request& req, response& res) {
//     res.set(http::field::content_type, "text/plain");
//     res.body() = "hello\n";
//   });
//   s.run();   // until SIGINT/SIGTERM or stop(), then a graceful drain
//
// dispatch_to(router) (router_dispatch.hpp) is the dispatch that routes with waypoint; a
// framework supplies its own. The server owns what is HTTP/1.1 framing, not routing:
//   - keep-alive, pipelined requests answered in order, `Connection: close`, HTTP/1.0;
//   - the outcome of a request does not depend on how its bytes were split into reads;
//   - `Expect: 100-continue` (417 for any other expectation);
//   - framing: a Transfer-Encoding other than a single `chunked` -> 501, Transfer-Encoding
//     in HTTP/1.0 or with Content-Length, or bytes that are not HTTP -> 400;
//   - limits, each closing the connection after the response: target -> 414, header block
//     -> 431, chunk-size line -> 400, trailer section -> 431, body -> 413, connections past
//     max_connections -> 503; so one connection's memory is bounded (docs/server.md);
//   - timeouts: idle (between requests, closes), header (first byte to header end, 408),
//     body (a stall, or a rate under min_body_rate, 408) and write (closes);
//   - graceful stop: listeners close (new connections are refused), idle connections close,
//     requests in flight complete with `Connection: close`, and whatever is left after
//     drain_timeout (or at a second SIGINT/SIGTERM) is closed.
// The server's own error responses are rendered by server_options::render_error, so a
// framework can answer them in its own format; their status line says HTTP/1.1, since some
// are sent before the request's version is known.
// The response: the server writes the status line with the request's HTTP version, every
// field the dispatch set except Content-Length, Transfer-Encoding, Connection and Date,
// which it writes itself (Content-Length from the body; for HEAD a Content-Length the
// dispatch set is kept and no body is sent), and the body. A dispatch that throws produces
// a 500; so does a field holding CR, LF or NUL, which could split the header.
// docs/server.md has the details and the measurements.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::beast {

namespace http = boost::beast::http;

using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

// Called on a server thread for every complete request, one request of a connection at a
// time. `res` arrives as a fresh 200 with an empty body and the request's version.
// Threads call it concurrently for different connections: it must be thread-safe.
using dispatch_function = std::function<void(const request& req, response& res)>;

// Fills the response to a request the server refuses before any dispatch (400, 408, 413,
// 414, 417, 431, 501, 503). `res` arrives with the status set, no fields and an empty body;
// `why` is one sentence naming what was wrong. Runs on a server thread, must not throw.
using error_renderer = std::function<void(http::status status, std::string_view why, response& res)>;

// An address to listen on: IPv4 ("127.0.0.1", "0.0.0.0") or IPv6 ("::1", "::"). Port 0
// picks a free port; server::endpoints() tells which.
struct listen_address {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8080;
};

struct server_options {
  std::vector<listen_address> listen{listen_address{}};
  // Threads that run connections; 0 means std::thread::hardware_concurrency(). One more
  // thread accepts connections and handles signals.
  unsigned threads = 0;
  // SO_REUSEPORT: every thread gets its own listening socket on the address, and the
  // kernel spreads connections; other processes may bind the same port too.
  bool reuse_port = false;
  // SIGINT and SIGTERM start a graceful stop.
  bool handle_signals = true;

  std::size_t max_target_bytes = 8 * 1024;   // 414; the router accepts paths up to 8 KiB
  std::size_t max_header_bytes = 16 * 1024;  // 431; counts the request line too; also the
                                             // trailer section of a chunked body
  std::size_t max_body_bytes = 1024 * 1024;  // 413
  // Open connections, summed over threads; past it a connection gets a 503 and is closed.
  // 0: derived from the descriptor limit (RLIMIT_NOFILE) when the server starts.
  std::size_t max_connections = 0;

  std::chrono::milliseconds idle_timeout{60'000};    // keep-alive wait for the next request
  std::chrono::milliseconds header_timeout{15'000};  // a request's first byte to its header's end
  std::chrono::milliseconds body_timeout{15'000};    // the longest wait for more body bytes
  // Past body_timeout from the header's end, the body must have averaged this rate, so a
  // steady slow upload goes on and a trickle is cut. 0: no minimum rate.
  std::size_t min_body_rate = 1024;                  // bytes per second
  std::chrono::milliseconds write_timeout{15'000};   // one batch of responses
  std::chrono::milliseconds drain_timeout{10'000};   // graceful stop, then connections close

  // null: a text/plain line "<Reason-Phrase>: <why>" (write_plain_error in adapter.hpp).
  error_renderer render_error;
};

// Counters summed over the server's threads; each is read without stopping anything.
struct server_stats {
  std::uint64_t connections = 0;  // accepted
  std::uint64_t requests = 0;     // answered, errors included
  std::uint64_t refused = 0;      // at max_connections: answered 503 or closed at once
};

class server {
 public:
  // Checks the options; throws std::invalid_argument when they cannot work.
  server(server_options options, dispatch_function dispatch);
  // Stops (gracefully) and waits.
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Binds and listens on every address, then starts the threads and returns. Throws
  // std::system_error naming the address when one cannot be bound.
  void start();
  // start(), then wait(): returns after a stop has drained.
  void run();
  // Starts the graceful stop; returns once the listeners are closed, so a connect after
  // stop() is refused. Any thread; a second call does nothing.
  void stop();
  // Returns once every thread has finished.
  void wait();

  // The bound addresses, in the order of options.listen, with actual ports. After start().
  std::vector<listen_address> endpoints() const;
  server_stats stats() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace waypoint::beast
