// upstream.hpp: sends driven from co_spawn on a test io_context against real upstreams on
// loopback TCP and unix domain sockets — waypoint::beast::server for well-behaved ones, a
// scripted raw socket for the hostile ones (silence, garbage, oversized answers,
// connections closed at bad moments).
#include "loopback_client.hpp"

#include <waypoint/app/http_error.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/operations/trace_context.hpp>
#include <waypoint/app/services/upstream.hpp>
#include <waypoint/beast/server.hpp>
#include <waypoint/detail/unix_address.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/system/system_error.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace wb = waypoint::beast;
using tcp = asio::ip::tcp;
using stream_socket = asio::generic::stream_protocol::socket;
using generic_endpoint = asio::generic::stream_protocol::endpoint;
using waypoint::app::upstream;
using waypoint::app::upstream_options;
using request = http::request<http::string_body>;
using response = http::response<http::string_body>;
using namespace std::chrono_literals;

// A liveness bound for sanitizer builds, not a speed check.
constexpr auto patience = 10s;

request get(std::string target, http::verb method = http::verb::get) {
  request req(method, target, 11);
  req.set(http::field::host, "client.example");
  return req;
}

struct outcome {
  std::optional<response> res;
  std::exception_ptr error;

  // The http_error's status (0 for none or another exception), its detail in `detail`.
  int error_status(std::string* detail = nullptr) const {
    if (!error) return 0;
    try {
      std::rethrow_exception(error);
    } catch (const waypoint::http_error& e) {
      if (detail) *detail = e.detail();
      return e.status();
    } catch (...) {
      return 0;
    }
  }
};

outcome run(asio::io_context& io, const upstream& up, request req) {
  outcome o;
  asio::co_spawn(io, up.send(std::move(req)), [&](std::exception_ptr e, response r) {
    if (e) o.error = e; else o.res = std::move(r);
  });
  io.restart();
  io.run_for(patience);
  return o;
}

upstream_options options_for(std::string url) {
  upstream_options o;
  o.url = std::move(url);
  o.connect_timeout = 300ms;
  o.response_timeout = 300ms;
  return o;
}

// How a test reaches its upstream: loopback TCP, a unix socket file, or an abstract name.
enum class transport { tcp, unix_path, unix_abstract };
constexpr transport every_transport[] = {transport::tcp, transport::unix_path, transport::unix_abstract};

const char* name_of(transport t) {
  switch (t) {
    case transport::tcp: return "tcp";
    case transport::unix_path: return "unix path";
    case transport::unix_abstract: return "unix abstract name";
  }
  return "?";
}

// A unix address no other test, or run, uses: "unix:/tmp/...sock" or "unix:@...".
std::string fresh_unix_address(bool abstract) {
  static std::atomic<int> counter = 0;
  std::string name = "waypoint-upstream-test-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  if (abstract) return "unix:@" + name;
  return "unix:" + (std::filesystem::temp_directory_path() / (name + ".sock")).string();
}

// The URL of a unix listen address: "unix:/p" → "http://unix:/p" (+ ":/base").
std::string unix_url(const std::string& listen, std::string_view base) {
  return "http://" + listen + (base.empty() ? "" : ":" + std::string(base));
}

// A waypoint::beast::server that records each request and answers with `answer`.
class beast_upstream {
 public:
  using answer_function = std::function<void(const wb::request&, wb::response&)>;

  explicit beast_upstream(answer_function answer = {}, transport t = transport::tcp)
      : answer_(std::move(answer)),
        server_(options_for(t), [this](const wb::request& req, wb::response& res) {
          {
            std::lock_guard lock(mutex_);
            seen_.push_back(req);
          }
          if (answer_) answer_(req, res);
        }) {
    server_.start();
    listen_ = server_.endpoints().front();
  }

  // "http://127.0.0.1:PORT" or "http://unix:/path" / "http://unix:@name", then `base`.
  std::string url(std::string_view base = "") const {
    if (listen_.is_unix_socket()) return unix_url(listen_.address, base);
    return "http://127.0.0.1:" + std::to_string(listen_.port) + std::string(base);
  }
  std::uint16_t port() const { return listen_.port; }
  wb::request last_request() {
    std::lock_guard lock(mutex_);
    return seen_.back();
  }
  std::uint64_t connections() const { return server_.stats().connections; }

 private:
  static wb::server_options options_for(transport t) {
    wb::server_options options = waypoint::app::testing::loopback_options();
    if (t != transport::tcp)
      options.listen = {wb::listen_address::unix_socket(fresh_unix_address(t == transport::unix_abstract).substr(5))};
    return options;
  }

  std::mutex mutex_;
  std::vector<wb::request> seen_;
  answer_function answer_;
  wb::server server_;
  wb::listen_address listen_;
};

// A raw listener, on loopback TCP or a unix socket, that runs `script` on each accepted
// connection in turn, on its own thread with blocking I/O: it can send what no HTTP server
// would.
class scripted_upstream {
 public:
  using script = std::function<void(stream_socket&, int index)>;

  explicit scripted_upstream(script s, transport t = transport::tcp)
      : listen_(t == transport::tcp ? "" : fresh_unix_address(t == transport::unix_abstract)),
        acceptor_(io_, endpoint_of(listen_)),
        script_(std::move(s)) {
    if (listen_.empty()) {
      tcp::endpoint bound;
      generic_endpoint local = acceptor_.local_endpoint();
      std::memcpy(bound.data(), local.data(), local.size());
      port_ = bound.port();
    }
    thread_ = std::thread([this] {
      for (int index = 0;; ++index) {
        stream_socket socket(io_);
        boost::system::error_code ec;
        acceptor_.accept(socket, ec);
        if (ec || stopping_) return;
        ++accepted_;
        script_(socket, index);
      }
    });
  }
  ~scripted_upstream() {
    stopping_ = true;
    stream_socket wake(io_);  // unblocks accept()
    boost::system::error_code ec;
    wake.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
    if (listen_.starts_with("unix:/")) std::remove(listen_.c_str() + 5);
  }

  std::string url(std::string_view base = "") const {
    if (!listen_.empty()) return unix_url(listen_, base);
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(base);
  }
  int accepted() const { return accepted_; }

 private:
  // "" for loopback TCP on a free port, else a unix address.
  static generic_endpoint endpoint_of(const std::string& listen) {
    if (listen.empty()) return tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0);
    auto a = waypoint::detail::parse_unix_address(listen);
    return generic_endpoint(&a.sockaddr, a.size);
  }

  std::string listen_;
  asio::io_context io_;
  asio::basic_socket_acceptor<asio::generic::stream_protocol> acceptor_;
  script script_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_ = false;
  std::atomic<int> accepted_ = 0;
  std::thread thread_;
};

// Reads one request; false when the connection closed or broke first.
bool read_request(stream_socket& socket, boost::beast::flat_buffer& buffer) {
  request req;
  boost::system::error_code ec;
  http::read(socket, buffer, req, ec);
  return !ec;
}

void write_text(stream_socket& socket, std::string_view text) {
  boost::system::error_code ec;
  asio::write(socket, asio::buffer(text), ec);
}

// Blocks until the client closes the connection.
void wait_closed(stream_socket& socket) {
  char byte;
  boost::system::error_code ec;
  while (!ec) socket.read_some(asio::buffer(&byte, 1), ec);
}

const std::string ok_response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// --- construction ------------------------------------------------------------------

TEST(Upstream, RejectsBadUrlNamingWhatIsWrong) {
  const std::pair<const char*, const char*> rows[] = {
      {"https://example.com", "only http upstreams"},
      {"ftp://example.com", "does not start with http://"},
      {"example.com:80", "does not start with http://"},
      {"http://", "has no host"},
      {"http:///base", "has no host"},
      {"http://user:pw@example.com", "user information"},
      {"http://example.com:0", "port that is not a number in 1..65535"},
      {"http://example.com:65536", "port that is not a number in 1..65535"},
      {"http://example.com:", "port that is not a number in 1..65535"},
      {"http://example.com:8o", "port that is not a number in 1..65535"},
      {"http://[::1", "unclosed '['"},
      {"http://[example]:80", "not an IPv6 address"},
      {"http://[::1]x", "text after its IPv6 host"},
      {"http://example.com/base?x=1", "query or fragment"},
      {"http://exa mple.com", "not a name or an IPv4 address"},
  };
  for (auto [url, why] : rows) {
    try {
      upstream up(options_for(url));
      ADD_FAILURE() << "accepted " << url;
    } catch (const std::invalid_argument& e) {
      std::string message = e.what();
      EXPECT_NE(message.find(std::string("\"") + url + "\""), std::string::npos) << message;
      EXPECT_NE(message.find(why), std::string::npos) << url << ": " << message;
    }
  }
}

// nginx's spelling of a unix upstream: the socket ends at the first ':' after "unix:".
TEST(Upstream, RejectsBadUnixSocketUrlNamingWhatIsWrong) {
  const std::string longest(waypoint::detail::max_unix_path_bytes - 1, 'p');  // with its '/'
  const std::string limit = std::to_string(waypoint::detail::max_unix_path_bytes);
  const std::tuple<const char*, std::string, std::string> rows[] = {
      {"an empty path", "http://unix:", "has an empty path"},
      {"an empty path before a base path", "http://unix::/base", "has an empty path"},
      {"an empty abstract name", "http://unix:@", "has an empty abstract name"},
      {"a path one byte too long names its length and the limit", "http://unix:/" + longest + "x",
       "is " + std::to_string(longest.size() + 2) + " bytes long; a unix socket path holds at most " + limit},
      {"an abstract name too long", "http://unix:@" + longest + "xy",
       "is " + std::to_string(longest.size() + 2) + " bytes long; a unix socket name holds at most " + limit},
      {"a relative path (or a host named unix)", "http://unix:8080", "neither an absolute path"},
      {"a base path without its '/'", "http://unix:/run/a.sock:base", "does not start with '/'"},
      {"nothing after the ':'", "http://unix:/run/a.sock:", "does not start with '/'"},
      {"a query", "http://unix:/run/a.sock:/base?x=1", "query or fragment"},
      {"a query without a base path", "http://unix:/run/a.sock?x=1", "query or fragment"},
      {"https", "https://unix:/run/a.sock", "only http upstreams"},
  };
  for (const auto& [rule, url, why] : rows) {
    try {
      upstream up(options_for(url));
      ADD_FAILURE() << rule << ": accepted " << url;
    } catch (const std::invalid_argument& e) {
      std::string message = e.what();
      EXPECT_NE(message.find("\"" + url + "\""), std::string::npos) << rule << ": " << message;
      EXPECT_NE(message.find(why), std::string::npos) << rule << ": " << message;
    }
  }
}

TEST(Upstream, AcceptsHttpUrlsAndKeepsThemAsGiven) {
  const std::string longest(waypoint::detail::max_unix_path_bytes - 1, 'p');
  for (const std::string& url : std::vector<std::string>{"http://127.0.0.1:8080", "http://[::1]:80/base", "http://example.com",
                          "HTTP://Example.com/x/", "http://a-b.example:1/", "http://unix:/run/app.sock",
                          "http://unix:/run/app.sock:/base/", "http://UNIX:@app:/v1", "http://unix:@app",
                          "http://unix:/" + longest}) {
    EXPECT_EQ(upstream(options_for(url)).base_url(), url);
  }
}

TEST(Upstream, RejectsNonPositiveLimits) {
  upstream_options o = options_for("http://127.0.0.1:1");
  o.connect_timeout = 0ms;
  EXPECT_THROW(upstream{o}, std::invalid_argument);
  o = options_for("http://127.0.0.1:1");
  o.response_timeout = -1ms;
  EXPECT_THROW(upstream{o}, std::invalid_argument);
  o = options_for("http://127.0.0.1:1");
  o.max_response_bytes = 0;
  EXPECT_THROW(upstream{o}, std::invalid_argument);
}

// --- well-behaved upstreams --------------------------------------------------------

// send(ctx, req) from a route behind tracing(): the upstream sees the client's trace with
// the front server's span as the parent, and the client's tracestate.
TEST(Upstream, ForwardsTheTraceWithThisSpanAsParent) {
  namespace wa = waypoint::app;
  beast_upstream backend;
  upstream up(options_for(backend.url()));
  wa::application app({.logger = [](std::string_view) {}});
  app.use(wa::tracing());
  std::string front_span;
  app.get("/front", [&](wa::context& ctx) -> wa::awaitable<void> {
    auto span = ctx.get<wa::trace_context>().span_id_hex();
    front_span.assign(span.data(), span.size());
    wa::response res = co_await up.send(ctx, get("/back"));
    ctx.response().message() = std::move(res);
  });
  wb::server front(wa::testing::loopback_options(), wa::dispatch_to(app));
  front.start();
  request req = get("/front");
  req.set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  req.set("tracestate", "rojo=00f067aa0ba902b7");
  auto answers = wa::testing::exchange(front.endpoints().front().port, {req});
  front.stop();
  front.wait();
  ASSERT_EQ(answers.front().result_int(), 200u);
  wb::request seen = backend.last_request();
  EXPECT_EQ(seen["traceparent"], "00-4bf92f3577b34da6a3ce929d0e0e4736-" + front_span + "-01");
  EXPECT_NE(front_span, "00f067aa0ba902b7");
  EXPECT_EQ(seen["tracestate"], "rojo=00f067aa0ba902b7");
}

// One request to `at` (an IPv4 or IPv6 listener, or a unix one), its response.
response exchange_at(const wb::listen_address& at, request req) {
  asio::io_context io;
  stream_socket socket(io);
  if (at.is_unix_socket()) {
    auto a = waypoint::detail::parse_unix_address(at.address);
    socket.connect(generic_endpoint(&a.sockaddr, a.size));
  } else {
    socket.connect(tcp::endpoint(asio::ip::make_address(at.address), at.port));
  }
  req.prepare_payload();
  http::write(socket, req);
  boost::beast::flat_buffer buffer;
  response res;
  http::read(socket, buffer, res);
  return res;
}

// A proxy's hop: the client's hop-by-hop fields go before the proxy adds its own, so
// `Connection: via, traceparent, x-request-id` removes the client's, never the proxy's
// (before, the loop check's Via was removed); Via, X-Forwarded-For and Forwarded are
// appended to (RFC 9110 §7.6.3, RFC 7239), an IPv6 client quoted as for="[::1]", a unix
// client "unix:" as nginx sends in X-Forwarded-For and the obfuscated node "_unix-PID" in
// Forwarded (§6.3), its pid this test's own.
TEST(Upstream, ForwardedRequestAddsItsFieldsAfterRemovingHopByHop) {
  namespace wa = waypoint::app;
  beast_upstream backend;
  upstream up(options_for(backend.url()));
  wa::application app({.logger = [](std::string_view) {}});
  app.use(wa::tracing());
  app.get("/front", [&](wa::context& ctx) -> wa::awaitable<void> {
    request out = wa::forwarded_request(ctx, "1.1 front");
    out.target("/back");
    out.set("X-Request-Id", "front-id");
    ctx.response().message() = co_await up.send(ctx, std::move(out));
  });
  struct row {
    const char* rule;
    wb::listen_address listen;
    std::vector<std::pair<std::string, std::string>> sent;
    std::vector<std::pair<std::string, std::string>> expected;
  };
  const row rows[] = {
      {"Connection names the proxy's fields", {"127.0.0.1", 0},
       {{"Connection", "via, traceparent, x-request-id"}, {"Via", "1.0 spoof"}},
       {{"Via", "1.1 front"}, {"X-Request-Id", "front-id"}, {"X-Forwarded-For", "127.0.0.1"},
        {"Forwarded", "for=127.0.0.1;proto=http"}}},
      {"earlier hops are appended to", {"127.0.0.1", 0},
       {{"Via", "1.0 earlier"}, {"X-Forwarded-For", "203.0.113.9"},
        {"Forwarded", "for=203.0.113.9"}},
       {{"Via", "1.0 earlier, 1.1 front"}, {"X-Forwarded-For", "203.0.113.9, 127.0.0.1"},
        {"Forwarded", "for=203.0.113.9, for=127.0.0.1;proto=http"}}},
      {"an IPv6 client is quoted", {"::1", 0},
       {},
       {{"X-Forwarded-For", "::1"}, {"Forwarded", "for=\"[::1]\";proto=http"}}},
      {"a unix client is unix: and an obfuscated node with its pid",
       wb::listen_address::unix_socket(fresh_unix_address(true).substr(5)),
       {{"X-Forwarded-For", "203.0.113.9"}},
       {{"X-Forwarded-For", "203.0.113.9, unix:"},
        {"Forwarded", "for=_unix-" + std::to_string(::getpid()) + ";proto=http"}}},
  };
  for (const row& r : rows) {
    wb::server_options options = wa::testing::loopback_options();
    options.listen = {r.listen};
    std::unique_ptr<wb::server> front;
    try {
      front = std::make_unique<wb::server>(options, wa::dispatch_to(app));
      front->start();
    } catch (const std::exception& e) {
      ADD_FAILURE() << r.rule << ": cannot listen on " << r.listen.address << ": " << e.what();
      continue;
    }
    request req = get("/front");
    for (const auto& [name, value] : r.sent) req.set(name, value);
    response answer = exchange_at(front->endpoints().front(), req);
    front->stop();
    front->wait();
    ASSERT_EQ(answer.result_int(), 200u) << r.rule;
    wb::request seen = backend.last_request();
    for (const auto& [name, value] : r.expected)
      EXPECT_EQ(seen[name], value) << r.rule << ": " << name;
    EXPECT_EQ(seen["traceparent"].size(), 55u) << r.rule << ": the proxy's trace reached it";
  }
}

TEST(Upstream, PassesStatusHeadersAndBodyThrough) {
  beast_upstream server([](const wb::request& req, wb::response& res) {
    res.result(http::status::created);
    res.set("X-Upstream", "yes");
    res.body() = std::string(req.method_string()) + " body=" + req.body();
  });
  upstream up(options_for(server.url()));
  asio::io_context io;
  request req = get("/orders", http::verb::post);
  req.body() = "{\"n\":1}";
  outcome o = run(io, up, std::move(req));
  ASSERT_TRUE(o.res) << o.error_status();
  EXPECT_EQ(o.res->result(), http::status::created);
  EXPECT_EQ((*o.res)["X-Upstream"], "yes");
  EXPECT_EQ(o.res->body(), "POST body={\"n\":1}");
  wb::request seen = server.last_request();
  EXPECT_EQ(seen[http::field::host], "127.0.0.1:" + std::to_string(server.port()))
      << "Host names the upstream, not the client's host";
  EXPECT_EQ(seen[http::field::content_length], "7");
}

TEST(Upstream, JoinsBasePathAndTarget) {
  beast_upstream server;
  const std::tuple<const char*, const char*, const char*> rows[] = {
      {"", "/x?q=1", "/x?q=1"},
      {"/", "/x", "/x"},
      {"/base", "/x", "/base/x"},
      {"/base/", "/x?y=2", "/base/x?y=2"},
      {"/base", "/", "/base/"},
      {"/a/b", "/c/d%20e", "/a/b/c/d%20e"},
  };
  asio::io_context io;
  for (auto [base, target, expected] : rows) {
    upstream up(options_for(server.url(base)));
    outcome o = run(io, up, get(target));
    ASSERT_TRUE(o.res) << base << " + " << target;
    EXPECT_EQ(server.last_request().target(), expected) << base << " + " << target;
  }
}

TEST(Upstream, TargetThatIsNotOriginFormIs400) {
  upstream up(options_for("http://127.0.0.1:1"));
  asio::io_context io;
  for (const char* target : {"*", "http://example.com/x", ""}) {
    outcome o = run(io, up, get(target));
    EXPECT_EQ(o.error_status(), 400) << target;
  }
}

TEST(Upstream, StripsHopByHopRequestFields) {
  beast_upstream server;
  upstream up(options_for(server.url()));
  asio::io_context io;
  request req = get("/x");
  req.set(http::field::connection, "keep-alive, X-Hop-Named");
  req.set("X-Hop-Named", "1");
  req.set(http::field::keep_alive, "timeout=5");
  req.set(http::field::te, "trailers");
  req.set(http::field::trailer, "X-Checksum");
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::proxy_authorization, "Basic abc");
  req.set("Proxy-Connection", "keep-alive");
  req.set(http::field::expect, "100-continue");
  req.set("X-End-To-End", "kept");
  ASSERT_TRUE(run(io, up, std::move(req)).res);
  wb::request seen = server.last_request();
  for (const char* name : {"Connection", "X-Hop-Named", "Keep-Alive", "TE", "Trailer", "Upgrade",
                           "Proxy-Authorization", "Proxy-Connection", "Expect"})
    EXPECT_EQ(seen.count(name), 0u) << name << " reached the upstream";
  EXPECT_EQ(seen["X-End-To-End"], "kept");
}

TEST(Upstream, StripsHopByHopResponseFieldsAndDechunks) {
  scripted_upstream server([](stream_socket& s, int) {
    boost::beast::flat_buffer buffer;
    if (!read_request(s, buffer)) return;
    write_text(s,
               "HTTP/1.1 200 OK\r\nConnection: X-Secret\r\nX-Secret: 1\r\nKeep-Alive: timeout=5\r\n"
               "Proxy-Authenticate: Basic\r\nUpgrade: h2c\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n"
               "X-Kept: yes\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    wait_closed(s);
  });
  upstream up(options_for(server.url()));
  asio::io_context io;
  outcome o = run(io, up, get("/x"));
  ASSERT_TRUE(o.res) << o.error_status();
  EXPECT_EQ(o.res->body(), "hello");
  EXPECT_EQ((*o.res)[http::field::content_length], "5");
  for (const char* name : {"Connection", "X-Secret", "Keep-Alive", "Proxy-Authenticate", "Upgrade",
                           "Trailer", "Transfer-Encoding"})
    EXPECT_EQ(o.res->count(name), 0u) << name << " reached the client";
  EXPECT_EQ((*o.res)["X-Kept"], "yes");
}

// trust_unix_peer is asked, with the listener's SO_PEERCRED, before anything is written: a
// refused listener gets a closed connection and no byte of the request (issue #44: a
// child service's socket taken by another local user received clients' Authorization).
TEST(Upstream, SendsNothingToAUnixListenerItDoesNotTrust) {
  std::atomic<int> requests = 0;
  scripted_upstream server([&](stream_socket& s, int) {
    boost::beast::flat_buffer buffer;
    if (!read_request(s, buffer)) return;
    ++requests;
    write_text(s, ok_response);
    wait_closed(s);
  }, transport::unix_path);
  std::optional<waypoint::beast::peer_credentials> asked;
  upstream_options refusing = options_for(server.url());
  refusing.trust_unix_peer = [&](const waypoint::beast::peer_credentials& peer) {
    asked = peer;
    return false;
  };
  asio::io_context io;
  request secret = get("/x");
  secret.set(http::field::authorization, "Bearer secret");
  std::string detail;
  EXPECT_EQ(run(io, upstream(refusing), secret).error_status(&detail), 502);
  EXPECT_NE(detail.find(" is served by pid " + std::to_string(::getpid()) + " (uid " +
                        std::to_string(::geteuid()) + "), which it does not trust; nothing was sent."),
            std::string::npos)
      << detail;
  ASSERT_TRUE(asked);
  EXPECT_EQ(asked->pid, ::getpid());  // the listener is this test's thread
  EXPECT_EQ(asked->uid, ::geteuid());

  upstream_options trusting = options_for(server.url());
  trusting.trust_unix_peer = [](const waypoint::beast::peer_credentials& peer) { return peer.pid == ::getpid(); };
  outcome o = run(io, upstream(trusting), secret);
  ASSERT_TRUE(o.res) << o.error_status();
  EXPECT_EQ(o.res->body(), "ok");
  EXPECT_EQ(requests.load(), 1) << "the refused send reached the listener";
}

TEST(Upstream, ReusesOneConnectionForSequentialSends) {
  beast_upstream server([](const wb::request&, wb::response& res) { res.body() = "pong"; });
  upstream up(options_for(server.url()));
  asio::io_context io;
  for (int i = 0; i < 3; ++i) {
    outcome o = run(io, up, get("/ping"));
    ASSERT_TRUE(o.res) << "send " << i;
    EXPECT_EQ(o.res->body(), "pong");
  }
  EXPECT_EQ(server.connections(), 1u);
}

TEST(Upstream, PoolsConnectionsPerExecutorAcrossThreads) {
  beast_upstream server([](const wb::request&, wb::response& res) { res.body() = "pong"; });
  upstream up(options_for(server.url()));
  std::atomic<int> answered = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      asio::io_context io;
      for (int i = 0; i < 5; ++i)
        if (run(io, up, get("/ping")).res) ++answered;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(answered, 10);
  EXPECT_EQ(server.connections(), 2u) << "one connection per executor, each reused";
}

// The pool is sharded by execution context (32 shards): with more contexts than shards
// some share one, and each still gets back only the connection its own context made.
TEST(Upstream, PoolsPerExecutorWhenContextsOutnumberTheShards) {
  beast_upstream server([](const wb::request&, wb::response& res) { res.body() = "pong"; });
  upstream up(options_for(server.url()));
  constexpr int contexts = 40;
  std::atomic<int> answered = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < contexts; ++t) {
    threads.emplace_back([&] {
      asio::io_context io;
      for (int i = 0; i < 3; ++i)
        if (run(io, up, get("/ping")).res) ++answered;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(answered, 3 * contexts);
  EXPECT_EQ(server.connections(), static_cast<std::uint64_t>(contexts))
      << "one connection per context, each reused by its own context only";
}

TEST(Upstream, PooledConnectionsOutliveTheirIoContext) {
  beast_upstream server([](const wb::request&, wb::response& res) { res.body() = "pong"; });
  upstream up(options_for(server.url()));
  for (int round = 0; round < 2; ++round) {
    asio::io_context io;  // destroyed with a connection still pooled
    ASSERT_TRUE(run(io, up, get("/ping")).res) << "round " << round;
  }
  EXPECT_EQ(server.connections(), 2u) << "a dead context's connections are closed, not reused";
}

TEST(Upstream, ResolvesHostNames) {
  beast_upstream server([](const wb::request&, wb::response& res) { res.body() = "named"; });
  upstream up(options_for("http://localhost:" + std::to_string(server.port())));
  asio::io_context io;
  outcome o = run(io, up, get("/"));
  ASSERT_TRUE(o.res) << o.error_status();
  EXPECT_EQ(o.res->body(), "named");
  EXPECT_EQ(server.last_request()[http::field::host], "localhost:" + std::to_string(server.port()));
}

// --- unix domain sockets -------------------------------------------------------------

TEST(Upstream, UnixSocketCarriesGetAndPostWithLocalhostAsHost) {
  struct row {
    const char* rule;
    transport over;
    http::verb method;
    std::string body;
    std::string expected;
  };
  const row rows[] = {
      {"GET over a socket file", transport::unix_path, http::verb::get, "", "GET body="},
      {"POST over a socket file", transport::unix_path, http::verb::post, "{\"n\":1}", "POST body={\"n\":1}"},
      {"GET over an abstract name", transport::unix_abstract, http::verb::get, "", "GET body="},
      {"POST over an abstract name", transport::unix_abstract, http::verb::post, "x", "POST body=x"},
  };
  for (const row& r : rows) {
    beast_upstream server([](const wb::request& req, wb::response& res) {
      res.result(http::status::created);
      res.body() = std::string(req.method_string()) + " body=" + req.body();
    }, r.over);
    upstream up(options_for(server.url()));
    asio::io_context io;
    request req = get("/orders", r.method);
    req.body() = r.body;
    outcome o = run(io, up, std::move(req));
    ASSERT_TRUE(o.res) << r.rule << ": " << o.error_status();
    EXPECT_EQ(o.res->result(), http::status::created) << r.rule;
    EXPECT_EQ(o.res->body(), r.expected) << r.rule;
    wb::request seen = server.last_request();
    EXPECT_EQ(seen[http::field::host], "localhost") << r.rule << ": a socket has no authority";
    EXPECT_EQ(seen.target(), "/orders") << r.rule;
  }
}

// The pool keys connections by executor, not by transport: a unix connection is kept and
// reused, counted by the server's accepts and the raw listener's.
TEST(Upstream, UnixSocketConnectionIsPooledAndReused) {
  for (transport t : {transport::unix_path, transport::unix_abstract}) {
    beast_upstream server([](const wb::request&, wb::response& res) { res.body() = "pong"; }, t);
    upstream up(options_for(server.url()));
    asio::io_context io;
    for (int i = 0; i < 3; ++i) {
      outcome o = run(io, up, get("/ping"));
      ASSERT_TRUE(o.res) << name_of(t) << ", send " << i << ": " << o.error_status();
      EXPECT_EQ(o.res->body(), "pong");
    }
    EXPECT_EQ(server.connections(), 1u) << name_of(t);

    scripted_upstream raw([](stream_socket& s, int) {
      boost::beast::flat_buffer buffer;
      while (read_request(s, buffer)) write_text(s, ok_response);
    }, t);
    upstream raw_up(options_for(raw.url()));
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(run(io, raw_up, get("/ping")).res) << name_of(t) << ", raw send " << i;
    EXPECT_EQ(raw.accepted(), 1) << name_of(t);
  }
}

TEST(Upstream, UnixSocketBasePathPrefixesTheTarget) {
  beast_upstream server({}, transport::unix_path);
  const std::tuple<const char*, const char*, const char*> rows[] = {
      {"", "/x?q=1", "/x?q=1"},
      {"/", "/x", "/x"},
      {"/base", "/x", "/base/x"},
      {"/base/", "/x?y=2", "/base/x?y=2"},
      {"/a/b", "/c/d%20e", "/a/b/c/d%20e"},
  };
  asio::io_context io;
  for (auto [base, target, expected] : rows) {
    upstream up(options_for(server.url(base)));
    outcome o = run(io, up, get(target));
    ASSERT_TRUE(o.res) << server.url(base) << " + " << target << ": " << o.error_status();
    EXPECT_EQ(server.last_request().target(), expected) << server.url(base) << " + " << target;
  }
}

// A listener on `listen` that never accepts, its backlog filled: a unix connect() to it
// fails at once with EAGAIN, where a TCP one would wait.
class full_backlog {
 public:
  explicit full_backlog(const std::string& listen)
      : address_(waypoint::detail::parse_unix_address(listen)), acceptor_(io_) {
    generic_endpoint at(&address_.sockaddr, address_.size);
    acceptor_.open(at.protocol());
    acceptor_.bind(at);
    acceptor_.listen(0);
    for (int i = 0; i < 64; ++i) {  // Linux queues backlog + 1; the bound is for other kernels
      stream_socket& s = fillers_.emplace_back(io_);
      s.open(at.protocol());
      s.native_non_blocking(true);
      if (::connect(s.native_handle(), reinterpret_cast<const sockaddr*>(&address_.sockaddr), address_.size) != 0)
        return;
    }
    ADD_FAILURE() << "the backlog of " << listen << " did not fill";
  }
  ~full_backlog() {
    if (!address_.abstract()) std::remove(address_.path.c_str());
  }

 private:
  waypoint::detail::unix_address address_;
  asio::io_context io_;
  asio::basic_socket_acceptor<asio::generic::stream_protocol> acceptor_;
  std::vector<stream_socket> fillers_;
};

// A socket file that is missing (ENOENT), one nothing listens on (ECONNREFUSED: bound, then
// closed), an abstract name nobody holds, and a listener whose backlog is full (EAGAIN, the
// 502 nginx answers too) are all 502s naming the socket.
TEST(Upstream, UnreachableUnixSocketIs502NamingIt) {
  std::string stale = fresh_unix_address(false);
  {
    asio::io_context io;
    auto a = waypoint::detail::parse_unix_address(stale);
    asio::basic_socket_acceptor<asio::generic::stream_protocol> bound(io, generic_endpoint(&a.sockaddr, a.size));
  }  // closed; the file stays
  std::string busy_path = fresh_unix_address(false);
  std::string busy_name = fresh_unix_address(true);
  full_backlog busy_file(busy_path), busy_abstract(busy_name);
  const std::tuple<const char*, std::string, std::string> rows[] = {
      {"a missing file", fresh_unix_address(false), "No such file or directory"},
      {"a file nothing listens on", stale, "Connection refused"},
      {"an abstract name nobody holds", fresh_unix_address(true), "Connection refused"},
      {"a listener with a full backlog", busy_path, "Resource temporarily unavailable"},
      {"an abstract listener with a full backlog", busy_name, "Resource temporarily unavailable"},
  };
  for (const auto& [rule, listen, why] : rows) {
    upstream up(options_for(unix_url(listen, "/base")));
    asio::io_context io;
    std::string detail;
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(run(io, up, get("/")).error_status(&detail), 502) << rule;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 250ms) << rule << ": at once, not at connect_timeout";
    EXPECT_NE(detail.find("at the unix socket " + listen.substr(5) + " ("), std::string::npos)
        << rule << ": " << detail;
    EXPECT_NE(detail.find(why), std::string::npos) << rule << ": " << detail;
  }
  std::remove(stale.c_str() + 5);
}

TEST(Upstream, SilentUnixUpstreamIs504AfterResponseTimeout) {
  for (transport t : {transport::unix_path, transport::unix_abstract}) {
    scripted_upstream server([](stream_socket& s, int) {
      boost::beast::flat_buffer buffer;
      read_request(s, buffer);
      wait_closed(s);
    }, t);
    upstream_options options = options_for(server.url());
    options.response_timeout = 200ms;
    upstream up(options);
    asio::io_context io;
    auto start = std::chrono::steady_clock::now();
    std::string detail;
    EXPECT_EQ(run(io, up, get("/")).error_status(&detail), 504) << name_of(t);
    auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_GE(elapsed, 200ms) << name_of(t);
    EXPECT_LT(elapsed, 2s) << name_of(t);
    EXPECT_NE(detail.find("did not answer within 200 ms"), std::string::npos) << name_of(t) << ": " << detail;
  }
}

// --- failures ----------------------------------------------------------------------

TEST(Upstream, ConnectionRefusedIs502) {
  std::uint16_t closed_port;
  {
    asio::io_context io;
    tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    closed_port = probe.local_endpoint().port();
  }
  upstream up(options_for("http://127.0.0.1:" + std::to_string(closed_port)));
  asio::io_context io;
  std::string detail;
  EXPECT_EQ(run(io, up, get("/")).error_status(&detail), 502);
  EXPECT_NE(detail.find("could not be connected to"), std::string::npos) << detail;
}

TEST(Upstream, SilentUpstreamIs504AfterResponseTimeout) {
  scripted_upstream server([](stream_socket& s, int) {
    boost::beast::flat_buffer buffer;
    read_request(s, buffer);
    wait_closed(s);
  });
  upstream_options options = options_for(server.url());
  options.response_timeout = 200ms;
  upstream up(options);
  asio::io_context io;
  auto start = std::chrono::steady_clock::now();
  std::string detail;
  EXPECT_EQ(run(io, up, get("/")).error_status(&detail), 504);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, 200ms);
  EXPECT_LT(elapsed, 2s);
  EXPECT_NE(detail.find("did not answer within 200 ms"), std::string::npos) << detail;
}

struct hostile_case {
  const char* rule;
  std::string answer;  // sent after the request, then the connection is closed
  const char* detail_part;
};

TEST(Upstream, HostileResponsesAre502) {
  const std::string big(2000, 'x');
  const hostile_case rows[] = {
      {"garbage", "HELLO WORLD\r\n\r\n", "malformed response"},
      {"body over max_response_bytes", "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'b'),
       "larger than max_response_bytes"},
      {"header over max_response_bytes", "HTTP/1.1 200 OK\r\nX-Big: " + big + "\r\n\r\n",
       "larger than max_response_bytes"},
      {"chunked body over max_response_bytes",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n" + big + "\r\n0\r\n\r\n",
       "larger than max_response_bytes"},
      {"closed mid-body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
       "closed the connection before a complete response"},
      {"closed before any byte", "", "closed the connection before a complete response"},
      {"upgrade the client did not ask for", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
       "malformed response"},
  };
  for (const hostile_case& row : rows) {
    scripted_upstream server([&](stream_socket& s, int) {
      boost::beast::flat_buffer buffer;
      if (!read_request(s, buffer)) return;
      write_text(s, row.answer);
    });
    upstream_options options = options_for(server.url());
    options.max_response_bytes = 1024;
    upstream up(options);
    asio::io_context io;
    std::string detail;
    EXPECT_EQ(run(io, up, get("/")).error_status(&detail), 502) << row.rule;
    EXPECT_NE(detail.find(row.detail_part), std::string::npos) << row.rule << ": " << detail;
  }
}

TEST(Upstream, InterimResponsesAreSkipped) {
  scripted_upstream server([](stream_socket& s, int) {
    boost::beast::flat_buffer buffer;
    if (!read_request(s, buffer)) return;
    write_text(s, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n" + ok_response);
    wait_closed(s);
  });
  upstream up(options_for(server.url()));
  asio::io_context io;
  outcome o = run(io, up, get("/"));
  ASSERT_TRUE(o.res) << o.error_status();
  EXPECT_EQ(o.res->result_int(), 200u);
  EXPECT_EQ(o.res->body(), "ok");
}

// Connection 0 answers one request, then takes the next and closes without answering, as
// an upstream whose idle timeout fires as the request arrives; later connections answer.
void closes_after_first_answer(stream_socket& s, int index) {
  boost::beast::flat_buffer buffer;
  if (!read_request(s, buffer)) return;
  if (index == 0) {
    write_text(s, ok_response);
    read_request(s, buffer);
    return;  // closed unanswered
  }
  write_text(s, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nagain");
  wait_closed(s);
}

TEST(Upstream, StalePooledConnectionIsRetriedForIdempotentMethods) {
  for (transport t : every_transport) {
    for (http::verb method : {http::verb::get, http::verb::put, http::verb::delete_}) {
      scripted_upstream server(closes_after_first_answer, t);
      upstream up(options_for(server.url()));
      asio::io_context io;
      ASSERT_TRUE(run(io, up, get("/first")).res) << name_of(t);
      outcome o = run(io, up, get("/second", method));
      ASSERT_TRUE(o.res) << name_of(t) << ", " << http::to_string(method) << ": " << o.error_status();
      EXPECT_EQ(o.res->body(), "again");
      EXPECT_EQ(server.accepted(), 2) << name_of(t);
    }
  }
}

TEST(Upstream, StalePooledConnectionIsNotRetriedForPost) {
  for (transport t : every_transport) {
    scripted_upstream server(closes_after_first_answer, t);
    upstream up(options_for(server.url()));
    asio::io_context io;
    ASSERT_TRUE(run(io, up, get("/first")).res) << name_of(t);
    std::string detail;
    EXPECT_EQ(run(io, up, get("/second", http::verb::post)).error_status(&detail), 502) << name_of(t);
    EXPECT_NE(detail.find("closed the connection"), std::string::npos) << name_of(t) << ": " << detail;
    EXPECT_EQ(server.accepted(), 1) << name_of(t) << ": a POST may have had its effect; it is not sent twice";
  }
}

TEST(Upstream, IdleConnectionClosedByUpstreamIsNotReused) {
  for (transport t : every_transport) {
    scripted_upstream server([](stream_socket& s, int index) {
      boost::beast::flat_buffer buffer;
      if (!read_request(s, buffer)) return;
      write_text(s, ok_response);
      if (index == 0) return;  // closes the kept-alive connection at once
      wait_closed(s);
    }, t);
    upstream up(options_for(server.url()));
    asio::io_context io;
    ASSERT_TRUE(run(io, up, get("/first")).res) << name_of(t);
    std::this_thread::sleep_for(50ms);  // lets the FIN arrive
    // A POST is never retried, so success shows the closed connection was not picked.
    outcome o = run(io, up, get("/second", http::verb::post));
    ASSERT_TRUE(o.res) << name_of(t) << ": " << o.error_status();
    EXPECT_EQ(server.accepted(), 2) << name_of(t);
  }
}

// One send over `t`, cancelled (terminal) while the upstream is silent: it aborts at once
// and the upstream sees its connection closed.
void cancel_one_send(transport t) {
  std::atomic<bool> upstream_saw_close = false;
  scripted_upstream server([&](stream_socket& s, int) {
    boost::beast::flat_buffer buffer;
    read_request(s, buffer);
    wait_closed(s);
    upstream_saw_close = true;
  }, t);
  upstream_options options = options_for(server.url());
  options.response_timeout = 5s;
  upstream up(options);

  asio::io_context io;
  asio::cancellation_signal client_gone;
  std::exception_ptr error;
  bool finished = false;
  asio::co_spawn(io, up.send(get("/slow")),
                 asio::bind_cancellation_slot(client_gone.slot(), [&](std::exception_ptr e, response) {
                   error = e;
                   finished = true;
                 }));
  asio::steady_timer later(io, 50ms);
  later.async_wait([&](boost::system::error_code) { client_gone.emit(asio::cancellation_type::terminal); });
  auto start = std::chrono::steady_clock::now();
  io.run_for(patience);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  ASSERT_TRUE(finished);
  ASSERT_TRUE(error);
  try {
    std::rethrow_exception(error);
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), asio::error::operation_aborted) << e.what();
  } catch (...) {
    ADD_FAILURE() << "not a system_error";
  }
  for (auto deadline = std::chrono::steady_clock::now() + patience;
       !upstream_saw_close && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(upstream_saw_close) << "the upstream connection stayed open";
}

TEST(Upstream, CancellationClosesTheConnectionAndAborts) {
  for (transport t : every_transport) {
    SCOPED_TRACE(name_of(t));
    cancel_one_send(t);
  }
}

}  // namespace
