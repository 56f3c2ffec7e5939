// The exchange contract: what a dispatch sees of one request, its response and the
// connection they travel on (exchange, exchange_host, deferred_send), and what a planner
// decides at a request's header (body_plan). It does not say which protocol carries the
// exchange: waypoint::beast::server's HTTP/1.1 connections implement it, as do
// waypoint::app's respond() and async_handle() in memory. A framework builds on this header
// alone; server_options.hpp and server.hpp add the server.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>

#include "waypoint/beast/address.hpp"
#include "waypoint/beast/resource_budget.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

namespace boost::asio {
class any_io_executor;
class cancellation_slot;
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

}  // namespace waypoint::beast

template <>
struct boost::system::is_error_code_enum<waypoint::beast::exchange_error> : std::true_type {};
