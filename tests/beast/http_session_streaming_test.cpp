// Streaming through http_session without sockets: a body the dispatch reads as it arrives
// and a response written in chunks give the same bytes however the input was cut, keep
// the pipeline's order, and leave the connection usable only when the body was read to
// its end.
#include "request_streams.hpp"
#include "session_harness.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace {

namespace wb = waypoint::beast;
using namespace waypoint::testing;

wb::server_options streaming_options(std::uint64_t limit = 1024 * 1024) {
  wb::server_options options;
  options.plan_body = streaming_plan(limit);
  return options;
}

std::string post(std::string_view target, std::string_view body, std::string_view extra = "") {
  return "POST " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n" + std::string(extra) +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

std::string post_chunked(std::string_view target, std::string_view chunks,
                         std::string_view extra = "") {
  return "POST " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n" + std::string(extra) +
         "Transfer-Encoding: chunked\r\n\r\n" + std::string(chunks);
}

std::string get(std::string_view target, std::string_view version = "1.1") {
  return "GET " + std::string(target) + " HTTP/" + std::string(version) + "\r\nHost: t\r\n\r\n";
}

// The whole output for `bytes` in one read, checked against every cut into two reads, one
// byte at a time, and random pieces.
std::string same_for_every_cut(session_harness& h, const std::string& bytes, const char* rule) {
  std::string whole = h.run(bytes, one_write());
  for (std::size_t cut = 1; cut < bytes.size(); ++cut)
    EXPECT_EQ(h.run(bytes, cut_at(cut)), whole) << rule << ", cut at " << cut;
  EXPECT_EQ(h.run(bytes, bytes_one_at_a_time(bytes.size())), whole) << rule;
  for (std::uint32_t seed = 1; seed <= 10; ++seed)
    EXPECT_EQ(h.run(bytes, random_pieces(bytes.size(), seed, 11)), whole) << rule;
  return whole;
}

struct streamed_row {
  const char* rule;
  std::string bytes;
  std::vector<std::string> contains;  // in this order
};

// Each of the row's pieces appears in `out`, after the one before it.
void expect_in_order(const std::string& out, const streamed_row& r) {
  std::size_t at = 0;
  for (const std::string& piece : r.contains) {
    std::size_t found = out.find(piece, at);
    ASSERT_NE(found, std::string::npos) << r.rule << ": no \"" << piece << "\" in\n" << out;
    at = found + piece.size();
  }
}

TEST(HttpSessionStreaming, StreamedBodyReachesTheReaderWhateverTheCuts) {
  session_harness h(streaming_options(64));
  const std::vector<streamed_row> rows = {
      {"a Content-Length body read a byte at a time",
       post("/stream/1", "hello world") + closing_request(),
       {"11 bytes: hello world", "user last"}},
      {"a Content-Length body read in threes", post("/stream/3", "abcdefghij") + closing_request(),
       {"10 bytes: abcdefghij", "user last"}},
      {"a chunked body with extensions and trailers",
       post_chunked("/stream/4", "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n") +
           closing_request(),
       {"11 bytes: hello world", "user last"}},
      {"the next request follows a streamed body",
       post("/stream/8", "first") + get("/users/2") + closing_request(),
       {"5 bytes: first", "user 2", "user last"}},
      {"chunks longer than the reader's buffer",
       post_chunked("/stream/5", "1a\r\nabcdefghijklmnopqrstuvwxyz\r\n3\r\nABC\r\n0\r\n\r\n") +
           closing_request(),
       {"29 bytes: abcdefghijklmnopqrstuvwxyzABC", "user last"}},
      {"a buffered body beside a streamed one",
       post("/upload", "abc") + post("/stream/2", "xyz") + closing_request(),
       {"3 bytes", "3 bytes: xyz", "user last"}},
      {"100-continue is sent when the reader starts",
       post("/stream/16", "data", "Expect: 100-continue\r\n") + closing_request(),
       {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK", "4 bytes: data", "user last"}},
      {"a Content-Length over the route's limit is 413 before the dispatch",
       post("/stream/8", std::string(65, 'x')), {"HTTP/1.1 413 ", "Connection: close"}},
      {"a chunked body over the limit fails the read and closes",
       post_chunked("/stream/8", "41\r\n" + std::string(65, 'x') + "\r\n0\r\n\r\n") + get("/users/9"),
       {"Connection: close", "read failed: "}},
      {"bad chunk framing fails the read and closes",
       post_chunked("/stream/8", "zz\r\nabc\r\n") + get("/users/9"),
       {"Connection: close", "read failed: "}},
  };
  for (const streamed_row& r : rows) {
    std::string out = same_for_every_cut(h, r.bytes, r.rule);
    expect_in_order(out, r);
    EXPECT_EQ(out.find("user 9"), std::string::npos) << r.rule << ": read past a broken body";
    EXPECT_LE(h.largest_input(), h.input_bound()) << r.rule;
  }
}

// --- what a planner keeps for the dispatch (beast::planned_request) ---------------------

// A planner's work on a header (a framework's routing) reaches the dispatch of that
// request and no other, and one nobody takes is dropped exactly once: when the dispatch
// leaves it, when the body is refused before any dispatch, when the client stops sending.
// live_plan_notes counts the notes alive over every run of every cut.
TEST(HttpSessionPlanned, ThePlanReachesItsDispatchOrIsDroppedOnceWhateverTheCuts) {
  wb::server_options options;
  options.plan_body = noting_plan(16);
  session_harness h(options);
  const std::vector<streamed_row> rows = {
      {"a body's plan reaches its dispatch",
       post("/planned/a", "hello") + closing_request(),
       {"planned /planned/a: 5 bytes", "user last"}},
      {"pipelined requests each get their own plan",
       post("/planned/a", "one") + get("/users/2") +
           post_chunked("/planned/b", "5\r\nthree\r\n0\r\n\r\n") + closing_request(),
       {"planned /planned/a: 3 bytes", "user 2", "planned /planned/b: 5 bytes", "user last"}},
      {"a dispatch that takes nothing leaves the plan to be dropped",
       post("/foreign/x", "abc") + closing_request(),
       {"foreign: nothing taken", "user last"}},
      {"a dispatch of another route leaves it too",
       post("/upload", "abc") + closing_request(),
       {"3 bytes", "user last"}},
      {"a plan left by its dispatch is gone before the next request, which has no body",
       post("/foreign/x", "abc") + get("/planned/after") + closing_request(),
       {"foreign: nothing taken", "foreign: nothing taken", "user last"}},
      {"a Host in the trailer section is refused: the header's routed the request",
       post_chunked("/planned/c", "3\r\nabc\r\n0\r\nHost: elsewhere\r\n\r\n") + get("/users/9"),
       {"400 Bad Request", "the trailer section carries Host"}},
      {"a body longer than the plan allows is refused before any dispatch",
       post("/planned/big", std::string(17, 'x')) + get("/users/9"),
       {"413 Content Too Large"}},
      {"a chunked body over the limit too",
       post_chunked("/planned/c", "11\r\n" + std::string(17, 'x') + "\r\n0\r\n\r\n") +
           get("/users/9"),
       {"413 Content Too Large"}},
      {"bad chunk framing too",
       post_chunked("/planned/c", "zz\r\nabc\r\n") + get("/users/9"),
       {"400 Bad Request"}},
      {"a body the client stops sending ends with the connection",
       "POST /planned/a HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc",
       {}},
  };
  for (const streamed_row& r : rows) {
    std::string out = same_for_every_cut(h, r.bytes, r.rule);
    expect_in_order(out, r);
    EXPECT_EQ(out.find("user 9"), std::string::npos) << r.rule << ": read past a refused body";
    EXPECT_EQ(live_plan_notes.load(), 0) << r.rule << ": a plan leaked or was dropped twice";
    EXPECT_LE(h.largest_input(), h.input_bound()) << r.rule;
  }
}

// A streamed body is read by the request's own parser, so its trailer section has the
// limit a buffered body's has (max_header_bytes, 16 KiB), not that of a second parser
// (Beast's default 8 KiB, which answered a 10 KiB section as bad framing).
TEST(HttpSessionStreaming, StreamedTrailersHaveTheHeaderLimit) {
  session_harness h(streaming_options());
  std::string trailers = "0\r\nX-Big: " + std::string(10000, 't') + "\r\n\r\n";
  for (std::string_view target : {"/stream/8", "/upload"}) {
    std::string bytes = post_chunked(target, "3\r\nabc\r\n" + trailers) + closing_request();
    std::string whole = h.run(bytes, one_write());
    EXPECT_NE(whole.find("3 bytes"), std::string::npos) << target << ": " << whole;
    EXPECT_NE(whole.find("user last"), std::string::npos) << target << ": " << whole;
    for (std::uint32_t seed = 1; seed <= 5; ++seed)
      EXPECT_EQ(h.run(bytes, random_pieces(bytes.size(), seed, 3000)), whole) << target;
  }
  std::string over = "0\r\nX-Big: " + std::string(17000, 't') + "\r\n\r\n";
  std::string out = h.run(post_chunked("/stream/8", "3\r\nabc\r\n" + over) + get("/users/9"),
                          one_write());
  EXPECT_NE(out.find("read failed: "), std::string::npos) << out.substr(0, 300);
  EXPECT_EQ(out.find("user 9"), std::string::npos) << out.substr(0, 300);
}

// Many chunks through a reader whose buffer holds several of them: what the upload of a
// real client looks like (curl sends 8 KiB chunks, the gateway reads 64 KiB at a time).
TEST(HttpSessionStreaming, ManyChunksThroughALargeBuffer) {
  session_harness h(streaming_options(1 << 20));
  std::string chunks;
  std::string expected;
  for (int i = 0; i < 40; ++i) {
    std::string data(1000 + i, static_cast<char>('a' + i % 26));
    expected += data;
    char size[16];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    chunks += size + data + "\r\n";
  }
  chunks += "0\r\n\r\n";
  std::string bytes = post_chunked("/stream/8192", chunks) + closing_request();
  std::string want = std::to_string(expected.size()) + " bytes: " + expected;
  std::string whole = h.run(bytes, one_write());
  EXPECT_NE(whole.find(want), std::string::npos) << whole.substr(0, 300);
  for (std::uint32_t seed = 1; seed <= 30; ++seed)
    for (std::size_t largest : {100u, 3000u, 16384u})
      ASSERT_EQ(h.run(bytes, random_pieces(bytes.size(), seed, largest)), whole)
          << "seed " << seed << ", pieces up to " << largest;
}

// Without a plan (or for a route the plan does not stream) the body is read whole first,
// and 100-continue still goes out at the header's end.
TEST(HttpSessionStreaming, UnplannedBodiesAreReadWhole) {
  session_harness h(streaming_options());
  std::string out = h.run(post("/upload", "abcd", "Expect: 100-continue\r\n") + closing_request(),
                          one_write());
  EXPECT_EQ(out.find("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK"), 0u) << out;
  EXPECT_NE(out.find("4 bytes"), std::string::npos) << out;
}

TEST(HttpSessionStreaming, ChunkedResponseIsFramedWithTrailers) {
  session_harness h(streaming_options());
  std::string out = same_for_every_cut(h, get("/chunks/3") + closing_request(), "chunks");
  std::size_t head_end = out.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << out;
  std::string head = out.substr(0, head_end + 4);
  EXPECT_NE(head.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.find("Content-Length"), std::string::npos) << head;
  std::string body = out.substr(head_end + 4, out.find("HTTP/1.1 ", head_end) - head_end - 4);
  EXPECT_EQ(body, "8\r\nchunk 0;\r\n8\r\nchunk 1;\r\n8\r\nchunk 2;\r\n0\r\nChecksum: 3\r\n\r\n");
  EXPECT_NE(out.find("user last"), std::string::npos) << "the next request is answered\n" << out;
}

TEST(HttpSessionStreaming, StreamedResponseToHttp10EndsWithTheConnection) {
  session_harness h(streaming_options());
  std::string out = h.run(get("/chunks/2", "1.0"), one_write());
  std::size_t head_end = out.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << out;
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("Transfer-Encoding"), std::string::npos) << out;
  EXPECT_EQ(out.substr(head_end + 4), "chunk 0;chunk 1;");
}

TEST(HttpSessionStreaming, StreamedResponseToHeadSendsTheHeadAlone) {
  session_harness h(streaming_options());
  std::string out = h.run("HEAD /chunks/2 HTTP/1.1\r\nHost: t\r\n\r\n" + closing_request(),
                          one_write());
  std::size_t head_end = out.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << out;
  EXPECT_EQ(out.find("chunk 0"), std::string::npos) << out;
  EXPECT_EQ(out.find("HTTP/1.1 200 OK", head_end), head_end + 4) << out;
}

}  // namespace
