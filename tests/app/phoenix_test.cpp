// The Phoenix Channels protocol (waypoint/app/realtime/phoenix.hpp), rule by rule, on a session whose
// connection records what it is asked to do (src/app/realtime/phoenix_session.hpp): each row sends
// frames and expects the exact frames back, the topics joined, and the close of a frame that
// breaks the protocol. tests/phoenix/check runs the maintained npm client against a server.
#include "app/realtime/phoenix_session.hpp"

#include <waypoint/app/application.hpp>
#include <waypoint/app/realtime/phoenix.hpp>

#include <gtest/gtest.h>
#include <exchange_harness.hpp>

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace waypoint::app;
using detail::phoenix_session;

// The connection, as the session drives it: frames sent, topics joined, broadcasts
// published (refused past `publish_budget`, as a connection past its rate), the close.
class recording_link final : public detail::phoenix_link {
 public:
  std::vector<std::string> frames;
  std::set<std::string> topics;
  std::vector<std::string> published;
  std::size_t publish_budget = 100;
  std::optional<std::pair<close_code, std::string>> closed;

  std::size_t publish(std::string_view topic, std::string_view frame) override {
    if (published.size() == publish_budget)
      throw publish_rate_exceeded("publishing faster than 1 messages a second (bursts of 1)");
    published.push_back(std::string(topic) + " " + std::string(frame));
    return 1;
  }
  void send(std::string_view frame) override {
    if (!closed) frames.emplace_back(frame);
  }
  void subscribe(std::string_view topic) override { topics.emplace(topic); }
  void unsubscribe(std::string_view topic) override { topics.erase(std::string(topic)); }
  void close(close_code code, std::string_view reason) override {
    closed.emplace(code, std::string(reason));
  }
};

// The application's hooks, one behaviour per topic prefix and per event.
phoenix_options test_options() {
  return {
      .join = [](context&, std::string_view topic, std::string_view payload) -> phoenix_reply {
        if (topic.starts_with("secret:")) return phoenix_reply::error("unauthorized");
        if (topic.starts_with("boom:")) throw std::runtime_error("the join hook failed");
        if (topic.starts_with("echo:"))
          return phoenix_reply::ok(R"({"params":)" + std::string(payload) + "}");
        return phoenix_reply::ok();
      },
      .on_event = [](phoenix_channel& channel, std::string_view event,
                     std::string_view payload) -> std::optional<phoenix_reply> {
        if (event == "ping") return phoenix_reply::ok(R"({"echo":)" + std::string(payload) + "}");
        if (event == "crash") throw std::runtime_error("the handler failed");
        if (event == "not_an_object") return phoenix_reply::ok("[1]");
        if (event == "quiet") return std::nullopt;
        if (event == "refuse") return phoenix_reply::error("no \"quotes\" here");
        if (event == "push") channel.push("pushed", payload);
        if (event == "shout") channel.broadcast("shout", payload);
        if (event == "bye") channel.close();
        return phoenix_reply::ok();
      },
      .max_channels = 3,
  };
}

struct session_fixture {
  std::vector<std::string> log;  // the application's log lines
  application app{{.logger = [this](std::string_view line) { log.emplace_back(line); }}};
  waypoint::testing::exchange_harness host;
  request req{http::verb::get, "/socket/websocket?vsn=2.0.0", 11};
  response res;
  context ctx{app, req, res, host};
  topic_hub hub;
  phoenix_options options = test_options();
  recording_link link;
  phoenix_session session{hub, options, ctx, link};

  void text(const std::string& frame) { session.receive({.payload = frame, .binary = false}); }
};

constexpr const char* join_a = R"(["1","1","room:a","phx_join",{}])";
constexpr const char* joined_a = R"(["1","1","room:a","phx_reply",{"status":"ok","response":{}}])";

struct protocol_row {
  const char* rule;
  std::vector<std::string> in;
  std::vector<std::string> out;
  std::set<std::string> topics;
};

const protocol_row protocol_rows[] = {
    {"HeartbeatIsAnsweredOkWithANullJoinRef",
     {R"([null,"7","phoenix","heartbeat",{}])"},
     {R"([null,"7","phoenix","phx_reply",{"status":"ok","response":{}}])"},
     {}},
    {"RefsAreEchoedAsSent",
     {R"([null,42,"phoenix","heartbeat",{}])"},
     {R"([null,42,"phoenix","phx_reply",{"status":"ok","response":{}}])"},
     {}},
    {"ElementsAfterThePayloadAreIgnored",
     {R"([null,"7","phoenix","heartbeat",{},"more"])"},
     {R"([null,"7","phoenix","phx_reply",{"status":"ok","response":{}}])"},
     {}},
    {"JoinTheHookAcceptsJoinsTheTopic", {join_a}, {joined_a}, {"room:a"}},
    {"JoinResponseIsTheHooks",
     {R"(["1","1","echo:a","phx_join",{"token":"t"}])"},
     {R"(["1","1","echo:a","phx_reply",{"status":"ok","response":{"params":{"token":"t"}}}])"},
     {"echo:a"}},
    {"JoinTheHookRefusesIsAnErrorWithItsReason",
     {R"(["1","1","secret:a","phx_join",{}])"},
     {R"(["1","1","secret:a","phx_reply",{"status":"error","response":{"reason":"unauthorized"}}])"},
     {}},
    {"JoinHookThatThrowsRefusesAsJoinCrashed",
     {R"(["1","1","boom:a","phx_join",{}])"},
     {R"(["1","1","boom:a","phx_reply",{"status":"error","response":{"reason":"join crashed"}}])"},
     {}},
    {"JoinOfATopicEndingInAStarJoinsThatTopicLiterally",
     {R"(["1","1","room:*","phx_join",{}])"},
     {R"(["1","1","room:*","phx_reply",{"status":"ok","response":{}}])"},
     {"room:*"}},
    {"JoinOfAnEmptyTopicIsRefusedByTheHubsRule",
     {R"(["1","1","","phx_join",{}])"},
     {R"(["1","1","","phx_reply",{"status":"error","response":{"reason":"a topic of 0 bytes: a topic is 1 to 256 bytes"}}])"},
     {}},
    {"JoinOfATopicPastTheHubsBoundIsRefusedByTheHubsRule",
     {R"(["1","1",")" + std::string(257, 't') + R"(","phx_join",{}])"},
     {R"(["1","1",")" + std::string(257, 't') +
      R"(","phx_reply",{"status":"error","response":{"reason":"a topic of 257 bytes: a topic is 1 to 256 bytes"}}])"},
     {}},
    {"ShoutIsPublishedAsABroadcastOnTheClientsBehalf",
     {join_a, R"(["1","2","room:a","shout",{"body":"hi"}])"},
     {joined_a, R"(["1","2","room:a","phx_reply",{"status":"ok","response":{}}])"},
     {"room:a"}},
    {"JoinPastMaxChannelsIsRefused",
     {R"(["1","1","room:a","phx_join",{}])", R"(["2","2","room:b","phx_join",{}])",
      R"(["3","3","room:c","phx_join",{}])", R"(["4","4","room:d","phx_join",{}])"},
     {joined_a, R"(["2","2","room:b","phx_reply",{"status":"ok","response":{}}])",
      R"(["3","3","room:c","phx_reply",{"status":"ok","response":{}}])",
      R"(["4","4","room:d","phx_reply",{"status":"error","response":{"reason":"too many channels joined"}}])"},
     {"room:a", "room:b", "room:c"}},
    {"SecondJoinOfATopicClosesTheFirst",
     {join_a, R"(["5","5","room:a","phx_join",{}])"},
     {joined_a, R"(["1","1","room:a","phx_close",{}])",
      R"(["5","5","room:a","phx_reply",{"status":"ok","response":{}}])"},
     {"room:a"}},
    {"PushIsAnsweredOnTheChannelsJoinRef",
     {join_a, R"([null,"2","room:a","ping",{"n":[1,2.5,"x"]}])"},
     {joined_a,
      R"(["1","2","room:a","phx_reply",{"status":"ok","response":{"echo":{"n":[1,2.5,"x"]}}}])"},
     {"room:a"}},
    {"ErrorReplyEscapesItsReason",
     {join_a, R"(["1","2","room:a","refuse",{}])"},
     {joined_a,
      R"(["1","2","room:a","phx_reply",{"status":"error","response":{"reason":"no \"quotes\" here"}}])"},
     {"room:a"}},
    {"HandlerWithoutReplySendsNone",
     {join_a, R"(["1","2","room:a","quiet",{}])"},
     {joined_a},
     {"room:a"}},
    {"PushFromTheHandlerGoesToThisClientBeforeTheReply",
     {join_a, R"(["1","2","room:a","push",{"x":1}])"},
     {joined_a, R"(["1",null,"room:a","pushed",{"x":1}])",
      R"(["1","2","room:a","phx_reply",{"status":"ok","response":{}}])"},
     {"room:a"}},
    {"EventOnAnUnjoinedTopicIsAnUnmatchedTopic",
     {R"(["1","2","room:b","ping",{}])"},
     {R"([null,"2","room:b","phx_reply",{"status":"error","response":{"reason":"unmatched topic"}}])"},
     {}},
    {"EventForAnEarlierJoinIsDropped",
     {join_a, R"(["9","2","room:a","ping",{}])"},
     {joined_a},
     {"room:a"}},
    {"LeaveIsAnsweredOkThenClosed",
     {join_a, R"(["1","3","room:a","phx_leave",{}])"},
     {joined_a, R"(["1","3","room:a","phx_reply",{"status":"ok","response":{}}])",
      R"(["1","1","room:a","phx_close",{}])"},
     {}},
    {"LeaveOfAnUnjoinedTopicIsAnsweredOk",
     {R"(["4","5","room:z","phx_leave",{}])"},
     {R"(["4","5","room:z","phx_reply",{"status":"ok","response":{}}])"},
     {}},
    {"LeaveForAnEarlierJoinIsDropped",
     {join_a, R"(["9","3","room:a","phx_leave",{}])"},
     {joined_a},
     {"room:a"}},
    {"HandlerThatThrowsCrashesItsChannelWithPhxError",
     {join_a, R"(["1","2","room:a","crash",{}])"},
     {joined_a, R"(["1","1","room:a","phx_error",{"reason":"channel_crash"}])"},
     {}},
    {"ReplyThatIsNotAnObjectCrashesTheChannel",
     {join_a, R"(["1","2","room:a","not_an_object",{}])"},
     {joined_a, R"(["1","1","room:a","phx_error",{"reason":"channel_crash"}])"},
     {}},
    {"CrashLeavesTheOtherChannelsJoined",
     {join_a, R"(["2","2","room:b","phx_join",{}])", R"(["1","3","room:a","crash",{}])",
      R"(["2","4","room:b","ping",{}])"},
     {joined_a, R"(["2","2","room:b","phx_reply",{"status":"ok","response":{}}])",
      R"(["1","1","room:a","phx_error",{"reason":"channel_crash"}])",
      R"(["2","4","room:b","phx_reply",{"status":"ok","response":{"echo":{}}}])"},
     {"room:b"}},
    {"ServerCloseRepliesThenSendsPhxClose",
     {join_a, R"(["1","2","room:a","bye",{}])"},
     {joined_a, R"(["1","2","room:a","phx_reply",{"status":"ok","response":{}}])",
      R"(["1","1","room:a","phx_close",{}])"},
     {}},
};

class Phoenix : public testing::TestWithParam<protocol_row> {};

TEST_P(Phoenix, AnswersAsPhoenixDoes) {
  const protocol_row& row = GetParam();
  session_fixture s;
  for (const std::string& frame : row.in) s.text(frame);
  EXPECT_EQ(s.link.frames, row.out);
  EXPECT_EQ(s.link.topics, row.topics);
  EXPECT_EQ(s.session.channels(), row.topics.size());
  EXPECT_FALSE(s.link.closed) << s.link.closed->second;
}

INSTANTIATE_TEST_SUITE_P(Rules, Phoenix, testing::ValuesIn(protocol_rows),
                         [](const auto& info) { return std::string(info.param.rule); });

// A message that is not a V2 JSON frame closes the connection, as Phoenix's socket process
// crashes on it, with the code that names the fault.
struct malformed_row {
  const char* rule;
  std::string message;
  bool binary;
  close_code code;
  const char* reason;
};

const malformed_row malformed_rows[] = {
    {"NotJsonIs1007", R"(["1","1","room:a")", false, close_code::bad_payload,
     "malformed JSON at byte"},
    {"TrailingGarbageIs1007", R"([null,"1","phoenix","heartbeat",{}] x)", false,
     close_code::bad_payload, "malformed JSON at byte"},
    {"NumberOutOfRangeIs1007", R"([null,"1","phoenix","heartbeat",{"n":1e400}])", false,
     close_code::bad_payload, "malformed JSON"},
    {"NestingDeeperThan256Is1007",
     R"([null,"1","phoenix","heartbeat",)" + std::string(300, '[') + std::string(300, ']') + "]",
     false, close_code::bad_payload, "nested deeper than 256"},
    {"ObjectIs1008", R"({"topic":"phoenix","event":"heartbeat"})", false, close_code::policy_error,
     "a Phoenix frame is [join_ref, ref, topic, event, payload]"},
    {"FourElementsIs1008", R"(["1","1","room:a","phx_join"])", false, close_code::policy_error,
     "a Phoenix frame is"},
    {"TopicNotAStringIs1008", R"([null,"1",7,"heartbeat",{}])", false, close_code::policy_error,
     "are strings"},
    {"EventNotAStringIs1008", R"([null,"1","phoenix",null,{}])", false, close_code::policy_error,
     "are strings"},
    {"BinaryIs1003", std::string("\x00\x01\x02", 3), true, close_code::unknown_data,
     "binary frames are not taken"},
};

class PhoenixMalformed : public testing::TestWithParam<malformed_row> {};

TEST_P(PhoenixMalformed, ClosesTheConnectionNamingTheFault) {
  const malformed_row& row = GetParam();
  session_fixture s;
  s.text(join_a);
  s.session.receive({.payload = row.message, .binary = row.binary});
  ASSERT_TRUE(s.link.closed);
  EXPECT_EQ(s.link.closed->first, row.code);
  EXPECT_NE(s.link.closed->second.find(row.reason), std::string::npos) << s.link.closed->second;
  EXPECT_LE(s.link.closed->second.size(), 123u) << "a close frame's reason is at most 123 bytes";
  // Nothing after it is read.
  s.session.receive({.payload = R"([null,"9","phoenix","heartbeat",{}])", .binary = false});
  EXPECT_EQ(s.link.frames, std::vector<std::string>{joined_a});
}

INSTANTIATE_TEST_SUITE_P(Frames, PhoenixMalformed, testing::ValuesIn(malformed_rows),
                         [](const auto& info) { return std::string(info.param.rule); });

// Past the connection's publish rate a broadcast is refused, and the push that made it is
// answered "rate limited": no crash, no log line, the channel stays joined.
TEST(PhoenixRate, ABroadcastPastTheConnectionsRateAnswersThePushRateLimited) {
  session_fixture s;
  s.link.publish_budget = 1;
  s.text(join_a);
  s.text(R"(["1","2","room:a","shout",{"n":1}])");
  s.text(R"(["1","3","room:a","shout",{"n":2}])");
  s.text(R"(["1","4","room:a","ping",{}])");
  EXPECT_EQ(s.link.published,
            std::vector<std::string>{R"(room:a [null,null,"room:a","shout",{"n":1}])"});
  EXPECT_EQ(s.link.frames,
            (std::vector<std::string>{
                joined_a, R"(["1","2","room:a","phx_reply",{"status":"ok","response":{}}])",
                R"(["1","3","room:a","phx_reply",{"status":"error","response":{"reason":"rate limited"}}])",
                R"(["1","4","room:a","phx_reply",{"status":"ok","response":{"echo":{}}}])"}));
  EXPECT_EQ(s.link.topics, std::set<std::string>{"room:a"});
  EXPECT_TRUE(s.log.empty()) << s.log.front();
}

// Issue 44: a topic holding a newline and a JSON line was written raw to the log (stderr,
// where the access log goes), a forged line of its own. Each failure's line is one line,
// the client's text in it escaped as the access log escapes it.
TEST(PhoenixLog, AClientsTopicAndEventCannotForgeALogLine) {
  session_fixture s;
  const std::vector<std::string>& lines = s.log;
  const std::string forged = R"(\n{\"level\":\"error\",\"msg\":\"forged\"})";
  auto frame = [](const std::string& topic, const char* event) {
    return R"(["1","1",")" + topic + R"(",")" + event + R"(",{}])";
  };
  s.text(frame("boom:" + forged, "phx_join"));
  s.text(frame("room:" + forged, "phx_join"));
  s.text(frame("room:" + forged, "crash"));
  ASSERT_EQ(lines.size(), 2u);
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find_first_of("\r\n"), std::string::npos) << line;
    EXPECT_NE(line.find(R"(:\n{\"level\":\"error\",\"msg\":\"forged\"}")"), std::string::npos)
        << "the topic, escaped as a JSON string: " << line;
  }
  EXPECT_EQ(lines[0],
            R"(waypoint: Phoenix join of "boom:\n{\"level\":\"error\",\"msg\":\"forged\"}" threw: )"
            R"("the join hook failed")");
}

TEST(PhoenixFrame, EncodesTopicAndEventAsJsonStrings) {
  EXPECT_EQ(detail::encode_phoenix_frame("null", "null", "room:\"q\"", "shout\n", R"({"a":1})"),
            R"([null,null,"room:\"q\"","shout\n",{"a":1}])");
}

TEST(PhoenixFrame, DecodesRefsAsTheirJsonText) {
  auto decoded = detail::decode_phoenix_frame(R"( ["3", null, "room:a", "ev", {"k" : [ 1 ]}] )");
  const auto* frame = std::get_if<detail::phoenix_frame>(&decoded);
  ASSERT_NE(frame, nullptr);
  EXPECT_EQ(frame->join_ref, R"("3")");
  EXPECT_EQ(frame->ref, "null");
  EXPECT_EQ(frame->topic, "room:a");
  EXPECT_EQ(frame->event, "ev");
  EXPECT_EQ(frame->payload, R"({"k":[1]})");
}

TEST(PhoenixBroadcast, RefusesAPayloadThatIsNotAnObject) {
  topic_hub hub;
  for (const char* payload : {"[1]", "\"text\"", "{", "", "1"})
    EXPECT_THROW(phoenix_broadcast(hub, "room:a", "shout", payload), std::invalid_argument)
        << payload;
  EXPECT_EQ(phoenix_broadcast(hub, "room:a", "shout", R"( {"a":1})"), 0u);
}

TEST(PhoenixSocket, RefusesOptionsWithoutAJoinHook) {
  auto hub = std::make_shared<topic_hub>();
  EXPECT_THROW(phoenix_socket(hub, {}), std::invalid_argument);
  EXPECT_THROW(phoenix_socket(nullptr, test_options()), std::invalid_argument);
  phoenix_options zero = test_options();
  zero.max_channels = 0;
  EXPECT_THROW(phoenix_socket(hub, zero), std::invalid_argument);
}

TEST(PhoenixReply, ErrorCarriesItsReasonAsAJsonString) {
  phoenix_reply r = phoenix_reply::error("a \"b\" \\ c");
  EXPECT_EQ(r.status, "error");
  EXPECT_EQ(r.response, R"({"reason":"a \"b\" \\ c"})");
  EXPECT_EQ(phoenix_reply::ok().response, "{}");
}

}  // namespace
