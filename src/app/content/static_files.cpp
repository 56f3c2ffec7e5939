// The static file server of static_files.hpp: resolving a request's path inside the root
// (file_resolver), then answering for the file found (conditional requests, ranges,
// precompressed siblings). The field parsers it uses are in static_fields.cpp.
#include "waypoint/app/content/static_files.hpp"
#include "waypoint/app/content/compression.hpp"
#include "waypoint/app/operations/resource_limits.hpp"
#include "waypoint/beast/http_date.hpp"

#include "waypoint/detail/http_grammar.hpp"
#include "waypoint/pattern.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <system_error>

namespace waypoint::app {
namespace {

// A descriptor closed on scope exit.
class descriptor {
 public:
  descriptor() noexcept = default;
  explicit descriptor(int fd) noexcept : fd_(fd) {}
  descriptor(descriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  descriptor& operator=(descriptor&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }
  explicit operator bool() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Directory steps never follow a link (O_NOFOLLOW with O_DIRECTORY fails on one); the file
// is opened non-blocking so that a FIFO planted in the root cannot hold the thread.
constexpr int directory_flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int file_flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;

// A file found under the root: open, with its status, and the directory it is in (for its
// precompressed siblings; empty when it was reached through a followed link).
struct found_file {
  descriptor file;
  struct stat status {};
  descriptor directory;
  std::string name;  // its last component (the index file's name for a directory)
  bool via_link = false;  // opened by open_followed: its directory is not known
};

enum class lookup_result : std::uint8_t { found, missing, directory_without_slash };

class file_resolver {
 public:
  file_resolver(const std::string& root, const static_file_options& options)
      : options_(&options) {
    root_ = descriptor(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root_) throw std::system_error(errno, std::generic_category(), "waypoint::app: root " + root);
    std::unique_ptr<char, decltype(&std::free)> real(::realpath(root.c_str(), nullptr), &std::free);
    if (!real) throw std::system_error(errno, std::generic_category(), "waypoint::app: root " + root);
    real_root_ = real.get();
    root_text_ = root;
  }

  // The file the segments name (safe_segments' output), opened without following links
  // unless the policy says so.
  lookup_result find(const std::vector<std::string_view>& segments, found_file& out) const {
    lookup_result r = walk(segments, out);
    if (r != lookup_result::missing || (errno_ != ELOOP && errno_ != ENOTDIR)) return r;
    if (options_->symlinks == symlink_policy::refuse) return r;
    return through_links(segments, out);
  }

 private:
  // One component at a time from the root, links refused.
  lookup_result walk(const std::vector<std::string_view>& segments, found_file& out) const {
    // Invariant: segments is non-empty (safe_segments); an empty last one names a directory.
    errno_ = 0;
    bool directory_request = segments.back().empty();
    std::size_t steps = segments.size() - 1;
    // The root's own descriptor serves a file at the top: no step opens it again.
    descriptor dir;
    auto at = [&] { return dir ? dir.get() : root_.get(); };
    std::string name;
    for (std::size_t i = 0; i < steps; ++i) {
      name.assign(segments[i]);
      descriptor next(::openat(at(), name.c_str(), directory_flags));
      if (!next) return fail();
      dir = std::move(next);
    }
    if (directory_request) {
      if (!dir) dir = descriptor(::openat(root_.get(), ".", directory_flags));
      return open_index(std::move(dir), out);
    }
    name.assign(segments.back());
    descriptor file(::openat(at(), name.c_str(), file_flags));
    if (!file) return fail();
    if (::fstat(file.get(), &out.status) != 0) return fail();
    if (S_ISDIR(out.status.st_mode)) return lookup_result::directory_without_slash;
    if (!S_ISREG(out.status.st_mode)) return lookup_result::missing;
    out.file = std::move(file);
    out.directory = std::move(dir);  // empty at the top: directory_fd() gives the root's
    out.name = std::move(name);
    return lookup_result::found;
  }

 public:
  // The directory a found file is in, for its siblings: -1 when it was reached through a
  // followed link (no siblings are looked for then).
  int directory_fd(const found_file& found) const noexcept {
    if (found.directory) return found.directory.get();
    return found.via_link ? -1 : root_.get();
  }

 private:
  lookup_result open_index(descriptor dir, found_file& out) const {
    if (options_->index_file.empty()) return lookup_result::missing;
    descriptor file(::openat(dir.get(), options_->index_file.c_str(), file_flags));
    if (!file || ::fstat(file.get(), &out.status) != 0) return fail();
    if (!S_ISREG(out.status.st_mode)) return lookup_result::missing;
    out.file = std::move(file);
    out.directory = std::move(dir);
    out.name = options_->index_file;
    return lookup_result::found;
  }

  // A link was on the way: resolve the whole path, and for within_root walk the resolved
  // path from the root again, links refused, so a link swapped in meanwhile is not followed.
  lookup_result through_links(const std::vector<std::string_view>& segments,
                              found_file& out) const {
    std::string joined = root_text_;
    for (std::string_view s : segments) {
      joined += '/';
      joined.append(s);
    }
    std::unique_ptr<char, decltype(&std::free)> real(::realpath(joined.c_str(), nullptr), &std::free);
    if (!real) return lookup_result::missing;
    std::string_view resolved = real.get();
    bool directory_request = segments.back().empty();
    if (options_->symlinks == symlink_policy::follow) return open_followed(real.get(), directory_request, out);
    if (resolved != real_root_ && !(resolved.starts_with(real_root_) &&
                                    resolved.size() > real_root_.size() &&
                                    resolved[real_root_.size()] == '/'))
      return lookup_result::missing;
    std::string relative(resolved.substr(std::min(resolved.size(), real_root_.size() + 1)));
    if (directory_request && !relative.empty()) relative += '/';
    auto inside = detail::safe_segments(relative, options_->hidden_files);
    if (!inside) return lookup_result::missing;
    lookup_result r = walk(*inside, out);
    return r == lookup_result::directory_without_slash && directory_request ? lookup_result::missing
                                                                             : r;
  }

  lookup_result open_followed(const char* path, bool directory_request, found_file& out) const {
    descriptor file(::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!file || ::fstat(file.get(), &out.status) != 0) return lookup_result::missing;
    if (S_ISDIR(out.status.st_mode)) {
      if (!directory_request) return lookup_result::directory_without_slash;
      descriptor dir(::open(path, directory_flags & ~O_NOFOLLOW));
      return dir ? open_index(std::move(dir), out) : lookup_result::missing;
    }
    if (!S_ISREG(out.status.st_mode)) return lookup_result::missing;
    out.file = std::move(file);
    out.via_link = true;
    std::string_view p = path;
    out.name = std::string(p.substr(p.rfind('/') + 1));
    return lookup_result::found;
  }

  lookup_result fail() const {
    errno_ = errno;
    return lookup_result::missing;
  }

  const static_file_options* options_;
  descriptor root_;
  std::string real_root_;  // realpath of the root: what a resolved link must lie under
  std::string root_text_;
  // The errno of the last failed step (ELOOP, ENOTDIR: a link was met); per thread, since
  // one resolver serves every thread.
  static thread_local int errno_;
};

thread_local int file_resolver::errno_ = 0;

// "<mtime>-<size>" in hex, quoted: changes when the file is rewritten or replaced.
std::string entity_tag(const struct stat& status) {
  char text[48];
  int n = std::snprintf(text, sizeof text, "\"%llx-%llx\"",
                        static_cast<unsigned long long>(status.st_mtim.tv_sec),
                        static_cast<unsigned long long>(status.st_size));
  return std::string(text, static_cast<std::size_t>(n));
}

std::string lower_extension(std::string_view name) {
  std::size_t dot = name.rfind('.');
  return waypoint::detail::ascii_lowercase(dot == std::string_view::npos ? std::string_view()
                                                                         : name.substr(dot + 1));
}

// What the answer needs of the representation chosen, wherever its bytes are kept.
struct representation {
  std::string_view name;  // the file's own name (not its sibling's): its Content-Type
  std::uint64_t size = 0;
  std::string_view etag;  // quoted; the caller's, alive until prepare() returns
  // None for an embedded file: no Last-Modified, and the date preconditions are ignored.
  std::optional<std::time_t> modified;
};

// The answer for one file: validators, preconditions, then the range. The same rules for a
// file on disk and one compiled in; the caller sends the bytes.
class file_answer {
 public:
  file_answer(context& ctx, const static_file_options& options) : ctx_(ctx), options_(options) {}

  // name.br, then name.gz, when the client accepts the coding and `sibling(suffix)` finds
  // one (and takes it as the representation); Vary: Accept-Encoding either way.
  template <class Sibling>
  void choose_precompressed(Sibling&& sibling) {
    ctx_.response().append_header("Vary", "Accept-Encoding");
    std::string_view accepted = ctx_.header(http::field::accept_encoding);
    if (accepted.empty()) return;
    // The client's best coding among the siblings still to look for (compression()'s
    // negotiation: q-values, then br before gzip), until one exists.
    content_coding offered[] = {content_coding::br, content_coding::gzip};
    std::size_t left = std::size(offered);
    while (left > 0) {
      content_coding best = detail::negotiate_coding(accepted, true, std::span(offered, left));
      if (best == content_coding::identity) return;
      if (sibling(best == content_coding::br ? std::string_view(".br") : std::string_view(".gz"))) {
        ctx_.response().header(http::field::content_encoding, coding_name(best));
        return;
      }
      left = static_cast<std::size_t>(std::remove(offered, offered + left, best) - offered);
    }
  }

  // Sets the status and fields; the bytes to send, or nullopt when the answer needs none of
  // them (412, 304, 416).
  std::optional<detail::byte_range> prepare(const representation& r) {
    response_builder& res = ctx_.response();
    res.header(http::field::content_type, content_type(r.name));
    validators(r);
    if (const char* why = failed_precondition(r)) {
      res.message().erase(http::field::content_encoding);
      res.problem(412, why);
      return std::nullopt;
    }
    if (not_modified(r)) {
      res.status(http::status::not_modified);
      return std::nullopt;
    }
    detail::byte_range range{0, r.size};
    if (auto asked = wanted_range(r)) {
      if (asked->unsatisfiable) {
        res.status(http::status::range_not_satisfiable);
        res.header(http::field::content_range, "bytes */" + std::to_string(r.size));
        res.header(http::field::content_type, "text/plain; charset=utf-8");
        res.message().erase(http::field::content_encoding);
        res.body("Range Not Satisfiable: the file has " + std::to_string(r.size) + " bytes\n");
        return std::nullopt;
      }
      range = asked->range;
      res.status(http::status::partial_content);
      res.header(http::field::content_range,
                 "bytes " + std::to_string(range.first) + "-" +
                     std::to_string(range.first + range.length - 1) + "/" + std::to_string(r.size));
    }
    return range;
  }

 private:
  std::string_view content_type(std::string_view name) const {
    std::string ext = lower_extension(name);
    for (const auto& [extension, type] : options_.content_types)
      if (extension == ext) return type;
    std::string_view builtin = detail::builtin_content_type(name);
    return builtin.empty() ? std::string_view(options_.default_content_type) : builtin;
  }

  void validators(const representation& r) {
    response_builder& res = ctx_.response();
    res.header(http::field::etag, r.etag);
    if (r.modified) res.header(http::field::last_modified, beast::http_date(*r.modified));
    res.header(http::field::accept_ranges, "bytes");
    if (!options_.cache_control.empty())
      res.header(http::field::cache_control, options_.cache_control);
  }

  // RFC 9110 §13.2.2 steps 1-2, before the 304 of steps 3-4: If-Match decides when present
  // (§13.1.1, strongly), else If-Unmodified-Since (§13.1.4; a date that does not parse is
  // ignored). The reason when the precondition fails (412), else null.
  const char* failed_precondition(const representation& r) const {
    std::string_view match = ctx_.header(http::field::if_match);
    if (!match.empty()) {
      if (waypoint::detail::etag_listed_strongly(match, r.etag)) return nullptr;
      return "If-Match names no current version of the file";
    }
    std::string_view since = ctx_.header(http::field::if_unmodified_since);
    std::optional<std::time_t> when = since.empty() ? std::nullopt : detail::parse_http_date(since);
    if (!when || !r.modified || *r.modified <= *when) return nullptr;
    return "the file was modified after the If-Unmodified-Since date";
  }

  // RFC 9110 §13.1.2-3: If-None-Match decides when present, else If-Modified-Since.
  bool not_modified(const representation& r) const {
    std::string_view none_match = ctx_.header(http::field::if_none_match);
    if (!none_match.empty()) return waypoint::detail::etag_listed(none_match, r.etag);
    std::string_view since = ctx_.header(http::field::if_modified_since);
    if (since.empty() || !r.modified) return false;
    std::optional<std::time_t> when = detail::parse_http_date(since);
    return when && *r.modified <= *when;
  }

  // The Range to honour: none when If-Range names another version (RFC 9110 §13.1.5); a
  // date names none of an embedded file's.
  std::optional<detail::range_request> wanted_range(const representation& r) const {
    std::string_view field = ctx_.header(http::field::range);
    if (field.empty()) return std::nullopt;
    std::string_view if_range = ctx_.header(http::field::if_range);
    if (!if_range.empty()) {
      bool is_tag = if_range.front() == '"' || if_range.starts_with("W/");
      if (is_tag ? if_range != r.etag : !r.modified || if_range != beast::http_date(*r.modified))
        return std::nullopt;
    }
    return detail::parse_range(field, r.size);
  }

  context& ctx_;
  const static_file_options& options_;
};

// A file on disk: its sibling chosen, then sent with sendfile.
void send_disk_file(context& ctx, const static_file_options& options, found_file& found,
                    int directory) {
  // The open file is the request's second descriptor: a share of the server's budget, as an
  // upload's file takes, held until the body has gone out (file_payload::hold). None left:
  // a 503 with Retry-After, before any header of the file's is set.
  beast::resource_permit permit = require_descriptor(ctx, "the file's descriptor");
  file_answer answer(ctx, options);
  if (options.precompressed && directory >= 0) {
    answer.choose_precompressed([&](std::string_view suffix) {
      std::string sibling = found.name + std::string(suffix);
      descriptor file(::openat(directory, sibling.c_str(), file_flags));
      struct stat status {};
      if (!file || ::fstat(file.get(), &status) != 0 || !S_ISREG(status.st_mode)) return false;
      found.file = std::move(file);
      found.status = status;
      return true;
    });
  }
  std::string etag = entity_tag(found.status);
  representation r{found.name, static_cast<std::uint64_t>(found.status.st_size), etag,
                   found.status.st_mtim.tv_sec};
  std::optional<detail::byte_range> range = answer.prepare(r);
  if (!range) return;
  beast::file_payload body(found.file.release(), range->first, range->length);
  body.hold(std::move(permit));
  ctx.send_file(std::move(body));
}

// The route's handler: shares the resolver and options between threads (both immutable).
struct static_handler {
  std::shared_ptr<const file_resolver> resolver;
  std::shared_ptr<const static_file_options> options;

  void operator()(context& ctx) const {
    std::string_view path = ctx.path_value("path");
    auto segments = detail::safe_segments(path, options->hidden_files);
    found_file found;
    lookup_result r = segments ? resolver->find(*segments, found) : lookup_result::missing;
    if (r == lookup_result::missing) {
      ctx.response().problem(404, "no such file");
      return;
    }
    if (r == lookup_result::directory_without_slash) {
      // Relative, so that it cannot name another host, and links inside the index resolve.
      std::string location = "./";
      waypoint::detail::append_escaped(location, segments->back());
      ctx.response().redirect(301, location + "/");
      return;
    }
    send_disk_file(ctx, *options, found, resolver->directory_fd(found));
  }
};

// The route's handler for a directory compiled in: the same answers, from memory. The path
// rules are the same (safe_segments), links and descriptors do not arise, and the bytes are
// copied into the body, as Go's http.FileServer copies from an embed.FS: a zero-copy body
// would be a new kind of payload in the server for files that are small or, like Swagger
// UI's 1.5 MB script, cached by the browser after the first load.
struct embedded_handler {
  embedded_directory files;
  std::shared_ptr<const static_file_options> options;

  void operator()(context& ctx) const {
    auto segments = detail::safe_segments(ctx.path_value("path"), options->hidden_files);
    if (!segments) {
      ctx.response().problem(404, "no such file");
      return;
    }
    std::string path;
    for (std::string_view s : *segments) {
      if (!path.empty()) path += '/';
      path.append(s);
    }
    bool directory_request = segments->back().empty();
    if (directory_request) path += options->index_file;  // path ends in '/' (or is empty)
    const embedded_file* file =
        directory_request && options->index_file.empty() ? nullptr : files.find(path);
    if (!file) {
      if (!directory_request && files.has_directory(path)) {
        std::string location = "./";
        waypoint::detail::append_escaped(location, segments->back());
        ctx.response().redirect(301, location + "/");
        return;
      }
      ctx.response().problem(404, "no such file");
      return;
    }
    std::string_view name = file->path.substr(file->path.rfind('/') + 1);
    file_answer answer(ctx, *options);
    if (options->precompressed) {
      answer.choose_precompressed([&](std::string_view suffix) {
        const embedded_file* sibling = files.find(path + std::string(suffix));
        if (sibling) file = sibling;
        return sibling != nullptr;
      });
    }
    std::optional<detail::byte_range> range =
        answer.prepare({name, file->content.size(), file->etag, std::nullopt});
    if (!range) return;
    ctx.response().body().assign(file->content.substr(range->first, range->length));
  }
};

// "<prefix>{path...}"; throws for a prefix that does not end in '/'.
std::string static_files_pattern(std::string_view prefix) {
  if (prefix.empty() || prefix.back() != '/')
    throw std::invalid_argument("waypoint::app: a serve_static prefix ends in '/': " +
                                std::string(prefix));
  return std::string(prefix) + "{path...}";
}

}  // namespace

route_scope& serve_static(route_scope& scope, std::string_view prefix, const std::string& root,
                          const static_file_options& options, source_location where) {
  std::string pattern = static_files_pattern(prefix);
  auto shared_options = std::make_shared<const static_file_options>(options);
  auto resolver = std::make_shared<const file_resolver>(root, *shared_options);
  return scope.add_route("GET", pattern,
                         static_handler{std::move(resolver), std::move(shared_options)}, where);
}

route_scope& serve_static(route_scope& scope, std::string_view prefix,
                          const embedded_directory& files, const static_file_options& options,
                          source_location where) {
  std::string pattern = static_files_pattern(prefix);
  return scope.add_route(
      "GET", pattern, embedded_handler{files, std::make_shared<const static_file_options>(options)},
      where);
}

}  // namespace waypoint::app
