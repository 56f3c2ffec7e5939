// WebSocket routes served by waypoint::beast::server, with a client that is not ours:
// Debian's python3-websockets, or raw bytes on a plain socket for frames a conforming
// client never sends (tests/app/websocket_client.py). Each row is one client case.
#include "access_log_capture.hpp"

#include <waypoint/app/middleware.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/websocket.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "../support/command.hpp"
#include "../support/missing_tool.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint::app;

// Debian's interpreter first: a pyenv or venv python3 on PATH may lack the package.
std::string python() { return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

struct user {
  std::string name;
};

awaitable<void> echo(websocket& ws) {
  while (auto message = co_await ws.read()) co_await ws.write(*message);
}

// The flood route's record: how far its queue grew and whether a write was refused.
struct flood_record {
  std::size_t writes = 0;      // writes started
  std::size_t running = 0;     // writes whose coroutine has not ended
  std::size_t max_queued = 0;  // the largest queued_bytes() seen
  bool refused = false;        // a write threw no_buffer_space
  bool open_after = true;      // the connection was open after the refusal
};
flood_record flood;
constexpr std::size_t flood_queue_bytes = 256 * 1024;
constexpr std::size_t flood_message_bytes = 16 * 1024;

awaitable<void> flood_write(websocket& ws, const std::string& message) {
  try {
    co_await ws.write_binary(message);
  } catch (const boost::system::system_error& e) {
    if (e.code() == boost::asio::error::no_buffer_space) {
      flood.refused = true;
      flood.open_after = ws.is_open();
    }
  }
  --flood.running;
}

// The limits of #29, small: 16 frames a message, a 200 ms write timeout, a 256 KiB queue.
websocket_options small_limits() {
  websocket_options o;
  o.max_message_frames = 16;
  o.write_timeout = std::chrono::milliseconds(200);
  o.max_queued_bytes = flood_queue_bytes;
  return o;
}

void add_routes(application& app) {
  app.use(request_id());
  serve_websocket(app, "/echo", echo);
  auto authed = app.group("/private", layer_hooks{[](context& ctx) {
                            if (ctx.header(http::field::authorization) != "Bearer ok") {
                              ctx.response().problem(401, "a bearer token is required");
                              return false;
                            }
                            ctx.set(user{"tester"});
                            return true;
                          }});
  serve_websocket(authed, "/echo", echo);
  auto greeted = app.group("", layer_hooks{[](context& ctx) {
                             ctx.set(user{"tester"});
                             return true;
                           }});
  serve_websocket(greeted, "/hello/{name}", [](context& ctx, websocket& ws) -> awaitable<void> {
    co_await ws.write_text("hello " + std::string(ctx.path_value("name")) + ", request " +
                           std::string(ctx.request_id()) + ", user " + ctx.get<user>().name);
    co_await ws.read();
  });
  serve_websocket(app, "/throws", [](websocket&) -> awaitable<void> {
    // As a handler's exception may, it quotes the client: here a line of its own.
    throw std::runtime_error("the handler failed\n{\"level\":\"forged\"}");
    co_return;
  });
  serve_websocket(app, "/once",
                  [](websocket& ws) -> awaitable<void> { co_await ws.write_text("bye"); });
  serve_websocket(app, "/limited", echo, small_limits());
  websocket_options deflate;
  deflate.permessage_deflate = true;
  deflate.deflate_window_bits = 10;
  serve_websocket(app, "/deflate", echo, deflate);
  // Writes from coroutines of its own, one more each turn, to a peer that does not read:
  // the queue fills up to its bound, and the write past it is refused.
  serve_websocket(
      app, "/flood",
      [](websocket& ws) -> awaitable<void> {
        flood = {};
        std::string message(flood_message_bytes, 'x');
        auto executor = co_await boost::asio::this_coro::executor;
        while (ws.is_open()) {
          ++flood.running;
          boost::asio::co_spawn(executor, flood_write(ws, message), boost::asio::detached);
          ++flood.writes;
          co_await boost::asio::post(executor, boost::asio::use_awaitable);
          flood.max_queued = std::max(flood.max_queued, ws.queued_bytes());
        }
        // Writes of other coroutines end before the handler returns (they use `ws`).
        while (flood.running > 0) co_await boost::asio::post(executor, boost::asio::use_awaitable);
      },
      small_limits());
}

// A server of one thread with the routes, started on a free port.
struct served {
  std::mutex log_mutex;
  std::vector<std::string> log;  // guarded by log_mutex: the application's log lines
  application app{{.logger = [this](std::string_view line) {
    std::lock_guard lock(log_mutex);
    log.emplace_back(line);
  }}};
  std::unique_ptr<waypoint::beast::server> server;
  std::uint16_t port = 0;

  // `tls`: the listener speaks TLS with this certificate chain and key.
  explicit served(const waypoint::beast::tls_options* tls = nullptr) {
    add_routes(app);
    waypoint::beast::server_options options;
    options.listen = {{"127.0.0.1", 0}};
    if (tls) {
      options.listen.front().tls = true;
      options.tls = *tls;
    }
    options.threads = 1;
    options.handle_signals = false;
    options.drain_timeout = std::chrono::milliseconds(5000);
    server = std::make_unique<waypoint::beast::server>(with_problem_errors(options),
                                                       dispatch_to(app));
    server->start();
    port = server->endpoints().front().port;
  }
  ~served() {
    server->stop();
    server->wait();
  }
};

// Room for 1,000 client sockets and their server ends in this process and the client.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t want = std::min<rlim_t>(limit.rlim_max, 8192);
  if (limit.rlim_cur < want) {
    limit.rlim_cur = want;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

using waypoint::testing::command_result;

// Runs the client case; `on_ready` runs when the client prints "ready" (the drain case).
template <class OnReady>
command_result run_client(std::uint16_t port, const std::string& name, OnReady on_ready,
                          const std::string& ca = {}) {
  std::string command = (ca.empty() ? "" : "WAYPOINT_WS_CA=" + ca + " ") + python() +
                        " " WAYPOINT_WEBSOCKET_CLIENT " " + std::to_string(port) + " " + name;
  return waypoint::testing::run_command(command, [&](std::string_view line) {
    if (line != "ready\n") return false;
    on_ready();
    return true;
  });
}

class WebSocketClient : public ::testing::TestWithParam<const char*> {};

TEST_P(WebSocketClient, CaseHolds) {
  raise_descriptor_limit();
  served s;
  command_result r = run_client(s.port, GetParam(), [&] { s.server->stop(); });
  if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
  EXPECT_EQ(r.status, 0) << r.output;
  if (std::string_view(GetParam()) != "handler_throws") return;
  // The exception's text is logged by the log's one rule for client text: one line.
  std::lock_guard lock(s.log_mutex);
  auto threw = std::find_if(s.log.begin(), s.log.end(), [](const std::string& line) {
    return line.find("threw; closing with 1011") != std::string::npos;
  });
  ASSERT_NE(threw, s.log.end());
  EXPECT_EQ(threw->find('\n'), std::string::npos) << *threw;
  EXPECT_TRUE(threw->ends_with(R"(: "the handler failed\n{\"level\":\"forged\"}")")) << *threw;
}

// Rows: echo of text and binary; fragments reassembled; 16 MiB refused with 1009 (the
// limit is 1 MiB); an unmasked frame and a reserved opcode closed with 1002; an upgrade
// sent byte by byte, and one with a frame right behind it; pings answered; the server's
// stop closes with 1001; an auth layer answers 401 before any upgrade; the handler sees the
// context the layers filled, and the 101 carries their X-Request-Id; a handler that throws
// closes with 1011, one that returns with 1000; 1,000 sockets at once, each echoing; a
// handshake with a bad key, version or Connection field refused with 400 or 426 naming it;
// 2,000 empty continuation frames closed with 1008 (the default limit is 1,024), 16 frames
// echoed and 17 refused on a route whose limit is 16, 2 MiB in 64 KiB fragments closed with
// 1009; a client that sends and never reads cut by the write timeout; permessage-deflate
// accepted (with the window asked for) and echoing 1 MiB of JSON and random bytes where the
// route turns it on, declined where it does not, and 2 MiB that deflates to a few KiB
// refused with 1009 (the limit is on the inflated message).
INSTANTIATE_TEST_SUITE_P(Rows, WebSocketClient,
                         ::testing::Values("echo_text", "echo_binary", "fragmented", "too_big",
                                           "invalid_frame", "reserved_opcode", "split_upgrade",
                                           "early_frame", "ping_pong", "drain", "unauthorized",
                                           "context_carried", "handler_throws",
                                           "handler_returns", "many_sockets", "bad_handshakes",
                                           "too_many_fragments", "fragment_limit",
                                           "too_big_in_fragments", "non_reader",
                                           "deflate_negotiated", "deflate_declined",
                                           "deflate_inflated_past_the_limit"),
                         [](const ::testing::TestParamInfo<const char*>& row) {
                           return std::string(row.param);
                         });

// The same routes on a TLS listener (wss://): the upgraded connection keeps its TLS stream.
// The certificate is made here with openssl, for 127.0.0.1.
class WebSocketOverTls : public ::testing::TestWithParam<const char*> {};

TEST_P(WebSocketOverTls, CaseHolds) {
  namespace fs = std::filesystem;
  char pattern[] = "/tmp/waypoint-wss-XXXXXX";
  fs::path dir = ::mkdtemp(pattern);
  std::string key = (dir / "key.pem").string(), cert = (dir / "cert.pem").string();
  std::string make = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
                     "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " + key +
                     " -out " + cert + " >/dev/null 2>&1";
  if (std::system(make.c_str()) != 0) WAYPOINT_SKIP_MISSING("openssl (it made no certificate)");
  waypoint::beast::tls_options tls;
  tls.certificate_chain_file = cert;
  tls.private_key_file = key;
  {
    served s(&tls);
    command_result r = run_client(s.port, GetParam(), [&] { s.server->stop(); }, cert);
    if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
    EXPECT_EQ(r.status, 0) << r.output;
  }
  fs::remove_all(dir);
}

// The rows a conforming client can run (the raw-socket ones speak plaintext).
INSTANTIATE_TEST_SUITE_P(Rows, WebSocketOverTls,
                         ::testing::Values("echo_text", "echo_binary", "fragmented", "too_big",
                                           "ping_pong", "drain", "unauthorized",
                                           "fragment_limit", "too_big_in_fragments"),
                         [](const ::testing::TestParamInfo<const char*>& row) {
                           return std::string(row.param);
                         });

// Without the framework: a dispatch that takes the upgrade itself (exchange::upgrade), and
// answers 426 when the request cannot upgrade.
TEST(WebSocketServer, RawDispatchUpgradesThroughTheExchange) {
  namespace wb = waypoint::beast;
  wb::server_options options;
  options.listen = {{"127.0.0.1", 0}};
  options.threads = 1;
  options.handle_signals = false;
  wb::server server(options, [](wb::exchange& x) {
    wb::websocket_upgrade up;
    up.run = [](wb::websocket_channel& ws) -> boost::asio::awaitable<void> {
      wb::websocket_message m;
      while (co_await ws.read(m)) co_await ws.write(m.payload, m.binary);
    };
    if (!x.upgrade(up)) {
      x.response().result(http::status::upgrade_required);
      x.response().set(http::field::upgrade, "websocket");
    }
  });
  server.start();
  for (const char* name : {"raw_server_echo", "raw_server_refuses_what_cannot_upgrade"}) {
    command_result r = run_client(server.endpoints().front().port, name, [] {});
    if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
    EXPECT_EQ(r.status, 0) << name << ": " << r.output;
  }
  server.stop();
  server.wait();
}

// A handler that writes faster than its peer reads: the queue stays within max_queued_bytes,
// the write past it is refused, and the connection is cut (the client, which never reads,
// sees it go).
TEST(WebSocketServer, QueuedWritesAreBoundedForAPeerThatDoesNotRead) {
  served s;
  command_result r = run_client(s.port, "flood", [] {});
  if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
  EXPECT_EQ(r.status, 0) << r.output;
  s.server->stop();  // the handler is done, and its record is this thread's to read
  s.server->wait();
  EXPECT_TRUE(flood.refused) << flood.writes << " writes";
  EXPECT_FALSE(flood.open_after);
  EXPECT_LE(flood.max_queued, flood_queue_bytes);
  EXPECT_GE(flood.max_queued, flood_queue_bytes - flood_message_bytes);
  std::printf("flood: %zu writes of %zu bytes started, queue at most %zu bytes\n", flood.writes,
              flood_message_bytes, flood.max_queued);
}

// The server's stats see a WebSocket as an open connection until it closes.
TEST(WebSocketServer, DrainClosesSocketsAndTheServerStops) {
  served s;
  command_result r = run_client(s.port, "drain", [&] {
    EXPECT_EQ(s.server->stats().open, 1u);
    s.server->stop();
  });
  if (r.status == 77) WAYPOINT_SKIP_MISSING("python3-websockets");
  EXPECT_EQ(r.status, 0) << r.output;
  s.server->wait();
  EXPECT_EQ(s.server->stats().open, 0u);
}

// A handshake the server refuses is logged with the status the client got, never the 101
// the route meant: the route takes only what is_websocket_upgrade accepts (key and version
// included), so Beast's accept refuses nothing it took; a request without Host is the
// router's 400.
TEST(WebSocketServer, RefusedHandshakeIsLoggedWithTheStatusSent) {
  struct row {
    const char* rule;
    std::string request;
  };
  const std::string key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
  const std::string upgrade = "Connection: Upgrade\r\nUpgrade: websocket\r\n";
  const std::string host = "GET /echo HTTP/1.1\r\nHost: t\r\n" + upgrade;
  const row rows[] = {
      {"no Host", "GET /echo HTTP/1.1\r\n" + upgrade + key + "Sec-WebSocket-Version: 13\r\n\r\n"},
      {"version 8", host + key + "Sec-WebSocket-Version: 8\r\n\r\n"},
      {"short key", host + "Sec-WebSocket-Key: c2hvcnQ=\r\nSec-WebSocket-Version: 13\r\n\r\n"},
      // Found by fuzz_connection: Beast's accept reads Upgrade no further than "h2c/1", and
      // answered a bare 400 (then closed) after the route had taken the upgrade and logged
      // its 101.
      {"websocket after a protocol version",
       "GET /echo HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: h2c/1, websocket\r\n" +
           key + "Sec-WebSocket-Version: 13\r\n\r\n"},
      {"valid", host + key + "Sec-WebSocket-Version: 13\r\n\r\n"},
  };
  waypoint::app::testing::access_log_capture log;
  application app({.logger = [](std::string_view) {}});
  app.use(log.layer());
  serve_websocket(app, "/echo", echo);
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 0}};
  options.threads = 1;
  options.handle_signals = false;
  waypoint::beast::server server(options_for(app, options), dispatch_to(app));
  server.start();
  for (const row& r : rows) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), server.endpoints().front().port});
    boost::asio::write(socket, boost::asio::buffer(r.request));
    std::string got;
    char buffer[4096];
    boost::system::error_code ec;
    while (got.find("\r\n") == std::string::npos && !ec)
      got.append(buffer, socket.read_some(boost::asio::buffer(buffer), ec));
    ASSERT_GE(got.size(), 12u) << r.rule << ": " << got;
    std::string sent = got.substr(9, 3);
    std::vector<std::string> lines = log.take();
    std::string logged = lines.empty() ? std::string() : lines.back();
    EXPECT_NE(logged.find("\"status\":" + sent), std::string::npos)
        << r.rule << ": the client got " << sent << ", the log says " << logged;
    if (std::string_view(r.rule) == "valid") EXPECT_EQ(sent, "101");
    else EXPECT_NE(sent, "101") << r.rule;
  }
  server.stop();
  server.wait();
}

}  // namespace
