// metrics.hpp: the exposition text parsed back and checked against the requests sent,
// through application::respond and through a real server on loopback (bytes, connections,
// the server's own errors and timeouts).
#include "access_log_capture.hpp"
#include "loopback_client.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/operations/metrics.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/topics.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using namespace std::chrono_literals;

// The samples of an exposition, by "name{labels}" as written. Fails the test on a line
// that is neither a comment nor "series value".
std::map<std::string, double> parse_exposition(const std::string& text) {
  std::map<std::string, double> samples;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    EXPECT_NE(end, std::string::npos) << "the text ends with a newline";
    if (end == std::string::npos) break;
    std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) continue;
    std::size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    EXPECT_EQ(samples.count(line.substr(0, space)), 0u) << "a series once: " << line;
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

double sample(const std::map<std::string, double>& samples, const std::string& series) {
  auto it = samples.find(series);
  EXPECT_NE(it, samples.end()) << series << " is missing";
  return it == samples.end() ? -1 : it->second;
}

std::string requests_series(const char* route, const char* method, const char* status) {
  return std::string("waypoint_http_requests_total{route=\"") + route + "\",method=\"" + method +
         "\",status=\"" + status + "\"}";
}

void add_counted_routes(application& app, metrics& m) {
  app.use(m.layer());
  app.get("/users/{id}", [](context& ctx) { ctx.response().body("u"); });
  app.get("/dir/", [](context&) {});
  app.get("/boom", [](context&) { throw std::runtime_error("x"); });
  app.get("/metrics", m.endpoint());
}

struct count_row {
  const char* rule;
  std::string series;
  double expected;
};

// The requests of every row's outcome, once, then each row read from one scrape.
TEST(Metrics, CountsMatchTheRequestsSent) {
  metrics m;
  application app({.logger = [](std::string_view) {}});
  add_counted_routes(app, m);
  for (const char* id : {"1", "2", "3"}) answer(app, "GET", std::string("/users/") + id);
  answer(app, "DELETE", "/users/1");             // 405
  answer(app, "GET", "/nothing");                // 404
  answer(app, "GET", "/dir");                    // redirect
  answer(app, "GET", "/users/1?x=1#fragment");   // 400
  answer(app, "GET", "/boom");                   // 500
  answer(app, "BREW", "/users/1");               // 405, a method of the client's invention
  auto samples = parse_exposition(m.render());
  const std::vector<count_row> rows = {
      {"a route's requests by pattern", requests_series("GET /users/{id}", "GET", "2xx"), 3},
      {"an exception counted with its status", requests_series("GET /boom", "GET", "5xx"), 1},
      {"unmatched requests have an empty route", requests_series("", "DELETE", "4xx"), 1},
      {"an invented method is OTHER", requests_series("", "OTHER", "4xx"), 1},
      {"404, 400 together under GET 4xx", requests_series("", "GET", "4xx"), 2},
      {"a redirect is 3xx", requests_series("", "GET", "3xx"), 1},
      {"404 outcome", "waypoint_http_unrouted_requests_total{outcome=\"not_found\"}", 1},
      {"405 outcome", "waypoint_http_unrouted_requests_total{outcome=\"method_not_allowed\"}", 2},
      {"redirect outcome", "waypoint_http_unrouted_requests_total{outcome=\"redirect\"}", 1},
      {"400 outcome", "waypoint_http_unrouted_requests_total{outcome=\"bad_request\"}", 1},
      {"histogram count by route",
       "waypoint_http_request_duration_seconds_count{route=\"GET /users/{id}\"}", 3},
      {"histogram +Inf is the count",
       "waypoint_http_request_duration_seconds_bucket{route=\"GET /users/{id}\",le=\"+Inf\"}", 3},
      {"nothing in flight between requests", "waypoint_http_requests_in_flight", 0},
  };
  for (const count_row& row : rows) EXPECT_EQ(sample(samples, row.series), row.expected) << row.rule;
  std::string text = m.render();
  EXPECT_EQ(text.find("/users/1\""), std::string::npos) << "a raw path became a label";
  EXPECT_EQ(text.find("BREW"), std::string::npos);
  EXPECT_EQ(text.find("waypoint_server_"), std::string::npos) << "no server watched";
}

TEST(Metrics, HistogramUsesTheConfiguredBuckets) {
  metrics m({.latency_buckets = {0.05, 1}});
  application app({.logger = [](std::string_view) {}});
  app.use(m.layer());
  app.get("/fast", [](context&) {});
  app.get("/slow", [](context&) { std::this_thread::sleep_for(60ms); });
  answer(app, "GET", "/fast");
  answer(app, "GET", "/slow");
  auto samples = parse_exposition(m.render());
  auto bucket = [&](const char* route, const char* le) {
    return sample(samples, std::string("waypoint_http_request_duration_seconds_bucket{route=\"") +
                               route + "\",le=\"" + le + "\"}");
  };
  EXPECT_EQ(bucket("GET /fast", "0.05"), 1);
  EXPECT_EQ(bucket("GET /slow", "0.05"), 0);
  EXPECT_EQ(bucket("GET /slow", "1"), 1);
  EXPECT_EQ(bucket("GET /slow", "+Inf"), 1);
  EXPECT_GE(sample(samples, "waypoint_http_request_duration_seconds_sum{route=\"GET /slow\"}"),
            0.06);
}

TEST(Metrics, RejectsBucketsThatAreNotIncreasing) {
  for (std::vector<double> buckets : std::vector<std::vector<double>>{{}, {0.1, 0.1}, {1, 0.5}, {0, 1}})
    EXPECT_THROW(metrics({.latency_buckets = buckets}), std::invalid_argument);
}

TEST(Metrics, SeriesPastTheLimitGoToOverflow) {
  metrics m({.max_series = 2});
  application app({.logger = [](std::string_view) {}});
  app.use(m.layer());
  for (const char* p : {"/a", "/b", "/c", "/d"}) app.get(p, [](context&) {});
  for (const char* p : {"/a", "/b", "/c", "/d"}) answer(app, "GET", p);
  auto samples = parse_exposition(m.render());
  EXPECT_EQ(sample(samples, requests_series("GET /a", "GET", "2xx")), 1);
  EXPECT_EQ(sample(samples, requests_series("GET /b", "GET", "2xx")), 1);
  EXPECT_EQ(sample(samples, requests_series("(overflow)", "GET", "2xx")), 2);
}

// Threads count into their own shards; a scrape sums them.
TEST(Metrics, ThreadsSumAtScrape) {
  metrics m;
  application app({.logger = [](std::string_view) {}});
  add_counted_routes(app, m);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) answer(app, "GET", "/users/7");
    });
  for (auto& t : threads) t.join();
  auto samples = parse_exposition(m.render());
  EXPECT_EQ(sample(samples, requests_series("GET /users/{id}", "GET", "2xx")), 1000);
}

std::size_t send_raw(std::uint16_t port, const std::string& bytes, std::size_t* received) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  boost::asio::write(socket, boost::asio::buffer(bytes));
  socket.shutdown(boost::asio::ip::tcp::socket::shutdown_send);
  std::string got;
  boost::system::error_code ec;
  char buffer[4096];
  for (std::size_t n; (n = socket.read_some(boost::asio::buffer(buffer), ec)) > 0 || !ec;)
    got.append(buffer, n);
  *received = got.size();
  return bytes.size();
}

// The server's counters: bytes both ways, exactly; connections; a 400 it answered itself;
// a header timeout.
TEST(Metrics, ServerCountersMatchTheWire) {
  metrics m;
  application app({.logger = [](std::string_view) {}});
  add_counted_routes(app, m);
  waypoint::beast::server_options options = loopback_options();
  options.header_timeout = 100ms;
  waypoint::beast::server server(options, dispatch_to(app));
  m.watch(server);
  server.start();
  std::uint16_t port = server.endpoints().front().port;
  std::size_t received_total = 0, sent_total = 0, received = 0;
  sent_total += send_raw(port,
                         "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n"
                         "GET /users/2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                         &received);
  received_total += received;
  sent_total += send_raw(port, "NOT HTTP AT ALL\r\n\r\n", &received);
  received_total += received;
  {
    // A header that never ends: the 408 comes after header_timeout.
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    std::string partial = "GET /users/3 HTTP/1.1\r\nHost: x\r\n";
    boost::asio::write(socket, boost::asio::buffer(partial));
    sent_total += partial.size();
    std::string got;
    boost::system::error_code ec;
    char buffer[4096];
    for (std::size_t n; (n = socket.read_some(boost::asio::buffer(buffer), ec)) > 0 || !ec;)
      got.append(buffer, n);
    received_total += got.size();
    EXPECT_EQ(got.rfind("HTTP/1.1 408", 0), 0u) << got;
  }
  server.stop();
  server.wait();
  auto samples = parse_exposition(m.render());
  EXPECT_EQ(sample(samples, "waypoint_server_received_bytes_total"), sent_total);
  EXPECT_EQ(sample(samples, "waypoint_server_sent_bytes_total"), received_total);
  EXPECT_EQ(sample(samples, "waypoint_server_connections_total"), 3);
  EXPECT_EQ(sample(samples, "waypoint_server_connections_open"), 0);
  EXPECT_EQ(sample(samples, "waypoint_server_errors_total{status=\"400\"}"), 1);
  EXPECT_EQ(sample(samples, "waypoint_server_errors_total{status=\"408\"}"), 1);
  EXPECT_EQ(sample(samples, "waypoint_server_timeouts_total{kind=\"header\"}"), 1);
  EXPECT_EQ(sample(samples, "waypoint_server_timeouts_total{kind=\"body\"}"), 0);
  EXPECT_EQ(sample(samples, requests_series("GET /users/{id}", "GET", "2xx")), 2);
}

// Each watched hub's stats() under its own label, in families of one HELP and TYPE each;
// the counts of a delivery to a real subscriber are checked through the gateway
// (tests/gateway: check_printed_websocket_lines_echo_and_share_a_room).
TEST(Metrics, TopicHubsAreScrapedUnderTheirNames) {
  metrics m;
  auto rooms = std::make_shared<topic_hub>();
  auto alerts = std::make_shared<topic_hub>();
  m.watch(rooms, "rooms");
  m.watch(alerts, "alerts");
  rooms->publish("lobby", "hi");
  rooms->publish("lobby", "again");
  alerts->publish("disk", "full");
  std::string text = m.render();
  auto samples = parse_exposition(text);
  struct row {
    std::string series;
    double expected;
  };
  const row rows[] = {
      {"waypoint_topic_published_total{hub=\"rooms\"}", 2},
      {"waypoint_topic_published_total{hub=\"alerts\"}", 1},
      {"waypoint_topic_delivered_total{hub=\"rooms\"}", 0},
      {"waypoint_topic_received_total{hub=\"rooms\"}", 0},
      {"waypoint_topic_dropped_total{hub=\"rooms\"}", 0},
      {"waypoint_topic_slow_consumer_closes_total{hub=\"alerts\"}", 0},
      {"waypoint_topic_topics{hub=\"rooms\"}", 0},
      {"waypoint_topic_subscribers{hub=\"alerts\"}", 0},
      {"waypoint_topic_queued_bytes{hub=\"rooms\"}", 0},
  };
  for (const row& r : rows) EXPECT_EQ(sample(samples, r.series), r.expected) << r.series;
  std::size_t families = 0;
  for (std::size_t at = 0; (at = text.find("# TYPE waypoint_topic_", at)) != std::string::npos; ++at)
    ++families;
  EXPECT_EQ(families, 8u) << "one TYPE line a family, whatever the number of hubs";
}

// A client that sends half its upload and closes is the client's doing: the access log
// and the metrics record 499 (nginx's "client closed request"), never a 5xx (before: the
// failed body read became a 500, so any client could raise the 5xx rate).
TEST(Metrics, ClientThatLeavesMidUploadIs499NotA5xx) {
  metrics m;
  access_log_capture log;
  application app({.logger = [](std::string_view) {}});
  app.use(log.layer());
  app.use(m.layer());
  app.post("/upload", [](context& ctx) -> awaitable<void> {
       std::array<char, 4096> buffer;
       while (co_await ctx.read_some(buffer) > 0) {
       }
     }).body({.streamed = true});
  waypoint::beast::server server(options_for(app, loopback_options()), dispatch_to(app));
  server.start();
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), server.endpoints().front().port});
    std::string half = "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
                       std::string(1000, 'b');
    boost::asio::write(socket, boost::asio::buffer(half));
    std::this_thread::sleep_for(50ms);  // the handler is reading
  }
  std::vector<std::string> logged = log.take();
  server.stop();
  server.wait();
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("\"status\":499"), std::string::npos) << logged[0];
  auto samples = parse_exposition(m.render());
  EXPECT_EQ(sample(samples, requests_series("POST /upload", "POST", "4xx")), 1);
  EXPECT_EQ(samples.count(requests_series("POST /upload", "POST", "5xx")), 0u);
}

}  // namespace
