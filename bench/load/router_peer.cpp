// The plain-router baseline of the framework's instruction count (bench/load/instructions,
// BENCHMARKS.md §21a): waypoint's own server (waypoint::beast::server) dispatching with
// waypoint::beast::dispatch_to(router), no waypoint::app, every route answering the
// gateway's echo body ({"route":...,"values":{...}}), as the example gateway did before the
// framework existed (3b03058). The difference from `waypoint-gateway --quiet` on the same
// GET requests is what the framework adds: the context, the layers, the extra header; the
// server, the parser and the router are the same code in both.
//
// It takes the gateway's command line where the harness needs it and prints the gateway's
// first line, so bench/load/harness.py starts it like a gateway:
//   waypoint_peer_router --routes FILE [--address A] [--port P] [--threads N] [--quiet]
#include <waypoint/beast/router_dispatch.hpp>
#include <waypoint/beast/server.hpp>
#include <waypoint/json_string.hpp>

#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

namespace {

namespace wb = waypoint::beast;
using namespace std::string_view_literals;

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "waypoint_peer_router: " << message << "\n";
  std::exit(2);
}

std::string_view trim(std::string_view s) {
  std::size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// The gateway's echo answer, byte for byte: the pattern as written and its values by name.
void echo(const wb::request&, wb::response& res, const wb::route_match& m) {
  std::string& body = res.body();
  body.reserve(128);
  body += R"({"route":)"sv;
  waypoint::append_json_string(body, m.route()->pattern.text());
  body += R"(,"values":{)"sv;
  const auto& names = m.route()->pattern.wildcard_names();
  for (std::size_t i = 0; i < m.value_count(); ++i) {
    if (i) body += ',';
    waypoint::append_json_string(body, names[i]);
    body += ':';
    waypoint::append_json_string(body, m.value(i));
  }
  body += "}}\n"sv;
  res.set(wb::http::field::content_type, "application/json");
}

void load_routes(wb::router& router, const std::string& file) {
  std::ifstream in(file);
  if (!in) fail("cannot read " + file);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    std::string_view pattern = trim(line);
    if (pattern.empty() || pattern.front() == '#') continue;
    try {
      router.add(pattern, wb::handler(echo));
    } catch (const std::exception& e) {
      fail(file + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (router.size() == 0) fail(file + ": no routes");
  router.freeze();
}

}  // namespace

int main(int argc, char** argv) {
  std::string address = "127.0.0.1", routes;
  unsigned port = 8080, threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--address") address = value();
    else if (arg == "--port") port = static_cast<unsigned>(std::stoul(value()));
    else if (arg == "--threads") threads = static_cast<unsigned>(std::stoul(value()));
    else if (arg == "--routes") routes = value();
    else if (arg == "--quiet") continue;  // it never logs requests
    else if (arg == "--help") {
      std::cout << "usage: waypoint_peer_router --routes FILE [--address A] [--port P] "
                   "[--threads N] [--quiet]\n";
      return 0;
    } else fail("unknown argument " + std::string(arg));
  }
  if (routes.empty()) fail("--routes FILE is required");
  wb::router router;
  load_routes(router, routes);
  wb::server_options options;
  options.listen = {{address, static_cast<std::uint16_t>(port)}};
  options.threads = threads;
  try {
    wb::server server(options, wb::dispatch_to(router));
    server.start();
    std::cout << "waypoint-gateway: " << router.size() << " routes on http://" << address << ":"
              << server.endpoints().front().port << "\n"
              << std::flush;
    server.wait();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return 0;
}
