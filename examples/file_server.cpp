// waypoint-file-server: one directory served by app.static_files, nothing else (no
// middleware), for bench/load/files to compare with nginx serving the same directory.
//
//   waypoint-file-server --root DIR [--address ADDR] [--port N] [--threads N]
//                        [--memory] [--gzip LEVEL]
//
// --memory reads the directory's top-level files once, at start, and answers each from
// memory (a string body, as an embedded file is); --gzip adds compression() with gzip alone
// at LEVEL and no minimum size: what bench/load/compression compares with nginx's gzip.
//
// Prints "waypoint-file-server: serving DIR on http://ADDR:PORT" once it listens; stops
// gracefully on SIGINT or SIGTERM.
#include <waypoint/app/content/compression.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/content/static_files.hpp>
#include <waypoint/beast/server.hpp>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "waypoint-file-server: " << message << "\n"
            << "usage: waypoint-file-server --root DIR [--address ADDR] [--port N] [--threads N]"
               " [--memory] [--gzip LEVEL]\n";
  std::exit(2);
}

// Each regular file at the top of `root` as GET /<name>, answered from memory.
void add_memory_routes(waypoint::app::application& app, const std::string& root) {
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::string name = entry.path().filename().string();
    std::string type(waypoint::app::detail::builtin_content_type(name));
    if (type.empty()) type = "application/octet-stream";
    app.get("/" + name, [bytes = std::move(bytes), type](waypoint::app::context& ctx) {
      ctx.response().body(bytes, type);
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string root;
  waypoint::beast::server_options options;
  std::string address = "127.0.0.1";
  unsigned long port = 8080;
  bool memory = false;
  int gzip_level = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--memory") {
      memory = true;
      continue;
    }
    if (i + 1 >= argc) fail(std::string(arg) + " needs a value");
    std::string value = argv[++i];
    if (arg == "--root") {
      root = value;
    } else if (arg == "--address") {
      address = value;
    } else if (arg == "--port") {
      port = std::strtoul(value.c_str(), nullptr, 10);
    } else if (arg == "--gzip") {
      gzip_level = std::atoi(value.c_str());
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
    if (gzip_level > 0)
      app.use(waypoint::app::compression({.codings = {waypoint::app::content_coding::gzip},
                                          .min_size = 0,
                                          .gzip_level = gzip_level}));
    if (memory)
      add_memory_routes(app, root);
    else
      serve_static(app, "/", root);
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
