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
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// render_problem is assignable as it is to the server's error hook.
static_assert(std::is_convertible_v<decltype(&waypoint::app::render_problem),
                                    waypoint::beast::error_renderer>);

namespace {

// One server thread on a free loopback port, signals left to the test runner.
waypoint::beast::server_options loopback_options() {
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 0}};
  options.threads = 1;
  options.handle_signals = false;
  return options;
}

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

  waypoint::beast::server server(loopback_options(), dispatch_to(app));
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
  waypoint::beast::server_options options = loopback_options();
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

// The writer alone finishes the message on the server path (the status line's words, the
// length of a HEAD answer, no body where the status carries none): each response kind as GET
// and as HEAD, pipelined in one stream the server reads whole, one byte at a time, and in
// random pieces.
struct head_kind {
  const char* target;
  unsigned status;
  bool has_length;  // a Content-Length goes out (not for 204, 304)
};

std::vector<response> pipelined(std::uint16_t port, const std::vector<request>& requests,
                                 std::size_t piece_seed) {
  std::string bytes;
  for (request req : requests) {
    req.prepare_payload();
    std::ostringstream out;
    out << req;
    bytes += out.str();
  }
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  std::mt19937 random(static_cast<unsigned>(piece_seed));
  for (std::size_t at = 0; at < bytes.size();) {
    std::size_t n = piece_seed == 0 ? bytes.size() : piece_seed == 1 ? 1 : 1 + random() % 64;
    n = std::min(n, bytes.size() - at);
    asio::write(socket, asio::buffer(bytes.data() + at, n));
    at += n;
  }
  std::vector<response> answers;
  boost::beast::flat_buffer buffer;
  for (const request& req : requests) {
    http::response_parser<http::string_body> parser;
    parser.skip(req.method() == http::verb::head);
    http::read(socket, buffer, parser);
    answers.push_back(parser.release());
  }
  return answers;
}

TEST(Serve, EveryResponseKindUnderHeadIsFinishedByTheWriter) {
  application app({.logger = [](std::string_view) {}});
  app.get("/body", [](context& ctx) { ctx.response().body("hello"); });
  app.get("/stated", [](context& ctx) {  // a HEAD handler that states the length it skips
    if (ctx.method() == "HEAD") return void(ctx.response().header("Content-Length", "42"));
    ctx.response().body(std::string(42, 'x'));
  });
  app.get("/empty", [](context& ctx) { ctx.response().status(204).body("dropped"); });
  app.get("/cached", [](context& ctx) {
    ctx.response().status(304).header("ETag", "\"v1\"").body("dropped");
  });
  app.get("/refused", [](context& ctx) { ctx.response().problem(422, "no"); });
  const std::vector<head_kind> kinds{{"/body", 200, true},   {"/stated", 200, true},
                                     {"/empty", 204, false}, {"/cached", 304, false},
                                     {"/refused", 422, true}, {"/missing", 404, true}};
  std::vector<request> requests;
  for (const head_kind& k : kinds) {
    requests.push_back(make_request("GET", k.target));
    requests.push_back(make_request("HEAD", k.target));
  }
  waypoint::beast::server server(loopback_options(), dispatch_to(app));
  server.start();
  for (std::size_t pieces : {0u, 1u, 7u, 11u}) {  // whole, a byte at a time, random pieces
    std::vector<response> answers = pipelined(server.endpoints().front().port, requests, pieces);
    ASSERT_EQ(answers.size(), requests.size());
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      const response& get = answers[2 * i];
      const response& head = answers[2 * i + 1];
      std::string rule = std::string(kinds[i].target) + " in pieces " + std::to_string(pieces);
      EXPECT_EQ(get.result_int(), kinds[i].status) << rule;
      EXPECT_EQ(head.result_int(), kinds[i].status) << rule;
      EXPECT_EQ(std::string(head.reason()), std::string(get.reason())) << rule;
      EXPECT_TRUE(head.body().empty()) << rule;
      if (!kinds[i].has_length) {
        EXPECT_TRUE(get.body().empty()) << rule;
        EXPECT_EQ(head.find(http::field::content_length), head.end()) << rule;
        continue;
      }
      EXPECT_EQ(field(head, "Content-Length"), std::to_string(get.body().size())) << rule;
    }
    EXPECT_EQ(std::string(answers[8].reason()), "Unprocessable Content");
  }
  server.stop();
  server.wait();
}

}  // namespace
