// An http_session driven as a connection drives it, without a socket: for the session test
// and the session fuzzer.
#pragma once

#include "http_session.hpp"
#include "request_streams.hpp"
#include "waypoint/beast/adapter.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <string_view>

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

// A session as a connection drives it: each piece is one read, and after each read the
// output is taken until the session needs more input. What arrives after the session
// decided to close is dropped, as the server's linger drops it.
class session_harness {
 public:
  explicit session_harness(wb::server_options options = {}) : options_(std::move(options)) {}

  std::string run(std::string_view bytes, const split_plan& plan) {
    wd::http_session session(environment_);
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
  static void drain(wd::http_session& session, std::string& out) {
    for (;;) {
      session.process();
      if (session.output().empty()) return;
      out += session.output();
      session.output().clear();
    }
  }

  wb::server_options options_;
  std::size_t largest_input_ = 0;
  wb::dispatch_function dispatch_ = echo_dispatch;
  wb::error_renderer render_ = wb::write_plain_error;
  wd::date_cache date_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> answered_{0};
  wd::session_environment environment_{options_, dispatch_, render_, date_, stop_, answered_};
};

}  // namespace waypoint::testing
