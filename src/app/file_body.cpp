// context::send_file: a file body goes to the server's connection, which sends it with
// sendfile; where there is no such connection (respond(), async_handle()) it is read into
// the string body instead, the only place the framework reads a file into memory.
#include "waypoint/app/context.hpp"

#include <unistd.h>

#include <cerrno>

namespace waypoint::app {
namespace {

// The file's range into the body; HEAD only states its length. A file that cannot be read
// whole (it shrank, an I/O error) is a 500 rather than a short body.
void read_into_body(const beast::file_payload& file, app::response& res, bool head) {
  if (head) {
    res.content_length(file.length());
    return;
  }
  std::string& body = res.body();
  body.resize(static_cast<std::size_t>(file.length()));
  std::size_t done = 0;
  while (done < body.size()) {
    ssize_t n = ::pread(file.fd(), body.data() + done, body.size() - done,
                        static_cast<off_t>(file.offset() + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // the server's fault, answered as every error is: a problem document
      render_problem(http::status::internal_server_error, "the file could not be read", res);
      return;
    }
    done += static_cast<std::size_t>(n);
  }
  res.content_length(body.size());
}

}  // namespace

void context::send_file(beast::file_payload file) noexcept {
  file_ = std::move(file);
}

std::uint64_t context::body_size() const noexcept {
  const app::response& res = response_.message();
  // Chunks the server sent (those gathered into the body under async_handle() are in it).
  if (chunked_bytes_ > 0 && res.body().empty()) return outcome_.head ? 0 : chunked_bytes_;
  bool file_is_body = file_ && res.body().empty() && beast::carries_content(res.result_int());
  if (!file_is_body) return res.body().size();
  return outcome_.head ? 0 : file_.length();
}

void context::hand_over_file() noexcept {
  if (!file_) return;
  beast::file_payload file = std::move(file_);
  app::response& res = response_.message();
  if (!res.body().empty() || !beast::carries_content(res.result_int())) return;  // replaced
  if (host_->attach_file(file)) return;
  try {
    read_into_body(file, res, outcome_.head);
  } catch (...) {
    res.result(http::status::internal_server_error);
    res.body().clear();
  }
}

}  // namespace waypoint::app
