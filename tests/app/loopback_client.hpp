// A blocking Beast client for the app tests that go through a real server over loopback:
// requests sent on one keep-alive connection, in turn, and their responses.
#pragma once

#include "app_test_support.hpp"

#include <waypoint/app/serve.hpp>
#include <waypoint/beast/server.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app::testing {

// A server on a free loopback port, one thread, no signal handling: the tests' server.
inline waypoint::beast::server_options loopback_options() {
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 0}};
  options.threads = 1;
  options.handle_signals = false;
  return options;
}

// `app` served on a loopback port while this lives (beast::server's destructor stops it and
// waits).
class loopback_server : public waypoint::beast::server {
 public:
  explicit loopback_server(application& app,
                           waypoint::beast::server_options options = loopback_options())
      : server(options_for(app, std::move(options)), dispatch_to(app)) {
    start();
  }
  std::uint16_t port() const { return endpoints().front().port; }
  std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port()) + std::string(path);
  }
};

inline std::vector<response> exchange(std::uint16_t port, std::vector<request> requests) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  std::vector<response> out;
  boost::beast::flat_buffer buffer;
  for (request& req : requests) {
    req.prepare_payload();
    http::write(socket, req);
    http::response_parser<http::string_body> parser;
    parser.skip(req.method() == http::verb::head);
    http::read(socket, buffer, parser);
    out.push_back(parser.release());
  }
  return out;
}

// What a shell command (curl, a decoder after a pipe) writes to its standard output.
inline std::string command_output(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    ::pclose(pipe);
  }
  return out;
}

}  // namespace waypoint::app::testing
