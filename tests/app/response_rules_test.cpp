// The response rules of waypoint/beast/adapter.hpp answered alike by the adapter (route()
// and prepare_response, what waypoint::beast::server sends) and by waypoint::app, which
// routes through the same route() and renders problem documents instead of plain text:
// the status, Location with the query, Allow (GET implying HEAD, OPTIONS added where the
// application answers OPTIONS itself) and HEAD's Content-Length, the length of the body it
// drops. The bodies differ by design (the application's 405 detail names the method, so
// its HEAD and GET lengths differ by a byte or so); the decisions do not.
#include "app_test_support.hpp"

#include <waypoint/beast/adapter.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

// The same table in both layers; a method-less route and an OPTIONS route of its own.
constexpr const char* patterns[] = {"GET /items/{id}", "GET /items", "POST /items",
                                    "POST /form",      "GET /dir/",  "GET /own",
                                    "OPTIONS /own",    "/any"};

using int_router = waypoint::basic_router<int>;

const int_router& adapter_router() {
  static const int_router r = [] {
    int_router r;
    int i = 0;
    for (const char* p : patterns) r.add(p, i++);
    r.freeze();
    return r;
  }();
  return r;
}

// The size of the body the last answer had before finish_body, seen by the outermost layer.
std::size_t body_before_finish = 0;

application& app_under_test() {
  static application app;
  static const bool built = [] {
    app.use(layer_hooks{{}, [](context& ctx, std::exception_ptr&) {
                          body_before_finish = ctx.response().body().size();
                        }});
    for (const char* p : patterns)
      app.handle(p, [](context& ctx) { ctx.response().body("route"); });
    app.freeze();
    return true;
  }();
  (void)built;
  return app;
}

// An answer, and the length of the body it carried before the HEAD rule dropped it.
struct answered {
  response res;
  std::size_t body_size;
};

answered through_adapter(std::string_view method, std::string_view target) {
  request req = make_request(method, target);
  auto result = std::make_unique<int_router::match_result>();
  waypoint::beast::route_outcome o = waypoint::beast::route(adapter_router(), req, *result);
  EXPECT_FALSE(o.matched()) << method << " " << target << " reached a handler";
  waypoint::beast::route_outcome with_body = o;
  with_body.head = false;
  return {waypoint::beast::make_response(o, req),
          waypoint::beast::make_response(with_body, req).body().size()};
}

answered through_app(std::string_view method, std::string_view target) {
  response res = answer(app_under_test(), method, target);
  return {std::move(res), body_before_finish};
}

struct rule_row {
  const char* rule;
  const char* method;
  const char* target;
  unsigned status;
  unsigned app_status;    // differs only where the application answers OPTIONS itself
  const char* allow;      // "" when absent
  const char* app_allow;  // the application's Allow names its automatic OPTIONS
  const char* location;   // both layers; "" when absent
};

class ResponseRules : public ::testing::TestWithParam<rule_row> {};

TEST_P(ResponseRules, AreTheSameThroughTheAdapterAndTheApplication) {
  const rule_row& row = GetParam();
  struct layer {
    const char* name;
    answered (*answer)(std::string_view, std::string_view);
    unsigned status;
    const char* allow;
  };
  for (const layer& l : {layer{"adapter", through_adapter, row.status, row.allow},
                         layer{"application", through_app, row.app_status, row.app_allow}}) {
    auto [res, body_size] = l.answer(row.method, row.target);
    EXPECT_EQ(res.result_int(), l.status) << l.name << ": " << row.rule;
    EXPECT_EQ(field(res, "Allow"), l.allow) << l.name << ": " << row.rule;
    EXPECT_EQ(field(res, "Location"), row.location) << l.name << ": " << row.rule;
    if (std::string_view(row.method) == "HEAD") {
      EXPECT_TRUE(res.body().empty()) << l.name << ": " << row.rule;
      EXPECT_EQ(field(res, "Content-Length"), std::to_string(body_size))
          << l.name << ": " << row.rule;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ResponseRules,
    ::testing::Values(
        rule_row{"HEAD of a 404 keeps Content-Length and no body", "HEAD", "/nothing", 404, 404,
                 "", "", ""},
        rule_row{"HEAD of a 405 keeps Content-Length and no body", "HEAD", "/form", 405, 405,
                 "POST", "OPTIONS, POST", ""},
        rule_row{"HEAD of a redirect keeps Content-Length and no body", "HEAD", "/dir?x=1", 307,
                 307, "", "", "/dir/?x=1"},
        rule_row{"HEAD of a 400 keeps Content-Length and no body", "HEAD", "/items/%zz", 400,
                 400, "", "", ""},
        rule_row{"Location keeps the query", "GET", "/dir?x=1&y=2", 307, 307, "", "",
                 "/dir/?x=1&y=2"},
        rule_row{"Location of an unclean path keeps the query", "GET", "/items/../dir/?q=%20",
                 307, 307, "", "", "/dir/?q=%20"},
        rule_row{"an empty query leaves no '?'", "GET", "/dir?", 307, 307, "", "", "/dir/"},
        rule_row{"Allow of a GET route lists GET, HEAD", "DELETE", "/items/1", 405, 405,
                 "GET, HEAD", "GET, HEAD, OPTIONS", ""},
        rule_row{"Allow of several methods in byte order", "DELETE", "/items", 405, 405,
                 "GET, HEAD, POST", "GET, HEAD, OPTIONS, POST", ""},
        rule_row{"OPTIONS without an OPTIONS route: the application answers it", "OPTIONS",
                 "/items", 405, 204, "GET, HEAD, POST", "GET, HEAD, OPTIONS, POST", ""},
        rule_row{"an OPTIONS route of its own is listed once", "DELETE", "/own", 405, 405,
                 "GET, HEAD, OPTIONS", "GET, HEAD, OPTIONS", ""},
        rule_row{"a 400 for a target that does not resolve", "GET", "*", 400, 400, "", "", ""}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

}  // namespace
