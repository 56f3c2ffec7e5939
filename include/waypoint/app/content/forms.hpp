// HTML forms and file uploads read from the request: application/x-www-form-urlencoded and
// multipart/form-data (RFC 7578), as the body arrives. One call reads a whole form, files
// into temporary files; multipart_reader streams each part to the handler instead.
//
//   app.post("/v1/profile", [](context& ctx) -> awaitable<void> {
//     waypoint::app::form f = co_await waypoint::app::read_form(ctx);
//     std::string_view name = f.field("name").value_or("");
//     for (const waypoint::app::form_file& file : f.files) ...  // file.part, size, descriptor()
//   }).body({.streamed = true});
//
//   waypoint::app::multipart_reader reader(ctx);          // the same body, part by part
//   while (co_await reader.next_part())
//     while (std::size_t n = co_await reader.read_some(buffer)) digest(reader.part(), buffer, n);
//
// Both read with ctx.read_some(), so the route may stream its body (route_body::streamed:
// a file is never held in memory) or not (the body is read from ctx.body()). What a client
// gets for a form out of bounds is a problem document: 415 for another Content-Type, 400 for
// a malformed body (the detail names the rule: a missing final boundary, a part without a
// name, a bare LF), 413 naming the limit of form_limits it passed, 507 with Retry-After when
// the disk budget for temporary files is spent, 503 when the server's descriptors are.
// Filenames are the client's text: form_part::safe_filename is the one to display or to use
// under a directory of your own (form_parser.hpp says what it removes).
// Typed routes bind form fields as they bind query parameters: from::form (inputs.hpp).
#pragma once

#include "waypoint/app/context.hpp"
#include "waypoint/app/content/form_parser.hpp"
#include "waypoint/beast/resource_budget.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

struct form_options {
  form_limits limits{};
  // Files read_form writes at once: each holds one of the server's descriptors until the
  // form goes, so without this bound four forms of max_parts empty files would hold 1,024
  // of them. Past it: 413 naming the bound.
  std::size_t max_files = 16;
  // The directory files are written to; empty: $TMPDIR, else /tmp. Each file is created
  // unnamed there (O_TMPFILE, or mkstemp and unlink where the file system lacks it), so
  // nothing is left behind however the request ends.
  std::string temp_directory{};
  // The bytes of temporary disk that forms may fill together (share one budget between the
  // routes that read forms). Spent: 507 with Retry-After. None: only max_file_bytes bounds
  // a file.
  std::optional<beast::resource_budget> disk{};
};

// An unnamed file on disk holding an upload; closed, and its disk and descriptor shares
// given back, when it goes.
class temporary_file {
 public:
  temporary_file(int descriptor, beast::resource_permit descriptor_permit) noexcept
      : descriptor_(descriptor), permit_(std::move(descriptor_permit)) {}
  temporary_file(temporary_file&& other) noexcept;
  temporary_file& operator=(temporary_file&& other) noexcept;
  ~temporary_file();

  // Open for reading and writing, at offset 0 once read_form has returned. To keep the
  // file, link it into place: linkat(AT_FDCWD, "/proc/self/fd/N", AT_FDCWD, path,
  // AT_SYMLINK_FOLLOW), with a path of your choosing.
  int descriptor() const noexcept { return descriptor_; }
  // Appends `bytes` (blocking writes: page-cache speed on a local disk).
  void write(std::string_view bytes);
  // The whole content (for tests and small files).
  std::string read_all() const;

 private:
  int descriptor_ = -1;
  beast::resource_permit permit_;
};

struct form_file {
  form_part part;         // name, filename as sent, safe_filename, content_type
  std::uint64_t size = 0;
  temporary_file content;
};

struct form {
  std::vector<form_field> fields;  // in the order sent; files are not among them
  std::vector<form_file> files;
  beast::resource_permit disk;     // the files' share of form_options::disk

  // The first value of field `name`; nullopt when absent.
  std::optional<std::string_view> field(std::string_view name) const noexcept;
  // The first file of part `name`; nullptr when absent.
  const form_file* file(std::string_view name) const noexcept;
};

// The request's form: an urlencoded body (held whole: at most max_parts fields of
// max_field_bytes) or a multipart one, fields in memory and files in temporary files.
// `options` is read until the form is: co_await the call where it is made. Pass a named
// form_options: GCC 12 destroys a braced temporary in a co_await expression twice.
awaitable<form> read_form(context& ctx, const form_options& options = {});

// A multipart/form-data body part by part, for a handler that streams each file somewhere
// (a digest, another server) instead of to disk. Holds one 64 KiB buffer (read_form, above,
// holds that and one of its own).
class multipart_reader {
 public:
  // 415 when the request is not multipart/form-data, 400 when its boundary is missing or
  // invalid.
  explicit multipart_reader(context& ctx, const form_limits& limits = {});

  // Moves to the next part, skipping what is left of the current one; false once the final
  // boundary has been read.
  awaitable<bool> next_part();
  // The current part's header.
  const form_part& part() const noexcept { return parser_.part(); }
  // The current part's next bytes, up to into.size(); 0 at its end.
  awaitable<std::size_t> read_some(std::span<char> into);

 private:
  // The parser's next event, reading the body as it needs; its errors thrown.
  awaitable<multipart_event> advance();

  // Where the reader is, as the caller sees it.
  enum class position : std::uint8_t { between_parts, in_part, finished };

  context* ctx_;
  multipart_parser parser_;
  std::unique_ptr<char[]> buffer_;
  std::string_view input_;    // the unparsed rest of buffer_
  std::string_view content_;  // data the parser gave that read_some has not handed out
  position position_ = position::between_parts;
  bool body_ended_ = false;
};

}  // namespace waypoint::app
