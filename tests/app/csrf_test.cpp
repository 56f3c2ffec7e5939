// The CSRF layer (waypoint/app/security/csrf.hpp): every Sec-Fetch-Site value with every method,
// Origin against the Host (matching, another host or port or scheme, null, malformed),
// trusted origins, requests with neither field, and the double-submit token (issued on the
// first request, matched from a header or a form field, mismatched, missing).
#include "app_test_support.hpp"

#include <waypoint/app/security/csrf.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

constexpr const char* methods[] = {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"};

bool is_safe(std::string_view method) { return method == "GET" || method == "HEAD" || method == "OPTIONS"; }

void add_routes(application& app) {
  app.handle("/x", [](context& ctx) { ctx.response().body(std::string(csrf_token(ctx))); });
}

TEST(Csrf, EachSecFetchSiteValueWithEachMethod) {
  application app;
  app.use(csrf_protection());
  add_routes(app);
  struct site_row {
    const char* value;
    bool vouches;  // passes an unsafe method
  };
  const site_row sites[] = {{"same-origin", true}, {"none", true}, {"same-site", false},
                            {"cross-site", false}, {"something-new", false}};
  for (const site_row& site : sites)
    for (const char* method : methods) {
      response res = answer(app, make_request(method, "/x", {{"Sec-Fetch-Site", site.value},
                                                             {"Origin", "https://example.com"}}));
      unsigned expected = is_safe(method) || site.vouches ? 200 : 403;
      EXPECT_EQ(res.result_int(), expected) << method << " with Sec-Fetch-Site: " << site.value;
      if (expected == 403) {
        EXPECT_EQ(field(res, "Content-Type"), "application/problem+json");
        EXPECT_NE(body_json(res)["detail"].get<std::string>().find(std::string("Sec-Fetch-Site is ") + site.value),
                  std::string::npos)
            << res.body();
      }
    }
}

struct origin_row {
  const char* rule;
  csrf_options options;
  const char* method;
  std::vector<header_field> headers;
  unsigned status;
  const char* detail = "";  // part of the refusal's detail
};

class CsrfOrigin : public ::testing::TestWithParam<origin_row> {};

TEST_P(CsrfOrigin, WithoutSecFetchSiteTheOriginDecides) {
  const origin_row& row = GetParam();
  application app;
  app.use(csrf_protection(row.options));
  add_routes(app);
  request req = make_request(row.method, "/x");
  for (const header_field& h : row.headers) req.set(h.name, h.value);
  response res = answer(app, req);
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  if (row.status == 403) {
    EXPECT_NE(body_json(res)["detail"].get<std::string>().find(row.detail), std::string::npos)
        << row.rule << ": " << res.body();
  }
}

const csrf_options trusting{.trusted_origins = {"https://admin.example.org"}};
const csrf_options https_only{.scheme = "https"};

INSTANTIATE_TEST_SUITE_P(
    Rows, CsrfOrigin,
    ::testing::Values(
        origin_row{"the host's own origin", {}, "POST", {{"Origin", "https://example.com"}}, 200},
        origin_row{"scheme unknown: http compares by host", {}, "POST", {{"Origin", "http://example.com"}}, 200},
        origin_row{"case is ignored", {}, "DELETE", {{"Origin", "HTTPS://Example.COM"}}, 200},
        origin_row{"another host", {}, "POST", {{"Origin", "https://evil.example"}}, 403,
                   "Origin is neither this host nor trusted"},
        origin_row{"a sibling subdomain is another origin", {}, "PUT", {{"Origin", "https://a.example.com"}}, 403,
                   "Origin"},
        origin_row{"another port", {}, "POST", {{"Origin", "https://example.com:8443"}}, 403, "Origin"},
        origin_row{"the same port", {}, "POST",
                   {{"Origin", "https://example.com:8443"}, {"Host", "example.com:8443"}}, 200},
        origin_row{"Origin: null (sandboxed frame)", {}, "POST", {{"Origin", "null"}}, 403, "Origin"},
        origin_row{"a path is not an origin", {}, "POST", {{"Origin", "https://example.com/x"}}, 403, "Origin"},
        origin_row{"neither field: not a browser", {}, "POST", {}, 200},
        origin_row{"neither field, PATCH", {}, "PATCH", {}, 200},
        origin_row{"safe method from anywhere", {}, "GET", {{"Origin", "https://evil.example"}}, 200},
        origin_row{"https known: http is another origin", https_only, "POST", {{"Origin", "http://example.com"}},
                   403, "Origin"},
        origin_row{"https known: Host's :443 is the default port", https_only, "POST",
                   {{"Origin", "https://example.com"}, {"Host", "example.com:443"}}, 200},
        origin_row{"a trusted origin", trusting, "POST", {{"Origin", "https://admin.example.org"}}, 200},
        origin_row{"a trusted origin, cross-site", trusting, "POST",
                   {{"Origin", "https://admin.example.org"}, {"Sec-Fetch-Site", "cross-site"}}, 200},
        origin_row{"an untrusted origin, cross-site", trusting, "POST",
                   {{"Origin", "https://evil.example"}, {"Sec-Fetch-Site", "cross-site"}}, 403,
                   "the origin is not trusted"},
        origin_row{"cross-site without Origin", trusting, "POST", {{"Sec-Fetch-Site", "cross-site"}}, 403,
                   "cross-site"},
        origin_row{"a trusted origin's prefix is not trusted", trusting, "POST",
                   {{"Origin", "https://admin.example.org.evil.example"}}, 403, "Origin"}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

// --- double submit ---------------------------------------------------------------------------

const csrf_options double_submit{.double_submit = true};

// The token a first GET is given, read from its Set-Cookie.
std::string issued_token(application& app) {
  response first = answer(app, "GET", "/x");
  std::string set = field(first, "Set-Cookie");
  std::string prefix = "__Host-csrf-token=";
  EXPECT_EQ(set.rfind(prefix, 0), 0u) << set;
  std::string token = set.substr(prefix.size(), set.find(';') - prefix.size());
  EXPECT_EQ(token.size(), 43u);
  EXPECT_EQ(first.body(), token);  // csrf_token(ctx) gives the handler the same token
  EXPECT_NE(set.find("; Path=/; Secure; HttpOnly; SameSite=Lax"), std::string::npos) << set;
  return token;
}

TEST(Csrf, DoubleSubmitIssuesATokenOnceAndEachRequestHasOne) {
  application app;
  app.use(csrf_protection(double_submit));
  add_routes(app);
  std::string token = issued_token(app);
  EXPECT_NE(issued_token(app), token);  // random: a new one for a client without the cookie
  response again = answer(app, make_request("GET", "/x", {{"Cookie", "__Host-csrf-token=" + token}}));
  EXPECT_EQ(again.count("Set-Cookie"), 0u);  // a client holding one keeps it
  EXPECT_EQ(again.body(), token);
  // A malformed cookie is replaced.
  response replaced = answer(app, make_request("GET", "/x", {{"Cookie", "__Host-csrf-token=short"}}));
  EXPECT_EQ(replaced.count("Set-Cookie"), 1u);
}

struct token_row {
  const char* rule;
  bool send_cookie;
  const char* header;    // X-CSRF-Token: "" none, "T"/"P" (below), else as given
  const char* form;      // csrf_token in a urlencoded body, same convention
  const char* site;      // Sec-Fetch-Site, "" none
  unsigned status;
  const char* detail = "";
};

class CsrfDoubleSubmit : public ::testing::TestWithParam<token_row> {};

TEST_P(CsrfDoubleSubmit, RequestsWithoutEitherFieldMustEchoTheCookie) {
  const token_row& row = GetParam();
  application app;
  app.use(csrf_protection(double_submit));
  add_routes(app);
  std::string token = issued_token(app);
  // "T": the cookie's token; "P": all of it but its last character.
  auto value = [&](std::string_view v) {
    return v == "T" ? token : v == "P" ? token.substr(0, token.size() - 1) : std::string(v);
  };
  request req = make_request("POST", "/x");
  if (row.send_cookie) req.set("Cookie", "theme=dark; __Host-csrf-token=" + token);
  if (*row.header) req.set("X-CSRF-Token", value(row.header));
  if (*row.form) {
    req.set("Content-Type", "application/x-www-form-urlencoded");
    req.body() = "name=ada&csrf_token=" + value(row.form);
  }
  if (*row.site) req.set("Sec-Fetch-Site", row.site);
  response res = answer(app, req);
  EXPECT_EQ(res.result_int(), row.status) << row.rule << ": " << res.body();
  if (row.status == 403) {
    EXPECT_NE(body_json(res)["detail"].get<std::string>().find(row.detail), std::string::npos)
        << row.rule << ": " << res.body();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, CsrfDoubleSubmit,
    ::testing::Values(
        token_row{"header matches the cookie", true, "T", "", "", 200},
        token_row{"form field matches the cookie", true, "", "T", "", 200},
        token_row{"header does not match", true, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "", "", 403,
                  "does not match"},
        token_row{"a prefix of the token does not match", true, "P", "", "", 403, "does not match"},
        token_row{"form field does not match", true, "", "wrong", "", 403, "does not match"},
        token_row{"no token sent", true, "", "", "", 403, "no token in the X-CSRF-Token header"},
        token_row{"no cookie: the header alone proves nothing", false, "T", "", "", 403, "no token cookie"},
        token_row{"same-origin needs no token", false, "", "", "same-origin", 200},
        token_row{"cross-site is refused even with the token", true, "T", "", "cross-site", 403,
                  "Sec-Fetch-Site is cross-site"}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

TEST(Csrf, BadOptionsAreRefusedWhenTheLayerIsMade) {
  struct row {
    const char* rule;
    csrf_options options;
  };
  const std::vector<row> rows{
      {"a scheme that is not http or https", {.scheme = "ftp"}},
      {"a trusted origin without a scheme", {.trusted_origins = {"admin.example.org"}}},
      {"a trusted origin with a trailing slash", {.trusted_origins = {"https://admin.example.org/"}}},
      {"a token cookie name that is not a token",
       {.double_submit = true, .token_cookie = {.name = "bad name", .value = {}}}},
      {"a __Host- cookie with a Domain",
       {.double_submit = true, .token_cookie = {.name = "__Host-csrf", .value = {}, .domain = "example.com"}}},
  };
  for (const row& r : rows) EXPECT_THROW(csrf_protection(r.options), std::invalid_argument) << r.rule;
}

}  // namespace
