// Files, as docs/files.md shows them: a static file server for a front end's assets, a
// page at the root below every API route, and a handler of its own that answers with a
// file body (sent with sendfile, never read into memory). Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/content/static_files.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace app = waypoint::app;

int main() {
  app::application application;

  // GET and HEAD /assets/{path...}: long-lived caching for fingerprinted assets, wasm typed.
  app::static_file_options assets;
  assets.cache_control = "public, max-age=31536000, immutable";
  assets.content_types = {{"wasm", "application/wasm"}};
  serve_static(application, "/assets/", "/srv/www/assets", assets);

  // The API, and the site's pages under "/": any more specific pattern wins over it.
  application.get("/v1/health", [](app::context& ctx) { ctx.response().body("ok\n"); });
  serve_static(application, "/", "/srv/www/site");

  // A file body from a handler: the response's fields are the handler's, the length and
  // the bytes come from the descriptor's range.
  application.get("/v1/reports/latest", [](app::context& ctx) {
    int fd = ::open("/var/lib/reports/latest.csv", O_RDONLY | O_CLOEXEC);
    struct stat status {};
    if (fd < 0 || ::fstat(fd, &status) != 0) {
      if (fd >= 0) ::close(fd);
      ctx.response().problem(503, "no report yet");
      return;
    }
    ctx.response().header("Content-Type", "text/csv; charset=utf-8");
    ctx.send_file(waypoint::beast::file_payload(fd, 0, static_cast<std::uint64_t>(status.st_size)));
  });

  waypoint::app::serve(application, {});
}
