// waypoint-file-server: one directory served by app.static_files, nothing else (no
// middleware), for bench/load/files to compare with nginx serving the same directory.
//
//   waypoint-file-server --root DIR [--address ADDR] [--port N] [--threads N]
//
// Prints "waypoint-file-server: serving DIR on http://ADDR:PORT" once it listens; stops
// gracefully on SIGINT or SIGTERM.
#include <waypoint/app/serve.hpp>
#include <waypoint/app/static_files.hpp>
#include <waypoint/beast/server.hpp>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "waypoint-file-server: " << message << "\n"
            << "usage: waypoint-file-server --root DIR [--address ADDR] [--port N] [--threads N]\n";
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string root;
  waypoint::beast::server_options options;
  std::string address = "127.0.0.1";
  unsigned long port = 8080;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (i + 1 >= argc) fail(std::string(arg) + " needs a value");
    std::string value = argv[++i];
    if (arg == "--root") {
      root = value;
    } else if (arg == "--address") {
      address = value;
    } else if (arg == "--port") {
      port = std::strtoul(value.c_str(), nullptr, 10);
    } else if (arg == "--threads") {
      options.threads = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
    } else {
      fail("unknown option " + std::string(arg));
    }
  }
  if (root.empty() || port > 65535) fail("--root is required, --port at most 65535");
  options.listen = {{address, static_cast<std::uint16_t>(port)}};
  try {
    waypoint::app::application app;
    app.static_files("/", root);
    waypoint::beast::server server(options, waypoint::app::dispatch_to(app));
    server.start();
    auto e = server.endpoints().front();
    std::cout << "waypoint-file-server: serving " << root << " on http://" << e.address << ":"
              << e.port << std::endl;
    server.wait();
  } catch (const std::exception& e) {
    std::cerr << "waypoint-file-server: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
