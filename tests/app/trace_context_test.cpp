// trace_context.hpp: traceparent kept, started and restarted by the W3C Trace Context
// rules; the tracing() layer; the traceparent and tracestate an upstream request gets.
#include "app_test_support.hpp"

#include <waypoint/app/operations/trace_context.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using origin = trace_context::origin;

constexpr const char* valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

struct traceparent_row {
  const char* rule;
  std::string value;
  std::size_t count;  // traceparent fields in the request
  origin expected;
  const char* trace_id;   // when kept
  const char* parent_id;  // when kept
  std::uint8_t flags;     // when kept
};

class Traceparent : public ::testing::TestWithParam<traceparent_row> {};

TEST_P(Traceparent, KeptStartedOrRestarted) {
  const traceparent_row& row = GetParam();
  trace_context trace = read_trace_context(row.value, row.count);
  EXPECT_EQ(trace.from, row.expected) << row.rule;
  auto trace_id = trace.trace_id_hex();
  auto span_id = trace.span_id_hex();
  EXPECT_NE(std::string(span_id.data(), 16), std::string(16, '0')) << row.rule;
  EXPECT_NE(std::string(trace_id.data(), 32), std::string(32, '0')) << row.rule;
  if (row.expected == origin::kept) {
    EXPECT_EQ(std::string(trace_id.data(), 32), row.trace_id) << row.rule;
    auto parent = trace.parent_id_hex();
    EXPECT_EQ(std::string(parent.data(), 16), row.parent_id) << row.rule;
    EXPECT_NE(std::string(span_id.data(), 16), row.parent_id) << row.rule;
    EXPECT_EQ(trace.flags, row.flags) << row.rule;
  } else {
    EXPECT_EQ(trace.flags, 0) << row.rule;
    EXPECT_NE(std::string(trace_id.data(), 32), "4bf92f3577b34da6a3ce929d0e0e4736") << row.rule;
  }
}

traceparent_row kept(const char* rule, std::string value, std::uint8_t flags = 1) {
  return {rule, std::move(value), 1, origin::kept, "4bf92f3577b34da6a3ce929d0e0e4736",
          "00f067aa0ba902b7", flags};
}
traceparent_row restarted(const char* rule, std::string value, std::size_t count = 1) {
  return {rule, std::move(value), count, origin::restarted, "", "", 0};
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Traceparent,
    ::testing::Values(
        kept("version 00 kept", valid),
        kept("unsampled flag kept", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", 0),
        kept("unknown flags of version 00 dropped",
             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff", 1),
        kept("a higher version read as 00", "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        kept("a higher version with more fields",
             "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds"),
        traceparent_row{"absent: started", "", 0, origin::started, "", "", 0},
        restarted("version ff is invalid", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        restarted("version 00 with a trailing field",
                  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"),
        restarted("a higher version followed by no dash",
                  "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x"),
        restarted("all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
        restarted("all-zero parent id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"),
        restarted("uppercase hex", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"),
        restarted("too short", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"),
        restarted("a missing dash", "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01"),
        restarted("non-hex flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g"),
        restarted("non-hex version", "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        restarted("empty value", "", 1),
        restarted("two traceparent fields", valid, 2)));

TEST(Traceparent, OutgoingNamesThisSpanAsParent) {
  trace_context trace = read_trace_context(valid);
  auto out = trace.outgoing_traceparent();
  auto span = trace.span_id_hex();
  EXPECT_EQ(std::string(out.data(), out.size()),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-" + std::string(span.data(), 16) + "-01");
  // What goes out reads back as the same trace.
  trace_context next_hop = read_trace_context(std::string_view(out.data(), out.size()));
  EXPECT_EQ(next_hop.from, origin::kept);
  EXPECT_EQ(next_hop.trace_id, trace.trace_id);
  EXPECT_EQ(next_hop.parent_id, trace.span_id);
}

TEST(Traceparent, SpanIdsDiffer) {
  EXPECT_NE(read_trace_context(valid).span_id, read_trace_context(valid).span_id);
  EXPECT_NE(read_trace_context("", 0).trace_id, read_trace_context("", 0).trace_id);
}

// The layer and propagate_trace, as an upstream request sees them.
struct propagation_row {
  const char* rule;
  std::vector<header_field> headers;
  bool same_trace;         // the outgoing trace id is the incoming one
  const char* tracestate;  // what goes out; "" for none
};

class Propagation : public ::testing::TestWithParam<propagation_row> {};

TEST_P(Propagation, TraceparentAndTracestateForwarded) {
  const propagation_row& row = GetParam();
  application app({.logger = [](std::string_view) {}});
  app.use(tracing());
  std::string outgoing_parent, outgoing_state, span;
  app.get("/x", [&](context& ctx) {
    request out(ctx.request().base());
    out.set("tracestate", "stale=1");  // replaced, never merged
    propagate_trace(ctx, out);
    outgoing_parent = std::string(out["traceparent"]);
    outgoing_state = std::string(out["tracestate"]);
    auto s = ctx.get<trace_context>().span_id_hex();
    span.assign(s.data(), s.size());
  });
  request req = make_request("GET", "/x");
  for (const header_field& h : row.headers) req.insert(h.name, h.value);
  answer(app, req);
  ASSERT_EQ(outgoing_parent.size(), 55u) << row.rule;
  EXPECT_EQ(outgoing_parent.substr(36, 16), span) << row.rule;
  EXPECT_EQ(outgoing_parent.substr(3, 32) == "4bf92f3577b34da6a3ce929d0e0e4736", row.same_trace)
      << row.rule;
  EXPECT_EQ(outgoing_state, row.tracestate) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Propagation,
    ::testing::Values(
        propagation_row{"kept, with its tracestate",
                        {{"traceparent", valid}, {"tracestate", "rojo=00f067aa0ba902b7"}},
                        true,
                        "rojo=00f067aa0ba902b7"},
        propagation_row{"several tracestate fields joined",
                        {{"traceparent", valid}, {"tracestate", "a=1"}, {"tracestate", "b=2"}},
                        true,
                        "a=1,b=2"},
        propagation_row{"started: no tracestate", {}, false, ""},
        propagation_row{"restarted: its tracestate dropped",
                        {{"traceparent", "00-zz"}, {"tracestate", "rojo=1"}},
                        false,
                        ""}));

TEST(Propagation, WithoutTheLayerNothingChanges) {
  application app({.logger = [](std::string_view) {}});
  std::string outgoing;
  app.get("/x", [&](context& ctx) {
    request out(ctx.request().base());
    propagate_trace(ctx, out);
    outgoing = std::string(out["traceparent"]);
  });
  answer(app, make_request("GET", "/x", {{"traceparent", valid}}));
  EXPECT_EQ(outgoing, valid);
}

}  // namespace
