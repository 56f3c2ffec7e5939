// WebSocket routes, as docs/server.md shows them: an echo, a ticker that writes on a timer
// until the client leaves, a route behind an auth layer that refuses the upgrade with 401,
// a WebSocket beside a plain GET on one pattern, and the raw server's exchange::upgrade.
// Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/beast/websocket.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <string>

namespace app = waypoint::app;
namespace asio = boost::asio;
namespace wb = waypoint::beast;
using namespace std::chrono_literals;

int main() {
  app::application a;
  a.use(app::request_id());

  // Every message back as it came; read() is nullopt once the connection is closed.
  serve_websocket(a, "/v1/echo", [](app::websocket& ws) -> app::awaitable<void> {
    while (auto message = co_await ws.read()) co_await ws.write(*message);
  });

  // A ticker: one text message a second, until a write finds the connection closed (which
  // throws, and ends the handler quietly). The server's drain closes it with 1001 and
  // cancels the timer it waits on.
  serve_websocket(a, "/v1/ticker", [](app::context& ctx, app::websocket& ws) -> app::awaitable<void> {
    asio::steady_timer timer(ctx.executor());
    for (int tick = 0; ws.is_open(); ++tick) {
      co_await ws.write_text("tick " + std::to_string(tick));
      timer.expires_after(1s);
      co_await timer.async_wait(asio::use_awaitable);
    }
  });

  // The group's layer runs on the upgrade request: without the token the client gets a
  // plain 401 and nothing is upgraded. What the layer stores, the handler reads.
  struct user {
    std::string name;
  };
  auto streams = a.group("/v1/stream", app::layer_hooks{[](app::context& ctx) {
    if (ctx.header(waypoint::beast::http::field::authorization) != "Bearer demo") {
      ctx.response().problem(401, "a bearer token is required");
      return false;  // answered: nothing inside runs
    }
    ctx.set(user{"demo"});
    return true;
  }});
  app::websocket_options limits;
  limits.max_message_bytes = 64 * 1024;  // larger messages close with 1009
  limits.idle_timeout = 30s;             // a ping after 15 s of silence, cut after 30 s
  serve_websocket(streams, 
      "/{id}",
      [](app::context& ctx, app::websocket& ws) -> app::awaitable<void> {
        co_await ws.write_text("stream " + std::string(ctx.path_value("id")) + " for " +
                               ctx.get<user>().name);
        while (auto message = co_await ws.read()) {
          if (message->payload == "bye") {
            co_await ws.close(app::close_code::normal, "bye");
            co_return;
          }
          co_await ws.write(*message);
        }
      },
      limits);

  // One pattern, two kinds of request: upgrades to the WebSocket, the rest to the page.
  a.get("/v1/chat", [](app::context& ctx) { ctx.response().body("<p>the chat page</p>\n", "text/html"); });
  serve_websocket(a, "/v1/chat", [](app::websocket& ws) -> app::awaitable<void> {
    while (auto message = co_await ws.read()) co_await ws.write_text("you said: " + message->payload);
  });

  wb::server_options options;
  options.listen = {{"127.0.0.1", 8080}};
  app::serve(a, options);

  // Without the framework: the raw server's dispatch takes the upgrade itself.
  wb::server raw(options, [](wb::exchange& x) {
    wb::websocket_upgrade up;
    up.run = [](wb::websocket_channel& ws) -> asio::awaitable<void> {
      while (auto message = co_await ws.read()) co_await ws.write(message->payload, message->binary);
    };
    if (!x.upgrade(up)) {
      x.response().result(wb::http::status::upgrade_required);
      x.response().set(wb::http::field::upgrade, "websocket");
    }
  });
  raw.run();
}
