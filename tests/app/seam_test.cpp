// The kernel's public seam (application.hpp, extensions.hpp, context.hpp): the values
// features keep in the application and on routes, freeze hooks, the routes as features read
// and edit them, a route that shares its pattern, the matched route, and the hand-over a
// WebSocket route asks for. Features are built on nothing else (docs/framework.md,
// "Building a feature"; docs/examples/deprecation.cpp is a whole one).
#include "app_test_support.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/typed/json.hpp>
#include <waypoint/beast/websocket.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

struct budget {
  int units = 0;
};
struct label {
  std::string text;
};

TEST(Extensions, EachTypeHasOneSlotAndSettingReplacesIt) {
  extensions slots;
  EXPECT_EQ(slots.find<budget>(), nullptr);
  EXPECT_EQ(slots.get<budget>().units, 0);  // value-initialised on first use
  slots.set(budget{5});
  slots.set(label{"a"});
  ASSERT_NE(slots.find<budget>(), nullptr);
  EXPECT_EQ(slots.find<budget>()->units, 5);
  slots.set(budget{7});
  EXPECT_EQ(slots.find<budget>()->units, 7);
  EXPECT_EQ(slots.find<label>()->text, "a");
}

TEST(Extensions, ASharedValueIsTheOneFound) {
  extensions slots;
  auto shared = std::make_shared<budget>(budget{3});
  budget* held = slots.put(shared);
  EXPECT_EQ(held, shared.get());
  shared->units = 4;
  EXPECT_EQ(slots.find<budget>()->units, 4);
}

TEST(ApplicationExtensions, TheConstructorKeepsFeaturesSettings) {
  application app({}, budget{9}, label{"x"});
  ASSERT_NE(app.find_extension<budget>(), nullptr);
  EXPECT_EQ(app.find_extension<budget>()->units, 9);
  EXPECT_EQ(app.find_extension<label>()->text, "x");
}

TEST(ApplicationExtensions, NoneChangesAfterFreeze) {
  application app;
  app.extension<budget>().units = 2;
  app.freeze();
  EXPECT_THROW(app.extension<budget>(), std::logic_error);
  EXPECT_EQ(app.find_extension<budget>()->units, 2);
  EXPECT_THROW(app.edit_routes(), std::logic_error);
  EXPECT_THROW(app.on_freeze(application::freeze_stage::prepare, [](application&) {}),
               std::logic_error);
}

TEST(FreezeHooks, PrepareHooksRunBeforeCompleteOnesEachInOrder) {
  application app;
  std::vector<std::string> ran;
  app.on_freeze(application::freeze_stage::complete, [&](application&) { ran.push_back("c1"); });
  app.on_freeze(application::freeze_stage::prepare, [&](application&) { ran.push_back("p1"); });
  app.on_freeze(application::freeze_stage::complete, [&](application&) { ran.push_back("c2"); });
  app.on_freeze(application::freeze_stage::prepare, [&](application&) { ran.push_back("p2"); });
  app.freeze();
  EXPECT_EQ(ran, (std::vector<std::string>{"p1", "p2", "c1", "c2"}));
  app.freeze();  // once frozen, never again
  EXPECT_EQ(ran.size(), 4u);
}

TEST(FreezeHooks, AThrowFailsFreezeAndLeavesTheApplicationUnfrozen) {
  application app;
  bool refuse = true;
  app.on_freeze(application::freeze_stage::prepare, [&](application&) {
    if (refuse) throw std::invalid_argument("not yet");
  });
  EXPECT_THROW(app.freeze(), std::invalid_argument);
  EXPECT_FALSE(app.frozen());
  app.get("/late", [](context&) {});  // registration still open
  refuse = false;
  app.freeze();
  EXPECT_TRUE(app.frozen());
}

TEST(Routes, FeaturesReadAndMarkThemInRegistrationOrder) {
  application app;
  app.get("/a", [](context&) {});
  app.last_route().features().set(label{"first"});
  auto v1 = app.group("/v1");
  v1.post("/b", [](context&) {});
  std::vector<std::string> seen;
  for (const route_entry& r : app.routes()) seen.emplace_back(r.route_pattern().text());
  EXPECT_EQ(seen, (std::vector<std::string>{"GET /a", "POST /v1/b"}));
  EXPECT_EQ(app.routes().begin()->features().find<label>()->text, "first");
  EXPECT_EQ(std::next(app.routes().begin())->features().find<label>(), nullptr);
}

TEST(Routes, FindRouteLooksInItsOwnScopeOnly) {
  application app;
  auto v1 = app.group("/v1");
  v1.get("/x", [](context&) {});
  EXPECT_NE(v1.find_route("GET", "/x"), nullptr);
  EXPECT_EQ(app.find_route("GET", "/v1/x"), nullptr);  // the application's scope is another
  EXPECT_EQ(v1.find_route("POST", "/x"), nullptr);
}

TEST(Routes, LastRouteNeedsARoute) {
  application app;
  EXPECT_THROW(app.last_route(), std::logic_error);
}

// --- a route that shares its pattern ------------------------------------------------

struct joined {
  int count = 0;
};

TEST(SharedPatterns, ALaterRegistrationJoinsOnceThenConflicts) {
  application app;
  app.get("/ws", [](context& ctx) { ctx.response().body("first"); });
  route_entry& first = app.last_route();
  std::shared_ptr<handler> taken = std::make_shared<handler>();
  first.share_pattern([taken](handler h) { *taken = std::move(h); });
  app.get("/ws", [](context& ctx) { ctx.response().body("second"); });
  EXPECT_EQ(&app.last_route(), &first);  // describe() goes to the shared route
  ASSERT_TRUE(static_cast<bool>(*taken));
  EXPECT_THROW(app.get("/ws", [](context&) {}), waypoint::conflict_error);
  EXPECT_EQ(answer(app, "GET", "/ws").body(), "first");
}

TEST(SharedPatterns, AnotherScopeOrAddRouteNeverJoins) {
  application app;
  app.get("/ws", [](context&) {});
  int joins = 0;
  app.last_route().share_pattern([&](handler) { ++joins; });
  EXPECT_THROW(app.add_route("GET", "/ws", [](context&) {}), waypoint::conflict_error);
  auto other = app.group("");
  EXPECT_THROW(other.get("/ws", [](context&) {}), waypoint::conflict_error);
  EXPECT_EQ(joins, 0);
}

TEST(SharedPatterns, ReplaceTargetIsWhatTheRouteRuns) {
  application app;
  app.get("/r", [](context& ctx) { ctx.response().body("registered"); });
  route_entry& r = app.last_route();
  handler old = r.target();
  r.replace_target([old](context& ctx) {
    old(ctx);
    ctx.response().header("X-Wrapped", "yes");
  });
  response res = answer(app, "GET", "/r");
  EXPECT_EQ(res.body(), "registered");
  EXPECT_EQ(field(res, "X-Wrapped"), "yes");
}

// --- per request ----------------------------------------------------------------------

TEST(MatchedRoute, IsTheRouteThatMatchedAndNullOtherwise) {
  application app;
  app.get("/a", [](context&) {});
  app.last_route().features().set(label{"a"});
  std::vector<std::string> seen;
  app.use(layer_hooks{.before = [&](context& ctx) {
    const route_entry* r = ctx.matched_route();
    const label* l = r ? r->features().find<label>() : nullptr;
    seen.push_back(l ? l->text : r ? "unlabelled" : "none");
    return true;
  }});
  (void)answer(app, "GET", "/a");
  (void)answer(app, "GET", "/missing");
  (void)answer(app, "POST", "/a");  // 405: no route matched
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "none", "none"}));
}

TEST(Upgrade, WithoutAServerTheConnectionCannotBeHandedOver) {
  application app;
  bool ran = false;
  app.get("/ws", [&](context& ctx) {
    EXPECT_FALSE(ctx.can_upgrade());
    ctx.upgrade({}, [&](context&, waypoint::beast::websocket_channel&) -> awaitable<void> {
      ran = true;
      co_return;
    });
  });
  response res = answer(app, "GET", "/ws");
  EXPECT_EQ(res.result_int(), 501u);
  EXPECT_FALSE(ran);
}

TEST(SchemaChecks, DescribeAsksTheRoutesOwnCheckAndKeepsItsRefusal) {
  application app;
  app.post<nlohmann::json, nlohmann::json>("/a", [](nlohmann::json in) { return in; });
  std::vector<std::string> asked;
  app.last_route().check_schemas_with([&](std::string_view text) {
    asked.emplace_back(text);
    return std::string("is refused here");
  });
  const char* schema = R"({"type":"object"})";
  try {
    app.describe({.request_schema = schema});
    ADD_FAILURE() << "describe() took a schema the route's check refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("its request schema is refused here"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(asked, std::vector<std::string>{schema});
  EXPECT_TRUE(app.last_route().doc().request_schema_text.empty());  // a refusal changes nothing
}

TEST(SchemaChecks, APlainRouteRefusesASchemaBeforeAnyCheck) {
  application app;
  app.get("/a", [](context&) {});
  bool asked = false;
  app.last_route().check_schemas_with([&](std::string_view) {
    asked = true;
    return std::string();
  });
  EXPECT_THROW(app.describe({.request_schema = R"({"type":"object"})"}), std::logic_error);
  EXPECT_FALSE(asked);
}

}  // namespace
