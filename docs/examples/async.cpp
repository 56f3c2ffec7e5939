// The asynchronous side of waypoint::app, as docs/framework.md shows it: a coroutine
// handler that awaits a timer, one that awaits an upstream service, a coroutine layer, a
// deferred response finished by another thread, a deadline, and the server on an
// io_context this program owns and runs. Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/services/upstream.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <string>
#include <thread>

namespace app = waypoint::app;
namespace asio = boost::asio;
using namespace std::chrono_literals;

// Something that calls back on a thread of its own, as many client libraries do.
template <class Callback>
void lookup_in_background(std::string key, Callback done) {
  std::thread([key = std::move(key), done = std::move(done)]() mutable {
    std::this_thread::sleep_for(10ms);
    done("value of " + key);
  }).detach();
}

int main() {
  app::application a;
  a.use(app::access_log());
  a.use(app::deadline(2s));  // 503 past it; the coroutine inside is cancelled

  a.use([](app::context& ctx, app::next next) -> app::awaitable<void> {
    auto start = std::chrono::steady_clock::now();
    co_await next();  // the layers inside and the handler, suspended or not
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    ctx.response().header("Server-Timing", "app;dur=" + std::to_string(us.count() / 1000.0));
  });

  a.get("/slow/{ms}", [](app::context& ctx) -> app::awaitable<void> {
    asio::steady_timer timer(ctx.executor(), std::chrono::milliseconds(ctx.path_value<int>("ms")));
    co_await timer.async_wait(asio::use_awaitable);  // the thread serves others meanwhile
    ctx.response().body("done\n");
  });

  app::upstream inventory({.url = "http://127.0.0.1:9000", .response_timeout = 500ms});
  a.get("/stock/{sku}", [&inventory](app::context& ctx) -> app::awaitable<void> {
    app::request ask{app::http::verb::get, "/items/" + std::string(ctx.path_value("sku")), 11};
    app::response answer = co_await inventory.send(std::move(ask));  // 502/504 on failure
    ctx.response().status(static_cast<int>(answer.result_int())).body(answer.body(), "application/json");
  });

  a.get("/cached/{key}", [](app::context& ctx) {
    lookup_in_background(std::string(ctx.path_value("key")),
                         [later = ctx.defer()](std::string value) mutable {
                           later.response().body(std::move(value));
                           later.send();  // from the library's thread
                         });
  });

  asio::io_context io(1);  // one thread runs it: this one
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 8080}};
  options.handle_signals = false;  // this program's signal_set stops the server
  waypoint::beast::server server({&io}, app::with_problem_errors(options), app::dispatch_to(a));
  server.start();
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int) { server.stop(); });  // drains, then io runs out of work
  io.run();
}
