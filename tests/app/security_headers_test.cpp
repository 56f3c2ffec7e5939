// The security headers layer (waypoint/app/security/security_headers.hpp): its defaults on every kind
// of answer (a page, JSON, an unrouted 404, a problem document, HEAD, a file's 304, a
// preflight another layer answers, a streamed body on the wire), the CSP on documents only,
// a handler's own values kept, and each option changed or turned off.
#include "loopback_client.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/content/static_files.hpp>
#include <waypoint/app/http_error.hpp>
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/security/cors.hpp>
#include <waypoint/app/security/security_headers.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

constexpr const char* default_csp =
    "default-src 'self'; base-uri 'self'; frame-ancestors 'none'; object-src 'none'";

struct expected_header {
  const char* name;
  const char* value;
};

const std::vector<expected_header> always_sent{
    {"Strict-Transport-Security", "max-age=31536000; includeSubDomains"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
    {"X-Frame-Options", "DENY"},
    {"Cross-Origin-Opener-Policy", "same-origin"},
    {"Cross-Origin-Resource-Policy", "same-origin"},
};

// A directory with one HTML file, for the 304 a file route answers.
struct www_dir {
  std::filesystem::path root = std::filesystem::temp_directory_path() /
                               ("waypoint-security-headers-" + std::to_string(::getpid()));
  www_dir() {
    std::filesystem::create_directories(root);
    std::ofstream(root / "index.html") << "<!doctype html><p>hi</p>\n";
  }
  ~www_dir() { std::filesystem::remove_all(root); }
};

void add_routes(application& app, const www_dir& www) {
  app.get("/page", [](context& ctx) { ctx.response().body("<p>hi</p>", "text/html; charset=utf-8"); });
  app.get("/api", [](context& ctx) { ctx.response().json({{"ok", true}}); });
  app.get("/svg", [](context& ctx) { ctx.response().body("<svg/>", "Image/SVG+XML"); });
  app.get("/fails", [](context&) -> void { throw waypoint::http_error(409, "taken"); });
  app.get("/html-then-fails", [](context& ctx) {
    ctx.response().body("<p>half</p>", "text/html");
    throw std::runtime_error("broken");
  });
  app.get("/own", [](context& ctx) {
    ctx.response().header("X-Frame-Options", "SAMEORIGIN");
    ctx.response().header("Content-Security-Policy", "default-src 'none'");
    ctx.response().header("Referrer-Policy", "strict-origin-when-cross-origin");
    ctx.response().json({{"own", true}});
  });
  app.get("/no-hsts", [](context& ctx) {
    ctx.response().message().erase("Strict-Transport-Security");
    ctx.response().body("<p>no hsts here</p>", "text/html");
  });
  app.get("/stream", [](context& ctx) -> awaitable<void> {
    ctx.response().header("Content-Type", "text/html");
    co_await ctx.write_chunk("<p>one</p>");
    co_await ctx.write_chunk("<p>two</p>");
  });
  serve_static(app, "/files/", www.root.string());
}

struct answer_row {
  const char* rule;
  const char* method;
  const char* target;
  std::vector<header_field> headers;
  unsigned status;
  bool csp;  // whether the answer carries the default CSP
};

class SecurityHeadersDefaults : public ::testing::TestWithParam<answer_row> {};

TEST_P(SecurityHeadersDefaults, EveryAnswerCarriesThemAndDocumentsTheCsp) {
  const answer_row& row = GetParam();
  www_dir www;
  application app;
  app.use(security_headers());
  app.use(cors({.origins = {"https://app.example.com"}}));
  add_routes(app, www);
  request req = make_request(row.method, row.target);
  for (const header_field& h : row.headers) req.insert(h.name, h.value);
  if (std::string_view(row.target) == "/files/index.html" && row.status == 304) {
    response first = app.respond(make_request("GET", row.target));
    req.set(http::field::if_none_match, field(first, "ETag"));
  }
  response res = app.respond(req);
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  for (const expected_header& h : always_sent) {
    EXPECT_EQ(field(res, h.name), h.value) << row.rule << ": " << h.name;
    EXPECT_EQ(res.count(h.name), 1u) << row.rule << ": " << h.name;
  }
  EXPECT_EQ(res.count("Cross-Origin-Embedder-Policy"), 0u) << row.rule;
  EXPECT_EQ(field(res, "Content-Security-Policy"), row.csp ? default_csp : "") << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, SecurityHeadersDefaults,
    ::testing::Values(
        answer_row{"an HTML page", "GET", "/page", {}, 200, true},
        answer_row{"HEAD to the page", "HEAD", "/page", {}, 200, true},
        answer_row{"JSON gets no CSP", "GET", "/api", {}, 200, false},
        answer_row{"SVG is a document (type compared ignoring case)", "GET", "/svg", {}, 200, true},
        answer_row{"an unrouted 404 problem", "GET", "/nothing", {}, 404, false},
        answer_row{"a 405 problem", "POST", "/page", {}, 405, false},
        answer_row{"a handler's http_error problem", "GET", "/fails", {}, 409, false},
        answer_row{"an exception after an HTML body is a problem, not a document", "GET",
                   "/html-then-fails", {}, 500, false},
        answer_row{"a router redirect", "GET", "/files", {}, 307, false},
        answer_row{"a file", "GET", "/files/index.html", {}, 200, true},
        answer_row{"a file's 304, which names the page's Content-Type", "GET", "/files/index.html", {},
                   304, true},
        answer_row{"HEAD to a file", "HEAD", "/files/index.html", {}, 200, true},
        answer_row{"a CORS preflight the inner layer answers", "OPTIONS", "/api",
                   {{"Origin", "https://app.example.com"}, {"Access-Control-Request-Method", "GET"}},
                   204, false}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

TEST(SecurityHeaders, AHandlersOwnValuesAreKept) {
  www_dir www;
  application app;
  app.use(security_headers());
  add_routes(app, www);
  response res = app.respond(make_request("GET", "/own"));
  EXPECT_EQ(field(res, "X-Frame-Options"), "SAMEORIGIN");
  EXPECT_EQ(field(res, "Referrer-Policy"), "strict-origin-when-cross-origin");
  // Its own CSP stays, on JSON too: only the layer's own value is taken off non-documents.
  EXPECT_EQ(field(res, "Content-Security-Policy"), "default-src 'none'");
  EXPECT_EQ(res.count("X-Frame-Options"), 1u);
  EXPECT_EQ(field(res, "X-Content-Type-Options"), "nosniff");

  response erased = app.respond(make_request("GET", "/no-hsts"));
  EXPECT_EQ(erased.count("Strict-Transport-Security"), 0u);
  EXPECT_EQ(field(erased, "Content-Security-Policy"), default_csp);
}

TEST(SecurityHeaders, AnOuterLayersValueIsKept) {
  www_dir www;
  application app;
  app.use(layer_hooks{[](context& ctx) {
                        ctx.response().header("Referrer-Policy", "same-origin");
                        return true;
                      },
                      {}});
  app.use(security_headers());
  add_routes(app, www);
  response res = app.respond(make_request("GET", "/page"));
  EXPECT_EQ(field(res, "Referrer-Policy"), "same-origin");
  EXPECT_EQ(res.count("Referrer-Policy"), 1u);
}

TEST(SecurityHeaders, EachOptionChangesOrTurnsOffItsHeader) {
  www_dir www;
  application app;
  app.use(security_headers({.strict_transport_security = "",
                            .content_security_policy = "default-src 'self' https://cdn.example.com",
                            .content_security_policy_report_only = true,
                            .csp_content_types = {"text/html", "application/json"},
                            .content_type_options = "",
                            .referrer_policy = "strict-origin-when-cross-origin",
                            .frame_options = "",
                            .cross_origin_opener_policy = "same-origin-allow-popups",
                            .cross_origin_resource_policy = "",
                            .cross_origin_embedder_policy = "require-corp"}));
  add_routes(app, www);
  response res = app.respond(make_request("GET", "/api"));
  EXPECT_EQ(res.count("Strict-Transport-Security"), 0u);
  EXPECT_EQ(res.count("X-Content-Type-Options"), 0u);
  EXPECT_EQ(res.count("X-Frame-Options"), 0u);
  EXPECT_EQ(res.count("Cross-Origin-Resource-Policy"), 0u);
  EXPECT_EQ(res.count("Content-Security-Policy"), 0u);
  EXPECT_EQ(field(res, "Content-Security-Policy-Report-Only"), "default-src 'self' https://cdn.example.com");
  EXPECT_EQ(field(res, "Referrer-Policy"), "strict-origin-when-cross-origin");
  EXPECT_EQ(field(res, "Cross-Origin-Opener-Policy"), "same-origin-allow-popups");
  EXPECT_EQ(field(res, "Cross-Origin-Embedder-Policy"), "require-corp");
  // The list of document types replaces the default one: SVG is no longer in it.
  EXPECT_EQ(app.respond(make_request("GET", "/svg")).count("Content-Security-Policy-Report-Only"), 0u);
}

TEST(SecurityHeaders, NoCspWhenItsValueIsEmpty) {
  www_dir www;
  application app;
  app.use(security_headers({.content_security_policy = ""}));
  add_routes(app, www);
  response res = app.respond(make_request("GET", "/page"));
  EXPECT_EQ(res.count("Content-Security-Policy"), 0u);
  EXPECT_EQ(field(res, "X-Frame-Options"), "DENY");
}

TEST(SecurityHeaders, RefusesAValueThatWouldBreakTheField) {
  EXPECT_THROW(security_headers({.referrer_policy = "no-referrer\r\nSet-Cookie: a=1"}),
               std::invalid_argument);
  EXPECT_THROW(security_headers({.content_security_policy = std::string("a\0b", 3)}),
               std::invalid_argument);
}

TEST(SecurityHeaders, AStreamedBodyCarriesThemOnTheWire) {
  www_dir www;
  application app;
  app.use(security_headers());
  add_routes(app, www);
  loopback_server server(app);
  std::vector<response> got = exchange(server.port(), {make_request("GET", "/stream"),
                                                       make_request("HEAD", "/page"),
                                                       make_request("GET", "/files/index.html")});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].body(), "<p>one</p><p>two</p>");
  EXPECT_TRUE(got[0].chunked());
  for (const response& res : got) {
    for (const expected_header& h : always_sent)
      EXPECT_EQ(field(res, h.name), h.value) << h.name;
    EXPECT_EQ(field(res, "Content-Security-Policy"), default_csp);
  }
}

}  // namespace
