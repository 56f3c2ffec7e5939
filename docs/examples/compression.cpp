// Compression, as docs/framework.md shows it: one layer for the whole API, a streamed
// report compressed as it goes, and a route whose uploads may arrive gzip'd. Compiled by
// tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/content/compression.hpp>

#include <cstdint>
#include <string>

namespace app = waypoint::app;

int main() {
  app::application application;

  // Every response a client accepts compressed (br > zstd > gzip), whole or streamed;
  // request bodies with a Content-Encoding decoded before the handler reads them.
  application.use(app::compression({.min_size = 1024, .br_level = 4}));

  // A whole body: compressed in the layer's `after` hook when it is 1 KiB or more.
  application.get("/v1/catalog", [](app::context& ctx) {
    ctx.response().body(std::string(4096, 'x'), "application/json");
  });

  // A streamed body: each write_chunk() is compressed and flushed, so the client decodes
  // every row as it arrives; the stream ends properly once the handler returns.
  application.get("/v1/report", [](app::context& ctx) -> app::awaitable<void> {
    ctx.response().header("Content-Type", "text/csv");
    for (int row = 0; row < 1000; ++row) co_await ctx.write_chunk("row," + std::to_string(row) + "\n");
  });

  // An upload sent with Content-Encoding: gzip arrives decoded in ctx.body(), up to the
  // route's body_limit decoded (413 past it); a malformed one is 400, an unknown coding 415.
  application.post("/v1/imports", [](app::context& ctx) {
    ctx.response().body(std::to_string(ctx.body().size()) + " bytes decoded\n");
  }).body({.max_bytes = 16 * 1024 * 1024});

  // Never compressed: the caller says so.
  application.get("/v1/token", [](app::context& ctx) {
    ctx.response().header("Cache-Control", "no-store, no-transform").body("{}", "application/json");
  });

  app::serve(application, {});
}
