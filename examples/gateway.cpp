// waypoint-gateway: the example server. It serves an API-gateway route table (built in, or
// --routes FILE) where every route answers 200 with the route that won and the values it
// captured, so the precedence rule can be tried with curl:
//
//   $ curl -s localhost:8080/v1/iam/users/me      {"route":"GET /v1/iam/users/me","values":{}}
//   $ curl -s localhost:8080/v1/iam/users/42      {"route":"GET /v1/iam/users/{userId}",...}
//
// Everything else is the router's (404, 405 with Allow, redirects) and the server's.
#include "orders.hpp"

#include <waypoint/app/openapi.hpp>  // OpenAPI (issue 17)
#include <waypoint/app/serve.hpp>
#include <waypoint/beast/router_dispatch.hpp>
#include <waypoint/beast/server.hpp>
#include <waypoint/json_string.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace std::string_view_literals;
namespace wb = waypoint::beast;

// The built-in table: examples/gateway-routes.txt, embedded at build time
// (examples/CMakeLists.txt) as `builtin_routes`.
#include "gateway_routes.hpp"

struct options {
  std::vector<std::string> addresses;
  std::uint16_t port = 8080;
  unsigned threads = 0;
  std::string routes_file;
};

constexpr std::string_view usage = R"(usage: waypoint-gateway [options]

Serves an API-gateway route table; every route answers 200 with
{"route":"<pattern>","values":{"<name>":"<value>",...}}.
The built-in table's POST /v1/commerce/orders is a typed JSON route instead.

  --address ADDR   listen on ADDR (IPv4 or IPv6; repeat for several), default 127.0.0.1
  --port N         listen on port N (0: any free port), default 8080
  --threads N      server threads, default: one per core
  --routes FILE    serve the patterns in FILE, one per line ('#' starts a comment line)
  --print-routes   print the built-in table and exit
  --help           print this and exit

Stops gracefully on SIGINT (Ctrl-C) or SIGTERM.
)";

[[noreturn]] void fail(const std::string& message, int code = 2) {
  std::cerr << "waypoint-gateway: " << message << "\n";
  std::exit(code);
}

unsigned long parse_number(std::string_view flag, const std::string& text, unsigned long max) {
  char* end = nullptr;
  unsigned long n = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n > max)
    fail(std::string(flag) + " needs a number up to " + std::to_string(max) + ", not \"" + text +
         "\"");
  return n;
}

options parse_arguments(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      std::exit(0);
    } else if (arg == "--print-routes") {
      std::cout << builtin_routes;
      std::exit(0);
    } else if (arg == "--address") {
      o.addresses.push_back(value());
    } else if (arg == "--port") {
      o.port = static_cast<std::uint16_t>(parse_number(arg, value(), 65535));
    } else if (arg == "--threads") {
      o.threads = static_cast<unsigned>(parse_number(arg, value(), 1024));
    } else if (arg == "--routes") {
      o.routes_file = value();
    } else {
      fail("unknown option \"" + std::string(arg) + "\" (try --help)");
    }
  }
  if (o.addresses.empty()) o.addresses.push_back("127.0.0.1");
  return o;
}

// Every route's handler: the winning pattern as written and its values by name.
void echo(const wb::request&, wb::response& res, const wb::route_match& m) {
  std::string& body = res.body();
  body += R"({"route":)";
  waypoint::append_json_string(body, m.route()->pattern.text());
  body += R"(,"values":{)";
  const auto& names = m.route()->pattern.wildcard_names();
  for (std::size_t i = 0; i < m.value_count(); ++i) {
    if (i) body += ',';
    waypoint::append_json_string(body, names[i]);
    body += ':';
    waypoint::append_json_string(body, m.value(i));
  }
  body += "}}\n";
  res.set(wb::http::field::content_type, "application/json");
}

std::string_view trim(std::string_view s) {
  std::size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// Registers every pattern of `table` with the echo handler, or with the handler `special`
// names for that pattern; a bad line ends the program with its line number.
void add_routes(wb::router& r, std::string_view table, const std::string& source,
                const std::map<std::string, wb::handler, std::less<>>& special = {}) {
  std::map<std::string, std::size_t, std::less<>> line_of;
  std::size_t number = 0;
  std::istringstream lines{std::string(table)};
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::string_view pattern = trim(line);
    if (pattern.empty() || pattern.front() == '#') continue;
    std::string where = source + ":" + std::to_string(number) + ": ";
    try {
      auto own = special.find(pattern);
      r.add(pattern, own == special.end() ? wb::handler(echo) : own->second);
    } catch (const waypoint::conflict_error& e) {
      auto other = line_of.find(e.existing());
      std::string other_line = other == line_of.end() ? "?" : std::to_string(other->second);
      fail(where + "\"" + e.added() + "\" " +
           (e.equivalent() ? "matches the same requests as" : "conflicts with") + " \"" +
           e.existing() + "\" (line " + other_line + "): both match path \"" + e.example() + "\"");
    } catch (const std::exception& e) {
      fail(where + e.what());
    }
    line_of.emplace(std::string(pattern), number);
  }
  if (r.size() == 0) fail(source + ": no routes");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A few curl commands, one per kind of route, drawn from the table being served.
void print_examples(const wb::router& r, const std::string& base) {
  std::cout << "try:\n";
  bool seen_static = false, seen_one = false, seen_many = false, seen_rest = false;
  for (const auto& route : r.routes()) {
    const waypoint::pattern& p = route.pattern;
    if (!p.host().empty()) continue;
    std::size_t wildcards = p.wildcard_names().size();
    bool* seen = p.ends_in_rest() && wildcards ? &seen_rest
                 : wildcards == 0              ? &seen_static
                 : wildcards == 1              ? &seen_one
                                               : &seen_many;
    if (*seen) continue;
    *seen = true;
    std::string method(p.method().empty() ? "GET" : p.method());
    std::cout << "  curl -i" << (method == "GET" ? "" : " -X " + method) << " " << base
              << waypoint::example_path(p, p) << "\n";
  }
  std::cout << "  curl -i " << base << "/no/such/route            # 404\n";
}

// "http://host:port" for a bound address; an IPv6 literal goes in brackets.
std::string base_url(const wb::listen_address& e) {
  bool v6 = e.address.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + e.address + "]" : e.address) + ":" + std::to_string(e.port);
}

}  // namespace

int main(int argc, char** argv) {
  options o = parse_arguments(argc, argv);
  wb::router router;
  // The built-in table's order endpoint is a typed JSON route of the framework layer. Its
  // requests are matched twice (this router, then the application's): the example keeps the
  // echo table on the plain router on purpose; a service built on waypoint::app alone
  // registers everything there and matches once.
  waypoint::app::application orders({.json_body_limit = 64 * 1024});
  waypoint::examples::add_order_routes(orders);
  if (o.routes_file.empty()) {
    add_routes(router, builtin_routes, "built-in table",
               {{"POST /v1/commerce/orders",
                 [&orders](const wb::request& req, wb::response& res, const wb::route_match&) {
                   orders.respond(req, res);
                 }}});
  } else {
    add_routes(router, read_file(o.routes_file), o.routes_file);
  }
  // --- OpenAPI (issue 17): the application serves /openapi.json and the Swagger UI page at
  // /docs/; the document lists the echo routes as untyped operations.
  if (o.routes_file.empty()) {
    waypoint::app::openapi_info api{.title = "waypoint-gateway",
                                      .version = WAYPOINT_VERSION,
                                      .license = "BSL-1.0"};
    for (const auto& route : router.routes())
      if (route.pattern.text() != "POST /v1/commerce/orders")
        api.other_routes.emplace_back(route.pattern.text());
    waypoint::app::serve_openapi(orders, api, {.ui_directory = WAYPOINT_SWAGGER_UI_DIR});
    auto to_orders = [&orders](const wb::request& req, wb::response& res, const wb::route_match&) {
      orders.respond(req, res);
    };
    router.add("GET /openapi.json", to_orders);
    router.add("GET /docs/", to_orders);
  }
  // --- end OpenAPI
  orders.freeze();
  router.freeze();

  wb::server_options server_options;
  server_options.listen.clear();
  for (const std::string& a : o.addresses) server_options.listen.push_back({a, o.port});
  server_options.threads = o.threads;
  // The server's own errors (a body over its 1 MiB limit, a 431, a 408) as problem
  // documents, like the orders route's; the plain router's 404s stay text.
  server_options = waypoint::app::with_problem_errors(std::move(server_options));
  try {
    wb::server server(server_options, wb::dispatch_to(router));
    server.start();
    auto bound = server.endpoints();
    for (const auto& e : bound)
      std::cout << "waypoint-gateway: " << router.size() << " routes on " << base_url(e) << "\n";
    std::string base = base_url(bound.front());
    print_examples(router, base);
    if (o.routes_file.empty())
      std::cout << "  curl -i " << base << "/v1/commerce/orders -H 'Content-Type: application/json'"
                << " -d '{\"sku\":\"KB-101\",\"quantity\":2}'   # typed JSON route\n";
    std::cout << std::flush;
    server.wait();
    std::cout << "waypoint-gateway: stopped after " << server.stats().requests << " requests\n";
  } catch (const std::exception& e) {
    fail(e.what(), 1);
  }
  return 0;
}
