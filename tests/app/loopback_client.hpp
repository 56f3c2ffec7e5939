// A blocking Beast client for the app tests that go through a real server over loopback:
// requests sent on one keep-alive connection, in turn, and their responses.
#pragma once

#include "app_test_support.hpp"

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
