// Forms read from the request (waypoint/app/content/forms.hpp): the multipart reader over
// ctx.read_some(), read_form's fields and temporary files, and the buffered fields that typed
// routes bind.
#include "waypoint/app/content/forms.hpp"

#include "waypoint/app/async.hpp"
#include "waypoint/app/http_error.hpp"
#include "waypoint/app/typed/inputs.hpp"
#include "waypoint/app/operations/resource_limits.hpp"

#include "app/detail/media_type.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

namespace waypoint::app {
namespace {

// The reader's buffer: the size of the streaming examples' reads, which the parser's
// benchmark (BENCHMARKS.md, multipart throughput) reads in.
constexpr std::size_t read_buffer_bytes = 64 * 1024;

constexpr std::string_view urlencoded = "application/x-www-form-urlencoded";
constexpr std::string_view multipart = "multipart/form-data";

[[noreturn]] void throw_form_error(const form_error& error) {
  throw http_error(error.status, error.detail);
}

[[noreturn]] void throw_not_a_form() {
  throw http_error(415, "the body must be application/x-www-form-urlencoded or "
                        "multipart/form-data");
}

// The request's Content-Type; none is a type that is no form (415). One that does not parse
// is a 400 naming why (a parameter twice: two readers could take two boundaries from it).
detail::media_type content_type_of(const request_view& req) {
  std::string_view text = req.header(http::field::content_type);
  std::string why;
  std::optional<detail::media_type> type = detail::parse_media_type(text, &why);
  if (!type && !text.empty())
    throw http_error(400, "the Content-Type \"" + std::string(text.substr(0, 128)) + "\" " + why);
  return type.value_or(detail::media_type{});
}

std::string boundary_of(const request_view& req) {
  if (!content_type_of(req).is(multipart))
    throw http_error(415, "the body must be " + std::string(multipart));
  form_error error;
  std::optional<std::string> boundary = multipart_boundary(req.header(http::field::content_type), error);
  if (!boundary) throw_form_error(error);
  return *boundary;
}

// An unnamed file in `directory`; mkstemp and unlink where O_TMPFILE is not supported.
int open_unnamed_file(const std::string& directory) {
  std::string dir = directory;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    dir = tmp && *tmp ? tmp : "/tmp";
  }
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string path = dir + "/waypoint-form-XXXXXX";
  fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "mkstemp " + path);
  ::unlink(path.c_str());
  return fd;
}

}  // namespace

// --- temporary_file -----------------------------------------------------------------

temporary_file::temporary_file(temporary_file&& other) noexcept
    : descriptor_(std::exchange(other.descriptor_, -1)), permit_(std::move(other.permit_)) {}

temporary_file& temporary_file::operator=(temporary_file&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = std::exchange(other.descriptor_, -1);
    permit_ = std::move(other.permit_);
  }
  return *this;
}

temporary_file::~temporary_file() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void temporary_file::write(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t w = ::write(descriptor_, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw std::system_error(errno, std::generic_category(), "write a form's file");
    bytes.remove_prefix(static_cast<std::size_t>(w));
  }
}

std::string temporary_file::read_all() const {
  std::string out;
  char buffer[16 * 1024];
  for (off_t at = 0;;) {
    ssize_t n = ::pread(descriptor_, buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "read a form's file");
    if (n == 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
    at += n;
  }
}

// --- form ---------------------------------------------------------------------------

std::optional<std::string_view> form::field(std::string_view name) const noexcept {
  for (const form_field& f : fields)
    if (f.name == name) return f.value;
  return std::nullopt;
}

const form_file* form::file(std::string_view name) const noexcept {
  for (const form_file& f : files)
    if (f.part.name == name) return &f;
  return nullptr;
}

// --- multipart_reader ---------------------------------------------------------------

multipart_reader::multipart_reader(context& ctx, const form_limits& limits)
    : ctx_(&ctx), parser_(boundary_of(ctx), limits), buffer_(new char[read_buffer_bytes]) {}

awaitable<multipart_event> multipart_reader::advance() {
  for (;;) {
    multipart_event e = parser_.next(input_);
    if (e == multipart_event::need_more && body_ended_) e = parser_.finish();
    if (e == multipart_event::error) throw_form_error(parser_.error());
    if (e != multipart_event::need_more) co_return e;
    std::size_t n = co_await ctx_->read_some(std::span<char>(buffer_.get(), read_buffer_bytes));
    input_ = std::string_view(buffer_.get(), n);
    body_ended_ = n == 0;
  }
}

awaitable<bool> multipart_reader::next_part() {
  while (position_ == position::in_part) {
    content_ = {};
    if (co_await advance() == multipart_event::part_end) position_ = position::between_parts;
  }
  if (position_ == position::finished) co_return false;
  // Between parts the parser gives only the next part's header or the end.
  multipart_event e = co_await advance();
  position_ = e == multipart_event::part_begin ? position::in_part : position::finished;
  co_return position_ == position::in_part;
}

awaitable<std::size_t> multipart_reader::read_some(std::span<char> into) {
  while (content_.empty() && position_ == position::in_part) {
    multipart_event e = co_await advance();
    if (e == multipart_event::data) content_ = parser_.data();
    if (e == multipart_event::part_end) position_ = position::between_parts;
  }
  std::size_t n = std::min(into.size(), content_.size());
  if (n != 0) std::memcpy(into.data(), content_.data(), n);  // data() may be null when empty
  content_.remove_prefix(n);
  co_return n;
}

// --- read_form ----------------------------------------------------------------------

namespace {

// The largest urlencoded body a form within `limits` can be: each field and its '&'.
std::uint64_t urlencoded_bound(const form_limits& limits) {
  return std::min<std::uint64_t>(limits.max_total_bytes,
                                 std::uint64_t{limits.max_parts} * (limits.max_field_bytes + 1));
}

awaitable<std::vector<form_field>> read_urlencoded(context& ctx, const form_limits& limits) {
  std::string body;
  std::uint64_t bound = urlencoded_bound(limits);
  char buffer[16 * 1024];
  while (std::size_t n = co_await ctx.read_some(buffer)) {
    if (body.size() + n > bound)
      throw http_error(413, "the form is longer than " + std::to_string(bound) +
                                " bytes (" + std::to_string(limits.max_parts) + " fields of " +
                                std::to_string(limits.max_field_bytes) + ")");
    body.append(buffer, n);
  }
  form_error error;
  std::vector<form_field> fields = parse_urlencoded(body, limits, error);
  if (error.status) throw_form_error(error);
  co_return fields;
}

constexpr std::string_view disk_name = "temporary disk for forms";

}  // namespace

awaitable<form> read_form(context& ctx, const form_options& options) {
  form out;
  detail::media_type type = content_type_of(ctx);
  if (type.is(urlencoded)) {
    out.fields = co_await read_urlencoded(ctx, options.limits);
    co_return out;
  }
  if (!type.is(multipart)) throw_not_a_form();
  multipart_reader reader(ctx, options.limits);
  if (options.disk) {
    beast::resource_budget disk = *options.disk;  // a copy shares the count
    out.disk = require_share(ctx, disk, 0, 507, disk_name);
  }
  std::unique_ptr<char[]> buffer(new char[read_buffer_bytes]);
  std::span<char> chunk(buffer.get(), read_buffer_bytes);
  while (co_await reader.next_part()) {
    if (!reader.part().is_file()) {
      form_field f{reader.part().name, {}};
      while (std::size_t n = co_await reader.read_some(chunk)) f.value.append(chunk.data(), n);
      out.fields.push_back(std::move(f));
      continue;
    }
    if (out.files.size() == options.max_files)
      throw http_error(413, "the form has more than " + std::to_string(options.max_files) +
                                " files (form_options::max_files)");
    beast::resource_permit descriptor = require_descriptor(ctx, "a form's temporary file");
    form_file file{reader.part(), 0,
                   temporary_file(open_unnamed_file(options.temp_directory), std::move(descriptor))};
    while (std::size_t n = co_await reader.read_some(chunk)) {
      if (options.disk) require_more(ctx, out.disk, n, 507, disk_name);
      file.content.write(std::string_view(chunk.data(), n));
      file.size += n;
    }
    ::lseek(file.content.descriptor(), 0, SEEK_SET);
    out.files.push_back(std::move(file));
  }
  co_return out;
}

// --- typed routes' fields -----------------------------------------------------------

std::vector<form_field> detail::buffered_form_fields(const context& ctx) {
  form_limits limits;
  detail::media_type type = content_type_of(ctx);
  form_error error;
  std::vector<form_field> fields;
  if (type.is(urlencoded)) {
    fields = parse_urlencoded(ctx.body(), limits, error);
  } else if (type.is(multipart)) {
    std::optional<std::string> boundary = multipart_boundary(ctx.header(http::field::content_type), error);
    if (!boundary) throw_form_error(error);
    multipart_parser parser(*boundary, limits);
    std::string_view input = ctx.body();
    for (;;) {
      multipart_event e = parser.next(input);
      if (e == multipart_event::need_more) e = parser.finish();  // the body is all there is
      if (e == multipart_event::done || e == multipart_event::error) break;
      if (e == multipart_event::part_begin && !parser.part().is_file())
        fields.push_back({parser.part().name, {}});
      if (e == multipart_event::data && !parser.part().is_file())
        fields.back().value.append(parser.data());
    }
    error = parser.error();
  } else {
    throw_not_a_form();
  }
  if (error.status) throw_form_error(error);
  return fields;
}

}  // namespace waypoint::app
