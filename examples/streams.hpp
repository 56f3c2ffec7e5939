// The gateway's streaming routes: POST /v1/upload reads its body as it arrives into a
// temporary file and answers with its length and SHA-256; POST /v1/uploads/form reads a
// multipart form (an HTML form's upload, curl -F) part by part and answers each part's name,
// filename, length and SHA-256, holding none of them; GET /v1/events is a stream of
// server-sent events. Neither holds more than one 64 KiB buffer of the body, whatever its
// size. SHA-256 is OpenSSL's (a well-kept implementation; the project links it for TLS).
// An upload holds two things besides its connection, each counted against a limit: its
// file's descriptor (the server's descriptor budget: 503 with Retry-After when spent) and
// its bytes on disk (upload_disk, shared by every upload: 507 with Retry-After). Both go
// back when the request ends, whatever way it ends.
#pragma once

#include <waypoint/app/async.hpp>
#include <waypoint/app/content/event_stream.hpp>
#include <waypoint/app/content/forms.hpp>
#include <waypoint/app/http_error.hpp>
#include <waypoint/app/operations/resource_limits.hpp>

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <system_error>

namespace waypoint::examples {

// Uploads go to $TMPDIR (or /tmp), to a file removed at once: the descriptor keeps it until
// the request is done, so a crash or a client that leaves leaves nothing behind. A real
// service would link it into place (linkat) once the digest checks out.
class upload_file {
 public:
  upload_file() {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/waypoint-upload-XXXXXX";
    fd_ = ::mkstemp(path.data());
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "mkstemp " + path);
    ::unlink(path.c_str());
  }
  ~upload_file() { ::close(fd_); }
  upload_file(const upload_file&) = delete;
  upload_file& operator=(const upload_file&) = delete;

  // Blocking writes on the connection's thread: page-cache speed for a local disk, which
  // is what this example has; a slow disk wants a thread pool or io_uring.
  void write(const char* data, std::size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_, data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) throw std::system_error(errno, std::generic_category(), "write upload");
      data += w;
      n -= static_cast<std::size_t>(w);
    }
  }

 private:
  int fd_ = -1;
};

class sha256 {
 public:
  sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("SHA-256 is not available");
  }
  void update(const char* data, std::size_t n) { EVP_DigestUpdate(ctx_.get(), data, n); }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx_.get(), digest, &length);
    std::string out;
    char pair[3];
    for (unsigned int i = 0; i < length; ++i) {
      std::snprintf(pair, sizeof pair, "%02x", digest[i]);
      out += pair;
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

// The temporary disk that uploads in progress may fill together, by default. Two uploads
// of the largest size (1 GiB) fit; a third waits for one of them (507, Retry-After). An
// upload holds the bytes it has sent (receive_upload), not those it declares.
inline constexpr std::uint64_t default_upload_disk_budget = std::uint64_t{2} << 30;

// Status of an upload refused for want of disk: 507 Insufficient Storage (RFC 4918 §11.5,
// in the IANA HTTP status registry): "the server is unable to store the representation
// needed to successfully complete the request", a condition the RFC calls temporary. It
// names the resource, which 503 (RFC 9110 §15.6.4, any overload) does not, so a client
// and the metrics tell a full disk budget from a refused descriptor or connection; sent
// with Retry-After (RFC 9110 §10.2.3), since the budget comes back as uploads end.
inline constexpr int upload_disk_refused = 507;
inline constexpr std::string_view upload_disk_name = "temporary disk for uploads";

// The body's declared length (Content-Length); 0 for a chunked body.
inline std::uint64_t declared_length(const waypoint::app::context& ctx) {
  std::string_view text = ctx.header(waypoint::app::http::field::content_length);
  std::uint64_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

// Disk is reserved as the bytes arrive, never for the declared length: an upload that
// declares 1 GiB and trickles holds what it has sent, not half the budget. The declared
// length is checked against what is free before the first byte is read, so an upload that
// could not fit now is refused before it is sent (after `Expect: 100-continue`, before the
// 100); one that fitted then may still be refused mid-way, if others fill the disk meanwhile.
inline waypoint::app::awaitable<void> receive_upload(waypoint::app::context& ctx,
                                                      waypoint::beast::resource_budget disk) {
  auto space = waypoint::app::require_room(ctx, disk, declared_length(ctx), upload_disk_refused,
                                           upload_disk_name);
  auto descriptor = waypoint::app::require_descriptor(ctx, "the upload's temporary file");
  upload_file file;
  sha256 digest;
  std::array<char, 64 * 1024> buffer;
  std::uint64_t total = 0;
  for (;;) {
    std::size_t n = co_await ctx.read_some(buffer);
    if (n == 0) break;
    waypoint::app::require_more(ctx, space, n, upload_disk_refused, upload_disk_name);
    file.write(buffer.data(), n);
    digest.update(buffer.data(), n);
    total += n;
  }
  ctx.response().status(201).body("{\"bytes\":" + std::to_string(total) + ",\"sha256\":\"" +
                                        digest.hex() + "\"}", "application/json");
}

// Each part digested as it arrives, never stored: a form of any number of files (up to the
// route's body limit and form_limits' count of parts) costs one 64 KiB buffer. The filename
// answered is the safe one (form_parser.hpp): the client's own may hold a path.
inline waypoint::app::awaitable<void> digest_form(waypoint::app::context& ctx) {
  waypoint::app::multipart_reader reader(ctx);
  nlohmann::json parts = nlohmann::json::array();
  std::array<char, 64 * 1024> buffer;
  while (co_await reader.next_part()) {
    sha256 digest;
    std::uint64_t bytes = 0;
    while (std::size_t n = co_await reader.read_some(buffer)) {
      digest.update(buffer.data(), n);
      bytes += n;
    }
    nlohmann::json part = {{"name", reader.part().name}, {"bytes", bytes},
                           {"sha256", digest.hex()}};
    if (reader.part().is_file()) {
      part["filename"] = reader.part().safe_filename;
      part["content_type"] = reader.part().content_type;
    }
    parts.push_back(std::move(part));
  }
  ctx.response().json({{"parts", std::move(parts)}});
}

// The shortest ?interval_ms served: ten events a second is more than a person watching the
// demo can read, and it bounds the CPU of a stream (20 streams at 0 ms, proxied, took most
// of a core). A shorter interval is refused (400), not raised, so the client learns it.
inline constexpr std::uint32_t min_event_interval_ms = 100;

// ?count=N ends the stream after N events (default: until the client leaves); ?interval_ms
// spaces them (default 1000, at least min_event_interval_ms).
inline waypoint::app::awaitable<void> tick_events(waypoint::app::context& ctx) {
  auto count = ctx.query<std::uint64_t>("count");
  std::uint32_t interval_ms = ctx.query<std::uint32_t>("interval_ms").value_or(1000);
  if (interval_ms < min_event_interval_ms)
    throw waypoint::http_error(400, "interval_ms must be at least " +
                               std::to_string(min_event_interval_ms));
  auto interval = std::chrono::milliseconds(interval_ms);
  auto events = co_await waypoint::app::event_stream::open(ctx);
  for (std::uint64_t i = 1; !count || i <= *count; ++i) {
    std::string n = std::to_string(i);
    std::string data = "{\"tick\":" + n + "}";
    if (!co_await events.send({.data = data, .event = "tick", .id = n})) co_return;  // it left
    if ((!count || i < *count) && !co_await events.wait(interval)) co_return;
  }
}

// `upload_disk`: the temporary disk all uploads share (default_upload_disk_budget).
inline void add_stream_routes(
    waypoint::app::application& app,
    waypoint::beast::resource_budget upload_disk =
        waypoint::beast::resource_budget(default_upload_disk_budget)) {
  app.post("/v1/upload",
           [upload_disk](waypoint::app::context& ctx) { return receive_upload(ctx, upload_disk); })
      .body({.streamed = true})
      .describe({.summary = "Stores a body of up to 1 GiB, streamed, and answers its length and "
                            "SHA-256"});
  app.post("/v1/uploads/form", digest_form)
      .body({.streamed = true})
      .describe({.summary = "Reads a multipart form (curl -F, examples/www/upload.html) part "
                            "by part and answers each part's name, filename, length and "
                            "SHA-256"});
  app.get("/v1/events", tick_events).describe({.summary = "Server-sent events: a tick a second"});
}

// `sample`: a file to upload (any will do; the gateway offers its index.html).
inline void print_stream_examples(std::ostream& out, const std::string& base,
                                  const std::string& sample) {
  out << "  curl -i -X POST -T " << sample << " " << base
      << "/v1/upload   # streamed upload: 201 with the bytes and their SHA-256\n";
  out << "  curl -i -F title=hello -F file=@" << sample << " -F file=@" << sample << " " << base
      << "/v1/uploads/form   # multipart form upload: each part's name, bytes and SHA-256 "
         "(or open " << base << "/upload.html)\n";
  out << "  curl -i -N '" << base
      << "/v1/events?count=3'   # server-sent events, one a second\n";
}

}  // namespace waypoint::examples
