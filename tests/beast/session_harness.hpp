// An http_session driven as a connection drives it, without a socket: for the session test
// and the session fuzzer.
#pragma once

#include "http_session.hpp"
#include "request_streams.hpp"
#include "waypoint/beast/adapter.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::testing {

namespace wb = waypoint::beast;
namespace wd = waypoint::beast::detail;

// GET /users/{id} and HEAD: 200 "user <id>"; POST /upload: 200 "<n> bytes"; else 404.
inline void echo_dispatch(const wb::request& req, wb::response& res) {
  std::string_view target = req.target();
  namespace http = boost::beast::http;
  if (target.starts_with("/users/")) {
    res.body() = "user " + std::string(target.substr(7));
  } else if (target == "/upload" && req.method() == http::verb::post) {
    res.body() = std::to_string(req.body().size()) + " bytes";
  } else {
    res.result(http::status::not_found);
  }
}

// A file holding `text`, as a body the session sends without reading it (memfd: no disk).
inline wb::file_payload file_holding(std::string_view text) {
  int fd = ::memfd_create("waypoint-harness", MFD_CLOEXEC);
  if (fd < 0) return {};
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    ::close(fd);
    return {};
  }
  return {fd, 0, text.size()};
}

// echo_dispatch, except that GET /file/{x} is answered "file <x>" from a file body, and
// GET /later/{x} is answered "later <x>" by a deferred send that
// the harness completes once the session has nothing more to do: a response that comes
// after the dispatch returned, while later requests wait in the input.
class deferring_dispatch {
 public:
  void operator()(wb::exchange& x) {
    std::string_view target = x.request().target();
    if (target.starts_with("/file/")) {
      wb::file_payload file = file_holding("file " + std::string(target.substr(6)));
      x.attach_file(file);
      return;
    }
    if (!target.starts_with("/later/")) return echo_dispatch(x.request(), x.response());
    x.response().body() = "later " + std::string(target.substr(7));
    pending_.push_back(x.defer());
  }
  // Sends what was deferred; false when nothing was.
  bool send_pending() {
    if (pending_.empty()) return false;
    for (wb::deferred_send& d : pending_) d.send();
    pending_.clear();
    return true;
  }

 private:
  std::vector<wb::deferred_send> pending_;
};

// A connection's side of the exchange, for a session with no socket.
class harness_host final : public wd::exchange_host {
 public:
  void attach(wd::http_session* session) { session_ = session; }
  boost::asio::any_io_executor executor() override { return context_.get_executor(); }
  const wb::connection_endpoints& endpoints() override { return endpoints_; }
  boost::asio::cancellation_slot cancellation_slot() override { return cancel_.slot(); }
  void deferred_done() noexcept override { session_->deferred_done(); }
  bool attach_file(wb::file_payload& file) noexcept override { return session_->attach_file(file); }

 private:
  wd::http_session* session_ = nullptr;
  boost::asio::io_context context_;
  boost::asio::cancellation_signal cancel_;
  wb::connection_endpoints endpoints_{{"127.0.0.1", 8080}, {"127.0.0.1", 40000}};
};

// A session as a connection drives it: each piece is one read, and after each read the
// output is taken until the session needs more input. What arrives after the session
// decided to close is dropped, as the server's linger drops it.
class session_harness {
 public:
  explicit session_harness(wb::server_options options = {}) : options_(std::move(options)) {}

  std::string run(std::string_view bytes, const split_plan& plan) {
    wd::http_session session(environment_, host_);
    host_.attach(&session);
    largest_input_ = 0;
    std::string out;
    auto feed = [&](std::string_view piece) {
      while (!piece.empty() && !session.closing()) {
        auto room = session.prepare();
        std::size_t n = std::min(room.size(), piece.size());
        std::memcpy(room.data(), piece.data(), n);
        session.commit(n);
        piece.remove_prefix(n);
        largest_input_ = std::max(largest_input_, session.input_capacity());
        drain(session, out);
      }
    };
    std::string_view rest = bytes;
    for (std::size_t size : plan) {
      if (rest.empty()) break;
      std::size_t n = std::min(size, rest.size());
      feed(rest.substr(0, n));
      rest.remove_prefix(n);
    }
    feed(rest);
    return without_dates(out);
  }

  // The most input memory the session held during the last run.
  std::size_t largest_input() const { return largest_input_; }
  // What http_session.hpp promises for it: one unfinished part at its limit plus one read,
  // in a buffer that grows by doubling.
  std::size_t input_bound() const {
    return 2 * (std::max(options_.max_header_bytes, wd::max_chunk_line_bytes) + wd::read_chunk);
  }

 private:
  void drain(wd::http_session& session, std::string& out) {
    for (;;) {
      session.process();
      if (session.output().empty() && !session.file_pending() && !dispatch_.send_pending())
        return;
      out += session.output();
      session.output().clear();
      if (session.file_pending()) send_file(session.pending_file(), out);
      session.file_sent();
    }
  }

  // What the connection's sendfile does, into the output.
  static void send_file(wb::file_payload& file, std::string& out) {
    std::string bytes(file.length(), '\0');
    ssize_t n = ::pread(file.fd(), bytes.data(), bytes.size(), static_cast<off_t>(file.offset()));
    bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    out += bytes;
  }

  wb::server_options options_;
  std::size_t largest_input_ = 0;
  deferring_dispatch dispatch_;
  wb::exchange_function exchange_ = [this](wb::exchange& x) { dispatch_(x); };
  harness_host host_;
  wb::error_renderer render_ = wb::write_plain_error;
  wd::date_cache date_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> answered_{0};
  wd::server_counters counters_;
  wd::session_environment environment_{options_, exchange_, render_, date_, stop_, answered_,
                                       counters_};
};

}  // namespace waypoint::testing
