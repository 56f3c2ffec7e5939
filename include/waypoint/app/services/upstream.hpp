// An HTTP/1.1 client for one upstream, for handlers that proxy: it sends a request to the
// upstream from a C++20 coroutine and returns the whole response, with idle keep-alive
// connections kept for the next send. Opt-in: only code that proxies includes this header
// (Asio's awaitable and Beast's message types); the I/O is compiled in src/app/services/upstream.cpp.
//
//   waypoint::app::upstream orders({.url = "http://10.0.0.7:8080/v2"});
//   boost::asio::awaitable<void> forward(waypoint::app::request req) {
//     auto res = co_await orders.send(std::move(req));   // GET /x -> GET /v2/x, Host 10.0.0.7:8080
//     ...
//   }
//   waypoint::app::upstream sidecar({.url = "http://unix:/run/sidecar.sock:/v1"});
//
// Errors are waypoint::http_error, so an application that lets them out answers a problem
// document: 502 when the upstream cannot be reached or answers something that is not a
// bounded HTTP response, 504 when it does not in time.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "waypoint/beast/address.hpp"  // peer_credentials

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace waypoint::app {

namespace http = boost::beast::http;

class context;

namespace detail {
struct upstream_state;  // options, the parsed URL and the pool, shared with sends in flight
}

struct upstream_options {
  // "http://host", "http://host:port" or "http://host:port/base"; host a name, an IPv4
  // address or a bracketed IPv6 address. Only http: TLS belongs to a sidecar or a later type.
  // A unix domain socket in nginx's spelling: "http://unix:/run/app.sock", or with a base
  // path after the socket's first ':', "http://unix:/run/app.sock:/v2"; Linux's abstract
  // namespace as "http://unix:@app" or "http://unix:@app:/v2". The path is absolute, holds
  // no ':' and fits sun_path (107 bytes on Linux; a longer one is refused, naming both
  // lengths); the Host field sent is "localhost". Pooling, timeouts, retries and errors are
  // those of TCP.
  std::string url;
  std::chrono::milliseconds connect_timeout{2000};    // resolve and connect
  std::chrono::milliseconds response_timeout{10000};  // write the request and read the whole response
  std::size_t max_response_bytes = 8 * 1024 * 1024;   // header and body
  // Idle keep-alive connections kept per executor (an io_context per server thread); one
  // more returned past this is closed.
  std::size_t max_idle_connections = 16;
  // For a unix socket: whether the process listening on it may be sent requests, asked on
  // each new connection before a byte is written. Refused (or its credentials unreadable):
  // the connection is closed and the send fails with 502 naming the socket and the peer's
  // pid and uid, and nothing of the request (its Authorization, its Cookie) has reached it.
  // Empty: any peer, as for TCP. child_service sets it to its own child or this user, so
  // that a socket another local user put in the child's place is never sent to.
  std::function<bool(const waypoint::beast::peer_credentials& peer)> trust_unix_peer{};
};

// One upstream and its pool of idle connections. Copies share the pool. Thread-safe: any
// number of coroutines, on any executors, may send concurrently; each reuses only
// connections made on its own executor.
class upstream {
 public:
  // Checks the URL and the options; throws std::invalid_argument naming what is wrong.
  explicit upstream(upstream_options options);

  // Sends `req` on the awaiting coroutine's executor and returns the upstream's response.
  // The request's target (origin-form, "/path?query") is prefixed with the URL's base
  // path; Host is set to the URL's authority; the hop-by-hop fields (Connection and those
  // it names, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade, Proxy-*) and Expect are
  // removed from the request and the response, and the body is sent with Content-Length.
  // A pooled connection that fails before the first response byte is retried once on a
  // new connection, for idempotent methods only (GET, HEAD, OPTIONS, TRACE, PUT, DELETE).
  // Throws waypoint::http_error with a one-sentence detail:
  //   400 for a target that is not origin-form;
  //   502 when the name does not resolve, the connection is refused, reset or closed
  //       early (a unix socket that is missing, refuses or has its backlog full is
  //       named, at once), or the response is malformed, an upgrade or over
  //       max_response_bytes;
  //   504 when connect_timeout or response_timeout passes.
  // Cancellation (terminal, through the awaiting coroutine's cancellation slot, e.g. when
  // the client went away) closes the upstream connection and throws
  // boost::system::system_error(operation_aborted).
  boost::asio::awaitable<http::response<http::string_body>> send(
      http::request<http::string_body> req) const;

  // send(req) for a request made while answering `ctx`: the trace of ctx (tracing(),
  // waypoint/app/operations/trace_context.hpp) goes with it, this server's span as the new parent.
  // A new connection to the upstream takes a descriptor permit from ctx's server
  // (require_descriptor, waypoint/app/operations/resource_limits.hpp), held while it is open, pooled
  // too: when the budget is spent, throws http_error(503) with Retry-After set on ctx's
  // response, and nothing is sent.
  boost::asio::awaitable<http::response<http::string_body>> send(
      context& ctx, http::request<http::string_body> req) const;

  // send(ctx, req), the response becoming ctx's: one with a Content-Length is held whole
  // (up to max_response_bytes) and answered as is; one whose length is unknown ahead
  // (chunked, or until the upstream closes: an event stream) is sent on as it arrives, in
  // chunks (context::write_chunk), with no length limit, response_timeout bounding each wait
  // for the next piece. A failure after the head went out can only cut the response.
  boost::asio::awaitable<void> relay(context& ctx, http::request<http::string_body> req) const;

  // The URL as given in the options.
  const std::string& base_url() const noexcept;

 private:
  std::shared_ptr<detail::upstream_state> state_;
};

// The request a proxy forwards while answering `ctx`: the client's method, target, fields
// and body, its hop-by-hop fields removed first (Connection and those it names, as send()
// removes them), so that a client's `Connection: via` cannot remove what the proxy adds
// next: `via` appended to Via (RFC 9110 §7.6.3), the client's address (the socket's peer)
// appended to X-Forwarded-For and, as `for=` (an IPv6 address as "[::1]", quoted) with
// `proto=`, to Forwarded (RFC 7239). A client on a unix socket has no address: it is
// "unix:" in X-Forwarded-For, as nginx sends, and the obfuscated identifier "_unix-PID"
// in Forwarded (RFC 7239 §6.3; "unknown" without the peer's credentials). Fields the
// caller adds afterwards reach the upstream.
http::request<http::string_body> forwarded_request(const context& ctx, std::string_view via);

}  // namespace waypoint::app
