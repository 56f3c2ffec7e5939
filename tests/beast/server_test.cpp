// waypoint::beast::server end to end over loopback: router outcomes, HTTP/1.1 framing
// (keep-alive, pipelining, Connection: close, 100-continue), hostile input, limits,
// timeouts, many connections and graceful shutdown. Timeouts in these tests are short so
// the suite stays fast; waits for the server are bounded by test_client's patience.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include <waypoint/beast/router_dispatch.hpp>
#include <waypoint/beast/server.hpp>

#include <gtest/gtest.h>
#include <alloc_counter.hpp>

#include <sys/resource.h>

#include <array>
#include <atomic>

#include <cerrno>
#include <csignal>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace http = boost::beast::http;
namespace wb = waypoint::beast;
using waypoint::testing::gate;
using waypoint::testing::loopback;
using waypoint::testing::request_text;
using waypoint::testing::running_server;
using waypoint::testing::test_client;
using waypoint::testing::test_options;

bool holds_line_break(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

struct outcome_row {
  std::string rule;
  std::string method;
  std::string target;
  unsigned status;
  std::string body;  // expected body, or its prefix for error responses
  std::string allow = {};
  std::string location = {};
};

TEST(Server, AnswersEveryRouterOutcomeOnOneKeepAliveConnection) {
  std::vector<outcome_row> rows = {
      {"a match runs the most specific route", "GET", "/users/me", 200, "GET /users/me"},
      {"a wildcard value is decoded", "GET", "/users/a%20b", 200, "GET /users/{id} a b"},
      {"a rest wildcard takes the remainder", "GET", "/files/a/b/c", 200,
       "GET /files/{path...} a/b/c"},
      {"no route is 404", "GET", "/nothing", 404, "Not Found: "},
      {"another method's path is 405 with Allow", "PUT", "/users/42", 405,
       "Method Not Allowed: ", "DELETE, GET, HEAD"},
      {"a missing slash redirects, query kept", "GET", "/docs?page=2", 307,
       "Temporary Redirect: ", "", "/docs/?page=2"},
      {"an unclean path redirects", "GET", "/users/../users/7?x", 307, "Temporary Redirect: ", "",
       "/users/7?x"},
      {"an invalid escape is 400", "GET", "/users/%zz", 400, "Bad Request: "},
      {"absolute-form routes on its path", "GET", "http://example.com/users/me", 200,
       "GET /users/me"},
  };
  running_server s;
  test_client c = s.connect();
  for (const auto& row : rows) {
    ASSERT_TRUE(c.send(request_text(row.method, row.target))) << row.rule;
    auto res = c.read();
    ASSERT_TRUE(res) << row.rule;
    EXPECT_EQ(res->result_int(), row.status) << row.rule;
    EXPECT_TRUE(res->body().starts_with(row.body)) << row.rule << ": " << res->body();
    if (row.status == 200) {
      EXPECT_EQ(res->body(), row.body) << row.rule;
    }
    EXPECT_EQ((*res)[http::field::allow], row.allow) << row.rule;
    EXPECT_EQ((*res)[http::field::location], row.location) << row.rule;
    EXPECT_TRUE(res->keep_alive()) << row.rule;
    EXPECT_FALSE((*res)[http::field::date].empty()) << row.rule;
  }
  EXPECT_EQ(s.server.stats().connections, 1u);
  EXPECT_EQ(s.server.stats().requests, rows.size());
}

TEST(Server, AnswersHeadWithoutABody) {
  running_server s;
  test_client c = s.connect();
  for (std::string target : {"/users/42", "/nothing"}) {
    ASSERT_TRUE(c.send(request_text("GET", target)));
    auto get = c.read();
    ASSERT_TRUE(get);
    ASSERT_TRUE(c.send(request_text("HEAD", target)));
    auto head = c.read(true);
    ASSERT_TRUE(head) << target;
    EXPECT_EQ(head->result(), get->result()) << target;
    EXPECT_EQ((*head)[http::field::content_length], std::to_string(get->body().size())) << target;
  }
  // A body after a HEAD response would be read as the start of this one.
  ASSERT_TRUE(c.send(request_text("GET", "/users/me")));
  auto next = c.read();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body(), "GET /users/me");
}

TEST(Server, AnswersPipelinedRequestsInOrder) {
  running_server s;
  test_client c = s.connect();
  std::string batch;
  constexpr int count = 200;  // more than one read and one write batch hold
  for (int i = 0; i < count; ++i)
    batch += i % 10 == 9 ? request_text("GET", "/nothing/" + std::to_string(i))
                         : request_text("GET", "/users/" + std::to_string(i));
  ASSERT_TRUE(c.send(batch));
  for (int i = 0; i < count; ++i) {
    auto res = c.read();
    ASSERT_TRUE(res) << i;
    if (i % 10 == 9) {
      EXPECT_EQ(res->result_int(), 404u) << i;
    } else {
      EXPECT_EQ(res->body(), "GET /users/{id} " + std::to_string(i));
    }
  }
}

TEST(Server, ConnectionCloseClosesAfterTheResponse) {
  running_server s;
  struct row {
    std::string rule;
    std::string request;
  };
  std::vector<row> rows = {
      {"the client asks", request_text("GET", "/users/1", "Connection: close\r\n")},
      {"HTTP/1.0 without keep-alive", "GET /users/1 HTTP/1.0\r\n\r\n"},
      {"the handler asks", request_text("GET", "/close")},
  };
  for (const auto& r : rows) {
    test_client c = s.connect();
    ASSERT_TRUE(
        c.send(r.request + request_text("GET", "/users/2")));  // the second is never answered
    auto res = c.read();
    ASSERT_TRUE(res) << r.rule;
    EXPECT_FALSE(res->keep_alive()) << r.rule;
    EXPECT_TRUE(c.closed_by_server()) << r.rule;
  }
}

TEST(Server, IgnoresEmptyLinesBeforeARequest) {
  running_server s;
  test_client c = s.connect();
  ASSERT_TRUE(c.send(request_text("POST", "/upload", "", "abc") + "\r\n" +
                     request_text("GET", "/users/me")));
  auto first = c.read();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->body(), "received 3 bytes");
  auto second = c.read();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body(), "GET /users/me");
}

TEST(Server, Http10KeepAliveStaysOpen) {
  running_server s;
  test_client c = s.connect();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.send("GET /users/me HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
    auto res = c.read();
    ASSERT_TRUE(res);
    EXPECT_EQ(res->version(), 10u);
    EXPECT_TRUE(res->keep_alive());
  }
}

TEST(Server, ExpectContinueGets100BeforeTheBody) {
  running_server s;
  test_client c = s.connect();
  ASSERT_TRUE(c.send(
      "POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
  auto interim = c.read();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->result_int(), 100u);
  ASSERT_TRUE(c.send("hello"));
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body(), "received 5 bytes");
}

TEST(Server, UnknownExpectationIs417AndCloses) {
  running_server s;
  test_client c = s.connect();
  ASSERT_TRUE(
      c.send("POST /upload HTTP/1.1\r\nHost: t\r\nExpect: teapot\r\nContent-Length: 5\r\n\r\n"));
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->result_int(), 417u);
  EXPECT_TRUE(c.closed_by_server());
}

TEST(Server, MalformedInputIs400AndCloses) {
  struct row {
    std::string rule;
    std::string bytes;
    bool closes = true;  // false: the framing was fine, only routing refuses it
  };
  std::vector<row> rows = {
      {"request line without target and version", "GARBAGE\r\n\r\n"},
      {"unknown HTTP version", "GET /a HTTP/9.9\r\nHost: t\r\n\r\n"},
      {"header line without a colon", "GET /a HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n"},
      {"control byte in a header value", "GET /a HTTP/1.1\r\nHost: t\r\nX: a\x01z\r\n\r\n"},
      {"control byte in the target", "GET /a\x01z HTTP/1.1\r\nHost: t\r\n\r\n"},
      {"invalid Content-Length", "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: x\r\n\r\n"},
      {"TLS handshake on the HTTP port",
       std::string("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11)},
      {"binary noise", std::string("\x00\xff\xfe\x01 / HTTP/1.1", 16)},
      {"both Content-Length and Transfer-Encoding",
       "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: "
       "chunked\r\n\r\n0\r\n\r\n"},
      {"two different Content-Length values",
       "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"},
      {"HTTP/1.1 without Host", "GET /users/1 HTTP/1.1\r\n\r\n", false},
      {"two Host fields", "GET /users/1 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", false},
  };
  running_server s;
  for (const auto& r : rows) {
    test_client c = s.connect();
    ASSERT_TRUE(c.send(r.bytes)) << r.rule;
    auto res = c.read();
    ASSERT_TRUE(res) << r.rule;
    EXPECT_EQ(res->result_int(), 400u) << r.rule;
    if (r.closes) {
      EXPECT_TRUE(c.closed_by_server()) << r.rule;
    }
  }
}

TEST(Server, OversizedRequestsGetTheirStatusAndClose) {
  wb::server_options o = test_options();
  o.max_target_bytes = 1024;
  o.max_header_bytes = 4096;
  o.max_body_bytes = 1000;
  running_server s(o);
  struct row {
    std::string rule;
    std::string bytes;
    unsigned status;
  };
  std::vector<row> rows = {
      {"target longer than the limit", request_text("GET", "/users/" + std::string(2000, 'a')),
       414},
      {"target longer than the limit, line incomplete", "GET /" + std::string(1500, 'a'), 414},
      {"header block larger than the limit",
       request_text("GET", "/users/1", "X: " + std::string(5000, 'a') + "\r\n"), 431},
      {"declared body larger than the limit",
       "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n", 413},
      // The first answer is the 413: no 100 Continue invites a body that would be refused.
      {"declared body larger than the limit, 100-continue expected",
       "POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n",
       413},
      {"chunked body larger than the limit",
       "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n" +
           std::string(2000, 'a') + "\r\n0\r\n\r\n",
       413},
  };
  for (const auto& r : rows) {
    test_client c = s.connect();
    ASSERT_TRUE(c.send(r.bytes)) << r.rule;
    auto res = c.read();
    ASSERT_TRUE(res) << r.rule;
    EXPECT_EQ(res->result_int(), r.status) << r.rule;
    EXPECT_FALSE(res->keep_alive()) << r.rule;
    EXPECT_TRUE(c.closed_by_server()) << r.rule;
  }
  test_client c = s.connect();  // a request within every limit still works
  ASSERT_TRUE(c.send(request_text("POST", "/upload", "", std::string(1000, 'b'))));
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body(), "received 1000 bytes");
}

TEST(Server, ControlBytesFromTheTargetNeverReachAResponseHeader) {
  running_server s;
  std::vector<std::string> requests = {
      "GET /docs?x=\rSet-Cookie:%20a HTTP/1.1\r\nHost: t\r\n\r\n",
      "GET /docs?x=\nSet-Cookie: a HTTP/1.1\r\nHost: t\r\n\r\n",
      "GET /docs?\x80\xff HTTP/1.1\r\nHost: t\r\n\r\n",
      "GET /docs\x7f HTTP/1.1\r\nHost: t\r\n\r\n",
      "GET /docs?a=%0d%0aSet-Cookie:%20b HTTP/1.1\r\nHost: t\r\n\r\n",  // escaped: stays escaped
  };
  for (const auto& r : requests) {
    test_client c = s.connect();
    ASSERT_TRUE(c.send(r));
    auto res = c.read();
    ASSERT_TRUE(res) << r;
    EXPECT_TRUE((*res)[http::field::set_cookie].empty()) << r;
    for (const auto& f : *res) {
      EXPECT_FALSE(holds_line_break(f.value())) << r;
      for (char ch : f.value()) EXPECT_GT(static_cast<unsigned char>(ch), 0x1f) << r;
    }
    if (&r == &requests.back()) {  // the escaped one is routed, and redirected as it is
      EXPECT_EQ(res->result_int(), 307u);
      EXPECT_EQ((*res)[http::field::location], "/docs/?a=%0d%0aSet-Cookie:%20b");
    } else {
      EXPECT_EQ(res->result_int(), 400u) << r;
    }
  }
}

TEST(Server, HandlerFailuresBecome500) {
  running_server s;
  test_client c = s.connect();
  for (std::string target : {"/throw", "/inject"}) {
    ASSERT_TRUE(c.send(request_text("GET", target)));
    auto res = c.read();
    ASSERT_TRUE(res) << target;
    EXPECT_EQ(res->result_int(), 500u) << target;
    EXPECT_TRUE((*res)[http::field::set_cookie].empty()) << target;
  }
  ASSERT_TRUE(c.send(request_text("GET", "/users/me")));  // the connection survives
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->result_int(), 200u);
}

wb::server_options short_timeouts() {
  wb::server_options o = test_options();
  o.idle_timeout = std::chrono::milliseconds(200);
  o.header_timeout = std::chrono::milliseconds(200);
  o.body_timeout = std::chrono::milliseconds(200);
  o.write_timeout = std::chrono::milliseconds(200);
  return o;
}

TEST(Server, StalledHalfRequestGets408AndIsClosed) {
  running_server s(short_timeouts());
  test_client c = s.connect();
  ASSERT_TRUE(c.send("GET /users/1 HTTP/1.1\r\nHo"));
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->result_int(), 408u);
  EXPECT_FALSE(res->keep_alive());
  EXPECT_TRUE(c.closed_by_server());
}

TEST(Server, TricklingClientIsDisconnectedAtTheReadTimeout) {
  running_server s(short_timeouts());
  test_client c = s.connect();
  std::string request = request_text("GET", "/users/1", "X-Pad: " + std::string(400, 'a') + "\r\n");
  // One byte every 20 ms would take 8 s; the read timeout (200 ms) counts from the first.
  bool cut = false;
  for (char ch : request) {
    if (!c.send(std::string_view(&ch, 1)) || c.closed_by_server(std::chrono::milliseconds(20))) {
      cut = true;
      break;
    }
  }
  EXPECT_TRUE(cut);
}

TEST(Server, IdleKeepAliveConnectionIsDisconnected) {
  running_server s(short_timeouts());
  test_client c = s.connect();
  ASSERT_TRUE(c.send(request_text("GET", "/users/me")));
  ASSERT_TRUE(c.read());
  EXPECT_TRUE(c.closed_by_server());
}

TEST(Server, SteadySlowUploadAboveTheMinimumRateCompletes) {
  wb::server_options o = short_timeouts();
  o.min_body_rate = 1000;  // bytes per second
  running_server s(o);
  test_client c = s.connect();
  // 3,000 bytes at about 2,000 bytes/s: 1.5 s, far past every timeout, but never stalled.
  std::string body(3000, 'u');
  ASSERT_TRUE(c.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 3000\r\n\r\n"));
  ASSERT_TRUE(c.send_in_pieces(body, std::vector<std::size_t>(30, 100), std::chrono::milliseconds(50)));
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->result_int(), 200u);
  EXPECT_EQ(res->body(), "received 3000 bytes");
}

struct slow_body_row {
  std::string rule;
  std::size_t piece;                  // bytes per write
  std::chrono::milliseconds gap;      // between writes
};

TEST(Server, StalledOrTricklingBodyGets408) {
  std::vector<slow_body_row> rows = {
      {"a body that stops", 0, std::chrono::milliseconds(0)},
      {"a body under the minimum rate", 1, std::chrono::milliseconds(50)},  // 20 bytes/s
  };
  wb::server_options o = short_timeouts();
  o.min_body_rate = 1000;
  running_server s(o);
  for (const auto& row : rows) {
    test_client c = s.connect();
    ASSERT_TRUE(c.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\nab"));
    for (int i = 0; row.piece > 0 && i < 200; ++i)  // until the server answers and closes
      if (!c.send(std::string(row.piece, 'x')) || c.closed_by_server(row.gap)) break;
    auto reply = c.read();
    ASSERT_TRUE(reply) << row.rule;
    EXPECT_EQ(reply->result_int(), 408u) << row.rule;
    EXPECT_FALSE(reply->keep_alive()) << row.rule;
  }
}

// A client that stops reading a large response is cut off at write_timeout instead of
// holding the connection (and the response's memory) for ever.
TEST(Server, ClientThatStopsReadingIsCutAtTheWriteTimeout) {
  running_server s(short_timeouts());
  test_client c = s.connect();
  ASSERT_TRUE(c.send(request_text("GET", "/big")));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // write_timeout is 200 ms
  auto received = c.read_until_closed();
  ASSERT_TRUE(received) << "the server never closed";
  EXPECT_LT(received->size(), waypoint::testing::big_body_bytes);
}

// After stop(), a request still arriving keeps its connection only for drain_timeout.
TEST(Server, DrainTimeoutClosesWhatIsLeft) {
  wb::server_options o = test_options();
  o.drain_timeout = std::chrono::milliseconds(300);
  running_server s(o);
  test_client c = s.connect();
  ASSERT_TRUE(c.send("GET /users/1 HTTP/1.1\r\nHo"));  // in flight: the drain waits for it
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto begun = std::chrono::steady_clock::now();
  s.server.stop();
  EXPECT_TRUE(c.closed_by_server());
  s.server.wait();
  EXPECT_GE(std::chrono::steady_clock::now() - begun, o.drain_timeout);
}

// The answer to a refused request survives the client's unread bytes: the server drains
// them before closing, so no reset destroys the response in the client's buffer.
TEST(Server, RefusedRequestWithMoreBytesBehindItIsStillRead) {
  running_server s;
  test_client c = s.connect();
  ASSERT_TRUE(c.send("GARBAGE\r\n\r\n" + std::string(4 * 1024 * 1024, 'z')));
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->result_int(), 400u);
}

// A client that goes on sending while it reads: `pieces` of `piece` bytes, one every
// `gap`, from another thread, until they run out, the send fails (the server closed), or
// the reader is done.
class sending_client {
 public:
  sending_client(test_client& c, std::string piece, int pieces, std::chrono::milliseconds gap)
      : sender_([&c, piece = std::move(piece), pieces, gap, this] {
          for (int i = 0; i < pieces && !done_; ++i) {
            if (!c.send(piece)) {
              cut_ = true;
              return;
            }
            std::this_thread::sleep_for(gap);
          }
        }) {}
  ~sending_client() { stop(); }
  // Ends the sending; true when the server cut it (a send failed) before it ran out.
  bool stop() {
    done_ = true;
    return finish();
  }
  // Waits for the sending to end by itself: true when the server cut it.
  bool finish() {
    if (sender_.joinable()) sender_.join();
    return cut_;
  }

 private:
  std::atomic<bool> done_ = false;
  std::atomic<bool> cut_ = false;
  std::thread sender_;
};

// The lingering close, for every answer that ends a connection whose client is still
// sending: the answer is read in full while another thread goes on writing, then the
// server waits for this end's close (nothing is cut).
TEST(LingeringClose, TheAnswerReachesAClientStillSending) {
  wb::server_options o = short_timeouts();
  o.max_body_bytes = 1000;
  o.max_header_bytes = 4096;
  o.min_body_rate = 1024 * 1024;
  running_server s(o);
  struct row {
    std::string rule;
    std::string head;
    std::string piece;
    std::chrono::milliseconds gap;
    unsigned status;
  };
  using std::chrono::milliseconds;
  std::vector<row> rows = {
      {"a body over max_body_bytes: 413",
       request_text("POST", "/users", "Content-Length: 100000000\r\n"), std::string(16384, 'b'),
       milliseconds(1), 413},
      {"a header block over max_header_bytes: 431", "GET /users/1 HTTP/1.1\r\nHost: t\r\nX: ",
       std::string(16384, 'h'), milliseconds(1), 431},
      {"a chunked body with a bad chunk size: 400",
       request_text("POST", "/users", "Transfer-Encoding: chunked\r\n") + "zz\r\n",
       std::string(16384, 'c'), milliseconds(1), 400},
      {"a body slower than min_body_rate past body_timeout: 408",
       request_text("POST", "/users", "Content-Length: 900\r\n"), "s", milliseconds(10), 408},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.rule);
    test_client c = s.connect();
    ASSERT_TRUE(c.send(r.head));
    sending_client more(c, r.piece, 100, r.gap);
    auto res = c.read();
    ASSERT_TRUE(res);
    EXPECT_EQ(res->result_int(), r.status);
    EXPECT_FALSE(more.stop()) << "the server cut the client before it was done sending";
  }
}

// The linger's bounds: a client that sends on past max_linger_bytes, or for longer than
// linger_timeout, is cut (its sends fail) instead of holding the connection.
TEST(LingeringClose, EndsAtEitherBound) {
  struct row {
    std::string rule;
    std::size_t max_bytes;
    std::chrono::milliseconds timeout;
    std::size_t piece;
    std::chrono::milliseconds gap;
  };
  using std::chrono::milliseconds;
  std::vector<row> rows = {
      {"max_linger_bytes", 64 * 1024, milliseconds(60'000), 16384, milliseconds(1)},
      {"linger_timeout", 1024 * 1024 * 1024, milliseconds(200), 10, milliseconds(10)},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.rule);
    wb::server_options o = test_options();
    o.max_linger_bytes = r.max_bytes;
    o.linger_timeout = r.timeout;
    running_server s(o);
    test_client c = s.connect();
    ASSERT_TRUE(c.send("GARBAGE\r\n\r\n"));
    auto res = c.read();  // first: a cut past the bound may reset an answer still unread
    ASSERT_TRUE(res);
    EXPECT_EQ(res->result_int(), 400u);
    // 32 MiB, or 10 bytes every 10 ms for 20 s: far past either bound.
    sending_client more(c, std::string(r.piece, 'z'), 2000, r.gap);
    EXPECT_TRUE(more.finish()) << "the client sent all it had: the linger did not end";
  }
}

TEST(Server, SecondSignalEndsTheDrainAtOnce) {
  wb::server_options o = test_options();
  o.handle_signals = true;
  o.drain_timeout = std::chrono::seconds(60);
  running_server s(o);
  test_client c = s.connect();
  ASSERT_TRUE(c.send("GET /users/1 HTTP/1.1\r\nHo"));  // the drain would wait a minute for it
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  auto done = std::async(std::launch::async, [&] { s.server.wait(); });
  EXPECT_EQ(done.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(c.closed_by_server());
}

TEST(Server, ErrorsGoThroughTheRenderer) {
  wb::server_options o = test_options();
  o.render_error = [](http::status status, std::string_view why, wb::response& res) {
    res.set(http::field::content_type, "application/problem+json");
    res.body() = "{\"status\":" + std::to_string(static_cast<unsigned>(status)) + ",\"detail\":\"" +
                 std::string(why) + "\"}";
  };
  running_server s(o);
  test_client c = s.connect();
  ASSERT_TRUE(c.send("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->result_int(), 414u);
  EXPECT_EQ((*res)[http::field::content_type], "application/problem+json");
  EXPECT_EQ(res->body(),
            "{\"status\":414,\"detail\":\"the request target is longer than the server accepts\"}");
}

TEST(Server, ServesAThousandConcurrentKeepAliveConnections) {
  constexpr std::size_t connections = 1000;
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  rlim_t needed = 2 * connections + 64;  // both ends live in this process
  if (limit.rlim_cur < needed) {
    ASSERT_GE(limit.rlim_max, needed) << "raise the hard limit on open files to run this test";
    limit.rlim_cur = needed;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  running_server s;
  std::vector<test_client> clients;
  clients.reserve(connections);
  for (std::size_t i = 0; i < connections; ++i) clients.push_back(s.connect());
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < connections; ++i)
      ASSERT_TRUE(clients[i].send(request_text("GET", "/users/" + std::to_string(i))));
    for (std::size_t i = 0; i < connections; ++i) {
      auto res = clients[i].read();
      ASSERT_TRUE(res) << "connection " << i << ", round " << round;
      ASSERT_EQ(res->body(), "GET /users/{id} " + std::to_string(i));
    }
  }
  EXPECT_EQ(s.server.stats().connections, connections);
  EXPECT_EQ(s.server.stats().requests, 3 * connections);
}

TEST(Server, StopFinishesRequestsInFlightAndRefusesNewConnections) {
  gate g;
  auto s = std::make_unique<running_server>(test_options(), &g);
  test_client busy = s->connect();
  test_client idle = s->connect();
  ASSERT_TRUE(idle.send(request_text("GET", "/users/me")));
  ASSERT_TRUE(idle.read());
  ASSERT_TRUE(busy.send(request_text("GET", "/slow")));
  g.entered.get_future().wait();

  s->server.stop();
  EXPECT_EQ(test_client::try_connect(s->port), ECONNREFUSED);
  EXPECT_TRUE(idle.closed_by_server());

  g.release.set_value();
  auto res = busy.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body(), "finished");
  EXPECT_FALSE(res->keep_alive());
  EXPECT_TRUE(busy.closed_by_server());
  busy.close();  // else the server lingers, reading until this end closes too
  s->server.wait();
}

TEST(Server, SigtermStopsGracefully) {
  gate g;
  wb::server_options o = test_options();
  o.handle_signals = true;
  auto s = std::make_unique<running_server>(o, &g);
  test_client busy = s->connect();
  ASSERT_TRUE(busy.send(request_text("GET", "/slow")));
  g.entered.get_future().wait();

  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  // The signal is handled on the server's control thread: wait for its listener to close.
  int refused = 0;
  for (int i = 0; i < 500 && refused == 0; ++i) {
    if (test_client::try_connect(s->port) == ECONNREFUSED)
      refused = 1;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(refused, 1);

  g.release.set_value();
  auto res = busy.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body(), "finished");
  busy.close();
  s->server.wait();
}

TEST(Server, ListensOnIpv6Loopback) {
  wb::server_options o = test_options();
  o.listen = {{"::1", 0}, {"127.0.0.1", 0}};
  wb::server s(o, [](const wb::request&, wb::response& res) { res.body() = "ok"; });
  try {
    s.start();
  } catch (const std::system_error& e) {
    GTEST_SKIP() << "no IPv6 loopback here: " << e.what();
  }
  auto endpoints = s.endpoints();
  ASSERT_EQ(endpoints.size(), 2u);
  EXPECT_EQ(endpoints[0].address, "::1");
  EXPECT_NE(endpoints[0].port, 0);
  test_client over_v6(endpoints[0].port, loopback::v6);
  test_client over_v4(endpoints[1].port);
  for (test_client* c : {&over_v6, &over_v4}) {
    ASSERT_TRUE(c->send(request_text("GET", "/")));
    auto res = c->read();
    ASSERT_TRUE(res);
    EXPECT_EQ(res->body(), "ok");
  }
}

// "::" and "0.0.0.0" on one port: the IPv6 socket is made IPv6-only so both can bind.
TEST(Server, Ipv6AndIpv4WildcardsShareAPort) {
  std::uint16_t port = 0;
  {
    wb::server probe(test_options(), [](const wb::request&, wb::response&) {});
    probe.start();
    port = probe.endpoints().front().port;  // free a moment ago; reused below
  }
  wb::server_options o = test_options();
  o.listen = {{"::", port}, {"0.0.0.0", port}};
  wb::server s(o, [](const wb::request&, wb::response& res) { res.body() = "ok"; });
  try {
    s.start();
  } catch (const std::system_error& e) {
    if (std::string(e.what()).find("[::]") != std::string::npos)
      GTEST_SKIP() << "no IPv6 here: " << e.what();
    throw;
  }
  test_client over_v6(port, loopback::v6);
  test_client over_v4(port);
  for (test_client* c : {&over_v6, &over_v4}) {
    ASSERT_TRUE(c->send(request_text("GET", "/")));
    auto res = c->read();
    ASSERT_TRUE(res);
    EXPECT_EQ(res->body(), "ok");
  }
}

TEST(Server, ReusePortGivesEveryThreadAListener) {
  wb::server_options o = test_options();
  o.reuse_port = true;
  wb::server s(o, [](const wb::request&, wb::response& res) { res.body() = "ok"; });
  s.start();
  std::uint16_t port = s.endpoints().front().port;
  for (int i = 0; i < 20; ++i) {
    test_client c(port);
    ASSERT_TRUE(c.send(request_text("GET", "/")));
    auto res = c.read();
    ASSERT_TRUE(res);
    EXPECT_EQ(res->body(), "ok");
  }
  s.stop();
  EXPECT_EQ(test_client::try_connect(port), ECONNREFUSED);
}

// Between one request's dispatch and the next one's, the server thread runs the whole
// cycle: serialize, write, read, parse, route. With a handler that allocates nothing, what
// remains is Beast's request storage.
TEST(Server, AllocatesPerRequestOnlyWhatBeastsRequestNeeds) {
  constexpr std::size_t requests = 40;
  std::array<std::uint64_t, requests> at_dispatch{};
  std::atomic<std::size_t> served{0};
  auto r = std::make_unique<wb::router>();
  r->add("GET /users/{id}", [](const wb::request&, wb::response& res, const wb::route_match&) {
    res.body().assign("ok");
  });
  r->freeze();
  auto route = wb::dispatch_to(*r);
  wb::server_options o = test_options();
  o.threads = 1;
  wb::server s(o, [&](const wb::request& req, wb::response& res) {
    at_dispatch[served] = waypoint::testing::allocation_count();
    route(req, res);
    ++served;
  });
  s.start();
  test_client c(s.endpoints().front().port);
  for (std::size_t i = 0; i < requests; ++i) {
    ASSERT_TRUE(c.send("GET /users/42 HTTP/1.1\r\nHost: t\r\n\r\n"));
    ASSERT_TRUE(c.read());
  }
  // Beast's request: one block for the method and target, one per field (Host).
  constexpr std::uint64_t beast_request_allocations = 2;
  for (std::size_t i = 10; i + 1 < requests; ++i)  // after warm-up (buffers, Asio's handler cache)
    EXPECT_EQ(at_dispatch[i + 1] - at_dispatch[i], beast_request_allocations) << "request " << i;
}

TEST(Server, RejectsOptionsThatCannotWork) {
  auto ok = [](const wb::request&, wb::response&) {};
  wb::server_options no_address = test_options();
  no_address.listen.clear();
  EXPECT_THROW(wb::server(no_address, ok), std::invalid_argument);
  wb::server_options zero_timeout = test_options();
  zero_timeout.header_timeout = std::chrono::milliseconds(0);
  EXPECT_THROW(wb::server(zero_timeout, ok), std::invalid_argument);
  EXPECT_THROW(wb::server(test_options(), wb::dispatch_function()), std::invalid_argument);
  EXPECT_THROW(wb::server(test_options(), wb::exchange_function()), std::invalid_argument);
  wb::server_options bad_address = test_options();
  bad_address.listen = {{"not-an-address", 0}};
  wb::server s(bad_address, ok);
  EXPECT_THROW(s.start(), std::invalid_argument);
}

}  // namespace
