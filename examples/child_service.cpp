// waypoint-example-child: a waypoint application that runs as a service in its own process,
// mounted by the gateway at /v1/child (waypoint::app::mount, child_service.hpp). It listens
// on the unix socket it is given and answers as any application does; the gateway forwards
// to it. Every answer names the process, so restarts and reloads can be seen from outside.
// `--tcp PORT` listens on 127.0.0.1 instead: bench/hop reaches the same program over TCP
// loopback, to compare that hop with the unix socket's.
//
//   $ waypoint-example-child --unix /tmp/child.sock &
//   $ curl --unix-socket /tmp/child.sock http://localhost/hello
//   $ waypoint-example-child --tcp 8091 &
//   $ curl http://127.0.0.1:8091/hello
// Its typed operation, POST /greetings (named greet), is in the parent's document and an MCP
// tool of the parent's (example.greet) once the child has started.
#include "streams.hpp"

#include <waypoint/app/typed/json.hpp>
#include <waypoint/app/documents/mcp.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/websocket.hpp>

#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>

namespace app = waypoint::app;

// The child's typed operation: in its own document and, through the parent, in the parent's
// (as example.greet), an MCP tool of both.
struct greeting_request {
  std::string name;
};
WAYPOINT_JSON_OBJECT(greeting_request, name)

struct greeting {
  std::string text;
  long pid = 0;
};
WAYPOINT_JSON_OBJECT(greeting, text, pid)
namespace {

// Where to listen, from `--unix PATH` or `--tcp PORT`; false for anything else.
bool parse_listener(int argc, char** argv, waypoint::beast::listen_address& out) {
  if (argc != 3) return false;
  std::string_view flag = argv[1], value = argv[2];
  if (flag == "--unix") {
    out = waypoint::beast::listen_address::unix_socket(std::string(value));
    return true;
  }
  std::uint16_t port = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
  if (flag != "--tcp" || ec != std::errc{} || end != value.data() + value.size() || port == 0)
    return false;
  out = {"127.0.0.1", port};
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  waypoint::beast::listen_address listener;
  if (!parse_listener(argc, argv, listener)) {
    std::cerr << "usage: waypoint-example-child --unix PATH | --tcp PORT (1-65535, on 127.0.0.1)\n";
    return 2;
  }
  std::string pid = std::to_string(::getpid());
  app::application application;
  application.get("/healthz", [](app::context& ctx) { ctx.response().body("ok\n"); })
      .describe({.summary = "Readiness: the parent waits for a 2xx here before sending traffic"});
  application.get("/hello", [pid](app::context& ctx) { ctx.response().body("hello from pid " + pid + "\n"); })
      .describe({.summary = "Names the process that answered"});
  application.post("/echo", [](app::context& ctx) {
    ctx.response().header(app::http::field::content_type, "application/octet-stream");
    ctx.response().body(std::string(ctx.body()));
  }).describe({.summary = "Answers the request's body"});
  application.get("/events", waypoint::examples::tick_events)
      .describe({.summary = "Server-sent events, streamed through the parent"});
  serve_websocket(application, "/ws", [](app::websocket& ws) -> app::awaitable<void> {
    app::websocket_message message;
    while (co_await ws.read(message)) co_await ws.write(message);
  });
  application.describe({.summary = "WebSocket echo, relayed by the parent"});
  application.post<greeting_request, greeting>("/greetings", [](greeting_request in) {
    if (in.name.empty() || in.name.size() > 100) throw app::validation_error("must be 1 to 100 characters", "/name");
    return greeting{"Hello, " + in.name + "!", static_cast<long>(::getpid())};
  }).describe({.name = "greet", .summary = "Greets someone by name, from the child's process"});
  app::serve_mcp(application, {.server_name = "waypoint-example-child", .server_version = WAYPOINT_VERSION});
  app::serve_openapi(application, {.title = "waypoint example child", .version = WAYPOINT_VERSION});

  waypoint::beast::server_options options;
  options.listen = {listener};
  options.threads = 1;
  app::serve(application, options);
}
