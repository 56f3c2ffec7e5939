// What a rate limit in Redis costs a request (BENCHMARKS.md §20): one param route through
// application::respond(), with no layer, with rate_limit() on its in-process buckets, and
// with rate_limit() on a redis_rate_limit_store against a redis-server this program starts
// on a free loopback port (redis_test_support.hpp) and stops on exit. The rate is one the
// loop never reaches, so every request takes a token and is let through. Wall time, not CPU
// time: the Redis row's thread spends most of its request waiting for the answer.
#include <waypoint/app/application.hpp>
#include <waypoint/app/security/rate_limit.hpp>
#include <waypoint/app/security/redis_rate_limit_store.hpp>

#include <benchmark/benchmark.h>
#include <alloc_counter.hpp>

#include "redis_test_support.hpp"

#include <memory>

namespace {

namespace app = waypoint::app;

enum class limit { none, in_process, redis };

app::testing::redis_server& server() {
  static app::testing::redis_server instance;
  return instance;
}

void BM_RateLimitStore(benchmark::State& state, limit which) {
  app::application application;
  if (which == limit::in_process) application.use(app::rate_limit({.rate = 1e6, .burst = 1'000'000}));
  if (which == limit::redis)
    application.use(app::rate_limit({.rate = 1e6, .burst = 1'000'000,
                                     .store = std::make_shared<app::redis_rate_limit_store>(
                                         app::redis_rate_limit_store_options{.connection = {.port = server().port()}})}));
  application.get("/v1/users/{id}", [](app::context& ctx) { ctx.response().body() = "user"; });
  application.freeze();
  app::request req{app::http::verb::get, "/v1/users/42", 11};
  req.set(app::http::field::host, "api.example.com");
  app::response res{app::http::status::ok, 11};
  for (int i = 0; i < 16; ++i) application.respond(req, res);  // connections and buffers warm
  if (res.result_int() != 200) return state.SkipWithError("the request was not answered 200");
  std::uint64_t allocations = 0;
  for (auto _ : state) {
    res = app::response{app::http::status::ok, 11};
    waypoint::testing::allocation_scope scope;
    application.respond(req, res);
    allocations += scope.count();
    benchmark::DoNotOptimize(res);
  }
  if (res.find("RateLimit") == res.end() && which != limit::none)
    state.SkipWithError("the layer did not count the request");
  state.counters["allocs"] = benchmark::Counter(static_cast<double>(allocations),
                                                benchmark::Counter::kAvgIterations);
}
BENCHMARK_CAPTURE(BM_RateLimitStore, none, limit::none)->UseRealTime();
BENCHMARK_CAPTURE(BM_RateLimitStore, in_process, limit::in_process)->UseRealTime();
BENCHMARK_CAPTURE(BM_RateLimitStore, redis, limit::redis)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  waypoint::app::testing::skip_without_redis_server();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
