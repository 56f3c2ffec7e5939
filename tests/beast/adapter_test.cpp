// The adapter: a Beast request routed to the ServeMux outcome and, when that is not a
// handler call, the response: 404, 405 + Allow, redirect + Location (query kept), 400, and
// HEAD without a body. Also its promises: route() allocates nothing, and nothing taken
// from the target reaches a header unchecked.
#include <waypoint/beast/adapter.hpp>

#include <gtest/gtest.h>
#include <alloc_counter.hpp>

#include <memory>
#include <string>
#include <vector>

namespace {

namespace http = boost::beast::http;
using waypoint::beast::prepare_response;
using waypoint::beast::route;
using waypoint::beast::route_outcome;

using int_router = waypoint::basic_router<int>;

const int_router& test_router() {
  static const int_router r = [] {
    int_router r;
    r.add("GET /users/{id}", 1);
    r.add("GET /users/me", 2);
    r.add("POST /users", 3);
    r.add("GET /docs/", 4);
    r.add("api.example.com/v1/{x}", 5);
    r.add("DELETE /users/{id}", 6);
    r.freeze();
    return r;
  }();
  return r;
}

http::request<http::string_body> make_request(std::string_view method, std::string_view target,
                                              std::string_view host = "example.com") {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  if (!host.empty()) req.set(http::field::host, host);
  return req;
}

struct row {
  std::string rule;
  std::string method;
  std::string target;
  std::string host;
  http::status status;
  int handler;                // matched: the route's handler
  std::string allow = {};     // 405
  std::string location = {};  // redirect
};

TEST(Adapter, RoutesToTheServeMuxOutcome) {
  std::vector<row> rows = {
      {"a match calls the most specific route", "GET", "/users/me", "h", http::status::ok, 2},
      {"a wildcard captures a segment", "GET", "/users/42?x", "h", http::status::ok, 1},
      {"GET serves HEAD", "HEAD", "/users/42", "h", http::status::ok, 1},
      {"no route is 404", "GET", "/nothing", "h", http::status::not_found, 0},
      {"a path served for other methods is 405 with Allow", "PUT", "/users/42", "h",
       http::status::method_not_allowed, 0, "DELETE, GET, HEAD"},
      {"a missing trailing slash redirects, query kept", "GET", "/docs?x=1&y=2", "h",
       http::status::temporary_redirect, 0, "", "/docs/?x=1&y=2"},
      {"an unclean path redirects to the clean one", "GET", "/users//42/./?q", "h",
       http::status::temporary_redirect, 0, "", "/users/42/?q"},
      {"an empty query is not kept", "GET", "/docs?", "h", http::status::temporary_redirect, 0, "",
       "/docs/"},
      {"a bad escape is 400", "GET", "/users/a%zz", "h", http::status::bad_request, 0},
      {"the Host field selects host routes", "GET", "/v1/z", "api.example.com:8080",
       http::status::ok, 5},
      {"absolute-form routes on its host and path", "GET", "http://api.example.com/v1/z", "other",
       http::status::ok, 5},
      {"other hosts fall back to host-less routes", "GET", "/v1/z", "other.example.com",
       http::status::not_found, 0},
      {"asterisk-form is 400", "OPTIONS", "*", "h", http::status::bad_request, 0},
      {"a relative target is 400", "GET", "users/42", "h", http::status::bad_request, 0},
      {"HTTP/1.1 without Host is 400", "GET", "/users/42", "", http::status::bad_request, 0},
  };
  auto result = std::make_unique<int_router::match_result>();
  for (const row& r : rows) {
    auto req = make_request(r.method, r.target, r.host);
    route_outcome o = route(test_router(), req, *result);
    EXPECT_EQ(o.status, r.status) << r.rule;
    EXPECT_EQ(o.head, r.method == "HEAD") << r.rule;
    if (o.matched()) {
      EXPECT_EQ(result->handler(), r.handler) << r.rule;
      continue;
    }
    EXPECT_FALSE(o.reason.empty()) << r.rule;
    auto res = waypoint::beast::make_response(o, req);
    EXPECT_EQ(res.result(), r.status) << r.rule;
    EXPECT_EQ(res[http::field::allow], r.allow) << r.rule;
    EXPECT_EQ(res[http::field::location], r.location) << r.rule;
    EXPECT_TRUE(res.body().starts_with(http::obsolete_reason(r.status))) << r.rule;
  }
}

TEST(Adapter, RedirectUsesTheRoutersStatus) {
  int_router r;
  r.add("GET /docs/", 1);
  r.set_redirect_status(308);
  r.freeze();
  auto result = std::make_unique<int_router::match_result>();
  auto req = make_request("GET", "/docs?a=b");
  route_outcome o = route(r, req, *result);
  EXPECT_EQ(o.status, http::status::permanent_redirect);
  EXPECT_EQ(waypoint::beast::make_response(o, req)[http::field::location], "/docs/?a=b");
}

TEST(Adapter, HeadErrorHasContentLengthButNoBody) {
  auto result = std::make_unique<int_router::match_result>();
  auto head = make_request("HEAD", "/nothing");
  auto get = make_request("GET", "/nothing");
  auto head_res = waypoint::beast::make_response(route(test_router(), head, *result), head);
  auto get_res = waypoint::beast::make_response(route(test_router(), get, *result), get);
  EXPECT_EQ(head_res.result(), http::status::not_found);
  EXPECT_TRUE(head_res.body().empty());
  EXPECT_EQ(head_res[http::field::content_length], std::to_string(get_res.body().size()));
}

TEST(Adapter, ResponseCarriesTheRequestsVersionAndKeepAlive) {
  auto result = std::make_unique<int_router::match_result>();
  auto req = make_request("GET", "/nothing");
  req.keep_alive(false);
  auto res = waypoint::beast::make_response(route(test_router(), req, *result), req);
  EXPECT_EQ(res.version(), 11u);
  EXPECT_FALSE(res.keep_alive());
}

bool holds_line_break(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

TEST(Adapter, NothingFromTheTargetReachesAHeaderUnchecked) {
  std::vector<std::string> targets = {
      "/docs?x=\r\nSet-Cookie: a=b",
      "/docs\r\nSet-Cookie: a=b",
      "/docs?\n\rX: y",
      std::string("/docs?\0", 7),
      "/docs?\x7f",
      "/docs?caf\xc3\xa9",
      "http://h\r\nX: y/docs",
  };
  auto result = std::make_unique<int_router::match_result>();
  for (const std::string& target : targets) {
    auto req = make_request("GET", target);
    route_outcome o = route(test_router(), req, *result);
    EXPECT_EQ(o.status, http::status::bad_request) << target;
    auto res = waypoint::beast::make_response(o, req);
    for (const auto& f : res) EXPECT_FALSE(holds_line_break(f.value())) << target;
  }
}

TEST(Adapter, RouteAllocatesNothing) {
  std::vector<std::pair<std::string, std::string>> requests = {
      {"GET", "/users/42"},     {"GET", "/users/a%20b"},
      {"PUT", "/users/42"},     {"GET", "/docs?x=1"},
      {"GET", "/a/../users/1"}, {"GET", "/nothing"},
      {"GET", "/users/a%zz"},   {"GET", "*"},
  };
  auto result = std::make_unique<int_router::match_result>();
  for (const auto& [method, target] : requests) {
    auto req = make_request(method, target);
    waypoint::testing::allocation_scope scope;
    route_outcome o = route(test_router(), req, *result);
    EXPECT_EQ(scope.count(), 0u) << method << " " << target;
    (void)o;
  }
}

// A reused response allocates only Beast's field storage: one allocation per field set.
TEST(Adapter, PrepareResponseOnAReusedResponseAllocatesOnlyItsFields) {
  struct case_row {
    std::string target;
    std::string method;
    std::size_t fields;  // Content-Type, X-Content-Type-Options, Content-Length, + Allow/Location
  };
  std::vector<case_row> rows = {
      {"/nothing", "GET", 3}, {"/users/42", "PUT", 4}, {"/docs?x=1", "GET", 4}, {"*", "GET", 3}};
  auto result = std::make_unique<int_router::match_result>();
  http::response<http::string_body> res;
  res.body().reserve(256);
  for (const auto& row : rows) {
    auto req = make_request(row.method, row.target);
    route_outcome o = route(test_router(), req, *result);
    res.base() = {};
    res.body().clear();
    waypoint::testing::allocation_scope scope;
    prepare_response(o, res);
    EXPECT_EQ(scope.count(), row.fields) << row.target;
  }
}

}  // namespace
