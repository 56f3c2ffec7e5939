// Typed routes in a translation unit built with JSON_DIAGNOSTICS=1 (another nlohmann/json
// ABI): it links against the same waypoint::app, and plain from_json functions get exact
// pointers from nlohmann/json's diagnostics.
#if !defined(JSON_DIAGNOSTICS) || JSON_DIAGNOSTICS != 1
#error "this test must be compiled with JSON_DIAGNOSTICS=1"
#endif

#include "app_test_support.hpp"

#include <waypoint/app/typed/json.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace diag {

struct inner {
  int a = 0;
};
inline void from_json(const nlohmann::json& j, inner& i) { j.at("a").get_to(i.a); }

struct outer {
  std::string name;
  inner nested;
};
inline void from_json(const nlohmann::json& j, outer& o) {
  j.at("name").get_to(o.name);
  j.at("nested").get_to(o.nested);
}

struct pointed {
  int x = 0;
};
WAYPOINT_JSON_OBJECT(pointed, x)

// Constrained, so that the route's contract is checked by this ABI's validators, which the
// library compiles on first use (freeze() compiles the plain ABI's).
struct bounded {
  int x = 0;
};
WAYPOINT_JSON_OBJECT(bounded, x)
inline nlohmann::ordered_json schema_constraints(const bounded*) {
  return {{"properties", {{"x", {{"minimum", 0}, {"maximum", 9}}}}}};
}

}  // namespace diag

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

struct diagnostics_row {
  const char* rule;
  const char* target;
  const char* body;
  std::string pointer;
};

class Diagnostics : public ::testing::TestWithParam<diagnostics_row> {};

TEST_P(Diagnostics, PlainFromJsonGetsPointers) {
  const diagnostics_row& row = GetParam();
  application app;
  app.post<diag::outer>("/outer", [](diag::outer o) { return nlohmann::json{{"name", o.name}}; });
  app.post<diag::pointed>("/pointed", [](diag::pointed p) { return nlohmann::json{{"x", p.x}}; });
  response res = app.respond(json_request("POST", row.target, row.body));
  EXPECT_EQ(res.result_int(), 422u) << row.rule << ": " << res.body();
  EXPECT_EQ(body_json(res).value("pointer", "<none>"), row.pointer)
      << row.rule << ": " << res.body();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Diagnostics,
    ::testing::Values(diagnostics_row{"nested wrong type", "/outer",
                                      R"({"name":"n","nested":{"a":"x"}})", "/nested/a"},
                      diagnostics_row{"nested missing key", "/outer", R"({"name":"n","nested":{}})",
                                      "/nested/a"},
                      diagnostics_row{"top-level wrong type", "/outer",
                                      R"({"name":1,"nested":{"a":1}})", "/name"},
                      diagnostics_row{"json_field still exact", "/pointed", R"({"x":"1"})", "/x"}));

TEST(Diagnostics, SuccessPathWorksUnderTheOtherAbi) {
  application app;
  app.post<diag::outer>("/outer", [](diag::outer o) { return nlohmann::json{{"a", o.nested.a}}; });
  response res = app.respond(json_request("POST", "/outer", R"({"name":"n","nested":{"a":4}})"));
  EXPECT_EQ(res.result_int(), 201u);
  EXPECT_EQ(res.body(), R"({"a":4})");
}

TEST(Diagnostics, ContractsAreCheckedUnderTheOtherAbi) {
  std::vector<std::string> lines;
  application app({.logger = [&](std::string_view l) { lines.emplace_back(l); }});
  app.post<diag::bounded>("/in", [](diag::bounded b) { return b; });
  app.get<diag::bounded>("/out", [] { return diag::bounded{10}; });
  response in = app.respond(json_request("POST", "/in", R"({"x":12})"));
  EXPECT_EQ(in.result_int(), 422u) << in.body();
  EXPECT_EQ(body_json(in).value("keyword", ""), "maximum") << in.body();
  EXPECT_EQ(body_json(in).value("pointer", ""), "/x") << in.body();
  EXPECT_EQ(app.respond(json_request("POST", "/in", R"({"x":3})")).result_int(), 201u);
  response out = app.respond(make_request("GET", "/out"));
  EXPECT_EQ(out.result_int(), 500u) << out.body();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("/x is 10; the maximum is 9"), std::string::npos) << lines[0];
}

TEST(Diagnostics, NumberBeyondAnyDoubleIsA400UnderTheOtherAbi) {
  application app;
  app.post<diag::pointed>("/pointed", [](diag::pointed p) { return nlohmann::json{{"x", p.x}}; });
  response res = app.respond(json_request("POST", "/pointed", R"({"x":1e400})"));
  EXPECT_EQ(res.result_int(), 400u) << res.body();
  EXPECT_EQ(body_json(res).value("detail", ""),
            "malformed JSON at byte 10: number overflow parsing '1e400'");
}

// The strict CBOR reader builds the document through basic_json's public operations, so
// the diagnostics' parent pointers hold and a conversion error names the member; the answer is
// the deterministic encoding under this ABI too.
TEST(Diagnostics, CborBodiesGetPointersAndDeterministicAnswersUnderTheOtherAbi) {
  application app;
  app.post<diag::outer>("/outer", [](diag::outer o) {
    return nlohmann::json{{"name", o.name}, {"a", o.nested.a}};
  });
  auto cbor_post = [&](std::string body) {
    request req = json_request("POST", "/outer", std::move(body), "application/cbor");
    req.set(http::field::accept, "application/cbor");
    return app.respond(req);
  };
  // {"name":"n","nested":{"a":"x"}}
  response bad = cbor_post(std::string("\xa2\x64name\x61n\x66nested\xa1\x61" "a\x61x"));
  EXPECT_EQ(bad.result_int(), 422u) << bad.body();
  EXPECT_EQ(body_json(bad).value("pointer", "<none>"), "/nested/a") << bad.body();
  // {"nested":{"a":4},"name":"n"}, answered {"a":4,"name":"n"}: sorted, shortest heads.
  response good = cbor_post(std::string("\xa2\x66nested\xa1\x61" "a\x04\x64name\x61n"));
  EXPECT_EQ(good.result_int(), 201u) << good.body();
  EXPECT_EQ(good.body(), std::string("\xa2\x61" "a\x04\x64name\x61n"));
}

}  // namespace
