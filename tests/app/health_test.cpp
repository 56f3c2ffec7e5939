// health.hpp: liveness and readiness handlers, and readiness through a real drain on
// loopback: ready, then 503 for the grace while the listeners still accept, then closed.
#include "loopback_client.hpp"

#include <waypoint/app/operations/health.hpp>
#include <waypoint/app/serve.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using namespace std::chrono_literals;

struct health_row {
  const char* rule;
  bool ready;
  const char* target;
  unsigned status;
  const char* state;
};

class HealthHandlers : public ::testing::TestWithParam<health_row> {};

TEST_P(HealthHandlers, AnswerTheStateWithoutCaching) {
  const health_row& row = GetParam();
  auto state = std::make_shared<health>();
  state->set_ready(row.ready);
  application app({.logger = [](std::string_view) {}});
  app.get("/live", healthz());
  app.get("/ready", readyz(state));
  response res = answer(app, "GET", row.target);
  EXPECT_EQ(res.result_int(), row.status) << row.rule;
  EXPECT_EQ(body_json(res)["status"], row.state) << row.rule;
  EXPECT_EQ(field(res, "Cache-Control"), "no-store") << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, HealthHandlers,
    ::testing::Values(health_row{"alive while ready", true, "/live", 200, "ok"},
                      health_row{"alive while draining", false, "/live", 200, "ok"},
                      health_row{"ready", true, "/ready", 200, "ready"},
                      health_row{"draining is 503", false, "/ready", 503, "draining"}));

TEST(WatchDrain, KeepsAnEarlierHookAndMarksDraining) {
  auto state = std::make_shared<health>();
  bool earlier_ran = false;
  waypoint::beast::server_options options;
  options.on_drain = [&] { earlier_ran = true; };
  options = watch_drain(std::move(options), state);
  ASSERT_TRUE(state->ready());
  options.on_drain();
  EXPECT_TRUE(earlier_ran);
  EXPECT_FALSE(state->ready());
}

bool connect_refused(std::uint16_t port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return ec == boost::asio::error::connection_refused;
}

// The order a load balancer relies on, on a real socket: readiness 200; once the stop has
// started, readiness 503 on new connections while liveness still answers, for the grace;
// then new connections are refused.
TEST(DrainGrace, ReadinessFailsBeforeTheListenersClose) {
  auto state = std::make_shared<health>();
  application app({.logger = [](std::string_view) {}});
  app.get("/healthz", healthz());
  app.get("/readyz", readyz(state));
  waypoint::beast::server_options options = loopback_options();
  options.drain_grace = 600ms;
  waypoint::beast::server server(watch_drain(options, state), dispatch_to(app));
  server.start();
  std::uint16_t port = server.endpoints().front().port;

  auto before = exchange(port, {make_request("GET", "/readyz")});
  EXPECT_EQ(before[0].result_int(), 200u);
  EXPECT_FALSE(server.draining());

  auto started = std::chrono::steady_clock::now();
  std::atomic<bool> stop_returned{false};
  std::thread stopper([&] {
    server.stop();  // returns once the listeners are closed: after the grace
    stop_returned = true;
  });
  while (!server.draining()) std::this_thread::yield();
  while (state->ready()) std::this_thread::yield();  // on_drain runs on the control thread

  auto during = exchange(port, {make_request("GET", "/readyz")});
  auto alive = exchange(port, {make_request("GET", "/healthz")});
  bool answered_within_grace = std::chrono::steady_clock::now() - started < 600ms;
  EXPECT_EQ(during[0].result_int(), 503u);
  EXPECT_EQ(alive[0].result_int(), 200u);
  // Keep-alive clients are told to reconnect, so that they leave before the close.
  EXPECT_EQ(field(during[0], "Connection"), "close");
  EXPECT_TRUE(answered_within_grace) << "the machine was too slow to check within the grace";

  stopper.join();
  EXPECT_TRUE(stop_returned);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 600ms);
  EXPECT_TRUE(connect_refused(port));
  server.wait();
}

TEST(DrainGrace, ZeroClosesTheListenersAtOnce) {
  application app({.logger = [](std::string_view) {}});
  app.get("/healthz", healthz());
  waypoint::beast::server_options options = loopback_options();
  std::atomic<bool> hook_ran{false};
  options.on_drain = [&] { hook_ran = true; };
  waypoint::beast::server server(options, dispatch_to(app));
  server.start();
  std::uint16_t port = server.endpoints().front().port;
  server.stop();
  EXPECT_TRUE(hook_ran);
  EXPECT_TRUE(connect_refused(port));
  server.wait();
}

}  // namespace
