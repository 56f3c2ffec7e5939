// examples/coroutine_server.hpp, a plain Beast coroutine server handing requests to
// application::async_handle, over loopback: the application's answers arrive through a
// server that is not waypoint's, a waiting route does not hold up another connection, and
// keep-alive and HEAD come out as Beast clients expect.
#include "app_test_support.hpp"
#include "loopback_client.hpp"

#include "coroutine_server.hpp"
#include "orders.hpp"

#include <waypoint/app/middleware.hpp>

#include <gtest/gtest.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <future>
#include <thread>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

class coroutine_server_test : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.use(request_id());
    app_.get("/slow/{ms}", [](context& ctx) -> awaitable<void> {
      asio::steady_timer timer(ctx.executor(), std::chrono::milliseconds(ctx.path_value<int>("ms")));
      co_await timer.async_wait(asio::use_awaitable);
      ctx.response().body("slept");
    });
    app_.get("/hello", [](context& ctx) { ctx.response().body("hello\n"); });
    app_.get("/peer", [](context& ctx) { ctx.response().body(ctx.endpoints().remote.address); });
    waypoint::examples::add_order_routes(app_);
    asio::co_spawn(io_, waypoint::examples::accept_connections(acceptor_, app_), asio::detached);
    runner_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    io_.stop();
    runner_.join();
  }

  std::vector<response> exchange(std::vector<request> requests) {
    return waypoint::app::testing::exchange(acceptor_.local_endpoint().port(), std::move(requests));
  }

  application app_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_, {asio::ip::make_address("127.0.0.1"), 0}};
  std::thread runner_;
};

TEST_F(coroutine_server_test, AnswersEveryKindOfRouteOnOneKeepAliveConnection) {
  auto res = exchange({make_request("GET", "/hello"), make_request("HEAD", "/hello"),
                       make_request("GET", "/slow/5"),
                       json_request("POST", "/v1/commerce/orders", R"({"sku":"KB-101","quantity":2})"),
                       make_request("DELETE", "/hello"), make_request("GET", "/nothing"),
                       make_request("GET", "/peer")});
  ASSERT_EQ(res.size(), 7u);
  EXPECT_EQ(res[0].body(), "hello\n");
  EXPECT_EQ(field(res[0], "Content-Length"), "6");
  EXPECT_EQ(field(res[1], "Content-Length"), "6") << "HEAD states the GET body's length";
  EXPECT_EQ(res[2].body(), "slept");
  EXPECT_EQ(res[3].result_int(), 201u);
  EXPECT_EQ(res[4].result_int(), 405u);
  EXPECT_EQ(res[5].result_int(), 404u);
  EXPECT_EQ(field(res[5], "Content-Type"), "application/problem+json");
  EXPECT_EQ(res[6].body(), "127.0.0.1");
  for (const response& r : res) EXPECT_EQ(field(r, "X-Request-Id").size(), 16u);
}

TEST_F(coroutine_server_test, AWaitingRouteDoesNotHoldUpAnotherConnection) {
  auto slow = std::async(std::launch::async, [&] { return exchange({make_request("GET", "/slow/400")}); });
  std::this_thread::sleep_for(50ms);  // the slow request is suspended on the server's thread
  auto start = std::chrono::steady_clock::now();
  auto quick = exchange({make_request("GET", "/hello")});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_EQ(quick.at(0).body(), "hello\n");
  EXPECT_EQ(slow.get().at(0).body(), "slept");
}

}  // namespace
