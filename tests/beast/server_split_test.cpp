// The server over loopback, fed the way the network delivers bytes: each request stream of
// request_streams.hpp in one write, one byte per write, cut at every boundary, and in
// random pieces. The bytes that come back must be identical (Date aside) to the one-write
// case, and the one-write case must give the stream's statuses. Every case runs over TCP
// and over a unix socket (an abstract name), the two kinds of listener the server has.
#include "request_streams.hpp"
#include "server_fixture.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using namespace waypoint::testing;
using std::chrono::microseconds;

// Sends a stream on a fresh connection as planned and returns what came back until the
// server closed, without dates; "(no close)" when the server never closed.
std::string exchange(const running_server& s, std::string_view bytes, const split_plan& plan,
                     microseconds gap) {
  test_client c = s.connect();
  c.send_in_pieces(bytes, plan, gap);  // a refused stream may be cut off: what came back counts
  auto answer = c.read_until_closed();
  return answer ? without_dates(*answer) : "(no close)";
}

// A gap between writes long enough that each write tends to be a read of its own.
constexpr microseconds read_gap{200};

enum class transport { tcp, unix_socket };

class ServerSplit : public ::testing::TestWithParam<transport> {
 protected:
  static wb::server_options options() {
    wb::server_options o = test_options();
    if (GetParam() == transport::unix_socket)
      o.listen = {wb::listen_address{"unix:@waypoint-split-test-" + std::to_string(::getpid()), 0}};
    return o;
  }
  running_server s{options()};
};

INSTANTIATE_TEST_SUITE_P(Transports, ServerSplit,
                         ::testing::Values(transport::tcp, transport::unix_socket),
                         [](const ::testing::TestParamInfo<transport>& t) {
                           return t.param == transport::tcp ? "Tcp" : "Unix";
                         });

TEST_P(ServerSplit, OneWriteGivesEachStreamItsStatuses) {
  for (const auto& stream : request_streams()) {
    std::string out = exchange(s, stream.bytes, one_write(), read_gap);
    EXPECT_EQ(statuses_of(out, stream.bytes.starts_with("HEAD")), stream.statuses)
        << stream.rule << "\n" << out.substr(0, 300);
  }
}

TEST_P(ServerSplit, OneByteAtATimeAnswersAsOneWrite) {
  for (const auto& stream : request_streams()) {
    if (stream.bytes.size() > 2048) continue;  // the long ones go in random pieces below
    std::string whole = exchange(s, stream.bytes, one_write(), read_gap);
    EXPECT_EQ(exchange(s, stream.bytes, bytes_one_at_a_time(stream.bytes.size()), read_gap), whole)
        << stream.rule;
  }
}

TEST_P(ServerSplit, EveryCutIntoTwoWritesAnswersAsOneWrite) {
  for (const auto& stream : request_streams()) {
    if (stream.bytes.size() > 400) continue;
    std::string whole = exchange(s, stream.bytes, one_write(), read_gap);
    for (std::size_t cut = 1; cut < stream.bytes.size(); ++cut)
      ASSERT_EQ(exchange(s, stream.bytes, cut_at(cut), read_gap), whole)
          << stream.rule << ", cut at " << cut;
  }
}

TEST_P(ServerSplit, RandomPiecesAnswerAsOneWrite) {
  std::vector<request_stream> streams = request_streams();
  // Over TCP only: this client sends the whole pipeline before it reads, and a unix socket
  // charges each of the server's small answers a whole buffer's overhead, so the answers
  // fill it, the server stops reading, and both wait until the server's write timeout cuts
  // the connection, as it should for a peer that does not read (found flaky in CI).
  if (GetParam() == transport::tcp) streams.push_back(long_pipeline(3000));
  for (const auto& stream : streams) {
    std::string whole = exchange(s, stream.bytes, one_write(), read_gap);
    for (std::uint32_t seed = 1; seed <= 3; ++seed) {
      split_plan plan = random_pieces(stream.bytes.size(), seed, 1500);
      ASSERT_EQ(exchange(s, stream.bytes, plan, microseconds(20)), whole)
          << stream.rule << ", seed " << seed;
    }
  }
}

// Finding 2 of the hardening review, as it was reported: the head in three writes, 0.2 s
// apart, used to be answered "400 the request is not HTTP".
TEST_P(ServerSplit, HeadInThreeSlowWritesIsServed) {
  test_client c = s.connect();
  ASSERT_TRUE(c.send_in_pieces("GET /users/me HTTP/1.1\r\nHost: x\r\n\r\n", {23, 9},
                               std::chrono::milliseconds(200)));
  auto res = c.read();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->result_int(), 200u);
  EXPECT_EQ(res->body(), "GET /users/me");
}

}  // namespace
