// Streaming, as docs/files.md shows it: an upload read as it arrives, a response written in
// chunks with a trailer, and server-sent events. Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/content/event_stream.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace app = waypoint::app;

int main() {
  app::application application;

  // The body arrives as the handler reads it: at most one buffer of it is in memory,
  // and the server reads from the client no faster than the handler takes.
  application.post("/v1/blobs", [](app::context& ctx) -> app::awaitable<void> {
    std::array<char, 64 * 1024> buffer;
    std::uint64_t total = 0;
    while (std::size_t n = co_await ctx.read_some(buffer)) {
      total += n;  // write buffer[0, n) somewhere
    }
    ctx.response().status(201).body("{\"bytes\":" + std::to_string(total) + "}", "application/json");
  }).body({.max_bytes = std::uint64_t{4} << 30, .streamed = true});  // up to 4 GiB; 413 past it

  // A buffered route may take more than the server's default 1 MiB.
  application.post("/v1/imports", [](app::context& ctx) {
    ctx.response().body(std::to_string(ctx.body().size()) + " bytes\n");
  }).body({.max_bytes = 16 * 1024 * 1024});

  // A response written piece by piece, with a trailer announced up front.
  application.get("/v1/report", [](app::context& ctx) -> app::awaitable<void> {
    ctx.response().header("Content-Type", "text/csv").header("Trailer", "X-Rows");
    int rows = 0;
    for (; rows < 1000; ++rows) co_await ctx.write_chunk("row," + std::to_string(rows) + "\n");
    ctx.set_trailer("X-Rows", std::to_string(rows));
  });

  // Server-sent events: a tick a second until the client leaves.
  application.get("/v1/ticks", [](app::context& ctx) -> app::awaitable<void> {
    auto events = co_await app::event_stream::open(ctx);
    for (int i = 1;; ++i) {
      std::string n = std::to_string(i);
      if (!co_await events.send({.data = n, .event = "tick", .id = n})) co_return;
      if (!co_await events.wait(std::chrono::seconds(1))) co_return;
    }
  });

  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 8080}};
  app::serve(application, options);  // plans each body by its route (options_for)
}
