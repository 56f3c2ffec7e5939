// A directory compiled into the binary: what the CMake function waypoint_embed_directory()
// generates (cmake/waypointEmbed.cmake), and what app::static_files serves from memory.
//
//   # CMakeLists.txt
//   waypoint_embed_directory(my-server www ${CMAKE_CURRENT_SOURCE_DIR}/www)
//
//   // C++
//   #include <waypoint/embedded/www.hpp>       // generated: declares waypoint::embedded::www()
//   serve_static(app, "/", waypoint::embedded::www());
//
// The bytes are the files as the build read them (through the assembler's .incbin, so a
// large file costs the compiler nothing); each file's entity tag is the start of its
// SHA-256, computed when it was embedded, so the tag changes exactly when the content does
// and is the same on every build of the same files. No modification time is kept: it would
// make the binary depend on when the files were checked out, and Go's embed.FS makes the
// same choice. Standard library only, like the router core.
#pragma once

#include <algorithm>
#include <span>
#include <string_view>

namespace waypoint {

struct embedded_file {
  // Relative to the embedded directory, '/'-separated, never starting with '/':
  // "index.html", "css/site.css".
  std::string_view path;
  std::string_view content;
  // A strong entity tag, quoted: "\"" + the first 128 bits of the content's SHA-256 in
  // hex + "\"".
  std::string_view etag;
};

// A read-only view of the generated table, sorted by path (byte order, as std::string_view
// compares), so a lookup is a binary search. Copyable; the table it views is static.
class embedded_directory {
 public:
  constexpr embedded_directory() noexcept = default;
  constexpr explicit embedded_directory(std::span<const embedded_file> files) noexcept
      : files_(files) {}

  // The file at `path` ("css/site.css"), or null.
  constexpr const embedded_file* find(std::string_view path) const noexcept {
    auto it = lower_bound(path);
    return it != files_.end() && it->path == path ? &*it : nullptr;
  }
  // Whether some file lies under `directory` ("css", or "" for the top).
  constexpr bool has_directory(std::string_view directory) const noexcept {
    if (directory.empty()) return !files_.empty();
    // The first path not before directory + "/", without building that string.
    auto before = [](const embedded_file& f, std::string_view d) {
      std::string_view head = f.path.substr(0, d.size());
      if (head != d) return head < d;
      return f.path.size() == d.size() || f.path[d.size()] < '/';
    };
    auto it = std::lower_bound(files_.begin(), files_.end(), directory, before);
    return it != files_.end() && it->path.size() > directory.size() &&
           it->path.starts_with(directory) && it->path[directory.size()] == '/';
  }
  constexpr std::span<const embedded_file> files() const noexcept { return files_; }

 private:
  constexpr std::span<const embedded_file>::iterator lower_bound(std::string_view path) const noexcept {
    return std::lower_bound(files_.begin(), files_.end(), path,
                            [](const embedded_file& f, std::string_view p) { return f.path < p; });
  }

  std::span<const embedded_file> files_;
};

}  // namespace waypoint
