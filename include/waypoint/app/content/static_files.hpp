// A static file server on a rest-wildcard route, that cannot be walked out of its root:
//
//   #include "waypoint/app/content/static_files.hpp"
//   waypoint::app::static_file_options files;
//   files.cache_control = "public, max-age=3600";
//   serve_static(app, "/assets/", "/srv/www/assets", files);   // GET (and HEAD) /assets/{path...}
//
// What a request may reach: the path value is percent-decoded once (by the router, which
// refuses dot segments, also escaped ones) and split on '/'; a segment that is empty, "." or
// "..", holds NUL or '\', starts with '.' (unless hidden_files) or is longer than a file
// name can be, and a path longer than PATH_MAX, are 404 without a system call. The file is
// then opened one component at a time from a descriptor of the root, never following a
// symbolic link; a link is followed only when `symlinks` allows it (within_root: its
// target, resolved, must lie under the root and is opened the same way). Only regular
// files are served (a FIFO or device is 404), and they are opened non-blocking.
//
// What is answered: Content-Type from the extension (content_types, then a built-in
// table), ETag ("<mtime>-<size>" in hex) and Last-Modified, a failed If-Match or
// If-Unmodified-Since answered 412, If-None-Match / If-Modified-Since answered 304, a
// single byte range answered 206 with Content-Range (416 when it cannot be
// satisfied, If-Range honoured, several ranges served whole), index_file for a directory
// (a directory named without its trailing slash is redirected to it), a precompressed
// sibling (name.br, name.gz) chosen by Accept-Encoding as compression() negotiates it
// (compression.hpp: q-values, then br before gzip), with `Vary: Accept-Encoding`, and
// Cache-Control. The body is a file_payload: the server sends it with sendfile, never
// reading it into memory.
//
// From files compiled into the binary (waypoint_embed_directory(), embedded_directory.hpp):
//   serve_static(app, "/", waypoint::embedded::www());
// the same path rules and the same answers, with two differences: the ETag is the start
// of the content's SHA-256, computed at build time, and there is no Last-Modified (so
// If-Modified-Since and If-Unmodified-Since are ignored, as RFC 9110 says for a resource
// without a modification date, and If-Range needs the ETag). `symlinks` does not apply.
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/embedded_directory.hpp"

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waypoint::app {

// What a symbolic link under the root may do.
enum class symlink_policy : std::uint8_t {
  refuse,       // any link on the way is a 404
  within_root,  // followed when what it resolves to is under the root
  follow,       // followed wherever it leads (a root that links to shared assets)
};

struct static_file_options {
  // Served for a request naming a directory; empty: directories are 404.
  std::string index_file = "index.html";
  // The Cache-Control value of every answer (200, 206, 304); empty: none is sent. The
  // default lets caches keep a file and makes them revalidate it (a cheap 304) on each use.
  std::string cache_control = "no-cache";
  // Names starting with '.' (.git, .env) are 404 unless this is set.
  bool hidden_files = false;
  symlink_policy symlinks = symlink_policy::within_root;
  // name.br and name.gz next to a file are sent in its place to a client that accepts them.
  bool precompressed = true;
  // Extension (without the dot, lower case) to Content-Type, consulted before the
  // built-in table: {{"wasm", "application/wasm"}, {"md", "text/markdown"}}.
  std::vector<std::pair<std::string, std::string>> content_types;
  // For an extension neither knows.
  std::string default_content_type = "application/octet-stream";
};

namespace detail {

// The built-in Content-Type of a file named `name` (by its extension, case-insensitive),
// or empty when the table has none.
std::string_view builtin_content_type(std::string_view name) noexcept;

// A byte range [first, first + length) of a representation.
struct byte_range {
  std::uint64_t first = 0;
  std::uint64_t length = 0;
};

// What a Range field asks of a representation of `size` bytes (RFC 9110 §14): nullopt
// when the whole of it is to be sent (no field, not bytes=, several ranges, a syntax error:
// each may be ignored), unsatisfiable when the one range starts past the end.
struct range_request {
  bool unsatisfiable = false;
  byte_range range;
};
std::optional<range_request> parse_range(std::string_view field, std::uint64_t size) noexcept;

// If-None-Match and If-Match: waypoint::detail::etag_listed(_strongly)
// (waypoint/detail/http_grammar.hpp).

// An IMF-fixdate ("Tue, 01 Dec 2026 16:58:06 GMT") as seconds since the epoch; nullopt for
// anything else (the obsolete forms are not worth their parsers here).
std::optional<std::time_t> parse_http_date(std::string_view text) noexcept;

// The decoded path value split into the segments a request may name, or nullopt when one
// of them is not allowed (the rules in this header's comment). A trailing '/' gives a last
// empty segment: a directory.
std::optional<std::vector<std::string_view>> safe_segments(std::string_view path,
                                                           bool hidden_files);

}  // namespace detail

// Files under the directory `root`, served at `prefix` (ending in '/') by GET and HEAD
// "<prefix>{path...}" in `scope`, as above. Returns the scope, for describe(). Throws
// std::system_error when `root` cannot be opened as a directory, std::invalid_argument for
// a prefix without its '/'.
route_scope& serve_static(route_scope& scope, std::string_view prefix, const std::string& root,
                          const static_file_options& options = {},
                          source_location where = source_location::current());
// The same for files compiled into the binary by waypoint_embed_directory()
// (waypoint/embedded_directory.hpp): `files` views static data, and is copied.
route_scope& serve_static(route_scope& scope, std::string_view prefix,
                          const embedded_directory& files, const static_file_options& options = {},
                          source_location where = source_location::current());

}  // namespace waypoint::app
