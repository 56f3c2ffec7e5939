// An http_session driven as a connection drives it, without a socket: for the session test
// and the session fuzzer.
#pragma once

#include "http_session.hpp"
#include "request_streams.hpp"
#include "waypoint/beast/adapter.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <memory>
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

// The plan of deferring_dispatch: bodies of /stream/{n} are streamed, up to `limit`.
inline wb::body_planner streaming_plan(std::uint64_t limit = 1024 * 1024) {
  return [limit](const wb::request& header) {
    return wb::body_plan{limit, header.target().starts_with("/stream/")};
  };
}

// A planner's work on a header (beast::planned_request), counted while alive so that a
// test sees each dropped or taken exactly once: noting_plan() notes the target of every
// request with a body, and deferring_dispatch answers POST /planned/{x} with the note it
// takes ("planned <target>: <n> bytes"), and POST /foreign/{x} with what another planner's
// dispatch takes ("foreign: nothing taken").
struct plan_note {
  std::string target;
};
inline std::atomic<int> live_plan_notes{0};
inline const char noting_planner = 0;  // its address names the planner

inline void drop_plan_note(void* note) noexcept {
  delete static_cast<plan_note*>(note);
  --live_plan_notes;
}

inline wb::body_planner noting_plan(std::uint64_t limit = 1024 * 1024) {
  return [limit](const wb::request& header) {
    auto* note = new plan_note{std::string(header.target())};
    ++live_plan_notes;
    return wb::body_plan{limit, false, wb::planned_request(&noting_planner, note, drop_plan_note)};
  };
}

// echo_dispatch, except that GET /file/{x} is answered "file <x>" from a file body, and
// GET /later/{x} is answered "later <x>" by a deferred send that
// the harness completes once the session has nothing more to do: a response that comes
// after the dispatch returned, while later requests wait in the input.
// Streaming (with streaming_plan): POST /stream/{n} reads its body n bytes at a time and
// answers "<bytes> bytes: <body>" (or "read failed: <error>"); GET /chunks/{k} answers k
// chunks "chunk <i>;" and a trailer "Checksum: <k>".
class deferring_dispatch {
 public:
  void operator()(wb::exchange& x) {
    std::string_view target = x.request().target();
    if (target.starts_with("/stream/")) {
      std::size_t chunk = 0;
      std::string_view digits = target.substr(8);
      std::from_chars(digits.data(), digits.data() + digits.size(), chunk);
      readers_.push_back({&x.host(), &x.response(), x.defer(),
                          std::clamp<std::size_t>(chunk, 1, 65536), {}, {}});
      return;
    }
    if (target.starts_with("/chunks/")) {
      int count = 0;
      std::string_view digits = target.substr(8);
      std::from_chars(digits.data(), digits.data() + digits.size(), count);
      writers_.push_back({&x.host(), std::clamp(count, 0, 100), x.defer()});
      return;
    }
    if (target.starts_with("/planned/") || target.starts_with("/foreign/")) {
      static const char another_planner = 0;
      const void* owner = target.starts_with("/planned/") ? &noting_planner : &another_planner;
      std::unique_ptr<plan_note> note(static_cast<plan_note*>(x.take_planned(owner)));
      if (note) --live_plan_notes;
      x.response().body() = (note ? "planned " + note->target : std::string("foreign")) + ": " +
                            (note ? std::to_string(x.request().body().size()) + " bytes"
                                  : std::string("nothing taken"));
      return;
    }
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
  // At the end of a run, while its session lives: what is still deferred is dropped (each
  // handle answers its 500 into that session), so nothing outlives the session it points at.
  void reset() {
    pending_.clear();
    writers_.clear();
    readers_.clear();
    active_.clear();
  }
  // After the dispatch returned, as a coroutine would start: the readers' first reads and
  // the writers' chunks. True when anything was started.
  bool start_streams() {
    bool started = !readers_.empty() || !writers_.empty();
    for (chunk_writer& w : writers_) {
      for (int i = 0; i < w.count; ++i)
        w.host->write_chunk("chunk " + std::to_string(i) + ";", [](boost::system::error_code) {});
      boost::beast::http::fields trailers;
      trailers.set("Checksum", std::to_string(w.count));
      w.host->set_trailers(trailers);
      w.done.send();
    }
    writers_.clear();
    for (body_reader& r : readers_) active_.push_back(std::make_unique<body_reader>(std::move(r)));
    readers_.clear();
    for (auto& r : active_)
      if (!r->started) r->next();
    return started;
  }

 private:
  struct chunk_writer {
    waypoint::beast::exchange_host* host;
    int count;
    wb::deferred_send done;
  };
  struct body_reader {
    waypoint::beast::exchange_host* host;
    wb::response* res;
    wb::deferred_send done;
    std::size_t chunk;
    std::string body;
    std::string buffer;
    bool started = false;
    void next() {
      started = true;
      buffer.resize(chunk);
      host->read_body(boost::asio::buffer(buffer), [this](boost::system::error_code ec,
                                                          std::size_t n) {
        if (!ec && n > 0) {
          body.append(buffer, 0, n);
          return next();
        }
        res->body() = ec ? "read failed: " + ec.message()
                         : std::to_string(body.size()) + " bytes: " + body;
        done.send();
      });
    }
  };

  std::vector<wb::deferred_send> pending_;
  std::vector<body_reader> readers_;
  std::vector<std::unique_ptr<body_reader>> active_;  // stable: their callbacks hold them
  std::vector<chunk_writer> writers_;
};

// A connection's side of the exchange, for a session with no socket.
class harness_host final : public waypoint::beast::exchange_host {
 public:
  void attach(wd::http_session* session) { session_ = session; }
  boost::asio::any_io_executor executor() override { return context_.get_executor(); }
  const wb::connection_endpoints& endpoints() override { return endpoints_; }
  boost::asio::cancellation_slot cancellation_slot() override { return cancel_.slot(); }
  void deferred_done() noexcept override { session_->deferred_done(); }
  bool attach_file(wb::file_payload& file) noexcept override { return session_->attach_file(file); }
  bool body_streamed() const noexcept override { return session_->body_streamed(); }
  // Completes at once when the session can; otherwise pump() does, after more input.
  void read_body(boost::asio::mutable_buffer into, wb::body_read_handler done) override {
    pending_read_ = std::move(done);
    deliver(session_->read_body(into));
  }
  void write_chunk(std::string_view data, wb::chunk_write_handler done) override {
    done(session_->write_chunk(data));
  }
  void set_trailers(const boost::beast::http::fields& trailers) override {
    session_->set_trailers(trailers);
  }
  // A read the last run left waiting is not completed into the next one's session.
  void forget() noexcept { pending_read_ = nullptr; }
  // True when a waiting read completed.
  bool pump() {
    if (!pending_read_) return false;
    return deliver(session_->poll_body());
  }

 private:
  bool deliver(wd::http_session::body_read outcome) {
    if (!outcome.ready) return false;
    auto done = std::move(pending_read_);
    pending_read_ = nullptr;
    done(outcome.ec, outcome.bytes);
    return true;
  }

  wb::body_read_handler pending_read_;
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
    dispatch_.reset();
    host_.forget();
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
      bool started = dispatch_.start_streams();
      bool read = host_.pump();  // both run, whichever moved
      if (started || read) continue;
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
