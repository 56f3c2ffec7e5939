// Files compiled into the binary, as docs/files.md shows them: a directory embedded by
// waypoint_embed_directory() at build time and served with the rules of a directory on disk.
// Compiled by tests/docs/check, which embeds a directory under the name the include asks for.
#include <waypoint/app/all.hpp>
#include <waypoint/app/content/static_files.hpp>
#include <waypoint/embedded/site.hpp>  // generated: waypoint::embedded::site()

namespace app = waypoint::app;

int main() {
  app::application application;
  application.get("/v1/health", [](app::context& ctx) { ctx.response().body("ok\n"); });

  // The front end, from the binary: no file on disk at run time.
  app::static_file_options site;
  site.cache_control = "no-cache";  // revalidated on each use: a 304 while the build is the same
  serve_static(application, "/", waypoint::embedded::site(), site);

  waypoint::app::serve(application, {});
}
