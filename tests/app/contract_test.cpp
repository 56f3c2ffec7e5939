// Typed routes keep the contract their OpenAPI operation states (issue #27): the request
// body is checked against its schema after it converts (422 naming the pointer and the
// keyword), the answer against the response schema and the declared status
// (typed_route_options::response_contract), and freeze() refuses a schema it cannot enforce.
#include "app_test_support.hpp"

#include <waypoint/app/typed/json.hpp>
#include <waypoint/app/typed/schema.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace contracts {

struct signup {
  std::string name;
  std::string email;
  std::int32_t age = 0;
  std::vector<std::string> tags;
  std::optional<std::string> referrer;
};
WAYPOINT_JSON_OBJECT(signup, name, email, age, tags, referrer)
inline nlohmann::ordered_json schema_constraints(const signup*) {
  return {{"properties",
           {{"name", {{"minLength", 1}, {"maxLength", 8}}},
            {"email", {{"format", "email"}}},
            {"age", {{"minimum", 13}, {"maximum", 130}}},
            {"tags", {{"maxItems", 2}, {"uniqueItems", true}, {"items", {{"pattern", "^[a-z]+$"}}}}},
            {"referrer", {{"format", "uuid"}}}}}};
}

struct score {
  std::int32_t value = 0;
};
WAYPOINT_JSON_OBJECT(score, value)
inline nlohmann::ordered_json schema_constraints(const score*) {
  return {{"properties", {{"value", {{"minimum", 0}, {"maximum", 100}}}}}};
}

// A constraint the validator does not enforce: freeze() must refuse it rather than let the
// document promise what nothing checks.
struct unenforced {
  std::string id;
};
WAYPOINT_JSON_OBJECT(unenforced, id)
inline nlohmann::ordered_json schema_constraints(const unenforced*) {
  return {{"minProperties", 1}};
}

}  // namespace contracts

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

// --- requests ------------------------------------------------------------------------

struct request_row {
  const char* rule;
  std::string body;
  unsigned status;
  const char* pointer;  // "" when the answer names none
  const char* keyword;  // "" when none
};

class RequestContract : public ::testing::TestWithParam<request_row> {};

TEST_P(RequestContract, BodiesBreakingTheSchemaAre422NamingPointerAndKeyword) {
  const request_row& row = GetParam();
  application app;
  app.post<contracts::signup>("/signups", [](contracts::signup in) { return in; });
  response res = app.respond(json_request("POST", "/signups", row.body));
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  nlohmann::json doc = body_json(res);
  EXPECT_EQ(doc.value("pointer", ""), row.pointer) << row.rule << ": " << res.body();
  EXPECT_EQ(doc.value("keyword", ""), row.keyword) << row.rule << ": " << res.body();
}

const std::string ok_signup = R"({"name":"ada","email":"ada@example.org","age":36,"tags":["x"]})";

INSTANTIATE_TEST_SUITE_P(
    Rows, RequestContract,
    ::testing::Values(
        request_row{"a body inside every constraint passes", ok_signup, 201, "", ""},
        request_row{"name shorter than minLength", R"({"name":"","email":"a@b.org","age":20,"tags":[]})",
                    422, "/name", "minLength"},
        request_row{"name longer than maxLength counts code points",
                    R"({"name":"ééééééééé","email":"a@b.org","age":20,"tags":[]})", 422, "/name",
                    "maxLength"},
        request_row{"eight two-byte characters are within maxLength 8",
                    R"({"name":"éééééééé","email":"a@b.org","age":20,"tags":[]})", 201, "", ""},
        request_row{"age below minimum", R"({"name":"a","email":"a@b.org","age":12,"tags":[]})",
                    422, "/age", "minimum"},
        request_row{"age above maximum", R"({"name":"a","email":"a@b.org","age":131,"tags":[]})",
                    422, "/age", "maximum"},
        request_row{"email that is not one", R"({"name":"a","email":"a.b.org","age":20,"tags":[]})",
                    422, "/email", "format"},
        request_row{"too many tags", R"({"name":"a","email":"a@b.org","age":20,"tags":["x","y","z"]})",
                    422, "/tags", "maxItems"},
        request_row{"a repeated tag", R"({"name":"a","email":"a@b.org","age":20,"tags":["x","x"]})",
                    422, "/tags/1", "uniqueItems"},
        request_row{"a tag breaking the pattern",
                    R"({"name":"a","email":"a@b.org","age":20,"tags":["x","Y1"]})", 422, "/tags/1",
                    "pattern"},
        request_row{"an optional member checked when present",
                    R"({"name":"a","email":"a@b.org","age":20,"tags":[],"referrer":"nope"})", 422,
                    "/referrer", "format"},
        request_row{"an optional member may be absent",
                    R"({"name":"a","email":"a@b.org","age":20,"tags":[]})", 201, "", ""},
        // Conversion runs first: its 422s keep their own words, and name the keyword of the
        // same schema that the value broke (issue 44: a missing or unknown member named none).
        request_row{"a wrong type is the conversion's 422",
                    R"({"name":1,"email":"a@b.org","age":20,"tags":[]})", 422, "/name", "type"},
        request_row{"a missing member is the conversion's 422, keyword required",
                    R"({"email":"a@b.org","age":20,"tags":[]})", 422, "/name", "required"}));

TEST(RequestContract, CborBodiesAreCheckedAlike) {
  application app;
  app.post<contracts::signup>("/signups", [](contracts::signup in) { return in; });
  nlohmann::json body = {{"name", "a"}, {"email", "a@b.org"}, {"age", 200}, {"tags", nlohmann::json::array()}};
  std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(body);
  response res = app.respond(
      json_request("POST", "/signups", std::string(bytes.begin(), bytes.end()), "application/cbor"));
  EXPECT_EQ(res.result_int(), 422u) << res.body();
  EXPECT_EQ(body_json(res).value("keyword", ""), "maximum");
}

TEST(RequestContract, LogLetsTheBodyThroughWithALineAndOffChecksNothing) {
  const std::string young = R"({"name":"a","email":"a@b.org","age":12,"tags":[]})";
  for (contract_check mode : {contract_check::log, contract_check::off}) {
    std::vector<std::string> lines;
    // The answer echoes the body, which its own schema refuses alike: not checked here.
    application app(
        {.logger = [&](std::string_view l) { lines.emplace_back(l); }},
        typed_route_options{.request_contract = mode, .response_contract = contract_check::off});
    app.post<contracts::signup>("/signups", [](contracts::signup in) { return in; });
    response res = app.respond(json_request("POST", "/signups", young));
    EXPECT_EQ(res.result_int(), 201u) << res.body();
    if (mode == contract_check::log) {
      ASSERT_EQ(lines.size(), 1u);
      EXPECT_NE(lines[0].find("/age is 12; the minimum is 13"), std::string::npos) << lines[0];
      EXPECT_NE(lines[0].find("route \"POST /signups\""), std::string::npos) << lines[0];
    } else {
      EXPECT_TRUE(lines.empty());
    }
  }
}

// --- Accept --------------------------------------------------------------------------

struct accept_row {
  const char* rule;
  const char* accept;  // "" sends none
  bool void_route;     // a route answering 204 without content
  unsigned status;
  const char* content_type;
};

class AcceptContract : public ::testing::TestWithParam<accept_row> {};

TEST_P(AcceptContract, TypedAnswersAre406WhenAcceptTakesNeitherEncoding) {
  const accept_row& row = GetParam();
  application app;
  app.get<contracts::score>("/score", [] { return contracts::score{5}; });
  app.del<void>("/score", [] {});
  request req = make_request(row.void_route ? "DELETE" : "GET", "/score");
  if (*row.accept) req.set(http::field::accept, row.accept);
  response res = app.respond(req);
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  EXPECT_EQ(field(res, "Content-Type"), row.content_type) << row.rule;
  if (row.status == 406) {
    EXPECT_NE(body_json(res).value("detail", "").find("application/json, application/cbor or application/cose"),
              std::string::npos)
        << res.body();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AcceptContract,
    ::testing::Values(
        accept_row{"no Accept is JSON", "", false, 200, "application/json"},
        accept_row{"any type", "*/*", false, 200, "application/json"},
        accept_row{"CBOR only", "application/cbor", false, 200, "application/cbor"},
        accept_row{"a wildcard of low weight still takes JSON", "text/html, */*;q=0.1", false, 200,
                   "application/json"},
        accept_row{"XML only", "application/xml", false, 406, "application/problem+json"},
        accept_row{"a weight that cannot be read is answered as without Accept",
                   "application/cbor;q=abc", false, 200, "application/json"},
        accept_row{"nan is no weight", "application/json;q=nan", false, 200, "application/json"},
        accept_row{"a weight above 1 is no weight", "application/json;q=2", false, 200,
                   "application/json"},
        accept_row{"a readable zero refuses", "application/json;q=0.000", false, 406,
                   "application/problem+json"},
        accept_row{"JSON refused with q=0", "application/json;q=0", false, 406,
                   "application/problem+json"},
        accept_row{"a route without content ignores Accept", "application/xml", true, 204, ""}));

// HEAD gets each new answer's status and length, without its body: the 406 and the 500 of a
// broken contract, as the GET would have them.
TEST(ContractHead, The406AndThe500AnswerHeadWithoutABody) {
  application app({.logger = [](std::string_view) {}});
  app.get<contracts::score>("/score", [] { return contracts::score{5}; });
  app.get<contracts::score>("/broken", [] { return contracts::score{120}; });
  struct row {
    const char* target;
    const char* accept;
    unsigned status;
  };
  for (const row& r : {row{"/score", "application/xml", 406}, row{"/broken", "", 500}}) {
    request get = make_request("GET", r.target);
    request head = make_request("HEAD", r.target);
    if (*r.accept) {
      get.set(http::field::accept, r.accept);
      head.set(http::field::accept, r.accept);
    }
    response full = app.respond(get);
    response bare = app.respond(head);
    EXPECT_EQ(full.result_int(), r.status) << r.target;
    EXPECT_EQ(bare.result_int(), r.status) << r.target;
    EXPECT_TRUE(bare.body().empty()) << r.target;
    EXPECT_EQ(field(bare, "Content-Length"), std::to_string(full.body().size())) << r.target;
  }
}

// --- answers -------------------------------------------------------------------------

struct answer_row {
  const char* rule;
  contract_check mode;
  std::int32_t value;  // what the handler returns
  int status;          // what the handler sets; 0: leaves the default
  unsigned answered;
  bool logged;
};

class AnswerContract : public ::testing::TestWithParam<answer_row> {};

TEST_P(AnswerContract, BrokenAnswersFollowTheOption) {
  const answer_row& row = GetParam();
  std::vector<std::string> lines;
  application app({.logger = [&](std::string_view l) { lines.emplace_back(l); }},
                  typed_route_options{.response_contract = row.mode});
  app.get<contracts::score>("/scores/{id}", [&row](context& ctx) {
    if (row.status) ctx.response().status(row.status);
    return contracts::score{row.value};
  });
  response res = app.respond(make_request("GET", "/scores/7"));
  EXPECT_EQ(res.result_int(), row.answered) << row.rule << ": " << res.body();
  ASSERT_EQ(lines.size(), row.logged ? 1u : 0u) << row.rule;
  if (row.logged) {
    EXPECT_NE(lines[0].find("route \"GET /scores/{id}\""), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("the response broke the route's contract"), std::string::npos)
        << lines[0];
    if (!row.status) {
      EXPECT_NE(lines[0].find("/value is 120; the maximum is 100"), std::string::npos) << lines[0];
    }
  }
  if (row.answered == 500) {
    EXPECT_EQ(body_json(res).value("detail", ""), "the response broke the route's contract");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AnswerContract,
    ::testing::Values(
        answer_row{"enforce: a valid answer is sent", contract_check::enforce, 99, 0, 200, false},
        answer_row{"enforce: an answer out of range is a 500 and a line", contract_check::enforce,
                   120, 0, 500, true},
        answer_row{"enforce: a status the route does not declare is a 500",
                   contract_check::enforce, 5, 202, 500, true},
        answer_row{"log: the broken answer is sent, and the line", contract_check::log, 120, 0,
                   200, true},
        answer_row{"log: the undeclared status is sent, and the line", contract_check::log, 5,
                   202, 202, true},
        answer_row{"off: nothing is checked", contract_check::off, 120, 202, 202, false}));

TEST(AnswerContract, AVoidRouteThatSetsAnotherStatusBreaksItToo) {
  std::vector<std::string> lines;
  application app({.logger = [&](std::string_view l) { lines.emplace_back(l); }});
  app.del<void>("/scores/{id}", [](context& ctx) { ctx.response().status(202); });
  response res = app.respond(make_request("DELETE", "/scores/7"));
  EXPECT_EQ(res.result_int(), 500u) << res.body();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("status 202 is not the route's 204"), std::string::npos) << lines[0];
}

// --- registration --------------------------------------------------------------------

TEST(ContractRegistration, FreezeRefusesASchemaItCannotEnforceNamingTheRoute) {
  application app;
  app.post<contracts::unenforced>("/things", [](contracts::unenforced in) { return in; });
  try {
    app.freeze();
    FAIL() << "freeze() accepted minProperties";
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("POST /things"), std::string::npos) << what;
    EXPECT_NE(what.find("contract_test.cpp"), std::string::npos) << what;
    EXPECT_NE(what.find("minProperties"), std::string::npos) << what;
  }
}

}  // namespace
