// waypoint::beast::server: a production HTTP/1.1 server on Boost.Asio that hands every
// request to one dispatch callable. Asio lives only in src/beast; this header carries
// Beast's message types, the standard library and declarations of three Asio classes.
//
//   waypoint::beast::server_options options;           // 127.0.0.1:8080, one thread per core
//   waypoint::beast::server s(options, [](const request& req, response& res) {
//     res.set(http::field::content_type, "text/plain");
//     res.body() = "hello\n";
//   });
//   s.run();   // until SIGINT/SIGTERM or stop(), then a graceful drain
//
// A dispatch that answers later takes the exchange instead, defers it, and sends from any
// thread once the answer is there; the connection meanwhile reads no further request:
//
//   waypoint::beast::server s(options, [](waypoint::beast::exchange& x) {
//     auto later = x.defer();
//     database.query(..., [later = std::move(later), &res = x.response()](rows r) mutable {
//       res.body() = render(r);
//       later.send();
//     });
//   });
//
// The server runs on its own threads, or on io_contexts the caller owns and runs (one
// thread each), so that handlers share them with the caller's clients and timers.
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
//   - descriptors: max_connections is a budget of descriptors that connections share with
//     what requests open besides (exchange_host::acquire_descriptor: an upstream socket, a
//     temporary file), and it stays below RLIMIT_NOFILE, so accept() and open() never meet
//     EMFILE; a request refused a descriptor is answered 503 with Retry-After by its handler;
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
// a 500; so does a field holding CR, LF or NUL, which could split the header. A body can
// be a file instead (exchange::attach_file, file_payload): sent with sendfile after the head
// (over TLS, read and encrypted 64 KiB at a time).
// Streaming, both ways, for a deferred exchange: a body the dispatch reads as it arrives
// (server_options::plan_body marks the request at its header's end, exchange_host::read_body
// takes the bytes, and the server reads no further than they are taken), and a response
// written in chunks (exchange_host::write_chunk, chunked framing, trailers).
// TLS: listeners with listen_address::tls speak it (server_options::tls names the files;
// server::reload_tls() and SIGHUP read them again without dropping a connection).
// docs/server.md has the details and the measurements; docs/files.md the streaming.
#pragma once

#include "waypoint/beast/address.hpp"
#include "waypoint/beast/exchange.hpp"
#include "waypoint/beast/server_options.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace waypoint::beast {

// Counters summed over the server's threads; each is read without stopping anything.
struct server_stats {
  std::uint64_t connections = 0;  // accepted
  std::uint64_t requests = 0;     // answered, errors included
  std::uint64_t refused = 0;      // at max_connections: answered 503 or closed at once
  std::uint64_t open = 0;         // connections open now
  // Of the descriptor budget (max_connections) in use now: connections, refused ones still
  // answering, and descriptor permits held by requests.
  std::uint64_t descriptors = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t bytes_sent = 0;
  // The statuses the server answers itself, before or instead of a dispatch (500: a
  // dispatch that threw, or a field that could split the header).
  static constexpr std::array<unsigned, 9> error_statuses{400, 408, 413, 414, 417,
                                                          431, 500, 501, 503};
  // Answers of each of error_statuses, in that order.
  std::array<std::uint64_t, error_statuses.size()> errors{};
  // Connections timed out, by what the server waited for: idle (closed), the header or
  // the body (408), a write (closed).
  struct timeout_counts {
    std::uint64_t idle = 0;
    std::uint64_t header = 0;
    std::uint64_t body = 0;
    std::uint64_t write = 0;
    std::uint64_t tls_handshake = 0;  // closed
  } timeouts;
  // TLS listeners, and what arrives at the wrong kind of port. The first of each mismatch
  // is also written to stderr, once; the counts are the rest.
  struct tls_counts {
    std::uint64_t handshakes = 0;          // completed
    std::uint64_t handshake_failures = 0;  // refused by either side (timeouts not included)
    std::uint64_t plaintext_on_tls = 0;    // plaintext on a TLS port: answered 400
    std::uint64_t tls_on_plaintext = 0;    // a TLS hello on a plaintext port: answered 400
  } tls;
  // HTTP/2 (listen_address::http2). Its requests count in `requests` as well.
  struct http2_counts {
    std::uint64_t connections = 0;      // by ALPN or by the h2c preface
    std::uint64_t streams = 0;          // requests opened
    std::uint64_t resets_received = 0;  // RST_STREAM from clients
    std::uint64_t resets_sent = 0;      // streams the server reset (its own or a client's fault)
    // Connections ended for a flood (http2_options: resets, stream errors, empty frames,
    // control frames not read); the first of each kind is also written to stderr.
    std::uint64_t floods = 0;
  } http2;
};

class server {
 public:
  // Checks the options; throws std::invalid_argument when they cannot work.
  server(server_options options, dispatch_function dispatch);
  server(server_options options, exchange_function dispatch);
  // On io_contexts the caller owns: connections are spread over them, the first also
  // accepts (unless reuse_port) and handles signals. Each must be run by exactly one
  // thread, which is what lets a connection go without a strand. start() adds the work;
  // the caller runs the contexts, before or after, and they run out of server work once a
  // stop has drained.
  server(std::vector<boost::asio::io_context*> contexts, server_options options,
         exchange_function dispatch);
  // Stops (gracefully) and waits.
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Binds and listens on every address, then starts the threads (or queues the work on
  // the caller's contexts) and returns. Throws std::system_error naming the address when
  // one cannot be bound.
  void start();
  // start(), then wait(): returns after a stop has drained. Not on the caller's contexts.
  void run();
  // Starts the graceful stop; returns once the listeners are closed, so a connect after
  // stop() is refused (at once when called on a thread of the server's). Any thread; a
  // second call does nothing.
  void stop();
  // Returns once every connection is gone and the server's threads have finished. On the
  // caller's contexts, from a thread that runs none of them (it would wait for itself:
  // std::logic_error).
  void wait();

  // The bound addresses, in the order of options.listen, with actual ports. After start().
  std::vector<listen_address> endpoints() const;
  server_stats stats() const;
  // The descriptor budget (server_options::max_connections, as started): a handle on the
  // same count, for a look at in_use() or for work that opens descriptors outside any
  // request. After start().
  resource_budget descriptor_budget() const;
  // Whether a stop has started (the grace included): what a readiness check reports.
  bool draining() const noexcept;
  // Reads server_options::tls's files again into a new context for new connections;
  // connections already open keep theirs. SIGHUP does the same when handle_signals is
  // set (and writes a failure to stderr). Any thread. Throws std::runtime_error naming
  // the file when one cannot be used, and the context in use stays; std::logic_error
  // when the server has no TLS listener.
  void reload_tls();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace waypoint::beast
