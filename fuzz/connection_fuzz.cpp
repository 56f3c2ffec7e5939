// libFuzzer target for the server's connection (src/beast/connection.cpp), with the session
// and the WebSocket session beneath it and waypoint::app above it. A worker of the server
// serves one end of a socketpair as if it had accepted it; the fuzzer is the client at the
// other end. The input says what the client sends, where its writes are cut, whether the
// socket buffers are small (so that the server's writes back up), and when the client stops
// reading or hangs up. Everything runs on one io_context that this thread polls until
// nothing moves; the server's timeouts are a minute, so none comes due within an input and
// a run depends on the input alone.
//
// A socketpair rather than loopback TCP: thousands of connections a second would run out
// of ephemeral ports (TIME_WAIT), and the listener is not what is fuzzed here.
//
// Input: byte 0 the client's manners: bit 0 small socket buffers; bit 1 the server runs
// until quiet after every piece (else one turn of the io_context); bits 2-3 the ending:
// 0 half-close once everything is sent, then read to the end; 1 stop reading after piece
// `at`, half-close at the end; 2 hang up after piece `at`; 3 as 0, and the server starts its
// graceful stop after piece `at`; bit 4 the connection comes past max_connections; bit 5,
// with ending 3, the drain runs out a piece later (as at a second signal); bit 6 the
// listener serves HTTP/2, and a client whose bytes open with its preface speaks h2c. Byte 1
// the largest piece (1 to 256 bytes), bytes 2-3 the seed of the cuts, byte 4 `at`; the
// rest is what the client sends.
//
// Properties, besides no crash, sanitizer report, leak or failed assert():
//   - the server's bytes parse as HTTP/1.1 responses and, after a 101, as WebSocket frames
//     a server may send (unmasked, well formed, nothing after a close frame);
//   - the requests dispatched are the client's, in order (the server's parse agrees with
//     Beast's parser over the same bytes), and their answers come in that order, once each;
//   - a response that says the connection closes is the last, and the server then closes;
//     it never closes unannounced while its client is still sending and reading;
//   - once the server is quiet and open, every complete request has its answer;
//   - the answers of the routes below are right: an upload's size and digest, each chunk and
//     the trailer, each event, a file's bytes or range, a WebSocket echo's messages;
//   - a client's half-close ends the connection once the answers are out; after its
//     hang-up the worker holds no connection; and nothing spins while no byte moves.
#include "check.hpp"
#include "worker.hpp"

#include <waypoint/app/content/event_stream.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/app/content/static_files.hpp>
#include <waypoint/app/realtime/websocket.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace wa = waypoint::app;
namespace wb = waypoint::beast;
namespace wd = waypoint::beast::detail;
using waypoint::fuzzing::require;

// --- the application ------------------------------------------------------------------

// The body limit of the upload routes: small, so that inputs reach it.
constexpr std::uint64_t upload_limit = 4096;
// The most chunks or events a route writes, and turns a deferred answer waits.
constexpr std::size_t most_pieces = 32;

std::uint64_t fnv(std::string_view bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

// What the upload routes answer for `body`.
std::string digest(std::string_view body) {
  return std::to_string(body.size()) + " " + std::to_string(fnv(body));
}

std::string chunk_text(std::size_t i) { return "piece " + std::to_string(i) + "\n"; }
std::string event_text(std::size_t i) { return "event " + std::to_string(i); }

std::string all_chunks(std::size_t count) {
  std::string all;
  for (std::size_t i = 0; i < count; ++i) all += chunk_text(i);
  return all;
}

std::size_t count_in(wa::context& ctx, std::string_view name) {
  return std::min(ctx.path_value<std::size_t>(name), most_pieces);
}

// Reads the streamed body `piece` bytes at a time, then answers its digest.
wa::awaitable<void> read_streamed(wa::context& ctx) {
  std::string buffer(std::clamp<std::size_t>(ctx.path_value<std::size_t>("piece"), 1, 512), '\0');
  std::string body;
  while (std::size_t n = co_await ctx.read_some(buffer)) body.append(buffer, 0, n);
  ctx.response().body(digest(body));
}

// A deferred answer sent after `turns` trips through the executor, as a library's callback.
struct later_answer {
  wa::deferred_response response;
  std::size_t turns;
};

void finish_later(asio::any_io_executor executor, std::shared_ptr<later_answer> answer) {
  if (answer->turns > 0) {
    --answer->turns;
    asio::post(executor, [executor, answer] { finish_later(executor, answer); });
    return;
  }
  answer->response.response().body("later");
  answer->response.send();
}

// The files under /files/: small ones, an empty one, and one larger than the socket
// buffers, so that sendfile waits for the client.
const std::vector<std::pair<std::string, std::string>>& static_file_table() {
  static const std::vector<std::pair<std::string, std::string>> files = [] {
    std::string big(96 * 1024, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i * 7 % 26);
    return std::vector<std::pair<std::string, std::string>>{{"a.txt", "hello, file\n"},
                                                            {"empty", ""},
                                                            {"big.bin", big},
                                                            {"d/index.html", "<p>index</p>"}};
  }();
  return files;
}

const std::string* file_content(std::string_view path) {
  for (const auto& [name, content] : static_file_table())
    if (name == path) return &content;
  return nullptr;
}

// GET /users/{id}          "user"
// POST /upload            buffered body (limit 4096): its digest
// POST /stream/{piece}    streamed body read `piece` bytes at a time: its digest
// POST /guarded/{piece}   the same with an X-Key field; 401 before reading without one
// GET /later/{turns}      deferred, sent after `turns` trips through the executor
// GET /await/{turns}      a coroutine that awaits `turns` posts
// GET /chunks/{count}     `count` chunks and a Checksum trailer
// GET /events/{count}     an event stream of `count` events
// GET /files/{path...}    static files
// GET /ws                 a WebSocket echo; /ws/once: writes "bye" and closes
// GET /throw              a handler that throws
void add_routes(wa::application& app, const std::string& root) {
  app.get("/users/{id}", [](wa::context& ctx) { ctx.response().body("user"); });
  app.post("/upload", [](wa::context& ctx) { ctx.response().body(digest(ctx.body())); })
      .body({.max_bytes = upload_limit});
  app.post("/stream/{piece}", read_streamed).body({.max_bytes = upload_limit, .streamed = true});
  app.post("/guarded/{piece}",
           [](wa::context& ctx) -> wa::awaitable<void> {
             if (ctx.header("X-Key").empty()) {
               ctx.response().problem(401, "no key");
               co_return;
             }
             co_await read_streamed(ctx);
           })
      .body({.max_bytes = upload_limit, .streamed = true});
  app.get("/later/{turns}", [](wa::context& ctx) {
    auto answer = std::make_shared<later_answer>(later_answer{ctx.defer(), count_in(ctx, "turns")});
    finish_later(ctx.executor(), std::move(answer));
  });
  app.get("/await/{turns}", [](wa::context& ctx) -> wa::awaitable<void> {
    for (std::size_t turns = count_in(ctx, "turns"); turns > 0; --turns)
      co_await asio::post(ctx.executor(), asio::use_awaitable);
    ctx.response().body("awaited");
  });
  app.get("/chunks/{count}", [](wa::context& ctx) -> wa::awaitable<void> {
    std::size_t count = count_in(ctx, "count");
    ctx.response().header("Trailer", "Checksum");
    for (std::size_t i = 0; i < count; ++i) co_await ctx.write_chunk(chunk_text(i));
    ctx.set_trailer("Checksum", std::to_string(fnv(all_chunks(count))));
  });
  app.get("/events/{count}", [](wa::context& ctx) -> wa::awaitable<void> {
    std::size_t count = count_in(ctx, "count");
    auto events = co_await wa::event_stream::open(ctx);
    for (std::size_t i = 0; i < count; ++i) {
      std::string data = event_text(i);
      if (!co_await events.send({.data = data})) co_return;
    }
  });
  wa::static_file_options files;
  files.precompressed = false;
  serve_static(app, "/files/", root, files);
  serve_websocket(app, "/ws", [](wa::websocket& ws) -> wa::awaitable<void> {
    while (auto message = co_await ws.read()) co_await ws.write(*message);
  });
  serve_websocket(app, "/ws/once",
                  [](wa::websocket& ws) -> wa::awaitable<void> { co_await ws.write_text("bye"); });
  app.get("/throw", [](wa::context&) { throw std::runtime_error("the handler failed"); });
}

// --- the client's requests, as Beast's parser reads them ---------------------------------

struct client_request {
  std::string method;
  std::string target;
  std::string body;
  bool complete;    // the body too (a streamed body's request is dispatched without it)
  std::size_t end;  // where it ends in the client's bytes, when complete
};

// The requests at the start of `bytes` whose header is complete, skipping empty lines
// before each as the server does, up to the first incomplete or invalid one (which is the
// last, when its header is complete).
std::vector<client_request> requests_in(std::string_view bytes) {
  std::vector<client_request> requests;
  std::size_t at = 0;
  for (;;) {
    at = std::min(bytes.find_first_not_of("\r\n", at), bytes.size());
    if (at == bytes.size()) return requests;
    http::request_parser<http::string_body> parser;
    parser.header_limit(1 << 20);
    parser.body_limit(1 << 20);
    parser.eager(true);
    std::size_t used = 0;
    boost::system::error_code ec;
    while (!parser.is_done() && !ec) {
      std::size_t n = parser.put(asio::buffer(bytes.substr(at + used)), ec);
      used += n;
      if (n == 0) break;
    }
    if (!parser.is_header_done()) return requests;
    const auto& req = parser.get();
    requests.push_back({std::string(req.method_string()), std::string(req.target()), req.body(),
                        parser.is_done(), at + used});
    if (!parser.is_done()) return requests;
    at += used;
  }
}

// --- WebSocket frames ---------------------------------------------------------------------

struct ws_message {
  std::string payload;
  bool binary = false;
  bool operator==(const ws_message&) const = default;
};

// The messages of a stream of frames: a client's (masked) up to its first frame a server
// would refuse or its close, or a server's (unmasked), every frame of which must be valid.
struct ws_frames {
  std::vector<ws_message> messages;
  bool closed = false;     // a close frame came
  bool truncated = false;  // the bytes end inside a frame
  std::string fault;       // why the frames stopped being valid, when they did
};

ws_frames read_frames(std::string_view bytes, bool from_client) {
  ws_frames out;
  std::optional<ws_message> partial;
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (out.closed) {
      out.fault = "bytes after a close frame";
      return out;
    }
    auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[at + i]); };
    std::size_t left = bytes.size() - at;
    if (left < 2) break;
    bool fin = byte(0) & 0x80;
    unsigned reserved = byte(0) & 0x70;
    unsigned opcode = byte(0) & 0x0f;
    bool masked = byte(1) & 0x80;
    std::uint64_t length = byte(1) & 0x7f;
    std::size_t header = 2;
    if (length == 126) {
      if (left < 4) break;
      length = std::uint64_t{byte(2)} << 8 | byte(3);
      header = 4;
    } else if (length == 127) {
      if (left < 10) break;
      length = 0;
      for (std::size_t i = 2; i < 10; ++i) length = length << 8 | byte(i);
      header = 10;
    }
    if (masked) header += 4;
    bool control = opcode >= 8;
    if (reserved)
      out.fault = "a reserved bit set";
    else if (masked != from_client)
      out.fault = from_client ? "an unmasked frame" : "a masked frame";
    else if ((opcode > 2 && opcode < 8) || opcode > 10)
      out.fault = "an unknown opcode";
    else if (control && (!fin || length > 125))
      out.fault = "a fragmented or long control frame";
    else if (opcode == 0 && !partial)
      out.fault = "a continuation without a message";
    else if ((opcode == 1 || opcode == 2) && partial)
      out.fault = "a message inside a message";
    else if (length > (std::uint64_t{1} << 24))
      out.fault = "a frame longer than the test sends";
    if (!out.fault.empty()) return out;
    if (left < header || left - header < length) break;
    std::string payload(bytes.substr(at + header, static_cast<std::size_t>(length)));
    if (masked)
      for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<char>(payload[i] ^ bytes[at + header - 4 + i % 4]);
    at += header + static_cast<std::size_t>(length);
    if (opcode == 8) {
      if (payload.size() == 1) {
        out.fault = "a close frame with a one-byte payload";
        return out;
      }
      out.closed = true;
      continue;
    }
    if (control) continue;  // ping, pong
    if (!partial) partial = ws_message{{}, opcode == 2};
    partial->payload += payload;
    if (fin) {
      out.messages.push_back(std::move(*partial));
      partial.reset();
    }
  }
  out.truncated = at < bytes.size();
  return out;
}

// --- the server's bytes ------------------------------------------------------------------

// One request the server dispatched, in the order it did.
struct dispatched_request {
  std::string method;
  std::string target;
};

// What reading the server's bytes found.
struct answers {
  std::size_t finals = 0;        // final responses (not 100 Continue)
  bool announced_close = false;  // the last said the connection closes (or its body ends there)
  std::optional<std::size_t> upgraded;  // the request whose 101 made it a WebSocket
  ws_frames frames;                     // after the 101
  bool truncated = false;               // the bytes end inside a response
  // ... and it is a chunked body that the drain cut, ending at a chunk's end without the
  // last chunk (exchange_host::abort_response): the server closed, so nothing more comes.
  bool cut_by_drain = false;
};

std::optional<std::size_t> number_in(std::string_view text) {
  std::size_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

// Reads the server's bytes as the responses to `dispatched` (and the server's own error
// answers), checking each.
class answer_reader {
 public:
  answer_reader(const std::vector<dispatched_request>& dispatched,
                const std::vector<client_request>& sent, std::string_view client_bytes,
                bool stopping, bool cut, std::function<std::string()> describe)
      : dispatched_(dispatched),
        sent_(sent),
        client_bytes_(client_bytes),
        stopping_(stopping),
        cut_(cut),
        describe_(std::move(describe)) {}

  // `eof`: the server has closed, so a body that runs to the close is complete.
  answers read(std::string_view out, bool eof) {
    for (std::size_t i = 0; i < dispatched_.size(); ++i)
      check(i < sent_.size() && sent_[i].target == dispatched_[i].target &&
                sent_[i].method == dispatched_[i].method,
            "the requests dispatched are the client's, in order");
    answers a;
    while (!out.empty()) {
      if (a.upgraded) {
        a.frames = read_frames(out, false);
        check(a.frames.fault.empty(), "a WebSocket server's frames are valid: " + a.frames.fault);
        check_echo(*a.upgraded, a.frames);
        return a;
      }
      check(!a.announced_close, "nothing follows a response that closes the connection");
      // The i-th final answer is the i-th dispatched request's, or the server's own (an
      // error it answers without a dispatch, which closes the connection).
      std::size_t i = a.finals;
      bool dispatched = i < dispatched_.size();
      bool to_head = dispatched && dispatched_[i].method == "HEAD";

      http::response_parser<http::string_body> parser;
      parser.header_limit(1 << 20);
      parser.body_limit(boost::none);
      parser.eager(true);
      parser.skip(to_head);
      boost::system::error_code ec;
      std::size_t used = 0;
      while (!parser.is_done() && !ec) {
        std::size_t n = parser.put(asio::buffer(out.substr(used)), ec);
        used += n;
        if (n == 0) break;
      }
      // A body that runs to the close (HTTP/1.0, no length) ends at the server's close.
      bool more = ec == http::error::need_more || (!ec && !parser.is_done());
      if (more && eof && used == out.size()) {
        ec = {};
        parser.put_eof(ec);
      }
      if (ec == http::error::need_more || (!ec && !parser.is_done())) {
        a.truncated = true;  // the rest is not here (yet)
        a.cut_by_drain = eof && stopping_ && dispatched &&
                         dispatched_[i].target.starts_with("/chunks/") &&
                         parser.is_header_done() && parser.chunked();
        return a;
      }
      // The drain ran out and closed the connection mid-answer: any response may end there.
      if (ec == http::error::partial_message && eof && cut_) {
        a.truncated = true;
        return a;
      }
      check(!ec, "every response parses as HTTP/1.1 (" + ec.message() + ")");
      out.remove_prefix(used);
      const wb::response& res = parser.get();
      check(res.version() == 11 || res.version() == 10, "a response is HTTP/1.x");
      unsigned status = res.result_int();
      if (status == 100) continue;
      check(status >= 101 && status <= 599, "a response's status is 1xx to 5xx");
      check(status == 101 || status >= 200, "the only interim answer is 100 Continue");
      // X-Seq, where the answer kept it (an error page replaces the fields), says which.
      if (auto seq = number_in(res["X-Seq"]))
        check(*seq == i, "answers come in the order of their requests, once each");
      ++a.finals;
      a.announced_close = status != 101 && !parser.keep_alive();
      if (!dispatched) {
        check(a.announced_close, "the server's own answers close the connection");
        continue;
      }
      if (status == 101) {
        check(dispatched_[i].target.starts_with("/ws"), "a 101 answers a WebSocket route");
        a.upgraded = i;
      }
      if (!to_head && sent_[i].complete) check_body(sent_[i], res);
    }
    return a;
  }

 private:
  void check(bool holds, std::string_view invariant) const {
    if (!holds) require(holds, invariant, describe_());
  }

  // The answers of the routes that know what they should say.
  void check_body(const client_request& req, const wb::response& res) const {
    std::string_view target = req.target;
    std::string_view body = res.body();
    unsigned status = res.result_int();
    if (status != 200 && status != 206) return;
    auto rest = [&](std::string_view prefix) { return number_in(target.substr(prefix.size())); };
    if (target.starts_with("/users/") || target.starts_with("/later/") ||
        target.starts_with("/await/")) {
      std::string_view expected = target[1] == 'u'   ? "user"
                                  : target[1] == 'l' ? "later"
                                                     : "awaited";
      check(body == expected, "a deferred or immediate answer arrives as it was made");
    } else if (target == "/upload" || target.starts_with("/stream/") ||
               target.starts_with("/guarded/")) {
      check(body == digest(req.body), "an upload's answer is its body's size and digest");
    } else if (target.starts_with("/chunks/") && rest("/chunks/")) {
      std::size_t count = std::min(*rest("/chunks/"), most_pieces);
      std::string all = all_chunks(count);
      if (stopping_ && body.size() < all.size()) {  // the drain ended it early
        check(all.starts_with(body), "the chunks a drain lets out arrive in order");
        return;
      }
      check(body == all, "every chunk arrives, in order");
      if (count > 0 && res.version() == 11)
        check(res["Checksum"] == std::to_string(fnv(all_chunks(count))),
              "the trailer follows the last chunk");
    } else if (target.starts_with("/events/") && rest("/events/")) {
      std::string expected = ": stream open\n\n";
      for (std::size_t i = 0, n = std::min(*rest("/events/"), most_pieces); i < n; ++i)
        expected += "data: " + event_text(i) + "\n\n";
      if (stopping_) {
        check(expected.starts_with(body), "the events a drain lets out arrive in order");
        return;
      }
      check(body == expected, "every event arrives, in order");
    } else if (target.starts_with("/files/")) {
      const std::string* content = file_content(target.substr(7));
      if (!content) return;  // a directory's index, an escaped name: not checked here
      if (status == 200) {
        check(body == *content, "a file arrives whole");
        return;
      }
      std::string_view range = res[http::field::content_range];
      std::size_t first = 0, last = 0;
      if (std::sscanf(std::string(range).c_str(), "bytes %zu-%zu/", &first, &last) == 2 &&
          first <= last && last < content->size())
        check(body == std::string_view(*content).substr(first, last - first + 1),
              "a range arrives as asked");
    }
  }

  // The echo route returns the client's messages as they were, in order, up to where it
  // stopped (a message it refused, a close).
  void check_echo(std::size_t seq, const ws_frames& from_server) const {
    if (seq >= sent_.size() || !sent_[seq].complete || dispatched_[seq].target != "/ws") return;
    ws_frames from_client = read_frames(client_bytes_.substr(sent_[seq].end), true);
    const auto& echoed = from_server.messages;
    const auto& sent = from_client.messages;
    check(echoed.size() <= sent.size() && std::equal(echoed.begin(), echoed.end(), sent.begin()),
          "the echo route returns the client's messages in order");
  }

  const std::vector<dispatched_request>& dispatched_;
  const std::vector<client_request>& sent_;
  std::string_view client_bytes_;
  bool stopping_;  // the server began to drain: streamed answers may end early
  bool cut_;       // the drain ran out: the server closed, mid-answer if need be
  std::function<std::string()> describe_;
};

// --- the client ---------------------------------------------------------------------------

constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

enum class ending : std::uint8_t {
  half_close,    // everything sent, then a half-close, and everything read
  stop_reading,  // reads nothing after piece `at`, half-closes at the end
  hang_up,       // closes after piece `at`
  drain,         // as half_close, and the server starts its graceful stop after piece `at`
};

struct client_plan {
  bool small_buffers;
  bool settle_each_piece;
  bool over_limit;  // the connection comes past max_connections: 503, then closed
  bool http2;       // the listener serves HTTP/2: bytes opening with the preface speak h2c
  ending end;
  bool cut;  // with drain: the drain runs out a piece later (or once everything is sent)
  std::size_t at;
  std::vector<std::size_t> pieces;
  std::string_view bytes;
};

client_plan plan_of(const std::uint8_t* data, std::size_t size) {
  client_plan plan;
  plan.small_buffers = data[0] & 1;
  plan.settle_each_piece = data[0] & 2;
  plan.over_limit = data[0] & 16;
  plan.http2 = data[0] & 64;
  plan.cut = data[0] & 32;
  plan.end = static_cast<ending>((data[0] >> 2) & 3);
  std::size_t largest = std::size_t{data[1]} + 1;
  std::mt19937 random(static_cast<std::uint32_t>(data[2]) << 8 | data[3]);
  plan.at = data[4];
  plan.bytes = std::string_view(reinterpret_cast<const char*>(data + 5), size - 5);
  std::uniform_int_distribution<std::size_t> piece(1, largest);
  for (std::size_t cut = 0; cut < plan.bytes.size();)
    cut += plan.pieces.emplace_back(piece(random));
  return plan;
}

// A worker of the server with the application in front, and the connections the fuzzer
// hands it.
class connection_fuzzer {
 public:
  connection_fuzzer() : root_(make_root()) {
    add_routes(app_, root_);
    app_.freeze();
    wb::server_options base;
    base.max_body_bytes = upload_limit;
    // No timeout comes due within an input; the sweep runs once a second.
    for (auto* t : {&base.idle_timeout, &base.header_timeout, &base.body_timeout,
                    &base.write_timeout, &base.drain_timeout, &base.tls_handshake_timeout})
      *t = std::chrono::minutes(1);
    options_ = wa::options_for(app_, base);
    app_dispatch_ = wa::dispatch_to(app_);
    tls_ = std::make_unique<wd::tls_state>(options_.tls, false);
    count_.limits = wd::limits_for(options_);
    count_.descriptors = wb::resource_budget(count_.limits.connections);
    worker_ = std::make_unique<wd::worker>(&io_, options_, dispatch_, stop_, count_, *tls_);
    worker_->start_on_caller_context([] {});
  }

  void run(const client_plan& plan) {
    dispatched_.clear();
    sent_.clear();
    received_.clear();
    eof_ = false;
    reading_ = true;
    stopping_ = false;
    cut_ = false;
    plan_ = &plan;
    // The drain is for ever: a draining run gets a worker of its own.
    if (plan.end == ending::drain) {
      drained_ = false;
      draining_worker_ =
          std::make_unique<wd::worker>(&io_, options_, dispatch_, stopping_, count_, *tls_);
      draining_worker_->start_on_caller_context([this] { drained_ = true; });
    }
    wd::worker& serving = draining_worker_ ? *draining_worker_ : *worker_;
    connect(serving, plan.small_buffers, plan.over_limit, plan.http2);
    // HTTP/2's answers are frames, which the HTTP/1.1 reader below cannot read: for them
    // the properties are the rest (no crash, leak or spin; the half-close and the hang-up
    // end the connection).
    bool h2 = plan.http2 && plan.bytes.starts_with(h2_preface);

    bool server_takes_more = true;
    bool hung_up = false;
    std::size_t offset = 0;
    for (std::size_t i = 0; i < plan.pieces.size() && offset < plan.bytes.size(); ++i) {
      std::string_view piece = plan.bytes.substr(offset, plan.pieces[i]);
      offset += piece.size();
      if (server_takes_more) server_takes_more = send(piece);
      if (plan.settle_each_piece) {
        settle();
      } else {
        turn();
      }
      if (plan.end == ending::stop_reading && i == plan.at) reading_ = false;
      if (plan.end == ending::drain && i == plan.at) {
        stopping_ = true;  // as server::stop(): answers finished from now on close
        serving.begin_shutdown();
      }
      if (plan.end == ending::drain && plan.cut && i == plan.at + 1) cut(serving);
      if (plan.end == ending::hang_up && i == plan.at) {
        hung_up = true;
        break;
      }
    }
    if (plan.end == ending::drain && plan.cut && !cut_ && stopping_) cut(serving);
    settle();
    if (!hung_up && reading_ && !h2) {
      // Quiet, with everything sent and read: every complete request is answered, unless
      // the server closed after saying it would.
      answers a = read_answers(/*whole=*/!cut_);
      std::vector<client_request> requests = requests_in(sent_);
      auto complete = std::count_if(requests.begin(), requests.end(),
                                    [](const client_request& r) { return r.complete; });
      if (a.announced_close)
        check(eof_, "a response that closes the connection is followed by the close");
      if (eof_) {
        check(a.announced_close || a.upgraded || stopping_,
              "the server closes only after a response that says so (or when it stops)");
      } else if (!a.upgraded) {
        check(a.finals == static_cast<std::size_t>(complete),
              "a quiet, open connection has answered every complete request");
      }
    }
    if (!hung_up) {
      ::shutdown(client_, SHUT_WR);
      settle();
      if (reading_) {
        check(eof_, "the client's half-close ends the connection once the answers are out");
        if (!h2) read_answers(/*whole=*/!cut_);
      }
    }
    if (!h2) read_answers(/*whole=*/false);
    hang_up();
    if (draining_worker_) {
      // The worker's last work is its sweep, cancelled once it has no connection left.
      if (!stopping_) {
        stopping_ = true;
        draining_worker_->begin_shutdown();
      }
      for (std::size_t turns = 0; !drained_; ++turns) {
        check(turns < 100'000, "a stopping worker without connections finishes");
        if (io_.stopped()) io_.restart();
        io_.poll();
      }
      draining_worker_.reset();
    }
    static const bool show = std::getenv("FUZZ_CONNECTION_SHOW") != nullptr;
    if (show) std::fprintf(stderr, "%s\n", describe().c_str());
  }

 private:
  static std::string make_root() {
    char pattern[] = "/tmp/waypoint-fuzz-connection-XXXXXX";
    const char* dir = ::mkdtemp(pattern);
    if (!dir) throw std::runtime_error("fuzz_connection: no temporary directory");
    static std::string root = dir;
    std::atexit([] { std::filesystem::remove_all(root); });
    for (const auto& [name, content] : static_file_table()) {
      std::filesystem::path path = root + "/" + name;
      std::filesystem::create_directories(path.parent_path());
      std::ofstream(path, std::ios::binary) << content;
    }
    return root;
  }

  void check(bool holds, std::string_view invariant) const {
    if (!holds) require(holds, invariant, describe());
  }

  // The input and what the server wrote, for a broken invariant's report.
  std::string describe() const {
    const client_plan& p = *plan_;
    return "manners: small buffers " + std::to_string(p.small_buffers) + ", settle each piece " +
           std::to_string(p.settle_each_piece) + ", over the limit " +
           std::to_string(p.over_limit) + ", ending " + std::to_string(static_cast<int>(p.end)) +
           " at " + std::to_string(p.at) + "\nclient: " + waypoint::fuzzing::quoted(p.bytes) +
           "\nserver: " + waypoint::fuzzing::quoted(received_);
  }

  // A socketpair, one end adopted by `serving` as an accepted connection.
  void connect(wd::worker& serving, bool small_buffers, bool over_limit, bool http2) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0)
      throw std::runtime_error("fuzz_connection: no socketpair");
    if (small_buffers) {
      int size = 1;  // raised to the kernel's minimum, about 4.5 KiB
      for (int fd : fds) ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    }
    wd::socket_type socket(io_);
    socket.assign(wd::stream_protocol(AF_UNIX, 0), fds[0]);
    count_.open.fetch_add(1);
    count_.descriptors.try_take(1);
    serving.adopt(std::move(socket), over_limit, {false, false, http2});
    client_ = fds[1];
  }

  // Sends `piece`, letting the server run while the socket is full; false once the server
  // takes no more (it reads no further than its handler, or it has closed).
  bool send(std::string_view piece) {
    while (!piece.empty()) {
      ssize_t n = ::send(client_, piece.data(), piece.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent_.append(piece.substr(0, static_cast<std::size_t>(n)));
        piece.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && turn()) continue;
      return false;
    }
    return true;
  }

  // Reads what the server wrote, while the client reads. Returns the bytes read.
  std::size_t receive() {
    if (!reading_ || eof_) return 0;
    std::size_t total = 0;
    char buffer[64 * 1024];
    for (;;) {
      ssize_t n = ::recv(client_, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        received_.append(buffer, static_cast<std::size_t>(n));
        total += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) eof_ = true;
      return total;
    }
  }

  // One turn of the server, then the client reads. Returns whether anything moved.
  bool turn() {
    if (io_.stopped()) io_.restart();
    std::size_t ran = io_.poll();
    std::size_t read = receive();
    return ran > 0 || read > 0;
  }

  // Turns until nothing moves twice in a row. Handlers that run while no byte moves are a
  // spin: past spin_limit of them, the run fails.
  void settle() {
    static constexpr std::size_t spin_limit = 100'000;
    std::size_t idle_handlers = 0;
    for (int quiet = 0; quiet < 2;) {
      if (io_.stopped()) io_.restart();
      std::size_t ran = io_.poll();
      std::size_t read = receive();
      idle_handlers = read > 0 ? 0 : idle_handlers + ran;
      check(idle_handlers < spin_limit, "the server does not spin while no byte moves");
      quiet = ran == 0 && read == 0 ? quiet + 1 : 0;
    }
  }

  answers read_answers(bool whole) {
    std::vector<client_request> sent = requests_in(sent_);
    answer_reader reader(dispatched_, sent, sent_, stopping_, cut_, [this] { return describe(); });
    answers a = reader.read(received_, eof_);
    if (whole) {
      check(!a.truncated || a.cut_by_drain,
            "the server, quiet, has written whole responses (or a body the drain cut)");
      check(!a.frames.truncated, "the server, quiet, has written whole frames");
    }
    return a;
  }

  // The drain runs out (a second signal): every connection closes at once.
  void cut(wd::worker& serving) {
    cut_ = true;
    serving.close_all();
  }

  // The client closes; the worker must then let the connection go, and run dry.
  void hang_up() {
    ::close(client_);
    client_ = -1;
    std::size_t turns = 0;
    for (int quiet = 0; quiet < 2 || count_.open.load() != 0; ++turns) {
      check(turns < 100'000, "a client that hung up leaves no connection behind");
      if (io_.stopped()) io_.restart();
      quiet = io_.poll() == 0 ? quiet + 1 : 0;
    }
  }

  // Every request the server dispatches: its place in the answers goes in X-Seq.
  void dispatch(wb::exchange& x) {
    x.response().set("X-Seq", std::to_string(dispatched_.size()));
    dispatched_.push_back(
        {std::string(x.request().method_string()), std::string(x.request().target())});
    app_dispatch_(x);
  }

  asio::io_context io_{1};
  std::string root_;
  wa::application app_{{.logger = [](std::string_view) {}}};
  wb::exchange_function app_dispatch_;
  wb::exchange_function dispatch_ = [this](wb::exchange& x) { dispatch(x); };
  wb::server_options options_;
  std::atomic<bool> stop_{false};
  wd::connection_count count_;
  std::unique_ptr<wd::tls_state> tls_;
  std::unique_ptr<wd::worker> worker_;
  // For a run that drains: a worker of its own, its stop flag, and whether it finished.
  std::unique_ptr<wd::worker> draining_worker_;
  std::atomic<bool> stopping_{false};
  bool drained_ = false;
  bool cut_ = false;  // the drain ran out: connections were closed mid-answer

  int client_ = -1;
  std::vector<dispatched_request> dispatched_;
  std::string sent_;      // what the server has been given
  std::string received_;  // what the client has read
  bool eof_ = false;      // the server closed (or reset) its end
  bool reading_ = true;
  const client_plan* plan_ = nullptr;  // the input being run
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  // Never destroyed: its worker and io_context live as long as the process.
  static connection_fuzzer& fuzzer = *new connection_fuzzer;
  fuzzer.run(plan_of(data, size));
  return 0;
}
