// websocket.hpp: WebSocket routes in the router beside ordinary ones (precedence, 426, 405
// with Allow, conflicts), the layers that run before an upgrade, and what is answered when
// nothing can be upgraded. The upgrade itself goes to a host that records it; the server's
// side is websocket_server_test.cpp.
#include "app_test_support.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/realtime/websocket.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/route.hpp>

#include <gtest/gtest.h>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

handler says(std::string text) {
  return [text](context& ctx) { ctx.response().body(text); };
}

awaitable<void> echo(websocket& ws) {
  while (auto m = co_await ws.read()) co_await ws.write(*m);
}

request upgrade(std::string_view target, std::initializer_list<header_field> extra = {}) {
  request req = make_request("GET", target, extra);
  req.set(http::field::connection, "keep-alive, Upgrade");
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::sec_websocket_version, "13");
  req.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
  return req;
}

request with_field(request req, http::field name, std::string_view value) {
  req.set(name, value);
  return req;
}

// A connection that takes every upgrade, as the server's does for a valid one.
class upgrading_host final : public waypoint::beast::exchange_host {
 public:
  // The dispatch; for a deferred exchange, this thread's io_context until it is done.
  void answer(application& app, const request& req, response& res) {
    done_ = false;
    waypoint::beast::exchange x(*this, req, res);
    waypoint::app::dispatch_to(app)(x);
    if (!x.deferred()) return;
    io_.restart();
    while (!done_ && io_.run_one() > 0) {
    }
  }
  bool upgraded() const noexcept { return taken_.has_value(); }

  boost::asio::any_io_executor executor() override { return io_.get_executor(); }
  const waypoint::beast::connection_endpoints& endpoints() override { return ends_; }
  boost::asio::cancellation_slot cancellation_slot() override { return cancel_.slot(); }
  void deferred_done() noexcept override { done_ = true; }
  bool upgrade(waypoint::beast::websocket_upgrade& up) noexcept override {
    taken_.emplace(std::move(up));
    return true;
  }
  bool can_upgrade() const noexcept override { return true; }

 private:
  boost::asio::io_context io_{1};
  boost::asio::cancellation_signal cancel_;
  waypoint::beast::connection_endpoints ends_;
  std::optional<waypoint::beast::websocket_upgrade> taken_;
  bool done_ = false;
};

struct outcome {
  bool upgraded;
  unsigned status;  // when not upgraded
  std::string body;
  std::string allow;
  std::string upgrade_field;
};

outcome serve(application& app, const request& req) {
  upgrading_host host;
  response res{http::status::ok, req.version()};
  host.answer(app, req, res);
  return {host.upgraded(), res.result_int(), res.body(), field(res, "Allow"),
          field(res, "Upgrade")};
}

// --- the router's rows ---------------------------------------------------------------

struct route_row {
  const char* rule;
  void (*routes)(application&);
  request req;
  bool upgraded;
  unsigned status;  // when not upgraded
  std::string body_or_allow;  // the GET handler's body, or Allow for a 405
};

void only_websocket(application& app) { serve_websocket(app, "/ws", echo); }
void websocket_then_get(application& app) {
  serve_websocket(app, "/both", echo);
  app.get("/both", says("page"));
}
void get_then_websocket(application& app) {
  app.get("/both", says("page"));
  serve_websocket(app, "/both", echo);
}
void websocket_and_post(application& app) {
  serve_websocket(app, "/both", echo);
  app.post("/both", says("posted"));
}
void websocket_wildcard_get_literal(application& app) {
  serve_websocket(app, "/items/{id}", echo);
  app.get("/items/new", says("form"));
}
void websocket_literal_get_wildcard(application& app) {
  serve_websocket(app, "/items/new", echo);
  app.get("/items/{id}", says("item"));
}
void websocket_in_group(application& app) {
  auto v1 = app.group("/v1");
  v1.get("/stream/{id}", says("status"));
  serve_websocket(v1, "/stream/{id}", echo);
}

class WebSocketRoutes : public ::testing::TestWithParam<route_row> {};

TEST_P(WebSocketRoutes, RouteAsTheRowSays) {
  const route_row& row = GetParam();
  application app({.logger = [](std::string_view) {}});
  row.routes(app);
  outcome o = serve(app, row.req);
  EXPECT_EQ(o.upgraded, row.upgraded) << row.rule;
  if (row.upgraded) return;
  EXPECT_EQ(o.status, row.status) << row.rule;
  if (row.status == 405) {
    EXPECT_EQ(o.allow, row.body_or_allow) << row.rule;
  } else if (row.status == 426) {
    EXPECT_EQ(o.upgrade_field, "websocket") << row.rule;
    EXPECT_NE(o.body.find(row.body_or_allow), std::string::npos) << row.rule << ": " << o.body;
  } else if (row.status == 400) {  // a problem document naming what is wrong
    EXPECT_NE(o.body.find(row.body_or_allow), std::string::npos) << row.rule << ": " << o.body;
  } else {
    EXPECT_EQ(o.body, row.body_or_allow) << row.rule;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, WebSocketRoutes,
    ::testing::Values(
        route_row{"an upgrade request to a WebSocket route upgrades", only_websocket,
                  upgrade("/ws"), true, 0, ""},
        route_row{"a plain GET on a WebSocket-only route is 426 with Upgrade: websocket",
                  only_websocket, make_request("GET", "/ws"), false, 426, ""},
        // The route used to take these, and Beast's handshake refused them after the layers.
        // Since #29 a request that asks for a WebSocket (GET, HTTP/1.1, Upgrade: websocket)
        // and is no valid handshake gets 400 naming the defect, or 426 for the version.
        route_row{"a handshake of another version than 13 is 426 naming the version",
                  only_websocket,
                  with_field(upgrade("/ws"), http::field::sec_websocket_version, "8"), false, 426,
                  "Sec-WebSocket-Version"},
        route_row{"#29: two Sec-WebSocket-Version fields are 426", only_websocket,
                  [] {
                    request r = upgrade("/ws");
                    r.insert(http::field::sec_websocket_version, "13");
                    return r;
                  }(),
                  false, 426, "exactly one Sec-WebSocket-Version"},
        route_row{"#29: a key that is not the base64 of 16 bytes is 400 naming the key",
                  only_websocket,
                  with_field(upgrade("/ws"), http::field::sec_websocket_key, "c2hvcnQ="), false,
                  400, "Sec-WebSocket-Key"},
        route_row{"#29: two Sec-WebSocket-Key fields are 400", only_websocket,
                  [] {
                    request r = upgrade("/ws");
                    r.insert(http::field::sec_websocket_key, "AAAAAAAAAAAAAAAAAAAAAA==");
                    return r;
                  }(),
                  false, 400, "exactly one Sec-WebSocket-Key"},
        route_row{"#29: Upgrade: websocket without Connection: upgrade is 400", only_websocket,
                  with_field(upgrade("/ws"), http::field::connection, "keep-alive"), false, 400,
                  "Connection field must list the token upgrade"},
        route_row{"#29: a handshake with a body is 400", only_websocket,
                  with_field(upgrade("/ws"), http::field::content_length, "5"), false, 400,
                  "no body"},
        route_row{"#29: beside a GET, a handshake without a valid key is still 400, not the page",
                  websocket_then_get,
                  with_field(upgrade("/both"), http::field::sec_websocket_key, "x"), false, 400,
                  "Sec-WebSocket-Key"},
        route_row{"HEAD is a plain GET: 426", only_websocket, make_request("HEAD", "/ws"),
                  false, 426, ""},
        route_row{"another method is 405 with the route's Allow", only_websocket,
                  make_request("POST", "/ws"), false, 405, "GET, HEAD, OPTIONS"},
        route_row{"an upgrade with the wrong Upgrade token is a plain GET", only_websocket,
                  [] {
                    request r = upgrade("/ws");
                    r.set(http::field::upgrade, "h2c");
                    return r;
                  }(),
                  false, 426, ""},
        route_row{"HTTP/1.0 cannot upgrade: a plain GET", only_websocket,
                  [] {
                    request r = upgrade("/ws");
                    r.version(10);
                    return r;
                  }(),
                  false, 426, ""},
        route_row{"GET beside a WebSocket: the plain GET goes to the GET handler",
                  websocket_then_get, make_request("GET", "/both"), false, 200, "page"},
        route_row{"GET beside a WebSocket: the upgrade goes to the WebSocket",
                  websocket_then_get, upgrade("/both"), true, 0, ""},
        route_row{"GET registered first: the plain GET still goes to it", get_then_websocket,
                  make_request("GET", "/both"), false, 200, "page"},
        route_row{"GET registered first: the upgrade goes to the WebSocket", get_then_websocket,
                  upgrade("/both"), true, 0, ""},
        route_row{"POST beside a WebSocket goes to the POST handler", websocket_and_post,
                  make_request("POST", "/both"), false, 200, "posted"},
        route_row{"405 names both routes' methods", websocket_and_post,
                  make_request("PUT", "/both"), false, 405, "GET, HEAD, OPTIONS, POST"},
        route_row{"a more specific plain GET wins over a WebSocket wildcard, upgrade or not",
                  websocket_wildcard_get_literal, upgrade("/items/new"), false, 200, "form"},
        route_row{"the WebSocket wildcard serves the other paths",
                  websocket_wildcard_get_literal, upgrade("/items/7"), true, 0, ""},
        route_row{"a more specific WebSocket route wins over a GET wildcard",
                  websocket_literal_get_wildcard, upgrade("/items/new"), true, 0, ""},
        route_row{"... and answers a plain GET 426: precedence is the path's, not the upgrade's",
                  websocket_literal_get_wildcard, make_request("GET", "/items/new"), false, 426,
                  ""},
        route_row{"the GET wildcard serves the other paths", websocket_literal_get_wildcard,
                  make_request("GET", "/items/7"), false, 200, "item"},
        route_row{"in a group, beside a GET of the group: upgrade", websocket_in_group,
                  upgrade("/v1/stream/9"), true, 0, ""},
        route_row{"in a group, beside a GET of the group: plain GET", websocket_in_group,
                  make_request("GET", "/v1/stream/9"), false, 200, "status"}));

// --- conflicts -------------------------------------------------------------------------

TEST(WebSocketRoutes, TwoWebSocketRoutesOnOnePatternConflict) {
  application app;
  serve_websocket(app, "/ws", echo);
  EXPECT_THROW(serve_websocket(app, "/ws", echo), waypoint::conflict_error);
}

TEST(WebSocketRoutes, EquivalentPatternsConflictAsForAnyGet) {
  application app;
  serve_websocket(app, "/items/{id}", echo);
  EXPECT_THROW(serve_websocket(app, "/items/{name}", echo), waypoint::conflict_error);
  EXPECT_THROW(app.get("/items/{name}", says("x")), waypoint::conflict_error);
}

TEST(WebSocketRoutes, GetOfAnotherScopeOnTheSamePatternConflicts) {
  // Their layers differ, so one endpoint cannot serve both.
  application app;
  serve_websocket(app, "/x", echo);
  auto g = app.group("", layer_hooks{[](context&) { return true; }});
  EXPECT_THROW(g.get("/x", says("x")), waypoint::conflict_error);
}

TEST(WebSocketRoutes, SecondGetBesideAWebSocketConflicts) {
  application app;
  serve_websocket(app, "/both", echo);
  app.get("/both", says("page"));
  EXPECT_THROW(app.get("/both", says("again")), waypoint::conflict_error);
}

TEST(WebSocketRoutes, AGetBeforeAndAnotherAfterTheWebSocketConflicts) {
  // The first GET shares the route; a second may not replace it.
  application app;
  app.get("/both", says("page"));
  serve_websocket(app, "/both", echo);
  EXPECT_THROW(app.get("/both", says("again")), waypoint::conflict_error);
  EXPECT_EQ(answer(app, "GET", "/both").body(), "page");
}

// --- layers before the upgrade ---------------------------------------------------------

bool require_token(context& ctx) {
  if (ctx.header(http::field::authorization) == "Bearer ok") return true;
  ctx.response().problem(401, "a bearer token is required");
  return false;
}

awaitable<void> require_token_async(context& ctx, next inner) {
  co_await boost::asio::post(ctx.executor(), boost::asio::use_awaitable);  // suspends
  if (ctx.header(http::field::authorization) != "Bearer ok") {
    ctx.response().problem(401, "a bearer token is required");
    co_return;
  }
  co_await inner();
}

struct layer_row {
  const char* rule;
  bool coroutine_layer;
  bool token;
  bool upgraded;
  unsigned status;
};

class WebSocketLayers : public ::testing::TestWithParam<layer_row> {};

TEST_P(WebSocketLayers, LayersDecideBeforeTheUpgrade) {
  const layer_row& row = GetParam();
  application app({.logger = [](std::string_view) {}});
  auto g = row.coroutine_layer ? app.group("/private", require_token_async)
                               : app.group("/private", layer_hooks{require_token});
  serve_websocket(g, "/ws", echo);
  request req = row.token ? upgrade("/private/ws", {{"Authorization", "Bearer ok"}})
                          : upgrade("/private/ws");
  outcome o = serve(app, req);
  EXPECT_EQ(o.upgraded, row.upgraded) << row.rule;
  if (!row.upgraded) {
    EXPECT_EQ(o.status, row.status) << row.rule;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, WebSocketLayers,
    ::testing::Values(
        layer_row{"a layer that answers 401 stops the upgrade", false, false, false, 401},
        layer_row{"a layer that passes lets it through", false, true, true, 0},
        layer_row{"a coroutine layer that answers 401 stops it too", true, false, false, 401},
        layer_row{"a coroutine layer that passes lets it through", true, true, true, 0}));

TEST(WebSocketLayers, LayerThatRewritesTheAnswerAfterTheHandlerWins) {
  application app({.logger = [](std::string_view) {}});
  app.use(layer_hooks{{}, [](context& ctx, std::exception_ptr&) {
                        ctx.response().problem(503, "maintenance");
                      }});
  serve_websocket(app, "/ws", echo);
  outcome o = serve(app, upgrade("/ws"));
  EXPECT_FALSE(o.upgraded);
  EXPECT_EQ(o.status, 503u);
}

// --- without a server ------------------------------------------------------------------

TEST(WebSocketRoutes, RespondCannotUpgradeAndSays501) {
  application app({.logger = [](std::string_view) {}});
  serve_websocket(app, "/ws", echo);
  response res = app.respond(upgrade("/ws"));
  EXPECT_EQ(res.result_int(), 501u);
  EXPECT_EQ(app.respond(make_request("GET", "/ws")).result_int(), 426u);
}

// The 501 is decided inside the chain, so a log or metrics layer records what the client
// got, never a 101 that did not happen.
TEST(WebSocketRoutes, LayersSeeThe501OfAConnectionThatCannotUpgrade) {
  application app({.logger = [](std::string_view) {}});
  std::vector<int> seen;
  app.use(layer_hooks{{}, [&](context& ctx, std::exception_ptr&) {
                        seen.push_back(ctx.response().status());
                      }});
  serve_websocket(app, "/ws", echo);
  EXPECT_EQ(app.respond(upgrade("/ws")).result_int(), 501u);
  boost::asio::io_context io;
  request req = upgrade("/ws");  // the coroutine holds a reference to it
  response res{http::status::ok, 11};
  boost::asio::co_spawn(io, app.async_handle(req, res), boost::asio::detached);
  io.run();
  EXPECT_EQ(res.result_int(), 501u);
  EXPECT_EQ(seen, (std::vector<int>{501, 501}));
}

TEST(WebSocketRoutes, OpenApiDocumentsTheRouteAsAGetWith101) {
  application app;
  serve_websocket(app, "/v1/echo", echo);
  app.get("/v1/page", says("x"));
  auto doc = openapi(app);
  ASSERT_TRUE(doc["paths"]["/v1/echo"]["get"].is_object()) << doc.dump(2);
  auto responses = doc["paths"]["/v1/echo"]["get"]["responses"];
  EXPECT_TRUE(responses.contains("101")) << responses.dump();
  EXPECT_TRUE(responses.contains("426")) << responses.dump();
}

TEST(WebSocketRoutes, EmptyHandlerAndZeroLimitAreRefused) {
  application app;
  EXPECT_THROW(serve_websocket(app, "/a", websocket_handler()), std::invalid_argument);
  websocket_options options;
  options.max_message_bytes = 0;
  EXPECT_THROW(serve_websocket(app, "/b", echo, options), std::invalid_argument);
}

}  // namespace
