// The gateway's static files: examples/www served under "/", below every API route (the
// precedence rule gives any other pattern the path first), with the curl lines that show
// them. Its files are compiled in (waypoint_embed_directory in examples/CMakeLists.txt), so the
// binary serves them from anywhere, with no file on disk.
#pragma once

#include <waypoint/app/security/security_headers.hpp>
#include <waypoint/app/content/static_files.hpp>
#include <waypoint/embedded/www.hpp>

#include <ostream>
#include <string>

namespace waypoint::examples {

// `directory`: serve it from disk instead (--www), for editing the page without a rebuild.
inline void add_file_routes(waypoint::app::application& app, const std::string& directory) {
  waypoint::app::static_file_options files;
  files.cache_control = "no-cache";  // a demo page: revalidate on every use (a cheap 304)
  // The pages get the security headers (HSTS, CSP, nosniff, frame and cross-origin
  // policies); the API's JSON answers need no CSP, and CORS governs who reads them.
  auto pages = app.group("", waypoint::app::security_headers());
  if (directory.empty())
    serve_static(pages, "/", waypoint::embedded::www(), files);
  else
    serve_static(pages, "/", directory, files);
}

inline void print_file_examples(std::ostream& out, const std::string& base) {
  out << "  curl -i " << base
      << "/   # static file: examples/www/index.html, compiled in, with the security headers\n";
  out << "  curl -i --compressed " << base
      << "/style.css   # precompressed: style.css.gz for a client that accepts gzip\n";
  out << "  curl -i -r 0-99 " << base << "/style.css   # a byte range: 206\n";
}

}  // namespace waypoint::examples
