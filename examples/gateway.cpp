// waypoint-gateway: the example server, a waypoint::app application. It serves an
// API-gateway route table (built in, or --routes FILE) where every route answers 200 with
// the route that won and the values it captured, so the precedence rule can be tried with
// curl:
//
//   $ curl -s localhost:8080/v1/iam/users/me      {"route":"GET /v1/iam/users/me","values":{}}
//   $ curl -s localhost:8080/v1/iam/users/42      {"route":"GET /v1/iam/users/{userId}",...}
//
// It also shows the framework: one match per request; the built-in middleware (access log,
// request id, CORS, recover); automatic OPTIONS; typed JSON routes whose inputs come from the
// path, query, headers and body, with their constraints enforced (orders.hpp), also served
// as Model Context Protocol tools at /mcp (with --api-token, one of them behind an
// authentication layer: account.hpp); and a
// coroutine route that proxies to an upstream service (proxy.hpp). With --routes, a
// table's POST, PUT and PATCH patterns are typed record routes (records.hpp).
// With --tls-cert and --tls-key it serves HTTPS too (--tls-port, 8443 by default).
#include "account.hpp"
#include "child.hpp"
#include "files.hpp"
#include "ops.hpp"
#include "orders.hpp"
#include "proxy.hpp"
#include "records.hpp"
#include "security.hpp"
#include "streams.hpp"
#include "websocket_echo.hpp"

#include <waypoint/app/content/compression.hpp>
#include <waypoint/app/documents/mcp.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/security/cors.hpp>
#include <waypoint/app/security/cose.hpp>
#if WAYPOINT_GATEWAY_REDIS
#include <waypoint/app/security/redis_rate_limit_store.hpp>
#include <waypoint/app/security/redis_session_store.hpp>
#include <waypoint/app/realtime/redis_topic_broker.hpp>
#endif
#include <waypoint/app/serve.hpp>
#include <waypoint/beast/server.hpp>
#include <waypoint/json_string.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

// Swagger UI's files, compiled in when the build had them (examples/CMakeLists.txt); else the
// documentation page loads them from jsDelivr.
#if WAYPOINT_GATEWAY_SWAGGER_UI
#include <waypoint/embedded/swagger_ui.hpp>
#endif

namespace {

using namespace std::string_view_literals;

waypoint::embedded_directory swagger_ui() {
#if WAYPOINT_GATEWAY_SWAGGER_UI
  return waypoint::embedded::swagger_ui();
#else
  return {};
#endif
}
namespace wb = waypoint::beast;
namespace wa = waypoint::app;

// The built-in table: examples/gateway-routes.txt, embedded at build time
// (examples/CMakeLists.txt) as `builtin_routes`.
#include "gateway_routes.hpp"

struct options {
  std::vector<std::string> addresses;
  std::uint16_t port = 8080;
  unsigned threads = 0;
  std::string routes_file;
  std::string upstream;  // empty: the gateway itself
  unsigned upstream_timeout_ms = 5000;
  bool quiet = false;    // no access log
  bool reuse_port = false;
  unsigned drain_grace_ms = 1000;
  unsigned timeout_ms = 0;  // 0: the server's own idle, header, body and write timeouts
  std::string tls_cert, tls_key;  // both or neither: a TLS listener on tls_port
  std::string api_token;          // empty: no GET /v1/account
  std::uint16_t tls_port = 8443;
  std::string unix_socket;  // also listen on this unix socket ("@name": abstract)
  bool listen_fd = false;   // listen on the sockets systemd passed instead of binding
  std::size_t max_connections = 0;  // the server's descriptor budget; 0: from RLIMIT_NOFILE
  std::uint64_t upload_disk_budget = waypoint::examples::default_upload_disk_budget;
  bool swagger_ui_cdn = false;  // the docs page loads Swagger UI from jsDelivr even when built in
  std::string www;  // empty: examples/www as compiled in
  unsigned child_idle_stop_ms = 60'000;  // the mounted child service stops after this long idle
  std::string cose_keys;  // a key file; empty: typed routes answer application/cose with 503
  // --redis HOST:PORT; an empty host: sessions, sign-in limits and rooms in this process.
  std::string redis_host;
  std::uint16_t redis_port = 0;
  wa::contract_check contracts = wa::contract_check::enforce;  // requests' and answers'
};

constexpr std::string_view usage = R"(usage: waypoint-gateway [options]

Serves an API-gateway route table; every route answers 200 with
{"route":"<pattern>","values":{"<name>":"<value>",...}}.
The built-in table's POST /v1/commerce/orders is a typed JSON route instead, beside
the typed order book at /v1/orgs/{org}/orders, and GET /v1/proxy/{path...} forwards
to the upstream. With --routes, the table's POST,
PUT and PATCH patterns decode and answer JSON records.

  --address ADDR   listen on ADDR (IPv4 or IPv6; repeat for several), default 127.0.0.1
  --port N         listen on port N (0: any free port), default 8080
  --threads N      server threads, default: one per core
  --routes FILE    serve the patterns in FILE, one per line ('#' starts a comment line)
  --upstream URL   where /v1/proxy/ forwards (http://host:port[/base]);
                   default: this gateway itself
  --upstream-timeout MS
                   connect and response timeout of the upstream, default 5000
  --max-connections N
                   descriptors held at once: connections, and the upstream sockets
                   and upload files of requests; past it 503 (with Retry-After for a
                   request's own); default: from the descriptor limit (ulimit -n)
  --upload-disk-budget BYTES
                   temporary disk all uploads in progress may fill together; past
                   it 507 with Retry-After; default 2147483648 (2 GiB)
  --quiet          no access log on stderr
  --reuse-port     SO_REUSEPORT: a new process may bind the port while this one drains
  --drain-grace MS readiness (/readyz) says 503 this long after SIGTERM before the
                   listeners close, default 1000
  --timeout MS     the server's idle, header, body and write timeouts, all at once
                   (default: the server's, 60 s idle and 15 s the others)
  --tls-cert FILE --tls-key FILE
                   also serve HTTPS with this certificate chain and key (PEM);
                   SIGHUP reads them again
  --tls-port N     the HTTPS port, default 8443
  --unix PATH      also listen on the unix socket PATH (@NAME: an abstract name), mode
                   0660; a stale file is replaced, a live server's refused
  --listen-fd      listen on the sockets systemd passed (socket activation: LISTEN_FDS)
                   instead of --address and --port; one named https speaks TLS
  --child-idle-stop MS
                   the service mounted at /v1/child stops after MS without a request
                   (the next one starts it again), default 60000
  --contracts MODE typed routes check bodies and answers against the document:
                   enforce (default: 422 and 500), log (a line each, let through)
                   or off (unchecked: to measure what checking costs)
  --api-token TOKEN
                   also serve GET /v1/account (and its MCP tool getAccount) behind a
                   layer that refuses, 401, a request without Authorization: Bearer TOKEN
  --cose-keys FILE typed routes also read and answer application/cose (COSE_Encrypt0 or
                   COSE_Mac0) with the keys in FILE, a line each: KID ALGORITHM HEX,
                   ALGORITHM chacha20-poly1305, a256gcm or hmac-256; the first line
                   is the current key, the others are accepted in requests only
  --redis HOST:PORT
                   keep sessions and the sign-in rate limit in Redis, and carry the rooms'
                   messages through it, shared by every gateway pointed at it (built when
                   libhiredis-dev is installed)
  --www DIR        serve DIR from disk at / instead of the compiled-in examples/www
                   (to edit the page without a rebuild)
  --swagger-ui-cdn the documentation page (/docs/) loads Swagger UI from jsDelivr
                   (pinned, with integrity hashes) even when this build holds its files
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
    } else if (arg == "--upstream") {
      o.upstream = value();
    } else if (arg == "--upstream-timeout") {
      o.upstream_timeout_ms = static_cast<unsigned>(parse_number(arg, value(), 600'000));
      if (o.upstream_timeout_ms == 0) fail("--upstream-timeout must be positive");
    } else if (arg == "--contracts") {
      std::string mode = value();
      if (mode == "enforce") o.contracts = wa::contract_check::enforce;
      else if (mode == "log") o.contracts = wa::contract_check::log;
      else if (mode == "off") o.contracts = wa::contract_check::off;
      else fail("--contracts is enforce, log or off, not \"" + mode + "\"");
    } else if (arg == "--api-token") {
      o.api_token = value();
      if (o.api_token.empty()) fail("--api-token needs a token");
    } else if (arg == "--cose-keys") {
      o.cose_keys = value();
    } else if (arg == "--redis") {
#if !WAYPOINT_GATEWAY_REDIS
      fail("--redis: this gateway was built without hiredis (scripts/install-deps redis, then build)");
#endif
      std::string address = value();
      std::size_t colon = address.rfind(':');
      if (colon == std::string::npos || colon == 0)
        fail("--redis needs HOST:PORT, not \"" + address + "\"");
      o.redis_host = address.substr(0, colon);
      o.redis_port =
          static_cast<std::uint16_t>(parse_number("--redis's port", address.substr(colon + 1), 65535));
    } else if (arg == "--www") {
      o.www = value();
    } else if (arg == "--swagger-ui-cdn") {
      o.swagger_ui_cdn = true;
    } else if (arg == "--max-connections") {
      o.max_connections = parse_number(arg, value(), 1ul << 24);
    } else if (arg == "--upload-disk-budget") {
      o.upload_disk_budget = parse_number(arg, value(), 1ul << 50);
    } else if (arg == "--quiet") {
      o.quiet = true;
    } else if (arg == "--reuse-port") {
      o.reuse_port = true;
    } else if (arg == "--child-idle-stop") {
      o.child_idle_stop_ms = static_cast<unsigned>(parse_number(arg, value(), 86'400'000));
    } else if (arg == "--timeout") {
      o.timeout_ms = static_cast<unsigned>(parse_number(arg, value(), 3'600'000));
    } else if (arg == "--drain-grace") {
      o.drain_grace_ms = static_cast<unsigned>(parse_number(arg, value(), 600'000));
    } else if (arg == "--tls-cert") {
      o.tls_cert = value();
    } else if (arg == "--tls-key") {
      o.tls_key = value();
    } else if (arg == "--tls-port") {
      o.tls_port = static_cast<std::uint16_t>(parse_number(arg, value(), 65535));
    } else if (arg == "--unix") {
      o.unix_socket = value();
    } else if (arg == "--listen-fd") {
      o.listen_fd = true;
    } else {
      fail("unknown option \"" + std::string(arg) + "\" (try --help)");
    }
  }
  if (o.addresses.empty()) o.addresses.push_back("127.0.0.1");
  if (o.tls_cert.empty() != o.tls_key.empty()) fail("--tls-cert and --tls-key go together");
  return o;
}

// --cose-keys FILE: "KID ALGORITHM HEX" lines ('#' starts a comment), the first current. A
// file rather than an argument, so that the keys are not in every process listing.
std::shared_ptr<const wa::cose::keyring> read_cose_keys(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("--cose-keys: cannot read \"" + path + "\"");
  auto keys = std::make_shared<wa::cose::keyring>();
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string id, algorithm, hex, extra;
    if (!(fields >> id) || id[0] == '#') continue;
    auto where = [&] { return "--cose-keys " + path + ":" + std::to_string(number) + ": "; };
    if (!(fields >> algorithm >> hex) || (fields >> extra))
      fail(where() + "expected KID ALGORITHM HEX");
    static const std::map<std::string, wa::cose::algorithm> algorithms = {
        {"chacha20-poly1305", wa::cose::algorithm::chacha20_poly1305},
        {"a256gcm", wa::cose::algorithm::a256gcm},
        {"hmac-256", wa::cose::algorithm::hmac_256}};
    auto alg = algorithms.find(algorithm);
    if (alg == algorithms.end())
      fail(where() + "the algorithm is chacha20-poly1305, a256gcm or hmac-256, not \"" +
           algorithm + "\"");
    if (hex.size() % 2 || !std::all_of(hex.begin(), hex.end(), [](unsigned char c) {
          return std::isxdigit(c);
        }))
      fail(where() + "the key is not an even number of hexadecimal digits");
    std::string secret;
    for (std::size_t i = 0; i < hex.size(); i += 2)
      secret.push_back(static_cast<char>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    try {
      wa::cose::key k = wa::cose::key::symmetric(id, alg->second, secret);
      if (keys->current_key()) keys->grace(std::move(k));
      else keys->current(std::move(k));
    } catch (const std::invalid_argument& e) {
      fail(where() + e.what());
    }
  }
  if (keys->empty()) fail("--cose-keys " + path + ": no key");
  return keys;
}

// Every echo route's handler: the winning pattern as written and its values by name,
// appended to the response's own body (a server keeps its capacity from one request to
// the next, so a short answer allocates nothing).
void echo(wa::context& ctx) {
  std::string& body = ctx.response().body();
  body.reserve(128);
  body += R"({"route":)"sv;
  waypoint::append_json_string(body, ctx.route_pattern().text());
  body += R"(,"values":{)"sv;
  const auto& names = ctx.route_pattern().wildcard_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) body += ',';
    waypoint::append_json_string(body, names[i]);
    body += ':';
    waypoint::append_json_string(body, ctx.path_value(names[i]));
  }
  body += "}}\n"sv;
  ctx.response().header(wa::http::field::content_type, "application/json");
}

std::string_view trim(std::string_view s) {
  std::size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r") - begin + 1);
}

// Registers every pattern of `table`: with the echo handler, or (`typed_writes`) as a
// typed record route when its method writes; the patterns in `skip` are left to their own
// routes. A bad line ends the program with its line number.
void add_routes(wa::application& app, std::string_view table, const std::string& source,
                bool typed_writes, const std::vector<std::string_view>& skip = {}) {
  std::map<std::string, std::size_t, std::less<>> line_of;
  std::size_t number = 0;
  std::istringstream lines{std::string(table)};
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::string_view pattern = trim(line);
    if (pattern.empty() || pattern.front() == '#') continue;
    if (std::find(skip.begin(), skip.end(), pattern) != skip.end()) continue;
    std::string where = source + ":" + std::to_string(number) + ": ";
    try {
      if (!typed_writes || !waypoint::examples::add_record_route(app, pattern))
        app.handle(pattern, echo);
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
  if (app.router().size() == 0) fail(source + ": no routes");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A few curl commands, one per kind of route, drawn from the table being served.
void print_examples(const wa::application::router_type& r, const std::string& base) {
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
  std::cout << "  curl -i -X OPTIONS " << base << "/v1/iam/users   # automatic OPTIONS: 204, Allow\n";
  std::cout << "  curl -i " << base << "/v1/health -H 'X-Request-Id: my-id-1'   # request id kept\n";
  if (!base.starts_with("https:"))
    std::cout << "  curl -i --http2-prior-knowledge " << base
              << "/v1/health   # HTTP/2 without TLS (h2c by prior knowledge)\n";
  std::cout << "  curl -i -X OPTIONS " << base << "/v1/iam/users -H 'Origin: https://app.example.com'"
            << " -H 'Access-Control-Request-Method: POST'   # CORS preflight\n";
}

// --redis: the stores every gateway pointed at the same Redis shares.
waypoint::examples::security_setup security_stores(const options& o) {
#if WAYPOINT_GATEWAY_REDIS
  if (o.redis_host.empty()) return {};
  return {.sessions = std::make_shared<wa::redis_session_store>(
              wa::redis_session_store_options{
                  .connection = {.host = o.redis_host, .port = o.redis_port}}),
          .limits = std::make_shared<wa::redis_rate_limit_store>(
              wa::redis_rate_limit_store_options{
                  .connection = {.host = o.redis_host, .port = o.redis_port}})};
#else
  (void)o;  // parse_arguments refused --redis
  return {};
#endif
}

// --redis: the rooms span every gateway pointed at the same Redis.
std::shared_ptr<wa::topic_broker> room_broker(const options& o) {
#if WAYPOINT_GATEWAY_REDIS
  if (o.redis_host.empty()) return nullptr;
  return std::make_shared<wa::redis_topic_broker>(wa::redis_topic_broker_options{
      .host = o.redis_host, .port = o.redis_port, .channel = "waypoint:rooms",
      .log = [](std::string_view line) { std::cerr << "rooms: " << line << "\n"; }});
#else
  (void)o;
  return nullptr;
#endif
}

// "http://host:port" for a bound address; an IPv6 literal goes in brackets. A unix socket
// has no URL of its own: "unix:/path".
std::string base_url(const wb::listen_address& e) {
  if (e.is_unix_socket()) return e.address;
  bool v6 = e.address.find(':') != std::string::npos;
  return (e.tls ? "https://" : "http://") + (v6 ? "[" + e.address + "]" : e.address) + ":" +
         std::to_string(e.port);
}

}  // namespace

int main(int argc, char** argv) {
  options o = parse_arguments(argc, argv);
  wa::application app(
      {}, wa::typed_route_options{
              .json_body_limit = 64 * 1024,
              .request_contract = o.contracts,
              .response_contract = o.contracts,
              .cose_keys = o.cose_keys.empty() ? nullptr : read_cose_keys(o.cose_keys)});
  // Outermost first: the log sees the final status and the id; CORS answers preflights
  // before any route runs; recover turns exceptions into problem documents inside them.
  auto ops = waypoint::examples::add_operation_layers(
      app, {.access_log = !o.quiet, .drain_grace = std::chrono::milliseconds(o.drain_grace_ms)});
  app.use(wa::request_id());
  // Browsers of any origin may call the API; the operational endpoints are for the platform.
  app.use(wa::cors({.skip_paths = waypoint::examples::operation_paths}));
  // Responses a client accepts compressed (br, zstd, gzip), request bodies decoded; outside
  // recover(), so that the problem documents it writes are seen too.
  app.use(wa::compression());
  app.use(wa::recover());

  wb::server_options server_options;
  server_options.listen.clear();
  if (o.listen_fd) {
    server_options.listen = wb::inherited_listeners();
    if (server_options.listen.empty())
      fail("--listen-fd: no sockets were passed (LISTEN_FDS and LISTEN_PID, as systemd sets them)");
    for (wb::listen_address& a : server_options.listen) a.tls = a.name == "https";
  } else {
    for (const std::string& a : o.addresses) server_options.listen.push_back({a, o.port});
  }
  // HTTP/2 on the TCP listeners: h2c by prior knowledge here, h2 by ALPN on the TLS ones.
  for (wb::listen_address& a : server_options.listen) a.http2 = !a.is_unix_socket();
  if (!o.unix_socket.empty())
    server_options.listen.push_back(wb::listen_address::unix_socket(
        o.unix_socket, {.mode = o.unix_socket.starts_with('@') ? 0u : 0660u}));
  if (!o.tls_cert.empty()) {
    if (!o.listen_fd)
      for (const std::string& a : o.addresses)
        server_options.listen.push_back({a, o.tls_port, true, true});
    server_options.tls.certificate_chain_file = o.tls_cert;
    server_options.tls.private_key_file = o.tls_key;
  }
  server_options.threads = o.threads;
  server_options.reuse_port = o.reuse_port;
  server_options.max_connections = o.max_connections;
  if (o.timeout_ms > 0)
    for (auto* t : {&server_options.idle_timeout, &server_options.header_timeout,
                    &server_options.body_timeout, &server_options.write_timeout})
      *t = std::chrono::milliseconds(o.timeout_ms);
  server_options = waypoint::examples::with_operations(std::move(server_options), *ops);
  // The server's own errors (a body over its 1 MiB limit, a 431, a 408) as problem
  // documents, like the application's; each body limited (or streamed) as its route says.
  server_options = wa::options_for(app, std::move(server_options));
  auto proxy = std::make_shared<waypoint::examples::proxy_target>();
  waypoint::examples::demo_security security;
  std::shared_ptr<wa::child_service> child;
  try {
    if (o.routes_file.empty()) {
      // The table's own routes first: print_examples shows the first of each kind.
      add_routes(app, builtin_routes, "built-in table", false, {"POST /v1/commerce/orders"});
      waypoint::examples::add_order_routes(app);
      waypoint::examples::add_proxy_route(app, proxy);
      waypoint::examples::add_stream_routes(
          app, waypoint::beast::resource_budget(o.upload_disk_budget));
      waypoint::examples::add_websocket_route(app);
      ops->metrics->watch(waypoint::examples::add_room_route(app, room_broker(o)), "rooms");
      ops->metrics->watch(waypoint::examples::add_phoenix_route(app), "phoenix");
      if (!o.api_token.empty()) waypoint::examples::add_account_route(app, o.api_token);
      security.add_routes(app, security_stores(o));
      child = waypoint::examples::add_child_service(app, std::chrono::milliseconds(o.child_idle_stop_ms));
      if (child) server_options.on_reload = [child] { (void)child->reload(); };  // it logs the outcome
      // /openapi.json and the Swagger UI page at /docs/, from the routes registered above.
      // The named typed routes as Model Context Protocol tools, at /mcp.
      wa::serve_mcp(app, {.server_name = "waypoint-gateway", .server_version = WAYPOINT_VERSION});
      wa::serve_openapi(app, {.title = "waypoint-gateway", .version = WAYPOINT_VERSION,
                              .license = "BSL-1.0"},
                        {.ui_files = o.swagger_ui_cdn ? waypoint::embedded_directory() : swagger_ui()});
      waypoint::examples::add_file_routes(app, o.www);
    } else {
      add_routes(app, read_file(o.routes_file), o.routes_file, true);
    }
    waypoint::examples::add_operation_routes(app, *ops);
    wb::server server(server_options, wa::dispatch_to(app));
    ops->metrics->watch(server);
    server.start();
    auto endpoints = server.endpoints();
    std::chrono::milliseconds upstream_timeout(o.upstream_timeout_ms);
    // The curl lines' base and the proxy's default upstream: the first TCP listener (a unix
    // one is shown on a line of its own).
    auto tcp = std::find_if(endpoints.begin(), endpoints.end(),
                            [](const wb::listen_address& e) { return !e.is_unix_socket(); });
    std::string base = tcp == endpoints.end() ? "http://localhost" : base_url(*tcp);
    proxy->set({.url = o.upstream.empty() ? base : o.upstream,
                .connect_timeout = upstream_timeout,
                .response_timeout = upstream_timeout});
    for (const auto& e : endpoints)
      std::cout << "waypoint-gateway: " << app.router().size() << " routes on " << base_url(e)
                << "\n";
    print_examples(app.router(), base);
    if (o.routes_file.empty()) {
      std::cout << "  curl -i " << base << "/v1/commerce/orders -H 'Content-Type: application/json'"
                << " -d '{\"sku\":\"KB-101\",\"quantity\":2}'   # typed JSON route\n";
      std::cout << "  curl -i " << base << "/v1/orgs/acme/orders -H 'Content-Type: application/json'"
                << " -d '{\"sku\":\"KB-101\",\"quantity\":2,\"email\":\"ada@example.com\"}'"
                << "   # constraints enforced (try quantity 5000)\n";
      std::cout << "  curl -i '" << base << "/v1/orgs/acme/orders?limit=10'"
                << "   # typed path and query inputs; ETag, and 304 for If-None-Match\n";
      std::cout << "  curl -i " << base << "/v1/proxy/v1/health   # a coroutine: GET "
                << (o.upstream.empty() ? base : o.upstream) << "/v1/health\n";
      std::cout << "  curl -i --compressed " << base << "/openapi.json"
                << "   # compressed JSON: Content-Encoding br, zstd or gzip, Vary: Accept-Encoding\n";
      std::cout << "  curl -i " << base << "/docs/   # documentation page: Swagger UI reading "
                << base << "/openapi.json; open it in a browser\n";
      waypoint::examples::print_file_examples(std::cout, base);
      waypoint::examples::print_security_examples(std::cout, base, security);
      waypoint::examples::print_stream_examples(std::cout, base,
                                                std::string(WAYPOINT_WWW_DIR) + "/index.html");
      waypoint::examples::print_websocket_example(std::cout, base);
      if (child) waypoint::examples::print_child_examples(std::cout, base);
      std::cout << "  scripts/install-deps mcp && build/node-mcp/node_modules/.bin/mcp-inspector --cli "
                << base << "/mcp --transport http --method tools/list"
                << "   # the typed routes as MCP tools (the npm inspector's CLI)\n";
    }
    waypoint::examples::print_operations(std::cout, *ops, base);
    for (const auto& e : endpoints)
      if (e.is_unix_socket())
        std::cout << "  curl -i " << (e.address.starts_with("unix:@") ? "--abstract-unix-socket "
                                                                      : "--unix-socket ")
                  << e.address.substr(e.address.starts_with("unix:@") ? 6 : 5)
                  << " http://localhost/v1/health   # over a unix socket\n";
    if (!o.tls_cert.empty()) {
      // --cacert trusts the certificate itself: enough for a self-signed one (a CA's
      // certificate, for one it signed); the name must be one the certificate holds.
      std::cout << "  curl -i --cacert " << o.tls_cert << " https://localhost:"
                << endpoints.back().port << "/v1/health   # over TLS (kill -HUP "
                << ::getpid() << " reloads the certificate)\n";
      std::cout << "  curl -i --http2 --cacert " << o.tls_cert
                << " https://localhost:" << endpoints.back().port
                << "/v1/health   # HTTP/2 over TLS (ALPN h2)\n";
    }
    std::cout << std::flush;
    server.wait();
    if (child) child->stop().get();  // after the drain: the last requests forwarded to it are done
    std::cout << "waypoint-gateway: stopped after " << server.stats().requests << " requests\n";
  } catch (const std::exception& e) {
    fail(e.what(), 1);
  }
  return 0;
}
