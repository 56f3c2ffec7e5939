// Coroutine handlers and layers, deferred responses and deadlines, driven through
// application::async_handle on a test io_context and through respond(), which must answer
// every route the same way: no sockets, so every rule of the chain can be tried in a table.
#include "app_test_support.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/operations/access_log.hpp>
#include <waypoint/app/typed/json.hpp>

#include <gtest/gtest.h>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/ostream.hpp>
#include <boost/beast/http/dynamic_body.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// Named, not anonymous: the macro defines from_json and to_json, which clang reports as
// unused internal functions when a type is only ever read or only written.
namespace async_test_types {
struct sum_request {
  std::int64_t a = 0;
  std::int64_t b = 0;
};
WAYPOINT_JSON_OBJECT(sum_request, a, b)
struct sum_result {
  std::int64_t sum = 0;
};
WAYPOINT_JSON_OBJECT(sum_result, sum)
}  // namespace async_test_types

namespace {

using namespace waypoint::app;
using namespace async_test_types;
using namespace waypoint::app::testing;
namespace asio = boost::asio;
using namespace std::chrono_literals;

// Answers `req` through async_handle on a fresh io_context, run until it is done.
response handle(application& app, const request& req) {
  asio::io_context io;
  response res{http::status::ok, req.version()};
  std::exception_ptr failure;
  asio::co_spawn(io, app.async_handle(req, res), [&](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return res;
}

awaitable<void> sleep_for(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

// --- the chain's order, table-driven ----------------------------------------------

// A layer of the table: 'c' coroutine, 'h' hooks; capitals answer 403 themselves instead
// of going on. The handler: 's' (returns void) or 'c' (a coroutine).
struct chain_row {
  const char* rule;
  std::string layers;
  char handler;
  std::string trace;  // what ran, in order
  unsigned status;
};

middleware traced_layer(char kind, int n, std::string& trace) {
  std::string name = std::to_string(n);
  bool answers = std::isupper(static_cast<unsigned char>(kind));
  switch (std::tolower(static_cast<unsigned char>(kind))) {
    case 'c':
      return [&trace, name, answers](context& ctx, next inner) -> awaitable<void> {
        trace += "c" + name + "> ";
        co_await sleep_for(1ms);
        if (answers) {
          ctx.response().problem(403, "stopped");
          co_return;
        }
        co_await inner();
        trace += "<c" + name + " ";
      };
    default:
      return layer_hooks{[&trace, name, answers](context& ctx) {
                           trace += "h" + name + "> ";
                           if (answers) ctx.response().problem(403, "stopped");
                           return !answers;
                         },
                         [&trace, name](context&, std::exception_ptr&) {
                           trace += "<h" + name + " ";
                         }};
  }
}

// The two ways in that answer in process: the same table must hold through both.
enum class way_in { async_handle, respond };

response answer_through(way_in way, application& app, const request& req) {
  return way == way_in::async_handle ? handle(app, req) : app.respond(req);
}

TEST(AsyncChain, LayersRunInOnionOrderWhateverTheirKindAndWayIn) {
  const std::vector<chain_row> rows = {
      {"hooks around a void handler", "hh", 's', "h1> h2> H <h2 <h1 ", 200},
      {"hooks around a coroutine handler", "hh", 'c', "h1> h2> C <h2 <h1 ", 200},
      {"a coroutine layer around a void handler", "c", 's', "c1> H <c1 ", 200},
      {"hooks inside a coroutine layer", "ch", 's', "c1> h2> H <h2 <c1 ", 200},
      {"mixed around a coroutine handler", "hcc", 'c', "h1> c2> c3> C <c3 <c2 <h1 ", 200},
      {"a coroutine layer that answers skips the rest", "hCh", 's', "h1> c2> <h1 ", 403},
      {"hooks that answer skip the rest, outer after still runs", "cHc", 'c', "c1> h2> <c1 ",
       403},
      {"hooks that answer, inside a coroutine", "cH", 's', "c1> h2> <c1 ", 403},
  };
  for (way_in way : {way_in::async_handle, way_in::respond}) {
    for (const chain_row& r : rows) {
      std::string trace;
      application app;
      route_group g = app.group("/t");
      for (std::size_t i = 0; i < r.layers.size(); ++i)
        g.use(traced_layer(r.layers[i], static_cast<int>(i + 1), trace));
      if (r.handler == 's') {
        g.get("/x", [&trace](context& ctx) {
          trace += "H ";
          ctx.response().body("ok");
        });
      } else {
        g.get("/x", [&trace](context& ctx) -> awaitable<void> {
          co_await sleep_for(1ms);
          trace += "C ";
          ctx.response().body("ok");
        });
      }
      response res = answer_through(way, app, make_request("GET", "/t/x"));
      const char* through = way == way_in::respond ? " (respond)" : " (async_handle)";
      EXPECT_EQ(trace, r.trace) << r.rule << through;
      EXPECT_EQ(res.result_int(), r.status) << r.rule << through;
    }
  }
}

TEST(AsyncChain, ExceptionsOfACoroutineReachHooksAndBecomeProblems) {
  std::vector<int> seen;
  application app({.logger = [](std::string_view) {}});
  app.use(access_log({.sink = [&](std::string_view line) {
    auto j = nlohmann::json::parse(line);
    seen.push_back(j["status"].get<int>());
  }}));
  app.get("/teapot", [](context&) -> awaitable<void> {
    co_await sleep_for(1ms);
    throw waypoint::http_error(418, "short and stout");
  });
  app.get("/broken", [](context&) -> awaitable<void> {
    co_await sleep_for(1ms);
    throw std::runtime_error("disk on fire");
  });
  EXPECT_EQ(handle(app, make_request("GET", "/teapot")).result_int(), 418u);
  EXPECT_EQ(handle(app, make_request("GET", "/broken")).result_int(), 500u);
  EXPECT_EQ(seen, (std::vector<int>{418, 500}));
}

// --- handlers ----------------------------------------------------------------------


TEST(AsyncHandler, TypedCoroutineRouteAnswersItsAwaitedResult) {
  application app;
  app.post<sum_request>("/sum", [](sum_request in) -> awaitable<sum_result> {
    co_await sleep_for(1ms);
    co_return sum_result{in.a + in.b};
  });
  app.get<sum_result>("/zero", [](context&) -> awaitable<sum_result> { co_return sum_result{}; });
  response created = handle(app, json_request("POST", "/sum", R"({"a":2,"b":40})"));
  EXPECT_EQ(created.result_int(), 201u);
  EXPECT_EQ(body_json(created)["sum"], 42);
  EXPECT_EQ(handle(app, json_request("POST", "/sum", R"({"a":"x","b":1})")).result_int(), 422u);
  EXPECT_EQ(body_json(handle(app, make_request("GET", "/zero")))["sum"], 0);
}

TEST(AsyncHandler, RespondWaitsForCoroutinesAndDeferredResponses) {
  application app;
  app.get("/slow", [](context& ctx) -> awaitable<void> {
    co_await sleep_for(1ms);
    ctx.response().body("slow");
  });
  std::thread worker;
  app.get("/later", [&](context& ctx) {
    worker = std::thread([done = ctx.defer()]() mutable {
      std::this_thread::sleep_for(10ms);
      done.response().status(202).body("later");
      done.send();
    });
  });
  app.get("/lost", [](context& ctx) { (void)ctx.defer(); });
  EXPECT_EQ(answer(app, "GET", "/slow").body(), "slow");
  response later = answer(app, "GET", "/later");
  worker.join();
  EXPECT_EQ(later.result_int(), 202u);
  EXPECT_EQ(later.body(), "later");
  EXPECT_EQ(answer(app, "GET", "/lost").result_int(), 500u) << "a dropped handle answers 500";
}

TEST(AsyncHandler, NotFoundMayBeACoroutine) {
  application app;
  app.not_found([](context& ctx) -> awaitable<void> {
    co_await sleep_for(1ms);
    ctx.response().status(404).body("nothing at " + std::string(ctx.path()));
  });
  app.get("/here", [](context& ctx) { ctx.response().body("here"); });
  EXPECT_EQ(answer(app, "GET", "/gone").body(), "nothing at /gone");
  EXPECT_EQ(handle(app, make_request("GET", "/gone")).body(), "nothing at /gone");
  EXPECT_EQ(answer(app, "GET", "/here").body(), "here");
}

TEST(AsyncHandler, SynchronousRoutesAnswerThroughAsyncHandleToo) {
  application app;
  app.get("/users/{id}", [](context& ctx) { ctx.response().body(std::string(ctx.path_value("id"))); });
  response res = handle(app, make_request("GET", "/users/7"));
  EXPECT_EQ(res.body(), "7");
  EXPECT_EQ(handle(app, make_request("DELETE", "/users/7")).result_int(), 405u);
}

TEST(AsyncHandler, DynamicBodyRequestsAreAnswered) {
  application app;
  app.post<sum_request>("/sum", [](sum_request in) { return sum_result{in.a + in.b}; });
  http::request<http::dynamic_body> req{http::verb::post, "/sum", 11};
  req.set(http::field::host, "example.com");
  req.set(http::field::content_type, "application/json");
  boost::beast::ostream(req.body()) << R"({"a":1,"b":2})";
  asio::io_context io;
  response res{http::status::ok, 11};
  asio::co_spawn(io, app.async_handle(req, res), asio::detached);
  io.run();
  EXPECT_EQ(res.result_int(), 201u);
  EXPECT_EQ(body_json(res)["sum"], 3);
}

// --- deferred responses ------------------------------------------------------------

TEST(Deferred, CompletedFromAnotherThreadAfterTheHandlerReturned) {
  std::vector<int> logged_status;
  application app;
  app.use(access_log({.sink = [&](std::string_view line) {
    logged_status.push_back(nlohmann::json::parse(line)["status"].get<int>());
  }}));
  app.use(request_id());
  std::thread worker;
  app.get("/later/{n}", [&](context& ctx) {
    std::string n(ctx.path_value("n"));  // copied: the callback may not touch the context
    worker = std::thread([done = ctx.defer(), n]() mutable {
      std::this_thread::sleep_for(20ms);
      done.response().status(202).body("later " + n);
      done.send();
    });
  });
  response res = handle(app, make_request("GET", "/later/5"));
  worker.join();
  EXPECT_EQ(res.result_int(), 202u);
  EXPECT_EQ(res.body(), "later 5");
  EXPECT_EQ(field(res, "X-Request-Id").size(), 16u) << "fields set before defer() are kept";
  EXPECT_EQ(logged_status, (std::vector<int>{202})) << "the log waited for the response";
}

TEST(Deferred, DroppedUnsentAnswers500) {
  application app;
  app.get("/lost", [](context& ctx) { (void)ctx.defer(); });
  EXPECT_EQ(handle(app, make_request("GET", "/lost")).result_int(), 500u);
}

TEST(Deferred, SecondDeferIsAProgrammingError) {
  application app({.logger = [](std::string_view) {}});
  std::vector<deferred_response> kept;
  app.get("/twice", [&](context& ctx) {
    kept.push_back(ctx.defer());
    kept.push_back(ctx.defer());
  });
  EXPECT_EQ(handle(app, make_request("GET", "/twice")).result_int(), 500u);
}

// --- deadlines and cancellation ----------------------------------------------------

TEST(Deadline, AnswersServiceUnavailableAndCancelsTheHandler) {
  std::atomic<bool> cancelled{false};
  application app;
  app.use(deadline(50ms));
  app.get("/slow", [&](context& ctx) -> awaitable<void> {
    try {
      co_await sleep_for(10s);
    } catch (const boost::system::system_error& e) {
      cancelled = e.code() == asio::error::operation_aborted;
      throw;
    }
    ctx.response().body("too late");
  });
  app.get("/quick", [](context& ctx) -> awaitable<void> {
    co_await sleep_for(1ms);
    ctx.response().body("in time");
  });
  auto start = std::chrono::steady_clock::now();
  response res = handle(app, make_request("GET", "/slow"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(res.result_int(), 503u);
  EXPECT_NE(body_json(res)["detail"].get<std::string>().find("50 ms"), std::string::npos);
  EXPECT_TRUE(cancelled);
  EXPECT_EQ(handle(app, make_request("GET", "/quick")).body(), "in time");
}

TEST(Deadline, DropsADeferredResponseThatCameTooLate) {
  application app;
  app.use(deadline(30ms));
  deferred_response kept;
  app.get("/never", [&](context& ctx) { kept = ctx.defer(); });
  response res = handle(app, make_request("GET", "/never"));
  EXPECT_EQ(res.result_int(), 503u);
  EXPECT_TRUE(kept.cancelled());
  kept.response().body("late");
  kept.send();  // nobody waits: nothing happens
}

TEST(Cancellation, TheCallersSlotStopsTheHandler) {
  std::atomic<bool> cancelled{false};
  application app;
  app.get("/slow", [&](context&) -> awaitable<void> {
    try {
      co_await sleep_for(10s);
    } catch (const boost::system::system_error&) {
      cancelled = true;
      throw;
    }
  });
  asio::io_context io;
  asio::cancellation_signal stop;
  request req = make_request("GET", "/slow");
  response res;
  std::exception_ptr outcome;
  asio::co_spawn(io, app.async_handle(req, res),
                 asio::bind_cancellation_slot(stop.slot(),
                                              [&](std::exception_ptr e) { outcome = e; }));
  asio::steady_timer soon(io, 20ms);
  soon.async_wait([&](boost::system::error_code) { stop.emit(asio::cancellation_type::terminal); });
  io.run();
  EXPECT_TRUE(cancelled);
  ASSERT_TRUE(outcome) << "a cancelled request is not answered";
  try {
    std::rethrow_exception(outcome);
  } catch (const boost::system::system_error& e) {
    EXPECT_EQ(e.code(), asio::error::operation_aborted);
  }
}

}  // namespace
