// The upstream client: URL checks, request and response rewriting for a proxy hop, a pool
// of idle connections keyed by executor, and one coroutine per send in the shape of Beast's
// awaitable examples (resolve, connect, write, read header, read body), each step under a
// deadline. One stream type carries TCP and unix domain sockets alike (Asio's generic stream
// protocol; the family is a run-time value), so pooling, deadlines, retries and
// cancellation are the same code for both. Every failure is mapped to a 502 or 504 in one
// place (throw_failure).
#include "waypoint/app/services/upstream.hpp"

#include "waypoint/app/context.hpp"
#include "waypoint/app/http_error.hpp"
#include "waypoint/app/operations/resource_limits.hpp"
#include "waypoint/app/operations/trace_context.hpp"
#include "waypoint/detail/http_grammar.hpp"
#include "waypoint/detail/unix_address.hpp"
#include "waypoint/detail/url.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waypoint::app {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using stream_protocol = asio::generic::stream_protocol;
using error_code = boost::system::error_code;
using asio::use_awaitable;
using response = http::response<http::string_body>;
using request = http::request<http::string_body>;

constexpr auto as_tuple_awaitable = asio::as_tuple(use_awaitable);

// An open connection to the upstream, made on one executor and used only there.
struct connection {
  connection(const asio::any_io_executor& executor, waypoint::beast::resource_permit p)
      : descriptor(std::move(p)), stream(executor) {}

  // The socket's share of the server's descriptor budget, held while it is open, idle in
  // the pool too (declared first: given back after the socket closes).
  waypoint::beast::resource_permit descriptor;
  // A TCP or a unix socket (the endpoint's family decides), with Beast's deadlines.
  beast::basic_stream<stream_protocol> stream;
  // Invariant: empty between exchanges; bytes here while idle are an answer to nothing.
  beast::flat_buffer buffer;
};

// Whether an idle connection can still carry a request: the upstream has neither closed it
// nor sent bytes unasked. A peek that would block means both hold; the check costs one
// system call and saves a doomed write (and, for POST, a 502) on most stale connections.
bool still_open(connection& c) noexcept {
  if (c.buffer.size() != 0) return false;
  auto& socket = c.stream.socket();
  error_code ec;
  socket.non_blocking(true, ec);
  if (ec) return false;
  char byte;
  socket.receive(asio::buffer(&byte, 1), asio::socket_base::message_peek, ec);
  bool open = ec == asio::error::would_block;
  socket.non_blocking(false, ec);
  return open;
}

asio::execution_context& context_of(connection& c) noexcept {
  return asio::query(c.stream.get_executor(), asio::execution::context);
}

// Idle connections of one upstream, over all executors, in shards by execution context: a
// send takes and puts back a connection under the lock of its own context's shard, so
// server threads (one context each) proxying to one upstream rarely meet on a lock, and a
// lookup scans only the shard's connections (BENCHMARKS.md §24). Connections stay usable by
// the executor (thread or strand) that made them, since Asio objects must not move between
// executors.
class connection_pool : public std::enable_shared_from_this<connection_pool> {
 public:
  explicit connection_pool(std::size_t max_idle_per_executor) noexcept
      : max_idle_per_executor_(max_idle_per_executor) {}

  // The most recently idled open connection made on `executor`, or null. LIFO because
  // the newest connection is the one least likely to have been closed by the upstream.
  std::unique_ptr<connection> take(const asio::any_io_executor& executor) {
    shard& s = shard_of(asio::query(executor, asio::execution::context));
    while (true) {
      std::unique_ptr<connection> c;
      {
        std::lock_guard lock(s.mutex);
        auto it = std::find_if(s.idle.rbegin(), s.idle.rend(), [&](const auto& idle) {
          return idle->stream.get_executor() == executor;
        });
        if (it == s.idle.rend()) return nullptr;
        c = std::move(*it);
        s.idle.erase(std::next(it).base());
      }
      if (still_open(*c)) return c;
    }
  }

  // Keeps `c` for a later send unless its executor already has enough idle ones.
  void put(std::unique_ptr<connection> c);

  // Closes the idle connections made on `context`, which is shutting down: a socket must
  // not outlive its io_context, and an upstream usually outlives the server's.
  void drop(asio::execution_context& context) {
    std::vector<std::unique_ptr<connection>> closing;
    shard& s = shard_of(context);
    std::lock_guard lock(s.mutex);
    for (auto& c : s.idle)
      if (&context_of(*c) == &context) closing.push_back(std::move(c));
    std::erase(s.idle, nullptr);
    std::erase(s.watched, &context);
  }

 private:
  struct shard {
    std::mutex mutex;
    std::vector<std::unique_ptr<connection>> idle;
    // The contexts of this shard whose shutdown will call drop().
    std::vector<asio::execution_context*> watched;
  };
  // More shards than a server has threads on most machines; a context's address picks one.
  static constexpr std::size_t shard_count = 32;

  shard& shard_of(asio::execution_context& context) noexcept {
    auto address = reinterpret_cast<std::uintptr_t>(&context);
    return shards_[(address / alignof(std::max_align_t)) % shard_count];
  }

  const std::size_t max_idle_per_executor_;
  std::array<shard, shard_count> shards_;
};

// One per execution context that pooled connections were made on: when the context shuts
// down (before its socket service is destroyed), every pool still alive closes the
// connections made there.
class pool_shutdown_service : public asio::execution_context::service {
 public:
  static inline asio::execution_context::id id;

  explicit pool_shutdown_service(asio::execution_context& context) : service(context) {}

  void watch(std::weak_ptr<connection_pool> pool) {
    std::lock_guard lock(mutex_);
    // Upstreams made and dropped while the context lives would otherwise pile up here.
    std::erase_if(pools_, [](const auto& watched) { return watched.expired(); });
    pools_.push_back(std::move(pool));
  }

 private:
  void shutdown() override {
    std::vector<std::weak_ptr<connection_pool>> pools;
    {
      std::lock_guard lock(mutex_);
      pools.swap(pools_);
    }
    for (auto& weak : pools)
      if (auto pool = weak.lock()) pool->drop(context());
  }

  std::mutex mutex_;
  std::vector<std::weak_ptr<connection_pool>> pools_;
};

void connection_pool::put(std::unique_ptr<connection> c) {
  c->stream.expires_never();
  asio::execution_context& context = context_of(*c);
  shard& s = shard_of(context);
  bool watched;
  {
    std::lock_guard lock(s.mutex);
    watched = std::find(s.watched.begin(), s.watched.end(), &context) != s.watched.end();
  }
  // Registered outside our lock: the service's shutdown takes its lock, then ours.
  if (!watched) asio::use_service<pool_shutdown_service>(context).watch(weak_from_this());
  std::lock_guard lock(s.mutex);
  if (!watched && std::find(s.watched.begin(), s.watched.end(), &context) == s.watched.end())
    s.watched.push_back(&context);
  auto same = std::count_if(s.idle.begin(), s.idle.end(), [&](const auto& idle) {
    return idle->stream.get_executor() == c->stream.get_executor();
  });
  if (static_cast<std::size_t>(same) < max_idle_per_executor_) s.idle.push_back(std::move(c));
}

// "http://host[:port][/base]" or "http://unix:/path[:/base]", split into its parts.
struct parsed_url {
  // Of a TCP upstream: the host as connected to (a name, an IPv4 address or an IPv6 address,
  // no brackets) and the port (decimal, "80" when the URL names none). Empty for unix.
  std::string host;
  std::string port;
  // Of a unix upstream: the socket's address, and its path or "@name" for messages.
  std::optional<waypoint::detail::unix_address> unix_socket;
  std::string unix_socket_name;
  std::string authority;  // the Host field: host[:port] as the URL wrote it; "localhost" for unix
  std::string base_path;  // "" or "/base" without a trailing '/'
};

[[noreturn]] void throw_bad_url(const std::string& url, std::string_view why) {
  throw std::invalid_argument("upstream: \"" + url + "\" " + std::string(why));
}

// "" or "/base": a base path as written, without its trailing '/'.
std::string trimmed_base_path(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

// nginx's spelling of a unix upstream, which its users already write: `rest` follows
// "http://unix:" and is the socket's path ("/run/app.sock") or abstract name ("@app"),
// up to the first ':', after which comes the base path ("/run/app.sock:/v1"). So a path
// holding ':' cannot be named; nginx has the same limit.
parsed_url parse_unix_url(const std::string& url, std::string_view rest) {
  std::size_t colon = rest.find(':');
  std::string_view socket = rest.substr(0, colon);
  std::string_view path = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  if (colon != std::string_view::npos && !path.starts_with('/'))
    throw_bad_url(url, "has a base path after its unix socket's ':' that does not start with '/'");
  if (rest.find_first_of("?#") != std::string_view::npos)
    throw_bad_url(url, "has a query or fragment; only a base path may follow the unix socket");
  // "http://unix:8080" is more likely a host named unix than a socket file named 8080.
  if (!socket.empty() && !socket.starts_with('/') && !socket.starts_with('@'))
    throw_bad_url(url, "has a unix socket that is neither an absolute path (unix:/run/app.sock) nor "
                       "an abstract name (unix:@app)");
  parsed_url parsed;
  parsed.unix_socket.emplace();
  if (std::string why = waypoint::detail::make_unix_address(socket, *parsed.unix_socket); !why.empty())
    throw_bad_url(url, "names a unix socket that " + why);
  parsed.unix_socket_name = std::string(socket);
  // The Host field is required (RFC 9112 §3.2) and a socket has no authority; nginx and
  // curl --unix-socket send this one too.
  parsed.authority = "localhost";
  parsed.base_path = trimmed_base_path(path);
  return parsed;
}

// The host of an http URL: a bracketed IPv6 address, or a name or IPv4 address.
void check_host(const std::string& url, const waypoint::detail::host_port& split) {
  std::string_view host = split.host;
  if (split.bracketed) {
    error_code ec;
    asio::ip::make_address_v6(std::string(host), ec);
    if (ec) throw_bad_url(url, "has a bracketed host that is not an IPv6 address");
    return;
  }
  auto host_char = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
           c == '-' || c == '_';
  };
  if (host.empty() || !std::all_of(host.begin(), host.end(), host_char))
    throw_bad_url(url, "has a host that is not a name or an IPv4 address");
}

// The port, when the URL names one: a number in 1..65535.
void check_port(const std::string& url, const waypoint::detail::host_port& split) {
  if (!split.has_port) return;
  std::string_view port = split.port;
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
    throw_bad_url(url, "has a port that is not a number in 1..65535");
}

parsed_url parse_url(const std::string& url) {
  waypoint::detail::url_parts parts;
  if (!waypoint::detail::split_http_url(url, parts))
    throw_bad_url(url, "does not start with http://");
  if (parts.https) throw_bad_url(url, "is https; only http upstreams are supported");
  std::string_view after_scheme = std::string_view(url).substr(7);  // "http://"
  if (waypoint::detail::istarts_with(after_scheme, "unix:")) return parse_unix_url(url, after_scheme.substr(5));
  std::string_view authority = parts.authority;
  if (authority.empty()) throw_bad_url(url, "has no host");
  if (authority.find('@') != std::string_view::npos)
    throw_bad_url(url, "has user information; send credentials as request fields");
  if (parts.has_query || parts.has_fragment)
    throw_bad_url(url, "has a query or fragment; only a base path may follow the host");
  waypoint::detail::host_port split;
  if (const char* why = waypoint::detail::split_host_port(authority, split))
    throw_bad_url(url, "has " + std::string(why));
  check_host(url, split);
  check_port(url, split);
  parsed_url parsed;
  parsed.host = std::string(split.host);
  parsed.port = split.port.empty() ? "80" : std::string(split.port);
  parsed.authority = std::string(authority);
  parsed.base_path = trimmed_base_path(parts.path);
  return parsed;
}

// --- one proxy hop's rewriting -----------------------------------------------------------

bool is_proxy_field(std::string_view name) noexcept {
  return waypoint::detail::istarts_with(name, "proxy-");
}

// Removes the fields that describe one connection, not the message (RFC 9110 §7.6.1),
// including those the Connection field names.
void strip_hop_by_hop(http::fields& fields) {
  std::vector<std::string> named;
  auto [first, last] = fields.equal_range(http::field::connection);
  for (auto it = first; it != last; ++it) {
    waypoint::detail::for_each_list_element(
        it->value(), [&](std::string_view token) { named.emplace_back(token); });
  }
  for (const std::string& name : named) fields.erase(name);
  for (http::field f : {http::field::connection, http::field::keep_alive, http::field::te,
                        http::field::trailer, http::field::transfer_encoding, http::field::upgrade})
    fields.erase(f);
  for (auto it = fields.begin(); it != fields.end();)
    it = is_proxy_field(it->name_string()) ? fields.erase(it) : std::next(it);
}

// `value` after the field's present value, as one more element of its list.
void append_element(http::fields& fields, std::string_view name, std::string_view value) {
  std::string joined(fields[name]);
  if (!joined.empty()) joined += ", ";
  joined.append(value);
  fields.set(name, joined);
}

// RFC 9110 §9.2.2: a request that may be sent twice without a different effect.
bool idempotent(http::verb method) noexcept {
  switch (method) {
    case http::verb::get: case http::verb::head: case http::verb::options:
    case http::verb::trace: case http::verb::put: case http::verb::delete_:
      return true;
    default:
      return false;
  }
}

// --- failures ------------------------------------------------------------------------------

enum class step { resolve, connect, exchange };

// Throws what a failed step means for the client: 504 for a deadline, operation_aborted
// for cancellation, 502 for everything else. `unix_socket`: the path or @name of a unix
// upstream, named when it cannot be connected to (the file is missing, or nothing listens).
[[noreturn]] void throw_failure(const std::string& url, step at, error_code ec,
                                std::chrono::milliseconds timeout, std::string_view unix_socket = {}) {
  if (ec == asio::error::operation_aborted) throw boost::system::system_error(ec);
  const std::string who = "upstream " + url;
  const std::string ms = std::to_string(timeout.count()) + " ms";
  if (ec == beast::error::timeout) {
    if (at == step::exchange) throw http_error(504, who + " did not answer within " + ms + ".");
    throw http_error(504, who + " did not accept a connection within " + ms + ".");
  }
  switch (at) {
    case step::resolve:
      throw http_error(502, who + " could not be resolved (" + ec.message() + ").");
    case step::connect:
      if (!unix_socket.empty())
        throw http_error(502, who + " could not be connected to at the unix socket " +
                                  std::string(unix_socket) + " (" + ec.message() + ").");
      throw http_error(502, who + " could not be connected to (" + ec.message() + ").");
    case step::exchange:
      break;
  }
  if (ec == http::error::body_limit || ec == http::error::header_limit || ec == http::error::buffer_overflow)
    throw http_error(502, who + " sent a response larger than max_response_bytes.");
  if (ec == http::error::end_of_stream || ec == http::error::partial_message)
    throw http_error(502, who + " closed the connection before a complete response.");
  if (ec.category() == make_error_code(http::error::bad_version).category())
    throw http_error(502, who + " sent a malformed response (" + ec.message() + ").");
  throw http_error(502, who + " failed during the exchange (" + ec.message() + ").");
}

// --- the steps ----------------------------------------------------------------------------

// A resolve that honours the connect deadline and the coroutine's cancellation: Asio's
// resolver ignores cancellation slots, so both cancel it by hand. Shared ownership lets the
// timer's handler outlive this frame without touching a dead resolver.
struct pending_resolve {
  explicit pending_resolve(const asio::any_io_executor& executor) : resolver(executor), timer(executor) {}
  tcp::resolver resolver;
  asio::steady_timer timer;
  bool timed_out = false;
};

asio::awaitable<tcp::resolver::results_type> resolve(const parsed_url& url, const std::string& text,
                                                     std::chrono::steady_clock::time_point deadline,
                                                     std::chrono::milliseconds timeout) {
  auto pending = std::make_shared<pending_resolve>(co_await asio::this_coro::executor);
  pending->timer.expires_at(deadline);
  pending->timer.async_wait([pending](error_code ec) {
    if (!ec) pending->timed_out = true, pending->resolver.cancel();
  });
  asio::cancellation_state cancellation = co_await asio::this_coro::cancellation_state;
  if (cancellation.slot().is_connected())
    cancellation.slot().assign([weak = std::weak_ptr(pending)](asio::cancellation_type) {
      if (auto p = weak.lock()) p->resolver.cancel();
    });
  auto [ec, results] = co_await pending->resolver.async_resolve(url.host, url.port, as_tuple_awaitable);
  if (cancellation.slot().is_connected()) cancellation.slot().clear();
  pending->timer.cancel();
  if (ec && pending->timed_out) ec = beast::error::timeout;
  if (ec) throw_failure(text, step::resolve, ec, timeout);
  co_return results;
}

// The TCP endpoints to try in turn: the IP address, or what the name resolves to.
asio::awaitable<std::vector<stream_protocol::endpoint>> tcp_endpoints_of(
    const parsed_url& url, const upstream_options& options, std::chrono::steady_clock::time_point deadline) {
  std::vector<stream_protocol::endpoint> endpoints;
  error_code not_address;
  auto address = asio::ip::make_address(url.host, not_address);
  if (!not_address) {
    endpoints.emplace_back(tcp::endpoint(address, static_cast<std::uint16_t>(std::stoul(url.port))));
    co_return endpoints;
  }
  for (const auto& entry : co_await resolve(url, options.url, deadline, options.connect_timeout))
    endpoints.emplace_back(entry.endpoint());
  co_return endpoints;
}

// A unix socket's connect() never waits: it connects, or fails at once (ENOENT,
// ECONNREFUSED, and EAGAIN when the listener's backlog is full). Asio takes EAGAIN for a
// connect in progress and reports success once the socket is writable, which an unconnected
// unix socket is at once, so a full backlog would surface as the request's write failing
// with ENOTCONN. Connected here directly, it is a 502 naming the socket, as nginx answers.
error_code connect_unix(beast::basic_stream<stream_protocol>& stream, const waypoint::detail::unix_address& at) {
  auto& socket = stream.socket();
  error_code ec;
  socket.open(stream_protocol(AF_UNIX, SOCK_STREAM), ec);
  if (!ec) socket.native_non_blocking(true, ec);
  if (!ec && ::connect(socket.native_handle(), reinterpret_cast<const sockaddr*>(&at.sockaddr), at.size) != 0)
    ec.assign(errno, boost::system::system_category());
  if (ec) {
    error_code ignored;
    socket.close(ignored);
  }
  return ec;
}

// Closes a connection whose listener options.trust_unix_peer refuses, before anything is
// written to it, and throws the 502 that names it.
void refuse_untrusted_peer(beast::basic_stream<stream_protocol>& stream, const parsed_url& url,
                           const upstream_options& options) {
  ucred peer{};
  bool read = waypoint::detail::read_peer_credentials(stream.socket().native_handle(), peer);
  waypoint::beast::peer_credentials who{peer.pid, peer.uid, peer.gid};
  if (read && options.trust_unix_peer(who)) return;
  error_code ignored;
  stream.socket().close(ignored);
  throw http_error(502, "upstream " + options.url + ": the unix socket " + url.unix_socket_name +
                            (read ? " is served by pid " + std::to_string(peer.pid) + " (uid " +
                                        std::to_string(peer.uid) + "), which it does not trust"
                                  : " has a peer whose credentials cannot be read") +
                            "; nothing was sent.");
}

asio::awaitable<std::unique_ptr<connection>> connect(const parsed_url& url, const upstream_options& options,
                                                     waypoint::beast::resource_permit descriptor) {
  auto executor = co_await asio::this_coro::executor;
  auto deadline = std::chrono::steady_clock::now() + options.connect_timeout;
  auto c = std::make_unique<connection>(executor, std::move(descriptor));
  error_code ec;
  if (url.unix_socket) {
    ec = connect_unix(c->stream, *url.unix_socket);
  } else {
    std::vector<stream_protocol::endpoint> endpoints = co_await tcp_endpoints_of(url, options, deadline);
    // One deadline for all the attempts; each opens a socket of its endpoint's family.
    c->stream.expires_at(deadline);
    std::tie(ec, std::ignore) = co_await c->stream.async_connect(endpoints, as_tuple_awaitable);
    // Requests go out in one write (a unix socket has no Nagle delay to turn off); without
    // it they still go out, so its failure is no failure.
    error_code ignored;
    if (!ec) c->stream.socket().set_option(tcp::no_delay(true), ignored);
  }
  if (ec) throw_failure(options.url, step::connect, ec, options.connect_timeout, url.unix_socket_name);
  if (url.unix_socket && options.trust_unix_peer) refuse_untrusted_peer(c->stream, url, options);
  co_return c;
}

struct exchange_result {
  error_code ec;
  // The failure came before any byte of a response: on a pooled connection the upstream
  // had closed it, so the request may be sent again.
  bool nothing_received = false;
  std::optional<response> message;
  bool keep_alive = false;
  bool streamed = false;  // the response went to the context as it arrived: no message
};

bool closed_before_response(error_code ec, std::size_t parsed, const beast::flat_buffer& buffer) {
  if (ec == http::error::end_of_stream) return true;
  bool broken = ec == asio::error::connection_reset || ec == asio::error::broken_pipe || ec == asio::error::eof;
  return broken && parsed == 0 && buffer.size() == 0;
}

// A response whose length is unknown ahead (chunked, or until the upstream closes: an event
// stream, say) goes to `ctx` piece by piece as it arrives, never whole in memory, so it has
// no length limit; response_timeout bounds each wait for the next piece instead.
// The upstream's head becomes the answer's, with the fields the layers set before the
// handler ran (X-Request-Id, say) that the upstream did not send itself.
void adopt_head(response& answer, http::response_header<> head) {
  for (const auto& field : answer.base())
    if (head.find(field.name_string()) == head.end()) head.insert(field.name_string(), field.value());
  answer.base() = std::move(head);
}

asio::awaitable<void> stream_response(connection& c, http::response_parser<http::string_body>& parser,
                                      context& ctx, const upstream_options& options, exchange_result& result) {
  result.streamed = true;
  strip_hop_by_hop(parser.get());
  adopt_head(ctx.response().message(), parser.get().base());
  parser.body_limit(boost::none);
  while (!parser.is_done()) {
    c.stream.expires_after(options.response_timeout);
    auto [ec, n] = co_await http::async_read_some(c.stream, c.buffer, parser, as_tuple_awaitable);
    c.stream.expires_never();  // the client's write below has the server's own timeout
    std::string& piece = parser.get().body();
    if (!piece.empty()) {
      co_await ctx.write_chunk(piece);
      piece.clear();  // the parser appends at the string's end
    }
    if (ec) {
      result.ec = ec;
      co_return;
    }
  }
  result.keep_alive = parser.keep_alive();
}

// `stream_to`: where a response of unknown length goes (stream_response); null to hold
// every response whole.
asio::awaitable<exchange_result> exchange(connection& c, request& req, const upstream_options& options,
                                          context* stream_to) {
  exchange_result result;
  c.stream.expires_after(options.response_timeout);  // one deadline for write and whole read
  auto [write_ec, written] = co_await http::async_write(c.stream, req, as_tuple_awaitable);
  if (write_ec) {
    result.ec = write_ec;
    result.nothing_received = write_ec != beast::error::timeout && write_ec != asio::error::operation_aborted;
    co_return result;
  }
  std::size_t budget = options.max_response_bytes;
  while (true) {
    http::response_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(budget, std::numeric_limits<std::uint32_t>::max())));
    parser.body_limit(budget);
    if (req.method() == http::verb::head) parser.skip(true);
    auto [header_ec, header_bytes] = co_await http::async_read_header(c.stream, c.buffer, parser, as_tuple_awaitable);
    if (header_ec) {
      result.ec = header_ec;
      result.nothing_received = budget == options.max_response_bytes &&
                                closed_before_response(header_ec, header_bytes, c.buffer);
      co_return result;
    }
    budget -= std::min(budget, header_bytes);
    unsigned status = parser.get().result_int();
    if (status == 101) {
      result.ec = http::error::bad_status;  // the Upgrade field was removed, so this is the upstream's bug
      co_return result;
    }
    if (status >= 100 && status < 200) continue;  // an interim response; the final one follows
    if (stream_to && !parser.content_length() && req.method() != http::verb::head && status != 204 &&
        status != 304) {
      co_await stream_response(c, parser, *stream_to, options, result);
      co_return result;
    }
    parser.body_limit(budget);
    auto [body_ec, body_bytes] = co_await http::async_read(c.stream, c.buffer, parser, as_tuple_awaitable);
    if (body_ec) {
      result.ec = body_ec;
      co_return result;
    }
    result.keep_alive = parser.keep_alive();
    response res = parser.release();
    bool chunked = res.chunked();
    strip_hop_by_hop(res);
    if (chunked && req.method() != http::verb::head) res.content_length(res.body().size());
    result.message = std::move(res);
    co_return result;
  }
}

}  // namespace

struct detail::upstream_state {
  explicit upstream_state(upstream_options o)
      : options(std::move(o)),
        url(parse_url(options.url)),
        pool(std::make_shared<connection_pool>(options.max_idle_connections)) {}

  upstream_options options;
  parsed_url url;
  std::shared_ptr<connection_pool> pool;
};

namespace {

void check_options(const upstream_options& o) {
  if (o.connect_timeout <= std::chrono::milliseconds::zero())
    throw std::invalid_argument("upstream: connect_timeout must be positive");
  if (o.response_timeout <= std::chrono::milliseconds::zero())
    throw std::invalid_argument("upstream: response_timeout must be positive");
  if (o.max_response_bytes == 0) throw std::invalid_argument("upstream: max_response_bytes must be positive");
}

void prepare_request(request& req, const parsed_url& url) {
  std::string_view target = req.target();
  if (target.empty() || target.front() != '/')
    throw http_error(400, "The request target must be a path starting with '/' to be proxied.");
  if (!url.base_path.empty()) req.target(url.base_path + std::string(target));
  strip_hop_by_hop(req);
  req.erase(http::field::expect);  // the whole body is here; waiting for 100 gains nothing
  req.set(http::field::host, url.authority);
  req.version(11);
  req.prepare_payload();
}

// The send itself, given the shared state by value so that the pool outlives the upstream
// object when a send is still in flight.
// `descriptor`: the permit for a new connection (a pooled one holds its own); throws when
// refused.
// `stream_to`: as exchange() takes it; the result is empty when the response went there.
asio::awaitable<std::optional<response>> send_on(std::shared_ptr<detail::upstream_state> state, request req,
                                                 std::function<waypoint::beast::resource_permit()> descriptor,
                                                 context* stream_to);

}  // namespace

upstream::upstream(upstream_options options) {
  check_options(options);
  state_ = std::make_shared<detail::upstream_state>(std::move(options));
}

const std::string& upstream::base_url() const noexcept { return state_->options.url; }

asio::awaitable<response> upstream::send(request req) const {
  co_return *co_await send_on(state_, std::move(req), [] { return waypoint::beast::resource_permit::unbounded(); },
                              nullptr);
}

namespace {

asio::awaitable<std::optional<response>> send_for(const std::shared_ptr<detail::upstream_state>& state,
                                                  context& ctx, request req, context* stream_to) {
  strip_hop_by_hop(req);  // before the trace is added, which the client's Connection may name
  propagate_trace(ctx, req);
  return send_on(state, std::move(req), [&ctx] { return require_descriptor(ctx, "a connection to the upstream"); },
                 stream_to);
}

}  // namespace

asio::awaitable<response> upstream::send(context& ctx, request req) const {
  co_return *co_await send_for(state_, ctx, std::move(req), nullptr);
}

asio::awaitable<void> upstream::relay(context& ctx, request req) const {
  std::optional<response> res = co_await send_for(state_, ctx, std::move(req), &ctx);
  if (!res) co_return;  // streamed
  res->version(ctx.request().version());
  response& answer = ctx.response().message();
  adopt_head(answer, std::move(res->base()));
  answer.body() = std::move(res->body());
}

namespace {

// The client's node in X-Forwarded-For and in Forwarded's for= (RFC 7239 §6).
//
// A unix peer has no IP address. X-Forwarded-For has no grammar for anything else, so it
// gets exactly what nginx puts there for a unix client ($remote_addr is "unix:"): the one
// non-address its consumers (log parsers, real-IP modules that skip what does not parse)
// already meet, rather than a "unix:4242" only waypoint would send. Forwarded has a grammar
// for this case: an obfuscated identifier (§6.3, "_" then letters, digits, '.', '_', '-';
// a token, so unquoted) names a node that has no address to give, and "_unix-4242" lets the
// upstream tell local clients apart and match the access log's "unix:4242". The pid is no
// secret from a host's own processes, and reveals nothing of the network. Without the
// peer's credentials the node is "unknown" (§6.2).
struct client_node {
  std::string forwarded_for;  // the X-Forwarded-For element
  std::string forwarded;      // the Forwarded for= value
};

client_node node_of(const context& ctx) {
  const auto& ends = ctx.endpoints();
  const std::string& address = ends.remote.address;
  if (address.starts_with("unix:")) {
    if (!ends.peer) return {"unix:", "unknown"};
    return {"unix:", "_unix-" + std::to_string(ends.peer->pid)};
  }
  // An IPv6 address is bracketed, and then quoted (':' is not a token byte).
  if (address.find(':') != std::string::npos) return {address, "\"[" + address + "]\""};
  return {address, address};
}

}  // namespace

request forwarded_request(const context& ctx, std::string_view via) {
  request out(ctx.request());
  strip_hop_by_hop(out);
  append_element(out, "Via", via);
  client_node client = node_of(ctx);
  append_element(out, "X-Forwarded-For", client.forwarded_for);
  std::string element = "for=" + client.forwarded;
  element += ctx.endpoints().local.tls ? ";proto=https" : ";proto=http";
  append_element(out, "Forwarded", element);
  return out;
}

namespace {

asio::awaitable<std::optional<response>> send_on(std::shared_ptr<detail::upstream_state> state, request req,
                                                 std::function<waypoint::beast::resource_permit()> descriptor,
                                                 context* stream_to) {
  const upstream_options& options = state->options;
  prepare_request(req, state->url);
  auto executor = co_await asio::this_coro::executor;
  std::unique_ptr<connection> c = state->pool->take(executor);
  bool retried = false;
  while (true) {
    bool pooled = c != nullptr;
    if (!c) c = co_await connect(state->url, options, descriptor());
    exchange_result result = co_await exchange(*c, req, options, stream_to);
    if (result.streamed && !result.ec) {
      if (result.keep_alive) state->pool->put(std::move(c));
      co_return std::nullopt;
    }
    if (result.message) {
      if (result.keep_alive) state->pool->put(std::move(c));
      co_return std::move(result.message);
    }
    c.reset();  // a failed connection is never reused
    if (pooled && !retried && result.nothing_received && !result.streamed && idempotent(req.method())) {
      retried = true;
      continue;
    }
    throw_failure(options.url, step::exchange, result.ec, options.response_timeout);
  }
}

}  // namespace
}  // namespace waypoint::app
