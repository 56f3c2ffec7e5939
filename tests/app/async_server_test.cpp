// Coroutine handlers and deferred responses served by waypoint::beast::server over
// loopback: many requests suspended on one thread at once, responses completed from other
// threads in pipeline order, clients that leave while their handler waits, and a server on
// an io_context the test owns.
#include "app_test_support.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/serve.hpp>

#include <gtest/gtest.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <chrono>
#include <thread>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
namespace asio = boost::asio;
namespace wb = waypoint::beast;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

awaitable<void> sleep_for(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

wb::server_options one_thread() {
  wb::server_options o;
  o.listen = {{"127.0.0.1", 0}};
  o.threads = 1;
  o.handle_signals = false;
  return o;
}

// One GET on a new connection, from a coroutine of the client's io_context; the status,
// or 0 when the connection failed.
awaitable<unsigned> get(std::uint16_t port, std::string target) {
  tcp::socket socket(co_await asio::this_coro::executor);
  boost::system::error_code ec;
  co_await socket.async_connect({asio::ip::make_address("127.0.0.1"), port},
                                asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return 0;
  request req = make_request("GET", target);
  co_await http::async_write(socket, req, asio::redirect_error(asio::use_awaitable, ec));
  boost::beast::flat_buffer buffer;
  response res;
  co_await http::async_read(socket, buffer, res, asio::redirect_error(asio::use_awaitable, ec));
  co_return ec ? 0 : res.result_int();
}

// Room for both ends of `connections` loopback sockets in this process.
void raise_descriptor_limit(std::size_t connections) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  rlim_t wanted = 2 * connections + 256;
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur = std::min(wanted, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

TEST(AsyncServer, ThousandSuspendedRequestsDoNotBlockTheThread) {
  constexpr std::size_t in_flight = 1000;
  raise_descriptor_limit(in_flight);
  application app;
  app.get("/sleep", [](context& ctx) -> awaitable<void> {
    co_await sleep_for(200ms);
    ctx.response().body("rested");
  });
  app.get("/now", [](context& ctx) { ctx.response().body("now"); });
  wb::server server(one_thread(), dispatch_to(app));
  server.start();
  std::uint16_t port = server.endpoints().front().port;

  asio::io_context client;
  std::vector<unsigned> statuses;
  clock_type::time_point last_done{};
  auto start = clock_type::now();
  for (std::size_t i = 0; i < in_flight; ++i) {
    asio::co_spawn(client, get(port, "/sleep"), [&](std::exception_ptr, unsigned status) {
      statuses.push_back(status);
      last_done = clock_type::now();
    });
  }
  // Meanwhile plain requests on their own connections, one after another.
  std::vector<clock_type::duration> plain;
  asio::co_spawn(
      client,
      [&]() -> awaitable<void> {
        co_await sleep_for(20ms);  // the slow ones are being accepted and suspended
        while (statuses.size() < in_flight && plain.size() < 200) {
          auto sent = clock_type::now();
          unsigned status = co_await get(port, "/now");
          EXPECT_EQ(status, 200u);
          plain.push_back(clock_type::now() - sent);
        }
      },
      asio::detached);
  client.run();
  server.stop();
  server.wait();

  ASSERT_EQ(statuses.size(), in_flight);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 200u), static_cast<long>(in_flight));
  auto together = last_done - start;
  // 1,000 requests that each wait 200 ms, on one server thread: together about 200 ms
  // plus the connecting; a thread blocked per request would need 200 s.
  EXPECT_LT(together, 3s);
  ASSERT_FALSE(plain.empty());
  std::sort(plain.begin(), plain.end());
  auto p99 = plain[plain.size() * 99 / 100];
  std::printf("1000 suspended requests done in %lld ms; %zu plain requests meanwhile, p99 %lld us\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(together).count()),
              plain.size(),
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::microseconds>(p99).count()));
  EXPECT_LT(p99, 1s) << "plain requests kept being answered";
}

// Sends `bytes` on one connection, in writes of at most `piece` bytes a little apart (so
// that a request and the next arrive in separate reads, also while one is deferred), and
// reads `count` responses.
std::vector<response> pipeline(std::uint16_t port, const std::string& bytes, std::size_t count,
                               std::size_t piece = std::string::npos) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  socket.set_option(tcp::no_delay(true));
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    asio::write(socket, asio::buffer(bytes.data() + at, std::min(piece, bytes.size() - at)));
    if (piece < bytes.size()) std::this_thread::sleep_for(200us);
  }
  std::vector<response> out;
  boost::beast::flat_buffer buffer;
  for (std::size_t i = 0; i < count; ++i) {
    response res;
    http::read(socket, buffer, res);
    out.push_back(std::move(res));
  }
  return out;
}

std::string get_text(std::string_view target) {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n\r\n";
}

TEST(AsyncServer, DeferredFromOtherThreadsKeepPipelineOrder) {
  application app;
  std::vector<std::thread> workers;
  std::mutex workers_mutex;
  app.get("/later/{ms}", [&](context& ctx) {
    int ms = ctx.path_value<int>("ms");
    std::lock_guard lock(workers_mutex);
    workers.emplace_back([done = ctx.defer(), ms]() mutable {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      done.response().body("later " + std::to_string(ms));
      done.send();
    });
  });
  app.get("/now", [](context& ctx) { ctx.response().body("now"); });
  wb::server server(one_thread(), dispatch_to(app));
  server.start();
  const std::string bytes =
      get_text("/later/60") + get_text("/now") + get_text("/later/5") + get_text("/now");
  const std::vector<std::string> expected{"later 60", "now", "later 5", "now"};
  // One write, 7-byte pieces, and one byte at a time.
  for (std::size_t piece : {bytes.size(), std::size_t{7}, std::size_t{1}}) {
    auto responses = pipeline(server.endpoints().front().port, bytes, 4, piece);
    std::vector<std::string> bodies;
    for (const response& r : responses) bodies.push_back(r.body());
    EXPECT_EQ(bodies, expected) << "pieces of " << piece << " bytes";
  }
  server.stop();
  server.wait();
  for (std::thread& t : workers) t.join();
}

TEST(AsyncServer, ClientThatLeavesCancelsItsSuspendedHandler) {
  std::atomic<int> cancelled{0};
  std::atomic<int> started{0};
  application app;
  app.get("/wait", [&](context&) -> awaitable<void> {
    ++started;
    try {
      co_await sleep_for(30s);
    } catch (const boost::system::system_error& e) {
      if (e.code() == asio::error::operation_aborted) ++cancelled;
      throw;
    }
  });
  wb::server server(one_thread(), dispatch_to(app));
  server.start();
  std::uint16_t port = server.endpoints().front().port;
  for (int i = 0; i < 3; ++i) {
    asio::io_context io;
    tcp::socket socket(io);
    socket.connect({asio::ip::make_address("127.0.0.1"), port});
    asio::write(socket, asio::buffer(get_text("/wait")));
    auto deadline = clock_type::now() + 5s;
    while (started <= i && clock_type::now() < deadline) std::this_thread::sleep_for(1ms);
    socket.close();
  }
  auto deadline = clock_type::now() + 5s;
  while (cancelled < 3 && clock_type::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(cancelled, 3);
  auto stop_start = clock_type::now();
  server.stop();
  server.wait();
  EXPECT_LT(clock_type::now() - stop_start, 2s) << "nothing is left waiting";
}

TEST(AsyncServer, RunsOnTheCallersIoContextAndItsThread) {
  asio::io_context mine(1);
  auto guard = asio::make_work_guard(mine);
  std::thread runner([&] { mine.run(); });
  std::atomic<bool> on_my_thread{false};
  application app;
  app.get("/where", [&](context& ctx) -> awaitable<void> {
    co_await sleep_for(1ms);
    on_my_thread = mine.get_executor().running_in_this_thread() &&
                   ctx.executor() == asio::any_io_executor(mine.get_executor());
    ctx.response().body(ctx.endpoints().remote.address);
  });
  wb::server server({&mine}, one_thread(), dispatch_to(app));
  server.start();
  auto responses = pipeline(server.endpoints().front().port, get_text("/where"), 1);
  server.stop();
  server.wait();
  guard.reset();
  runner.join();
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].body(), "127.0.0.1");
  EXPECT_TRUE(on_my_thread);
}

}  // namespace
