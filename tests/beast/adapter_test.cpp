// The adapter: a Beast request routed to the ServeMux outcome and, when that is not a
// handler call, the response: 404, 405 + Allow, redirect + Location (query kept), 400, and
// HEAD without a body; the rules waypoint::app shares (write_outcome_header, finish_body).
// Also its promises: route() allocates nothing, and nothing taken from the target reaches
// a header unchecked.
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

TEST(Adapter, OutcomeCarriesTheResolvedTarget) {
  struct target_row {
    std::string rule;
    std::string target;
    std::string host;
    waypoint::match_status kind;
    std::string path, query, routed_host;
  };
  using waypoint::match_status;
  std::vector<target_row> rows = {
      {"a match", "/users/42?x=1", "example.com", match_status::matched, "/users/42", "x=1",
       "example.com"},
      {"a 404", "/nothing?q", "example.com:80", match_status::not_found, "/nothing", "q",
       "example.com:80"},
      {"a 405", "/users", "example.com", match_status::method_not_allowed, "/users", "",
       "example.com"},
      {"a redirect", "/docs?a=b", "example.com", match_status::redirect, "/docs", "a=b",
       "example.com"},
      {"absolute-form names its host", "http://api.example.com/v1/z?k", "other",
       match_status::matched, "/v1/z", "k", "api.example.com"},
      {"a bad path is the router's 400", "/users/%zz?q", "example.com", match_status::bad_request,
       "/users/%zz", "q", "example.com"},
      {"a target that does not resolve has no path", "*", "example.com",
       match_status::bad_request, "", "", ""},
  };
  auto result = std::make_unique<int_router::match_result>();
  for (const target_row& r : rows) {
    auto req = make_request(r.rule == "a 405" ? "PUT" : "GET", r.target, r.host);
    route_outcome o = route(test_router(), req, *result);
    EXPECT_EQ(o.kind, r.kind) << r.rule;
    EXPECT_EQ(o.path, r.path) << r.rule;
    EXPECT_EQ(o.query, r.query) << r.rule;
    EXPECT_EQ(o.host, r.routed_host) << r.rule;
  }
}

// write_outcome_header: the status and fields of an unrouted answer, whoever writes the body.
TEST(Adapter, OutcomeHeaderCarriesStatusAllowAndLocation) {
  struct header_row {
    std::string rule;
    std::string method;
    std::string target;
    std::string automatic;
    http::status status;
    std::string allow, location;
  };
  std::vector<header_row> rows = {
      {"a 405 lists the path's methods, GET implying HEAD", "PUT", "/users/42", "",
       http::status::method_not_allowed, "DELETE, GET, HEAD", ""},
      {"an automatic method is merged in byte order", "PUT", "/users/42", "OPTIONS",
       http::status::method_not_allowed, "DELETE, GET, HEAD, OPTIONS", ""},
      {"an automatic method already served is listed once", "GET", "/users", "POST",
       http::status::method_not_allowed, "POST", ""},
      {"a redirect's Location keeps the query", "GET", "/docs?x=1&y=2", "OPTIONS",
       http::status::temporary_redirect, "", "/docs/?x=1&y=2"},
      {"a 404 has neither", "GET", "/nothing?x", "OPTIONS", http::status::not_found, "", ""},
      {"a 400 has neither", "GET", "*", "OPTIONS", http::status::bad_request, "", ""},
  };
  auto result = std::make_unique<int_router::match_result>();
  for (const header_row& r : rows) {
    auto req = make_request(r.method, r.target);
    route_outcome o = route(test_router(), req, *result);
    http::response<http::string_body> res;
    res.body() = "left by an earlier layer";
    waypoint::beast::write_outcome_header(o, res, r.automatic);
    EXPECT_EQ(res.result(), r.status) << r.rule;
    EXPECT_EQ(res[http::field::allow], r.allow) << r.rule;
    EXPECT_EQ(res[http::field::location], r.location) << r.rule;
    EXPECT_TRUE(res.body().empty()) << r.rule;
  }
}

// finish_body: the content rules of every answer, HEAD and the statuses without content.
TEST(Adapter, FinishBodyAppliesHeadAndNoContentRules) {
  struct body_row {
    std::string rule;
    bool head;
    unsigned status;
    std::string body;
    std::string stated_length;    // a Content-Length set before, "" for none
    std::string content_length;   // after, "" for none
    std::string left_body;
  };
  std::vector<body_row> rows = {
      {"HEAD: the body's length, no body", true, 200, "twelve bytes", "", "12", ""},
      {"HEAD: a stated length replaced by the body's", true, 200, "twelve bytes", "99", "12", ""},
      {"HEAD: a stated length kept when there is no body", true, 200, "", "1234", "1234", ""},
      {"HEAD: no body and no length is 0", true, 404, "", "", "0", ""},
      {"GET: left alone", false, 200, "twelve bytes", "", "", "twelve bytes"},
      {"204 carries no content", false, 204, "ignored", "", "", ""},
      {"304 carries no content, HEAD or not", true, 304, "ignored", "", "", ""},
      {"1xx carries no content", false, 103, "ignored", "", "", ""},
  };
  for (const body_row& r : rows) {
    http::response<http::string_body> res;
    res.result(r.status);
    res.body() = r.body;
    if (!r.stated_length.empty()) res.set(http::field::content_length, r.stated_length);
    waypoint::beast::finish_body(r.head, res);
    EXPECT_EQ(res[http::field::content_length], r.content_length) << r.rule;
    EXPECT_EQ(res.body(), r.left_body) << r.rule;
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

// RFC 9110 section 15's names: Beast's except where it kept RFC 7231's.
TEST(Adapter, ReasonPhrasesAreRfc9110s) {
  struct row {
    unsigned status;
    std::string_view reason;
  };
  for (row r : {row{200, "OK"}, row{404, "Not Found"}, row{413, "Content Too Large"},
                row{414, "URI Too Long"}, row{415, "Unsupported Media Type"},
                row{422, "Unprocessable Content"}, row{503, "Service Unavailable"},
                row{429, "Too Many Requests"}, row{598, ""}})
    EXPECT_EQ(waypoint::beast::reason_phrase(r.status), r.reason) << r.status;
  http::response<http::string_body> res{http::status::payload_too_large, 11};
  prepare_response(route_outcome{}, res);  // a 404, written plainly
  res.result(http::status::payload_too_large);
  EXPECT_EQ(waypoint::beast::status_line_reason(res), "Content Too Large");
}

}  // namespace
