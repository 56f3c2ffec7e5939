// Serves the embedded directory and asks it, without sockets, for each path given on the
// command line: prints "<status> <ETag> <body>" a line each.
#include <waypoint/app/content/static_files.hpp>
#include <waypoint/embedded/site.hpp>

#include <iostream>

int main(int argc, char** argv) {
  waypoint::app::application app;
  serve_static(app, "/", waypoint::embedded::site());
  for (int i = 1; i < argc; ++i) {
    waypoint::app::request req{waypoint::app::http::verb::get, argv[i], 11};
    req.set(waypoint::app::http::field::host, "localhost");
    waypoint::app::response res = app.respond(req);
    std::cout << res.result_int() << ' ' << res[waypoint::app::http::field::etag] << ' '
              << res.body() << '\n';
  }
}
