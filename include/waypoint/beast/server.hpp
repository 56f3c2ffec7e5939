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

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include "waypoint/beast/resource_budget.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace boost::asio {
class any_io_executor;
class cancellation_slot;
class io_context;
}  // namespace boost::asio

namespace waypoint::beast {

namespace http = boost::beast::http;

// waypoint/beast/websocket.hpp
struct websocket_upgrade;
struct websocket_options;
class websocket_channel;

using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

// Called on a server thread for every complete request, one request of a connection at a
// time. `res` arrives as a fresh 200 with an empty body and the request's version.
// Threads call it concurrently for different connections: it must be thread-safe.
using dispatch_function = std::function<void(const request& req, response& res)>;

// The file of a unix listener, set between its bind and its listen, so that no client
// ever connects through looser permissions.
struct unix_socket_options {
  // The file's permission bits; connecting needs write permission (0660: owner and group).
  // 0: what the umask leaves.
  unsigned mode = 0;
  // The group owning the file, by name ("www-data"); empty: the process's. The process
  // must be a member (or root).
  std::string group{};
};

// An address and port: where a server listens, or one end of a connection.
//
// A unix domain socket is an address in nginx's and gunicorn's spelling, "unix:" then a
// path, or a Linux abstract name after '@' (no file; gone with the socket), port 0:
//   listen_address::unix_socket("/run/app/http.sock", {.mode = 0660, .group = "www-data"})
//   listen_address::unix_socket("@app-http")
// A listening socket inherited from systemd (inherited_listeners()) carries its descriptor.
// Of a connection: a unix one's local address is its listener's ("unix:/run/app/http.sock"),
// its remote address "unix:" and the peer's pid ("unix:4242"; connection_endpoints::peer).
struct listen_address {
  std::string address = "127.0.0.1";
  std::uint16_t port = 8080;
  // The listener speaks TLS (server_options::tls); of a connection's local end, it came
  // over TLS.
  bool tls = false;
  // A unix listener's file mode and group (a path; an abstract name has neither).
  unix_socket_options unix_file{};
  // >= 0: a listening socket the process was given (socket activation); the server listens
  // on it as it is, and owns it from start(). `address` and `port` then describe it.
  int inherited_fd = -1;
  // The inherited socket's name (systemd's FileDescriptorName=, LISTEN_FDNAMES), for
  // picking which of several is which.
  std::string name{};

  // "unix:" + `path`; a path starting with '@' is an abstract name.
  static listen_address unix_socket(std::string path, unix_socket_options file = {});
  bool is_unix_socket() const noexcept { return address.starts_with("unix:"); }
};

// The process on the other end of a unix connection, as the kernel recorded it when the
// peer connected (SO_PEERCRED): not forgeable by the peer.
struct peer_credentials {
  std::int32_t pid = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

// The listening sockets systemd passed to this process (socket activation: LISTEN_PID,
// LISTEN_FDS, LISTEN_FDNAMES, as sd_listen_fds() reads them, without libsystemd), in their
// order, each described (address, port or unix path) and named. None when the variables
// are absent or name another process. Clears the variables, so that a child process does
// not take the sockets for its own. Throws std::runtime_error naming the descriptor when
// one is not a listening stream socket (a datagram socket, or Accept=yes's connection).
std::vector<listen_address> inherited_listeners();

// The files of the server's TLS listeners, all PEM, read at construction and again by
// server::reload_tls() (SIGHUP). TLS 1.2 is the oldest version served; ALPN selects
// http/1.1; TLS 1.2's ciphers are tls12_ciphers, TLS 1.3's and the groups OpenSSL's.
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

// The two ends of a connection, as the socket reports them (a proxy in front is the
// remote end; waypoint/app/operations/forwarded.hpp reads past trusted ones).
struct connection_endpoints {
  listen_address local{"", 0};
  listen_address remote{"", 0};
  // Of a unix connection: the peer process's pid, uid and gid.
  std::optional<peer_credentials> peer{};
};

// A byte range of an open file, sent as a response's body straight from the page cache
// (sendfile), never read into memory. Owns the descriptor: move-only, closed on
// destruction. The response says Content-Length: length(); HEAD sends none of it.
class file_payload {
 public:
  file_payload() noexcept = default;
  file_payload(int fd, std::uint64_t offset, std::uint64_t length) noexcept
      : fd_(fd), offset_(offset), length_(length) {}
  file_payload(file_payload&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        offset_(other.offset_),
        length_(other.length_),
        permit_(std::move(other.permit_)) {}
  file_payload& operator=(file_payload&& other) noexcept;
  ~file_payload() { reset(); }

  int fd() const noexcept { return fd_; }
  std::uint64_t offset() const noexcept { return offset_; }
  std::uint64_t length() const noexcept { return length_; }  // bytes still to send
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // `n` bytes went out.
  void advance(std::uint64_t n) noexcept {
    offset_ += n;
    length_ -= n;
  }
  void reset() noexcept;
  // The descriptor's share of the server's budget (exchange_host::acquire_descriptor), held
  // until the descriptor closes, however the body ends.
  void hold(resource_permit permit) noexcept { permit_ = std::move(permit); }

 private:
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  std::uint64_t length_ = 0;
  resource_permit permit_;
};

// What a planner hands on to the dispatch of the same request, so that the work it did on
// the header (a framework's routing of it) is not done again once the body is in. The
// server holds it from the plan to the dispatch, which takes it (exchange::take_planned);
// when the request ends without a dispatch (413, broken framing, the client gone) or the
// dispatch leaves it, the server drops it, on whatever thread the request ends on.
// Move-only; empty unless a planner fills it.
class planned_request {
 public:
  using drop_function = void (*)(void* state) noexcept;

  planned_request() = default;
  // `owner` names the planner, so that only its dispatch takes `state`; `drop` disposes
  // of a state nobody took.
  planned_request(const void* owner, void* state, drop_function drop) noexcept
      : owner_(owner), state_(state), drop_(drop) {}
  planned_request(planned_request&& other) noexcept
      : owner_(other.owner_), state_(std::exchange(other.state_, nullptr)), drop_(other.drop_) {}
  planned_request& operator=(planned_request&& other) noexcept {
    if (this != &other) {
      reset();
      owner_ = other.owner_;
      state_ = std::exchange(other.state_, nullptr);
      drop_ = other.drop_;
    }
    return *this;
  }
  ~planned_request() { reset(); }

  // The state, now the caller's to dispose of, when `owner` planned it; null otherwise
  // (another owner's state stays here, to be dropped).
  void* take(const void* owner) noexcept {
    return state_ && owner == owner_ ? std::exchange(state_, nullptr) : nullptr;
  }
  void reset() noexcept {
    if (void* state = std::exchange(state_, nullptr)) drop_(state);
  }
  explicit operator bool() const noexcept { return state_ != nullptr; }

 private:
  const void* owner_ = nullptr;
  void* state_ = nullptr;
  drop_function drop_ = nullptr;
};

// What the server does with a request's body, decided once its header is in
// (server_options::plan_body).
struct body_plan {
  std::uint64_t max_bytes = 1024 * 1024;  // 413 past it
  // The dispatch runs at the header's end, without the body, and reads it itself with
  // exchange_host::read_body; the request's body() stays empty. Otherwise the body is
  // read whole first.
  bool streamed = false;
  // The planner's work on the header, for the dispatch (planned_request).
  planned_request planned = {};
};
using body_planner = std::function<body_plan(const request& header)>;

// The errors of an exchange's own, as opposed to the connection's (asio's, beast's).
enum class exchange_error {
  // write_chunk on a response that carries no body (a HEAD's, a 1xx, 204 or 304): the head
  // goes out, the data does not, and the writer is told so that its loop ends rather than
  // spinning on writes that cost nothing (Go's http.ErrBodyNotAllowed).
  body_not_allowed = 1,
  // write_chunk while the server drains: the response is to end now (its deferred send
  // writes the last chunk and trailers, and the connection closes), so that a stream that
  // would never end on its own ends cleanly, well before drain_timeout cuts it.
  server_stopping = 2,
};
const boost::system::error_category& exchange_category() noexcept;
inline boost::system::error_code make_error_code(exchange_error e) noexcept {
  return {static_cast<int>(e), exchange_category()};
}

// The completions of the streaming calls below, on the connection's thread.
using body_read_handler = std::function<void(boost::system::error_code, std::size_t)>;
using chunk_write_handler = std::function<void(boost::system::error_code)>;

// The contract between the server and whatever answers its requests: what an exchange
// needs of the connection it came on. waypoint::beast::server's connections implement it;
// so do application::respond() (a connection in memory) and the tests that drive a session
// without a socket. A framework reaches every body that is not a string through it: a file
// (attach_file), a streamed request body (read_body), a response in chunks (write_chunk,
// set_trailers) and an upgrade (upgrade). Every call is made on the connection's thread
// (executor()), except deferred_done(), which may come from any thread.
class exchange_host {
 public:
  virtual boost::asio::any_io_executor executor() = 0;
  virtual const connection_endpoints& endpoints() = 0;
  virtual boost::asio::cancellation_slot cancellation_slot() = 0;
  // The deferred response is ready: from any thread, once per deferral.
  virtual void deferred_done() noexcept = 0;
  // Makes `file` the body of the response being built, on the connection's thread, before
  // the response is sent (before the dispatch returns, or before deferred_done()). Returns
  // false, leaving `file` alone, when this host cannot send files (the caller then reads
  // it into the body). The server uses it only when the response's string body is empty
  // and its status carries content.
  virtual bool attach_file(file_payload& file) noexcept {
    (void)file;
    return false;
  }
  // Takes `upgrade` (moving from it) when the request being answered is a valid WebSocket
  // upgrade (GET, HTTP/1.1, Connection: upgrade, Upgrade: websocket, no body) and this host
  // can hand its socket over: then no HTTP response is sent for it, and the connection
  // becomes a WebSocket (waypoint/beast/websocket.hpp) once the response would have gone
  // out. During the dispatch or while its response is deferred; false otherwise.
  virtual bool upgrade(websocket_upgrade& upgrade) noexcept {
    (void)upgrade;
    return false;
  }
  // Whether upgrade() can take a valid upgrade request at all (the server's connections
  // can; a connection in memory cannot). Asked before a handler answers 101, so that a
  // host that cannot is answered 501 while the layers can still see and log it.
  virtual bool can_upgrade() const noexcept { return false; }
  // One descriptor (a socket, a file) that the request's work opens besides its
  // connection's, taken from the budget the connections use (server_options::
  // max_connections; server::descriptor_budget()): hold the permit as long as the
  // descriptor is open. Refused (false) when the budget is spent: answer 503 with
  // Retry-After rather than open it. Any thread. Here, a host without a budget
  // (application::respond(), async_handle()): always granted, counting nothing.
  virtual resource_permit acquire_descriptor() noexcept { return resource_permit::unbounded(); }

  // A streamed request body (body_plan::streamed): true while this request's body is the
  // dispatch's to read.
  virtual bool body_streamed() const noexcept { return false; }
  // Reads the next bytes of the streamed body into `into`, on the connection's thread
  // while the exchange is deferred, one read at a time. `done` runs later on that thread
  // with the count, 0 once the body is complete, or an error: http::error::body_limit
  // (past the plan's max_bytes: answer 413), http::error::header_limit (a trailer section
  // too large: 431), asio::error::timed_out (the body stalled for body_timeout: 408),
  // another http::error (bad framing: 400), or asio::error::connection_aborted (the client
  // is gone). An `Expect: 100-continue` is answered by the first read. A response sent
  // before the body is complete closes the connection after it.
  // Here: operation_not_supported at once.
  virtual void read_body(boost::asio::mutable_buffer into, body_read_handler done);
  // Writes `data` as the next piece of the response, on the connection's thread while the
  // exchange is deferred, one write at a time: the first call sends the head of
  // response() (HTTP/1.1: `Transfer-Encoding: chunked`; HTTP/1.0: no length, the
  // connection closes at the end; HEAD or a status without content: the head alone, and
  // `done` gets exchange_error::body_not_allowed). `done` runs on that thread once the bytes
  // are with the kernel, so a writer that awaits it holds one piece in memory at most; an
  // error when the connection is gone or the write timed out. When the server starts to
  // drain, a response whose head has gone out is told to end: the exchange's
  // cancellation_slot() emits `terminal` (so a wait between writes ends too) and later
  // writes fail with exchange_error::server_stopping; the deferred send then ends the body
  // with its last chunk and trailers (none after abort_response()), and the connection
  // closes. The response ends when the deferred send is sent; its body() is not sent.
  // Here: operation_not_supported at once.
  virtual void write_chunk(std::string_view data, chunk_write_handler done);
  // Fields sent after the last chunk (HTTP/1.1 only; a field holding CR, LF or NUL is
  // dropped). Before the deferred send.
  virtual void set_trailers(const http::fields& trailers) { (void)trailers; }
  // The response whose head has gone out (write_chunk) cannot be completed: the handler
  // failed, or the drain cut a body that had more to say. The deferred send then ends the
  // connection after the bytes already written, without the last chunk, so that a client
  // sees a body cut short rather than a complete one (an HTTP/1.0 body, delimited by the
  // close, cannot tell the difference; it closes all the same). Nothing for a response not
  // yet streaming. On the connection's thread, before the deferred send.
  virtual void abort_response() noexcept {}

 protected:
  ~exchange_host() = default;
};

// Sends a deferred response. Move-only; send() may run on any thread, once. Destroyed
// unsent, it answers 500, so a lost handle cannot leave a connection waiting for ever.
class deferred_send {
 public:
  deferred_send() noexcept = default;
  deferred_send(deferred_send&& other) noexcept : host_(other.host_), res_(other.res_) {
    other.host_ = nullptr;
  }
  deferred_send& operator=(deferred_send&& other) noexcept;
  ~deferred_send();

  // The response is complete: the server sends it after those of the connection's earlier
  // requests. Neither the request nor the response may be touched afterwards.
  void send() noexcept;
  explicit operator bool() const noexcept { return host_ != nullptr; }

 private:
  friend class exchange;
  deferred_send(exchange_host* host, response* res) noexcept : host_(host), res_(res) {}

  exchange_host* host_ = nullptr;
  response* res_ = nullptr;
};

// One request, its response and the connection they travel on, as an exchange_function
// sees them. Lives for the dispatch call; after defer(), the request and the response live
// until the deferred_send is sent (or destroyed).
class exchange {
 public:
  // `planned`: what the request's planner kept for this dispatch (body_plan::planned).
  exchange(exchange_host& host, const request& req, response& res,
           planned_request* planned = nullptr) noexcept
      : host_(&host), request_(&req), response_(&res), planned_(planned) {}
  exchange(const exchange&) = delete;
  exchange& operator=(const exchange&) = delete;

  const beast::request& request() const noexcept { return *request_; }
  beast::response& response() noexcept { return *response_; }
  // The connection's executor: its worker's io_context, the thread the dispatch runs on.
  boost::asio::any_io_executor executor() const;
  const connection_endpoints& endpoints() const { return host_->endpoints(); }
  // Emits cancellation_type::terminal when the connection closes while the exchange is
  // deferred (the client went away, or the drain ran out), and, for a response being
  // streamed (write_chunk), when the drain starts; bind it to what answers.
  boost::asio::cancellation_slot cancellation_slot() const;

  // Takes the response out of the dispatch call: the server sends nothing, and reads no
  // further request of this connection, until the handle's send(). Once per exchange;
  // throws std::logic_error on a second call.
  deferred_send defer();
  bool deferred() const noexcept { return deferred_; }
  // Sends `file` as the body (file_payload; exchange_host::attach_file says when it is
  // used); false when this connection cannot, and `file` is left to the caller.
  bool attach_file(file_payload& file) noexcept { return host_->attach_file(file); }
  // Turns the connection into a WebSocket after this exchange (exchange_host::upgrade);
  // false, `upgrade` left alone, when the request is no valid upgrade.
  bool upgrade(websocket_upgrade& upgrade) noexcept { return host_->upgrade(upgrade); }
  // A descriptor permit for the request's work (exchange_host::acquire_descriptor).
  resource_permit acquire_descriptor() noexcept { return host_->acquire_descriptor(); }
  // The connection behind executor(), endpoints() and cancellation_slot(), for a framework
  // that hands them on.
  exchange_host& host() const noexcept { return *host_; }
  // What `owner`'s planner kept of its work on this request's header
  // (body_plan::planned), now the caller's to dispose of; null when it kept nothing.
  void* take_planned(const void* owner) noexcept {
    return planned_ ? planned_->take(owner) : nullptr;
  }

 private:
  exchange_host* host_;
  const beast::request* request_;
  beast::response* response_;
  planned_request* planned_;
  bool deferred_ = false;
};

// The dispatch form that can answer later (exchange::defer()); otherwise as
// dispatch_function, with the connection's executor and endpoints at hand.
using exchange_function = std::function<void(exchange& x)>;

// Fills the response to a request the server refuses before any dispatch (400, 408, 413,
// 414, 417, 431, 501, 503). `res` arrives with the status set, no fields and an empty body;
// `why` is one sentence naming what was wrong. Runs on a server thread, must not throw.
using error_renderer = std::function<void(http::status status, std::string_view why, response& res)>;

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
  std::size_t min_body_rate = 1024;                  // bytes per second
  // One batch of responses; for a file body, the longest wait for the client to take
  // more of it (so a slow but steady download goes on, and a stalled reader is cut).
  std::chrono::milliseconds write_timeout{15'000};
  std::chrono::milliseconds drain_timeout{10'000};   // graceful stop, then connections close
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
};

// `second` (since the epoch) as an HTTP date (IMF-fixdate, in English whatever the locale):
// "Tue, 01 Dec 2026 16:58:06 GMT", for Last-Modified and the like.
std::string http_date(std::int64_t second);

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

template <>
struct boost::system::is_error_code_enum<waypoint::beast::exchange_error> : std::true_type {};
