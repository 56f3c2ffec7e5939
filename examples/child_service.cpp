// waypoint-example-child: a waypoint application that runs as a service in its own process,
// mounted by the gateway at /v1/child (waypoint::app::mount, child_service.hpp). It listens
// on the unix socket it is given and answers as any application does; the gateway forwards
// to it. Every answer names the process, so restarts and reloads can be seen from outside.
//
//   $ waypoint-example-child --unix /tmp/child.sock &
//   $ curl --unix-socket /tmp/child.sock http://localhost/hello
// Its typed operation, POST /greetings (named greet), is in the parent's document and an MCP
// tool of the parent's (example.greet) once the child has started.
#include "streams.hpp"

#include <waypoint/app/json.hpp>
#include <waypoint/app/mcp.hpp>
#include <waypoint/app/openapi.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/websocket.hpp>

#include <unistd.h>

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

int main(int argc, char** argv) {
  if (argc != 3 || std::string_view(argv[1]) != "--unix") {
    std::cerr << "usage: waypoint-example-child --unix PATH\n";
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
  application.websocket("/ws", [](app::websocket& ws) -> app::awaitable<void> {
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
  options.listen = {waypoint::beast::listen_address::unix_socket(argv[2])};
  options.threads = 1;
  app::serve(application, options);
}
