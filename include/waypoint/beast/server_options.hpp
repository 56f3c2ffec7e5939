// How a waypoint::beast::server is configured: where it listens, its TLS files, its
// threads, limits and timeouts, and how it renders its own errors (server.hpp serves with
// them; docs/server.md has every default).
#pragma once

#include "waypoint/beast/address.hpp"
#include "waypoint/beast/exchange.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::beast {

// The files of the server's TLS listeners, all PEM, read at construction and again by
// server::reload_tls() (SIGHUP). TLS 1.2 is the oldest version served; ALPN selects h2
// on a listener that serves HTTP/2 and the client offers it, else http/1.1; TLS 1.2's ciphers are
// tls12_ciphers, TLS 1.3's and the groups OpenSSL's.
struct tls_options {
  std::string certificate_chain_file;  // the server's certificate, then its intermediates
  std::string private_key_file;        // the key of the first certificate, unencrypted
  // CA certificates to verify clients' certificates with. Empty: none is asked for.
  std::string client_ca_file;
  // With client_ca_file: a client without a valid certificate fails the handshake.
  // Without it (and a client_ca_file), one is asked for and verified if sent.
  bool require_client_certificate = false;
  // TLS 1.2's cipher suites in OpenSSL's cipher-list format, the server's preference first.
  // The default has forward secrecy (ECDHE) and AEAD (AES-GCM, ChaCha20-Poly1305) only:
  // Mozilla's "intermediate" list less DHE, so no static RSA key exchange and no CBC. TLS
  // 1.3's suites are all of that kind already. A list OpenSSL can use none of is refused
  // (std::invalid_argument) when the server is made.
  std::string tls12_ciphers =
      "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
      "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
      "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
};

// HTTP/2's limits, for the listeners with `http2` set (listen_address). Each bounds what one
// client can make the server hold or do; past one, the stream or the connection ends with
// the error RFC 9113 names, the event is logged once per process and counted
// (server_stats::http2). Framing, HPACK and flow control are libnghttp2's.
struct http2_options {
  // Streams a client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); more are
  // refused (RST_STREAM REFUSED_STREAM).
  std::uint32_t max_concurrent_streams = 100;
  // The window a request body may fill before its handler reads it (SETTINGS_INITIAL_
  // WINDOW_SIZE): credit comes back only as the handler takes the bytes, so a streamed body
  // holds at most this much per stream.
  std::uint32_t stream_window = 256 * 1024;
  // The same for the connection as a whole: all its streams' unread body bytes.
  std::uint32_t connection_window = 1024 * 1024;
  // Request bodies read whole (not streamed) that a connection's streams hold together:
  // past it, the connection's window is credited back only for a stream whose others hold
  // less, so a client cannot make one connection hold max_concurrent_streams bodies at
  // their limit. One body may always reach its own limit.
  std::size_t max_buffered_body_bytes = 8 * 1024 * 1024;
  // RST_STREAM frames a client may send, as a token bucket: `reset_burst` at once, refilled
  // at `resets_per_second` (CVE-2023-44487, Rapid Reset). Past it: GOAWAY.
  std::uint64_t reset_burst = 1000;
  std::uint64_t resets_per_second = 33;
  // Stream errors the server itself raises for a client's bad frames, per connection, in
  // the same bucket form (CVE-2025-8671, MadeYouReset): past it, GOAWAY.
  std::uint64_t server_reset_burst = 1000;
  std::uint64_t server_resets_per_second = 33;
  // CONTINUATION frames after one HEADERS frame (CVE-2024-27316 and its family). Past it:
  // GOAWAY. The header list itself is bounded by server_options::max_header_bytes
  // (SETTINGS_MAX_HEADER_LIST_SIZE; past it, 431 on the stream).
  std::size_t max_continuations = 8;
  // Settings in one SETTINGS frame, and control frames (SETTINGS and PING acknowledgements)
  // queued unsent because the client does not read: past either, GOAWAY.
  std::size_t max_settings = 32;
  std::size_t max_queued_control_frames = 1000;
  // Frames that carry nothing (empty DATA without END_STREAM, say), per connection: a
  // client sending a stream of them costs the server a wakeup each. Past it: GOAWAY.
  std::size_t max_empty_frames = 1000;
};

// Fills the response to a request the server refuses before any dispatch (400, 408, 413,
// 414, 417, 431, 501, 503). `res` arrives with the status set, no fields and an empty body;
// `why` is one sentence naming what was wrong. Runs on a server thread, must not throw.
using error_renderer =
    std::function<void(http::status status, std::string_view why, response& res)>;

struct server_options {
  // IPv4 ("127.0.0.1", "0.0.0.0") or IPv6 ("::1", "::"). Port 0 picks a free port;
  // server::endpoints() tells which. A unix socket (listen_address::unix_socket): a stale
  // file (a socket nothing answers on) is replaced, a live server's is refused, and the
  // file is removed at stop. Inherited sockets: inherited_listeners().
  // A listen_address with `tls` set speaks TLS with the files of `tls` below: a plaintext
  // request there is answered 400 (in plaintext) and closed.
  std::vector<listen_address> listen{listen_address{}};
  // Threads that run connections; 0 means std::thread::hardware_concurrency(). One more
  // thread accepts connections and handles signals. Unused on the caller's io_contexts.
  unsigned threads = 0;
  // SO_REUSEPORT: every thread gets its own listening socket on the address, and the
  // kernel spreads connections; other processes may bind the same port too. TCP
  // addresses only: a unix or inherited listener is one socket, accepted on by one thread.
  bool reuse_port = false;
  // SIGINT and SIGTERM start a graceful stop; SIGHUP reloads the TLS files (reload_tls())
  // and then calls on_reload.
  bool handle_signals = true;
  // What else SIGHUP reloads (a mounted child service, say), on the server's control
  // thread: it should start the work and return, not wait for it.
  std::function<void()> on_reload = {};

  std::size_t max_target_bytes = 8 * 1024;   // 414; the router accepts paths up to 8 KiB
  std::size_t max_header_bytes = 16 * 1024;  // 431; counts the request line too; also the
                                             // trailer section of a chunked body
  std::size_t max_body_bytes = 1024 * 1024;  // 413
  // Decides, per request with a body, its limit and whether the dispatch streams it
  // (body_plan). null: every body is read whole, up to max_body_bytes. A framework's
  // per-route limits go here (waypoint::app::serve sets it from the routes), and the
  // route it found goes on to the dispatch (body_plan::planned), so that a request with a
  // body is routed once.
  body_planner plan_body;
  // Descriptors held at once, summed over threads: each open connection holds one, and
  // each descriptor a request's work opens besides (exchange_host::acquire_descriptor).
  // Past it a new connection gets a 503 and is closed, and a request's descriptor is
  // refused (its handler answers 503 with Retry-After). 0: derived from the descriptor
  // limit (RLIMIT_NOFILE) when the server starts, leaving an eighth of it (at least 128)
  // for refusals, listeners and the program; a value above that is lowered to it.
  std::size_t max_connections = 0;

  std::chrono::milliseconds idle_timeout{60'000};    // keep-alive wait for the next request
  std::chrono::milliseconds header_timeout{15'000};  // a request's first byte to its header's end
  std::chrono::milliseconds body_timeout{15'000};    // the longest wait for more body bytes
  // Past body_timeout from the header's end, the body must have averaged this rate, so a
  // steady slow upload goes on and a trickle is cut. 0: no minimum rate.
  std::size_t min_body_rate = 1024;  // bytes per second
  // One batch of responses; for a file body, the longest wait for the client to take
  // more of it (so a slow but steady download goes on, and a stalled reader is cut).
  std::chrono::milliseconds write_timeout{15'000};
  std::chrono::milliseconds drain_timeout{10'000};  // graceful stop, then connections close
  // The lingering close. After an answer that ends the connection while the client may
  // still be sending (413, 431, 408, a 400 for a bad body, a WebSocket close frame: 1009,
  // 1008, 1002, 1001 at drain...), the server stops writing and reads and drops what the
  // client sends, until the client closes too or either bound runs out, then closes. A
  // close with unread input would be a reset, which can destroy the answer in the client's
  // receive buffer before it is read. Over TLS only the time bounds it. The byte bound is
  // above what a client may have in flight when it learns of the close (the rest of a 1 MiB
  // WebSocket message, a body past max_body_bytes, its socket buffers): dropping costs a
  // read per 4 KiB and no memory.
  std::chrono::milliseconds linger_timeout{2'000};
  std::size_t max_linger_bytes = 8 * 1024 * 1024;
  // A TLS connection's accept to its handshake's end (closed past it). The connection
  // counts against max_connections from its accept.
  std::chrono::milliseconds tls_handshake_timeout{10'000};
  // Between the start of a stop (the first SIGINT/SIGTERM, or stop()) and the listeners
  // closing, the server goes on serving as before while on_drain's readiness answers 503,
  // so that a load balancer polling it stops sending new connections before they would be
  // refused. Set it a little longer than the balancer's check interval times its fall
  // count. 0: the listeners close at once. A second signal ends the grace (and the drain).
  std::chrono::milliseconds drain_grace{0};
  // Runs on the server's control thread when a stop starts, before the grace; e.g.
  // waypoint::app::health::start_draining (waypoint/app/operations/health.hpp). Must not throw.
  std::function<void()> on_drain;

  // null: a text/plain line "<Reason-Phrase>: <why>" (write_plain_error in adapter.hpp).
  error_renderer render_error;

  // For the listeners with `tls` set; checked (the files read) when the server is made.
  tls_options tls;
  // For the listeners with `http2` set.
  http2_options http2;
};

}  // namespace waypoint::beast
