// serve.hpp: an application as waypoint::beast::server's dispatch, over a real loopback
// socket with a blocking Beast client.
#include "app_test_support.hpp"
#include "loopback_client.hpp"

#include "orders.hpp"

#include <waypoint/app/middleware.hpp>
#include <waypoint/app/serve.hpp>

#include <gtest/gtest.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <functional>
#include <string_view>
#include <type_traits>

// render_problem is assignable as it is to the server's error hook.
static_assert(std::is_convertible_v<decltype(&waypoint::app::render_problem),
                                    waypoint::beast::error_renderer>);

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
namespace asio = boost::asio;

TEST(Serve, ApplicationAnswersThroughTheServer) {
  application app({.logger = [](std::string_view) {}});
  app.use(request_id());
  waypoint::examples::add_order_routes(app);
  app.get("/hello/{name}", [](context& ctx) {
    ctx.response().body("hello " + std::string(ctx.path_value("name")));
  });

  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 0}};
  options.threads = 1;
  options.handle_signals = false;
  waypoint::beast::server server(options, dispatch_to(app));
  server.start();
  std::uint16_t port = server.endpoints().front().port;

  auto responses = exchange(
      port, {make_request("GET", "/hello/ada"),
             json_request("POST", "/v1/commerce/orders", R"({"sku":"KB-101","quantity":2})"),
             json_request("POST", "/v1/commerce/orders", R"({"sku":"KB-101"})"),
             make_request("HEAD", "/hello/ada"), make_request("OPTIONS", "/v1/commerce/orders")});
  server.stop();
  server.wait();

  ASSERT_EQ(responses.size(), 5u);
  EXPECT_EQ(responses[0].result_int(), 200u);
  EXPECT_EQ(responses[0].body(), "hello ada");
  EXPECT_EQ(field(responses[0], "X-Request-Id").size(), 16u);
  EXPECT_EQ(responses[1].result_int(), 201u);
  EXPECT_EQ(body_json(responses[1])["sku"], "KB-101");
  EXPECT_EQ(responses[2].result_int(), 422u);
  EXPECT_EQ(body_json(responses[2])["pointer"], "/quantity");
  EXPECT_EQ(responses[3].result_int(), 200u);
  EXPECT_EQ(field(responses[3], "Content-Length"), "9");
  EXPECT_EQ(responses[4].result_int(), 204u);
  EXPECT_EQ(field(responses[4], "Allow"), "OPTIONS, POST");
}

// A body over the server's own limit never reaches the application, yet the client gets
// the same problem document the application gives for its own 413.
TEST(Serve, ServerErrorsAreProblemDocuments) {
  application app({.logger = [](std::string_view) {}});
  waypoint::examples::add_order_routes(app);
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 0}};
  options.threads = 1;
  options.handle_signals = false;
  options.max_body_bytes = 1000;
  waypoint::beast::server server(with_problem_errors(options), dispatch_to(app));
  server.start();
  auto responses = exchange(server.endpoints().front().port,
                            {json_request("POST", "/v1/commerce/orders", std::string(2000, ' '))});
  server.stop();
  server.wait();
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].result_int(), 413u);
  EXPECT_EQ(field(responses[0], "Content-Type"), "application/problem+json");
  EXPECT_EQ(body_json(responses[0])["status"], 413);
  EXPECT_EQ(body_json(responses[0])["detail"], "the body is larger than the server accepts");
}

}  // namespace
