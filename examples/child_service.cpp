// waypoint-example-child: a waypoint application that runs as a service in its own process,
// mounted by the gateway at /v1/child (waypoint::app::mount, child_service.hpp). It listens
// on the unix socket it is given and answers as any application does; the gateway forwards
// to it. Every answer names the process, so restarts and reloads can be seen from outside.
//
//   $ waypoint-example-child --unix /tmp/child.sock &
//   $ curl --unix-socket /tmp/child.sock http://localhost/hello
#include "streams.hpp"

#include <waypoint/app/openapi.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/websocket.hpp>

#include <unistd.h>

#include <iostream>
#include <string>
#include <string_view>

namespace app = waypoint::app;

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
  app::serve_openapi(application, {.title = "waypoint example child", .version = WAYPOINT_VERSION});

  waypoint::beast::server_options options;
  options.listen = {waypoint::beast::listen_address::unix_socket(argv[2])};
  options.threads = 1;
  app::serve(application, options);
}
