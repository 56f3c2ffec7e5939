// The allocation pin: a request allocates the same whatever the middleware depth, and the
// framework itself allocates nothing on a plain route (counts are exact, per thread).
#include "app_test_support.hpp"

#include <waypoint/app/typed/json.hpp>

#include <gtest/gtest.h>
#include <alloc_counter.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

struct payload {
  std::string name;
  std::int64_t count = 0;
};
WAYPOINT_JSON_OBJECT(payload, name, count)

// An application with `depth` pass-through layers and one route of each shape.
void build(application& app, int depth) {
  for (int i = 0; i < depth; ++i) app.use(layer_hooks{[](context&) { return true; }});
  // Bodies within the small-string buffer and no header fields: whatever these handlers
  // allocate is the framework's.
  app.get("/health", [](context& ctx) { ctx.response().body() = "ok"; });
  app.get("/users/{id}", [](context& ctx) {
    ctx.response().body() = ctx.path_value("id").size() < 8 ? "short id" : "long id";
  });
  app.get("/search", [](context& ctx) {
    ctx.response().body() = ctx.query("q").value_or("none").size() > 3 ? "long q" : "short q";
  });
  app.get("/typed/{id}", [](context& ctx) {
    ctx.response().body() = std::to_string(ctx.path_value<std::int64_t>("id"));
  });
  app.get("/typed-header/{id}", [](context& ctx) {
    ctx.response().body(std::to_string(ctx.path_value<std::int64_t>("id")));  // + Content-Type
  });
  app.post<payload, payload>("/json", [](payload p) { return p; });
}

// Allocations of one respond() after a warm-up (first-use statics, the freeze).
std::uint64_t allocations_per_request(application& app, const request& req) {
  response res{http::status::ok, 11};
  app.respond(req, res);  // warm-up
  response fresh{http::status::ok, 11};
  waypoint::testing::allocation_scope scope;
  app.respond(req, fresh);
  return scope.count();
}

struct shape_row {
  const char* rule;
  request req;
  unsigned status;                      // the answer the row is about
  std::uint64_t framework_allocations;  // what the pin promises, for every depth
};

class Allocations : public ::testing::TestWithParam<shape_row> {};

TEST_P(Allocations, IndependentOfMiddlewareDepth) {
  const shape_row& row = GetParam();
  std::map<int, std::uint64_t> by_depth;
  for (int depth : {0, 1, 3, 5, 10}) {
    application app;
    build(app, depth);
    EXPECT_EQ(app.respond(row.req).result_int(), row.status) << row.rule;
    by_depth[depth] = allocations_per_request(app, row.req);
  }
  for (auto [depth, count] : by_depth)
    EXPECT_EQ(count, by_depth[0]) << row.rule << ": depth " << depth << " allocates " << count
                                  << ", depth 0 allocates " << by_depth[0];
  EXPECT_EQ(by_depth[0], row.framework_allocations) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Allocations,
    ::testing::Values(
        shape_row{"static route, short body", make_request("GET", "/health"), 200, 0},
        shape_row{"param route", make_request("GET", "/users/42"), 200, 0},
        shape_row{"query parsed and decoded", make_request("GET", "/search?q=a+b%21&page=2"), 200,
                  0},
        shape_row{"typed path value", make_request("GET", "/typed/12345"), 200, 0},
        // One header field is one allocation (a Beast field node).
        shape_row{"handler sets Content-Type", make_request("GET", "/typed-header/1"), 200, 1},
        // The problem document's text and its Content-Type field.
        shape_row{"404 problem", make_request("GET", "/nothing"), 404, 2},
        shape_row{"400 problem", make_request("GET", "/users/%zz"), 400, 2},
        // Also the Allow field and its value, and the detail naming the method.
        shape_row{"405 problem", make_request("DELETE", "/health"), 405, 7},
        // Everything but the framework's 0 is nlohmann/json's: the parsed document, the
        // decoded strings, the encoded document (an ordered_json, its members reserved at
        // once) and its text, Content-Type, and Vary: Accept (the answer may be CBOR).
        shape_row{"typed JSON route", json_request("POST", "/json", R"({"name":"n","count":1})"),
                  201, 21}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

}  // namespace
