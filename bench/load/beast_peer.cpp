// The lean Beast server of the whole-HTTP peer benchmark (bench/load/peers, BENCHMARKS.md
// §21): the shape of Beast's own asynchronous HTTP server example (a session per
// connection owned by shared pointers, one flat_buffer, async_read of a string-body
// request, async_write of a string-body response, a 30 s timer per read) with waypoint's
// core router in place of the example's file lookup. It answers a route table as the
// example gateway's echo routes do ({"route":...,"values":{...}}), writes included, so the
// difference from the gateway on one route is what the framework and waypoint's own server
// loop add over Beast and the router alone.
//
// It takes the gateway's command line where the harness needs it and prints the gateway's
// first line, so bench/load/harness.py starts it like a gateway:
//   waypoint_peer_beast --routes FILE [--address A] [--port P] [--threads N]
#include <waypoint/json_string.hpp>
#include <waypoint/router.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

using route_table = waypoint::basic_router<int>;

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "waypoint_peer_beast: " << message << "\n";
  std::exit(2);
}

std::string_view trim(std::string_view s) {
  std::size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

void load_routes(route_table& routes, const std::string& file) {
  std::ifstream in(file);
  if (!in) fail("cannot read " + file);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    std::string_view pattern = trim(line);
    if (pattern.empty() || pattern.front() == '#') continue;
    try {
      routes.add(pattern, number);
    } catch (const std::exception& e) {
      fail(file + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (routes.size() == 0) fail(file + ": no routes");
  routes.freeze();
}

// The gateway's echo answer, byte for byte: the pattern as written and its values by name.
void answer(const route_table& routes, const http::request<http::string_body>& req,
            http::response<http::string_body>& res) {
  std::string_view target = req.target();
  std::string_view path = target.substr(0, target.find('?'));
  std::string_view host = req[http::field::host];
  auto m = routes.match(req.method_string(), path, host);
  res.version(req.version());
  res.keep_alive(req.keep_alive());
  if (!m) {
    res.result(m.status() == waypoint::match_status::method_not_allowed
                   ? http::status::method_not_allowed
                   : http::status::not_found);
    res.body().clear();
    res.prepare_payload();
    return;
  }
  res.result(http::status::ok);
  std::string& body = res.body();
  body.clear();
  body += R"({"route":)";
  waypoint::append_json_string(body, m.route()->pattern.text());
  body += R"(,"values":{)";
  const auto& names = m.route()->pattern.wildcard_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) body += ',';
    waypoint::append_json_string(body, names[i]);
    body += ':';
    waypoint::append_json_string(body, m.value(i));
  }
  body += "}}\n";
  res.set(http::field::content_type, "application/json");
  res.prepare_payload();
}

class session : public std::enable_shared_from_this<session> {
 public:
  session(tcp::socket&& socket, const route_table& routes)
      : stream_(std::move(socket)), routes_(routes) {}

  void run() {
    asio::dispatch(stream_.get_executor(),
                   beast::bind_front_handler(&session::do_read, shared_from_this()));
  }

 private:
  void do_read() {
    req_ = {};
    stream_.expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buffer_, req_,
                     beast::bind_front_handler(&session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec) return do_close();
    answer(routes_, req_, res_);
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec || !res_.keep_alive()) return do_close();
    do_read();
  }

  void do_close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
  const route_table& routes_;
};

class listener : public std::enable_shared_from_this<listener> {
 public:
  listener(asio::io_context& ioc, tcp::endpoint endpoint, const route_table& routes)
      : ioc_(ioc), acceptor_(asio::make_strand(ioc), endpoint), routes_(routes) {}

  tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  void run() { do_accept(); }

 private:
  void do_accept() {
    acceptor_.async_accept(asio::make_strand(ioc_),
                           beast::bind_front_handler(&listener::on_accept, shared_from_this()));
  }

  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<session>(std::move(socket), routes_)->run();
    }
    do_accept();
  }

  asio::io_context& ioc_;
  tcp::acceptor acceptor_;
  const route_table& routes_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string address = "127.0.0.1", routes_file;
  unsigned short port = 8080;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) fail("usage: waypoint_peer_beast --routes FILE [--address A] [--port P] [--threads N]");
    std::string value = argv[++i];
    if (arg == "--routes") routes_file = value;
    else if (arg == "--address") address = value;
    else if (arg == "--port") port = static_cast<unsigned short>(std::stoi(value));
    else if (arg == "--threads") threads = std::max(1, std::stoi(value));
    else fail("unknown option " + arg);
  }
  if (routes_file.empty()) fail("--routes FILE is required");
  route_table routes;
  load_routes(routes, routes_file);

  asio::io_context ioc{threads};
  auto l = std::make_shared<listener>(
      ioc, tcp::endpoint{asio::ip::make_address(address), port}, routes);
  l->run();
  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const beast::error_code&, int) { ioc.stop(); });
  std::cout << "waypoint_peer_beast: " << routes.size() << " routes on http://" << address
            << ":" << l->local_endpoint().port() << std::endl;

  std::vector<std::thread> others;
  for (int k = 1; k < threads; ++k) others.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : others) t.join();
  return 0;
}
