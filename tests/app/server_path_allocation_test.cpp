// The allocations of a request on the server's path (application::dispatch through the
// exchange, as waypoint's connection calls it), counted at the malloc level: Asio takes
// coroutine frames from std::aligned_alloc, which an operator new counter does not see.
// Not built under sanitizers, which replace malloc themselves.
#include "app_test_support.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/operations/access_log.hpp>
#include <waypoint/app/operations/metrics.hpp>
#include <waypoint/app/operations/trace_context.hpp>
#include <waypoint/app/serve.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <alloc_counter.hpp>
#include <exchange_harness.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

// --- the server's path: dispatch through the exchange ------------------------------

// Allocations of one request answered through dispatch_to(app), as the server's
// connection calls it, after `warm_up` requests (Asio's per-thread recycling of coroutine
// frames and handlers fills during those).
std::uint64_t dispatch_allocations(application& app, const request& req, int warm_up = 8) {
  waypoint::testing::exchange_harness connection;
  auto dispatch = waypoint::app::dispatch_to(app);
  for (int i = 0; i < warm_up; ++i) {
    response res{http::status::ok, 11};
    connection.answer(dispatch, req, res);
  }
  response res{http::status::ok, 11};
  waypoint::testing::allocation_scope scope;
  connection.answer(dispatch, req, res);
  return scope.count();
}

// The same for a request with a body, as the server answers it: planned at its header
// (application::plan_body, where it is routed), then dispatched once the body is in.
std::uint64_t planned_dispatch_allocations(application& app, const request& req, int warm_up = 8) {
  waypoint::testing::exchange_harness connection;
  auto dispatch = waypoint::app::dispatch_to(app);
  auto answer = [&] {
    waypoint::beast::body_plan plan = app.plan_body(req, 1 << 20);
    response res{http::status::ok, 11};
    connection.answer(dispatch, req, res, &plan.planned);
    EXPECT_FALSE(plan.planned) << "the dispatch takes what the plan kept";
    EXPECT_EQ(res.body(), "7: 5 bytes");
  };
  for (int i = 0; i < warm_up; ++i) answer();
  waypoint::testing::allocation_scope scope;
  answer();
  return scope.count();
}

// A body's request costs what a bodiless one does: the plan routes it into the context
// the dispatch answers with, recycled like any other.
TEST(ServerPathAllocations, ARequestWithABodyIsPlannedAndDispatchedWithoutMore) {
  application app;
  app.use(waypoint::app::request_id());
  app.post("/items/{id}", [](context& ctx) {
    ctx.response().body() =
        std::string(ctx.path_value("id")) + ": " + std::to_string(ctx.body().size()) + " bytes";
  });
  request req = make_request("POST", "/items/7");
  req.body() = "hello";
  EXPECT_EQ(planned_dispatch_allocations(app, req), 1u);  // X-Request-Id's field
}

struct server_path_row {
  const char* rule;
  std::string target;
  std::uint64_t allocations;
};

TEST(ServerPathAllocations, PinnedPerKindOfRoute) {
  application app;
  app.use(waypoint::app::request_id());  // hooks: the built-ins' form, around coroutines too
  app.get("/health", [](context& ctx) { ctx.response().body() = "ok"; });
  app.get("/users/{id}", [](context& ctx) {
    ctx.response().body() = ctx.path_value("id").size() < 8 ? "short id" : "long id";
  });
  app.get("/async/{id}", [](context& ctx) -> awaitable<void> {
    co_await boost::asio::post(co_await boost::asio::this_coro::executor, boost::asio::use_awaitable);
    ctx.response().body() = ctx.path_value("id").size() < 8 ? "short id" : "long id";
  });
  app.get("/deferred/{id}", [](context& ctx) {
    deferred_response later = ctx.defer();
    later.response().body() = "later";
    later.send();
  });
  const std::vector<server_path_row> rows = {
      // X-Request-Id is one field: one allocation; the framework adds nothing.
      {"synchronous static route", "/health", 1},
      {"synchronous param route", "/users/42", 1},
      // Measured, not promised: the rest is Asio 1.81's. co_spawn's state and the
      // coroutine frames (co_spawn's entry, run_rest, run_async, the handler's) come from
      // the heap once the two its per-thread cache keeps are taken
      // (BOOST_ASIO_RECYCLING_ALLOCATOR_CACHE_SIZE; raising it would change Asio's ABI for
      // every translation unit of a program). The framework's own state is recycled.
      {"coroutine route that suspends once", "/async/42", 12},
      // The same coroutine wait, plus the state a callback may hold on another thread. The
      // request id layer has no after hook, so nothing is postponed and no list of
      // postponed layers is allocated (13 while every layer was a frame of its own).
      {"deferred response", "/deferred/42", 12},
  };
  for (const server_path_row& row : rows) {
    EXPECT_EQ(dispatch_allocations(app, make_request("GET", row.target)), row.allocations)
        << row.rule;
  }
}

// What a deployment adds to every request: the metrics layer, the access log (to a
// descriptor, the gateway's way), trace context. Each counts into per-thread storage that
// the warm-up requests have grown, so a request costs what it costs without them: the
// request id's field.
TEST(ServerPathAllocations, OperationsLayersAddNothing) {
  int null_fd = ::open("/dev/null", O_WRONLY);
  ASSERT_GE(null_fd, 0);
  metrics counted;
  application with_ops;
  with_ops.use(access_log({.fd = null_fd}));
  with_ops.use(counted.layer());
  with_ops.use(tracing());
  application without;
  for (application* app : {&with_ops, &without}) {
    app->use(waypoint::app::request_id());
    app->get("/health", [](context& ctx) { ctx.response().body() = "ok"; });
    app->get("/users/{id}", [](context& ctx) {
      ctx.response().body() = ctx.path_value("id").size() < 8 ? "short id" : "long id";
    });
  }
  const std::vector<server_path_row> rows = {
      {"static route", "/health", 1},
      {"param route", "/users/42", 1},
      {"404: its problem document's fields and body", "/nothing", 3},
  };
  for (const server_path_row& row : rows) {
    request req = make_request("GET", row.target,
                               {{"traceparent",
                                 "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
                                {"User-Agent", "curl/7.88.1"}});
    std::uint64_t added = dispatch_allocations(with_ops, req);
    EXPECT_EQ(added, dispatch_allocations(without, req)) << row.rule;
    EXPECT_EQ(added, row.allocations) << row.rule;
  }
  ::close(null_fd);
}

}  // namespace
