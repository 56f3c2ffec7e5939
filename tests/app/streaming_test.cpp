// Streaming through waypoint::beast::server, as clients deliver it: uploads cut into pieces
// at every size and sent slowly, curl with Expect: 100-continue, limits per route, a
// chunked response with trailers, server-sent events to a client that leaves, and a reader
// that stops reading.
#include "loopback_client.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/content/event_stream.hpp>
#include <waypoint/app/serve.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

namespace wa = waypoint::app;
namespace wb = waypoint::beast;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using wa::testing::loopback_options;

// FNV-1a: the body's identity in the answer, so a lost or reordered byte shows.
std::uint64_t fnv(std::string_view bytes, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string fnv_text(std::string_view bytes) { return std::to_string(fnv(bytes)); }

// Reads the body `chunk` bytes at a time; answers "<bytes> <fnv>".
wa::awaitable<void> digest_body(wa::context& ctx, std::size_t chunk) {
  std::string buffer(chunk, '\0');
  std::uint64_t total = 0;
  std::uint64_t h = 1469598103934665603ull;
  for (;;) {
    std::size_t n = co_await ctx.read_some(buffer);
    if (n == 0) break;
    h = fnv(std::string_view(buffer.data(), n), h);
    total += n;
  }
  ctx.response().body(std::to_string(total) + " " + std::to_string(h));
}

struct streaming_server {
  std::atomic<int> failures_logged{0};  // the app's "waypoint: 500 for ..." lines
  wa::application app{{.logger = [this](std::string_view line) {
    if (line.find(": 500 for ") != std::string_view::npos) ++failures_logged;
  }}};
  std::atomic<bool> events_saw_disconnect{false};
  std::atomic<bool> writer_saw_failure{false};
  std::atomic<int> refused_handler_runs{0};
  std::atomic<int> unpaced_sends{0};     // /unpaced: events the server accepted
  std::atomic<bool> unpaced_ended{false};
  std::atomic<int> no_content_error{0};  // /no-content: write_chunk's error, as a value
  std::unique_ptr<wa::testing::loopback_server> server;

  explicit streaming_server(wb::server_options options = loopback_options()) {
    app.post("/digest/{chunk}", [](wa::context& ctx) -> wa::awaitable<void> {
         co_await digest_body(ctx, ctx.path_value<std::size_t>("chunk"));
       }).body({.max_bytes = 64 * 1024 * 1024, .streamed = true});
    app.post("/small", [this](wa::context& ctx) -> wa::awaitable<void> {
         ++refused_handler_runs;
         co_await digest_body(ctx, 100);
       }).body({.max_bytes = 1000, .streamed = true});
    // Refuses before reading: the client's upload is never asked for.
    app.post("/guarded", [](wa::context& ctx) -> wa::awaitable<void> {
         if (ctx.header("Authorization").empty()) {
           ctx.response().problem(401, "no credentials");
           co_return;
         }
         co_await digest_body(ctx, 4096);
       }).body({.streamed = true});
    // Reads 20 bytes every 50 ms: 400 bytes per second, whatever the client sends.
    app.post("/slow-reader", [](wa::context& ctx) -> wa::awaitable<void> {
         std::string buffer(20, '\0');
         std::size_t total = 0;
         asio::steady_timer pause(co_await asio::this_coro::executor);
         while (std::size_t n = co_await ctx.read_some(buffer)) {
           total += n;
           pause.expires_after(50ms);
           co_await pause.async_wait(asio::use_awaitable);
         }
         ctx.response().body(std::to_string(total));
       }).body({.streamed = true});
    app.post("/buffered-large", [](wa::context& ctx) {
         ctx.response().body(std::to_string(ctx.body().size()) + " " + fnv_text(ctx.body()));
       }).body({.max_bytes = 3 * 1024 * 1024});
    app.post("/buffered", [](wa::context& ctx) { ctx.response().body(fnv_text(ctx.body())); });
    app.get("/chunks", [](wa::context& ctx) -> wa::awaitable<void> {
      ctx.response().header("Trailer", "Checksum");
      std::string all;
      for (int i = 0; i < 5; ++i) {
        std::string piece = "piece " + std::to_string(i) + "\n";
        all += piece;
        co_await ctx.write_chunk(piece);
      }
      ctx.set_trailer("Checksum", fnv_text(all));
    });
    app.get("/events", [this](wa::context& ctx) -> wa::awaitable<void> {
      auto events = co_await wa::event_stream::open(ctx, {.heartbeat = 50ms});
      // The client's leaving and the drain are both seen here as false, never thrown.
      for (int i = 1;; ++i) {
        std::string n = std::to_string(i);
        if (!co_await events.send({.data = "line one\nline " + n, .event = "tick", .id = n}))
          break;
        if (!co_await events.wait(20ms)) break;  // the client left while it waited
      }
      events_saw_disconnect = !events.connected();
    });
    // Events with no wait between them: only the write can stop the loop.
    app.get("/unpaced", [this](wa::context& ctx) -> wa::awaitable<void> {
      auto events = co_await wa::event_stream::open(ctx);
      while (unpaced_sends < 1'000'000 && co_await events.send({.data = "x"})) ++unpaced_sends;
      unpaced_ended = true;
    });
    app.get("/no-content", [this](wa::context& ctx) -> wa::awaitable<void> {
      ctx.response().status(204);
      try {
        co_await ctx.write_chunk("nobody gets this");
      } catch (const std::system_error& e) {
        std::error_code expected = boost::system::error_code(wb::exchange_error::body_not_allowed);
        no_content_error = e.code() == expected ? e.code().value() : -1;
      }
    });
    // Two pieces of a body, then a failure: the body is cut, not ended.
    app.get("/fails-midway", [](wa::context& ctx) -> wa::awaitable<void> {
      co_await ctx.write_chunk("piece 0\n");
      co_await ctx.write_chunk("piece 1\n");
      throw std::runtime_error("the source of the body failed");
    });
    // Pieces 10 ms apart for ever: a body the drain cuts (not an event stream, which it ends).
    app.get("/endless", [](wa::context& ctx) -> wa::awaitable<void> {
      asio::steady_timer pause(co_await asio::this_coro::executor);
      for (int i = 0;; ++i) {
        co_await ctx.write_chunk("piece " + std::to_string(i) + "\n");
        pause.expires_after(10ms);
        co_await pause.async_wait(asio::use_awaitable);
      }
    });
    app.get("/firehose", [this](wa::context& ctx) -> wa::awaitable<void> {
      std::string megabyte(1024 * 1024, 'f');
      try {
        for (;;) co_await ctx.write_chunk(megabyte);
      } catch (const std::system_error&) {
        writer_saw_failure = true;
      }
    });
    server = std::make_unique<wa::testing::loopback_server>(app, std::move(options));
  }
  std::uint16_t port() const { return server->port(); }
  std::string url(std::string_view path) const { return server->url(path); }
};

// A raw connection: bytes out in the pieces given, the answer read to the connection's end.
class raw_client {
 public:
  explicit raw_client(std::uint16_t port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
  }
  void send(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes)); }
  // Reads until `needle` is in what arrived (or the connection ends); returns it all.
  std::string read_until(std::string_view needle) {
    std::string out;
    char buffer[4096];
    while (out.find(needle) == std::string::npos) {
      boost::system::error_code ec;
      std::size_t n = socket_.read_some(asio::buffer(buffer), ec);
      if (ec) break;
      out.append(buffer, n);
    }
    return out;
  }
  std::string read_to_end() { return read_until(std::string_view("\0never\0", 7)); }
  void close() { socket_.close(); }
  // Sends `bytes` one at a time, `gap` apart, from another thread, until all are sent, the
  // server closes or stop_trickle(); the reads above go on meanwhile.
  void trickle(std::string bytes, std::chrono::milliseconds gap) {
    trickler_ = std::thread([this, bytes = std::move(bytes), gap] {
      for (char c : bytes) {
        if (stop_ || ::send(socket_.native_handle(), &c, 1, MSG_NOSIGNAL) != 1) return;
        ++trickled_;
        std::this_thread::sleep_for(gap);
      }
    });
  }
  std::size_t stop_trickle() {
    stop_ = true;
    if (trickler_.joinable()) trickler_.join();
    return trickled_;
  }
  ~raw_client() { stop_trickle(); }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  std::thread trickler_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> trickled_{0};
};

std::string run(const std::string& command) { return wa::testing::command_output(command); }

std::string upload_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

std::string chunked(std::string_view body, std::size_t chunk) {
  std::string out;
  for (std::size_t at = 0; at < body.size(); at += chunk) {
    std::string_view piece = body.substr(at, chunk);
    char size[20];
    std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
    out += size;
    out += piece;
    out += "\r\n";
  }
  return out + "0\r\n\r\n";
}

struct upload_row {
  const char* rule;
  bool use_chunked;
  std::size_t body_bytes;
  std::size_t reader_chunk;
  std::size_t largest_piece;  // the client's writes are random pieces up to this size
  bool pause;                 // a millisecond between pieces: reads that find little
};

TEST(Streaming, UploadReachesTheHandlerWhateverTheWrites) {
  streaming_server s;
  const upload_row rows[] = {
      {"Content-Length, one byte pieces, slow", false, 300, 7, 1, true},
      {"Content-Length, odd pieces, a small reader", false, 200'000, 333, 5000, false},
      {"Content-Length, large pieces, a large reader", false, 3'000'000, 65536, 100'000, false},
      {"chunked in 1 KiB chunks, odd pieces", true, 500'000, 4096, 3000, false},
      {"chunked, pieces that cut chunk-size lines, slow", true, 2000, 64, 3, true},
  };
  std::uint32_t seed = 1;
  for (const upload_row& r : rows) {
    std::string body = upload_bytes(r.body_bytes, seed++);
    std::string head = "POST /digest/" + std::to_string(r.reader_chunk) + " HTTP/1.1\r\nHost: t\r\n";
    std::string bytes = r.use_chunked
                            ? head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(body, 1024)
                            : head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    bytes += "GET /chunks HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";  // pipelined after it
    raw_client c(s.port());
    std::mt19937 random(seed);
    for (std::size_t at = 0; at < bytes.size();) {
      std::size_t n = std::min<std::size_t>(1 + random() % r.largest_piece, bytes.size() - at);
      c.send(std::string_view(bytes).substr(at, n));
      at += n;
      if (r.pause) std::this_thread::sleep_for(1ms);
    }
    std::string answer = c.read_to_end();
    std::string expected = std::to_string(body.size()) + " " + fnv_text(body);
    EXPECT_NE(answer.find("HTTP/1.1 200 OK"), std::string::npos) << r.rule << "\n" << answer.substr(0, 300);
    EXPECT_NE(answer.find(expected), std::string::npos) << r.rule << "\n" << answer.substr(0, 300);
    EXPECT_NE(answer.find("piece 4\n"), std::string::npos) << r.rule << ": the pipelined request";
  }
}

// curl asks before a large upload (Expect: 100-continue) and streams a file of unknown
// length chunked; both reach the handler whole.
TEST(Streaming, CurlUploadsAreReadAsTheyArrive) {
  streaming_server s;
  std::filesystem::path file = std::filesystem::temp_directory_path() / "waypoint-streaming-upload";
  std::string body = upload_bytes(5 * 1024 * 1024 + 17, 99);
  std::ofstream(file, std::ios::binary) << body;
  std::string expected = std::to_string(body.size()) + " " + fnv_text(body);
  std::string with_length = run("curl -sS -X POST -T " + file.string() + " " + s.url("/digest/65536"));
  EXPECT_EQ(with_length, expected);
  std::string piped = run("cat " + file.string() + " | curl -sS -X POST -T - " + s.url("/digest/1000"));
  EXPECT_EQ(piped, expected);
  std::string verbose = run("curl -sS -v -X POST -T " + file.string() + " " + s.url("/digest/65536") +
                            " 2>&1 >/dev/null");
  EXPECT_NE(verbose.find("100 Continue"), std::string::npos) << verbose;
  std::filesystem::remove(file);
}

// A handler that answers without reading never sends 100 Continue, so the client sends no
// body; the connection closes after the answer, since the body's end is unknown.
TEST(Streaming, RefusalBeforeReadingSkipsTheUpload) {
  streaming_server s;
  raw_client c(s.port());
  c.send("POST /guarded HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 100000000\r\n\r\n");
  std::string answer = c.read_to_end();  // ends: the server closes without the body
  EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << answer;
  EXPECT_EQ(answer.rfind("HTTP/1.1 401 ", 0), 0u) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
}

struct limit_row {
  const char* rule;
  std::string target;
  std::size_t bytes;
  bool use_chunked;
  int status;
};

TEST(Streaming, EachRouteHasItsBodyLimit) {
  streaming_server s;
  const limit_row rows[] = {
      {"a streamed route under its limit", "/small", 1000, false, 200},
      {"a streamed route's Content-Length over its limit: 413 before the handler", "/small", 1001, false, 413},
      {"a streamed route's chunked body over its limit: 413 when read", "/small", 5000, true, 413},
      {"a buffered route with a limit above the server's", "/buffered-large", 2 * 1024 * 1024, false, 200},
      {"a buffered route with a limit, chunked", "/buffered-large", 2 * 1024 * 1024, true, 200},
      {"a buffered route over its limit", "/buffered-large", 3 * 1024 * 1024 + 1, false, 413},
      {"a route without a limit has the server's (1 MiB)", "/buffered", 1024 * 1024 + 1, false, 413},
  };
  for (const limit_row& r : rows) {
    int runs_before = s.refused_handler_runs;
    std::string body = upload_bytes(r.bytes, 5);
    std::string head = "POST " + r.target + " HTTP/1.1\r\nHost: t\r\n";
    raw_client c(s.port());
    c.send(r.use_chunked ? head + "Transfer-Encoding: chunked\r\n\r\n" + chunked(body, 4096)
                         : head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    std::string answer = c.read_until("\r\n\r\n");
    EXPECT_EQ(answer.substr(0, 12), "HTTP/1.1 " + std::to_string(r.status)) << r.rule << "\n" << answer;
    if (r.status == 413 && !r.use_chunked && r.target == "/small") {
      EXPECT_EQ(s.refused_handler_runs, runs_before) << r.rule << ": the handler ran";
    }
  }
}

TEST(Streaming, ChunkedResponseCarriesItsTrailers) {
  streaming_server s;
  raw_client c(s.port());
  c.send("GET /chunks HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  std::string answer = c.read_to_end();
  std::string all;
  for (int i = 0; i < 5; ++i) all += "piece " + std::to_string(i) + "\n";
  EXPECT_NE(answer.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("8\r\npiece 0\n\r\n"), std::string::npos) << answer;
  std::string tail = "0\r\nChecksum: " + fnv_text(all) + "\r\n\r\n";
  ASSERT_GE(answer.size(), tail.size());
  EXPECT_EQ(answer.substr(answer.size() - tail.size()), tail) << answer;
  // curl reads the same response, trailers and all.
  std::string body = run("curl -sS " + s.url("/chunks"));
  EXPECT_EQ(body, all);
}

// A body whose handler fails after its head has gone out cannot be answered with a 500; it
// must not end with the last chunk either, or the client takes the part for the whole.
TEST(Streaming, AHandlerThatFailsMidwayCutsTheBodyWithoutTheLastChunk) {
  streaming_server s;
  raw_client c(s.port());
  c.send("GET /fails-midway HTTP/1.1\r\nHost: t\r\n\r\n");  // keep-alive asked for
  std::string answer = c.read_to_end();  // the server closes
  EXPECT_NE(answer.find("8\r\npiece 1\n\r\n"), std::string::npos) << answer;
  EXPECT_EQ(answer.find("0\r\n\r\n"), std::string::npos) << answer;
  EXPECT_EQ(s.failures_logged, 1);
  // curl says so: exit 18, "transfer closed with outstanding read data remaining".
  int status = std::system(("curl -sS -o /dev/null " + s.url("/fails-midway") + " 2>/dev/null").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 18) << status;
}

TEST(Streaming, DrainCutsAnEndlessBodyWithoutTheLastChunk) {
  wb::server_options options = loopback_options();
  options.drain_timeout = 5s;
  streaming_server s(options);
  raw_client c(s.port());
  c.send("GET /endless HTTP/1.1\r\nHost: t\r\n\r\n");
  std::string seen = c.read_until("piece 2\n");
  ASSERT_NE(seen.find("piece 2\n"), std::string::npos) << seen;
  s.server->stop();
  std::string rest = seen + c.read_to_end();
  EXPECT_EQ(rest.find("0\r\n\r\n"), std::string::npos) << rest;
}

TEST(Streaming, EventsArriveInOrderAndTheHandlerSeesTheClientLeave) {
  streaming_server s;
  {
    raw_client c(s.port());
    c.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n");
    std::string seen = c.read_until("id: 5\n");
    EXPECT_NE(seen.find("Content-Type: text/event-stream\r\n"), std::string::npos) << seen;
    std::size_t at = 0;
    for (int i = 1; i <= 5; ++i) {
      std::string event = "event: tick\nid: " + std::to_string(i) + "\ndata: line one\ndata: line " +
                          std::to_string(i) + "\n\n";
      std::size_t found = seen.find(event, at);
      ASSERT_NE(found, std::string::npos) << "event " << i << " in order\n" << seen;
      at = found;
    }
    c.close();
  }
  for (int i = 0; i < 500 && !s.events_saw_disconnect; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(s.events_saw_disconnect) << "the handler did not notice the client leave";
  // curl as the client: the stream is what an EventSource would parse.
  std::string first = run("curl -sS -N --max-time 0.5 " + s.url("/events") + " 2>/dev/null");
  EXPECT_EQ(first.rfind(": stream open\n\nevent: tick\nid: 1\n", 0), 0u) << first;
}

// HEAD and 204 carry no body, so a write reports body_not_allowed and a writer's loop ends
// at once, even while the client stays connected (before: every write succeeded unsent,
// and a loop with no wait kept a core busy until the client left).
TEST(Streaming, WritesToAResponseWithoutBodyFailAndEndTheLoop) {
  streaming_server s;
  raw_client c(s.port());
  c.send("HEAD /unpaced HTTP/1.1\r\nHost: t\r\n\r\n");
  std::string head = c.read_until("\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Type: text/event-stream\r\n"), std::string::npos) << head;
  for (int i = 0; i < 200 && !s.unpaced_ended; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(s.unpaced_ended) << "the handler still writes; sends so far: " << s.unpaced_sends;
  EXPECT_EQ(s.unpaced_sends, 0);
  // The connection lives on: the next request on it is answered.
  c.send("GET /no-content HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  std::string next = c.read_to_end();
  EXPECT_EQ(next.rfind("HTTP/1.1 204 No Content\r\n", 0), 0u) << next;
  EXPECT_EQ(next.find("nobody"), std::string::npos) << next;
  EXPECT_EQ(s.no_content_error, static_cast<int>(wb::exchange_error::body_not_allowed));
  // A handler that lets the error go (HEAD /chunks) is no failure: its head stands.
  raw_client h(s.port());
  h.send("HEAD /chunks HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  std::string chunks = h.read_to_end();
  EXPECT_EQ(chunks.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << chunks;
  EXPECT_EQ(chunks.find("piece"), std::string::npos) << chunks;
  EXPECT_EQ(s.failures_logged, 0);
  // curl's HEAD gets the head alone.
  std::string curled = run("curl -sS -I --max-time 2 " + s.url("/unpaced"));
  EXPECT_NE(curled.find("text/event-stream"), std::string::npos) << curled;
}

// A client that asks for an endless response and reads none of it is cut by the write
// timeout; the writer learns it from write_chunk, and memory stays one chunk.
TEST(Streaming, ReaderThatStopsIsCutByTheWriteTimeout) {
  wb::server_options options = loopback_options();
  options.write_timeout = 300ms;
  streaming_server s(options);
  raw_client c(s.port());
  c.send("GET /firehose HTTP/1.1\r\nHost: t\r\n\r\n");
  for (int i = 0; i < 500 && !s.writer_saw_failure; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(s.writer_saw_failure);
  EXPECT_EQ(s.server->stats().timeouts.write, 1u);
}

}  // namespace

namespace {

wb::server_options quick_body_rules() {
  wb::server_options options = loopback_options();
  options.body_timeout = 300ms;
  options.min_body_rate = 1024;
  return options;
}

// A streamed upload obeys the body rules of a buffered one: a client that trickles 20 bytes
// a second, never pausing as long as body_timeout, falls under min_body_rate once
// body_timeout has passed, and the handler's read fails with timed_out, answered 408
// (before: every read found a byte in time, and the upload stayed open for as long as the
// client kept trickling; this one would have finished, answered 200).
TEST(Streaming, StreamedUploadUnderTheMinimumRateGets408) {
  streaming_server s(quick_body_rules());
  raw_client c(s.port());
  std::string body(60, 'x');
  c.send("POST /digest/4096 HTTP/1.1\r\nHost: t\r\nContent-Length: 60\r\nConnection: close\r\n\r\n");
  c.trickle(body, 50ms);
  std::string answer = c.read_to_end();
  std::size_t sent = c.stop_trickle();
  EXPECT_EQ(answer.rfind("HTTP/1.1 408 ", 0), 0u) << "after " << sent << " bytes\n" << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  EXPECT_LT(sent, body.size());
  EXPECT_EQ(s.server->stats().timeouts.body, 1u);
  EXPECT_EQ(s.failures_logged, 0);
}

// Only the client's time counts: a body sent at once to a handler that reads it at 400
// bytes a second (under min_body_rate, and for longer than body_timeout plus what the bytes
// earn) is the server's backpressure, not a slow client, and is read to its end.
TEST(Streaming, HandlerThatReadsSlowlyIsNotTheClientsDelay) {
  streaming_server s(quick_body_rules());
  raw_client c(s.port());
  c.send("POST /slow-reader HTTP/1.1\r\nHost: t\r\nContent-Length: 400\r\nConnection: close\r\n\r\n" +
         std::string(400, 'y'));
  std::string answer = c.read_to_end();
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK", 0), 0u) << answer;
  EXPECT_EQ(answer.substr(answer.size() - 3), "400") << answer;
  EXPECT_EQ(s.server->stats().timeouts.body, 0u);
}

}  // namespace

namespace {

// A program run with its output to a file, waited for (or killed) by its PID.
class child_process {
 public:
  child_process(std::vector<std::string> argv, const std::filesystem::path& output) {
    posix_spawn_file_actions_t files;
    ::posix_spawn_file_actions_init(&files);
    ::posix_spawn_file_actions_addopen(&files, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    if (::posix_spawnp(&pid_, args[0], &files, nullptr, args.data(), environ) != 0) pid_ = -1;
    ::posix_spawn_file_actions_destroy(&files);
  }
  ~child_process() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0; }
  // The exit status, or -1 if it is still running after `patience`.
  int wait_for_exit(std::chrono::milliseconds patience) {
    auto end = std::chrono::steady_clock::now() + patience;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
};

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// At a drain, an open event stream is told to end: the handler's wait ends, the response
// ends with its last chunk (a clean end: curl exits 0, a raw client reads "0\r\n\r\n"),
// and the connection closes, long before drain_timeout. (Before: the stream went on for the
// whole drain and was then cut without its last chunk; curl exited 18, "transfer closed
// with outstanding read data remaining".)
TEST(Streaming, DrainEndsAnEventStreamWithItsLastChunk) {
  wb::server_options options = loopback_options();
  options.drain_timeout = 5s;
  streaming_server s(options);
  std::filesystem::path out = std::filesystem::temp_directory_path() /
                              ("waypoint-drain-events-" + std::to_string(::getpid()));
  child_process curl({"curl", "-sS", "--no-buffer", "--max-time", "30", s.url("/events")}, out);
  ASSERT_TRUE(curl.started());
  raw_client raw(s.port());
  raw.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n");
  std::string seen = raw.read_until("id: 2\n");
  for (int i = 0; i < 500 && file_text(out).find("id: 2\n") == std::string::npos; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_NE(file_text(out).find("id: 2\n"), std::string::npos) << file_text(out);

  auto drain_start = std::chrono::steady_clock::now();
  s.server->stop();
  std::string rest = raw.read_to_end();
  int curl_status = curl.wait_for_exit(15s);
  auto drained = std::chrono::steady_clock::now() - drain_start;
  std::printf("the event streams ended %lld ms into the drain (drain_timeout %lld ms)\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(drained).count()),
              static_cast<long long>(options.drain_timeout.count()));
  EXPECT_EQ(curl_status, 0) << file_text(out);
  ASSERT_GE(rest.size(), 5u) << rest;
  EXPECT_EQ(rest.substr(rest.size() - 5), "0\r\n\r\n") << rest;
  EXPECT_TRUE(s.events_saw_disconnect);
  EXPECT_EQ(s.failures_logged, 0);
  std::filesystem::remove(out);
}

}  // namespace
