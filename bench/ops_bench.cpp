// What each operational layer costs a request (application::respond, one param route):
// none, the access log to /dev/null by one write(2) a line (the gateway's way), the same
// line through the application's logger (fprintf to stderr, which takes stdio's lock),
// the line only (a sink that drops it: the formatting alone), the metrics layer, trace
// context, and all of them; then the request guards: rate_limit() by client address (one key,
// a rate it never reaches, so every request takes a token and is let through), the same by
// API key, csrf_protection() on a request it passes by Sec-Fetch-Site, and with
// double_submit on one that carries its token cookie. Every row reports allocs/op
// (waypoint_bench_alloc_counter).
#include <waypoint/app/csrf.hpp>
#include <waypoint/app/metrics.hpp>
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/rate_limit.hpp>
#include <waypoint/app/trace_context.hpp>

#include <benchmark/benchmark.h>
#include <alloc_counter.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

namespace app = waypoint::app;

enum class layers {
  none, log_fd, log_stdio, log_format_only, metrics, tracing, all,
  rate_limit_address, rate_limit_api_key, csrf, csrf_double_submit
};

app::request param_request() {
  app::request req{app::http::verb::get, "/v1/users/42", 11};
  req.set(app::http::field::host, "api.example.com");
  req.set(app::http::field::user_agent, "wrk/4.2.0");
  req.set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  return req;
}

void BM_Operations(benchmark::State& state, layers which) {
  int null_fd = ::open("/dev/null", O_WRONLY);
  // stdio's stderr pointed at /dev/null, so the logger row measures the lock and the call.
  std::FILE* saved = stderr;
  std::FILE* null_file = std::fopen("/dev/null", "w");
  app::application application;
  app::metrics counted;
  switch (which) {
    case layers::none: break;
    case layers::log_fd: application.use(app::access_log({.fd = null_fd})); break;
    case layers::log_stdio: stderr = null_file; application.use(app::access_log()); break;
    case layers::log_format_only:
      application.use(app::access_log({.sink = [](std::string_view line) {
        benchmark::DoNotOptimize(line.data());
      }}));
      break;
    case layers::metrics: application.use(counted.layer()); break;
    case layers::tracing: application.use(app::tracing()); break;
    case layers::all:
      application.use(app::access_log({.fd = null_fd}));
      application.use(counted.layer());
      application.use(app::tracing());
      break;
    case layers::rate_limit_address: application.use(app::rate_limit({.rate = 1e9, .burst = 1000})); break;
    case layers::rate_limit_api_key:
      application.use(app::rate_limit({.rate = 1e9, .burst = 1000, .key = app::rate_limit_key::api_key}));
      break;
    case layers::csrf: application.use(app::csrf_protection()); break;
    case layers::csrf_double_submit: application.use(app::csrf_protection({.double_submit = true})); break;
  }
  application.get("/v1/users/{id}", [](app::context& ctx) { ctx.response().body() = "user"; });
  application.freeze();
  app::request req = param_request();
  if (which == layers::rate_limit_api_key) req.set("X-API-Key", "k-7f3a9c2e51b04d68");
  if (which == layers::csrf || which == layers::csrf_double_submit) req.set("Sec-Fetch-Site", "same-origin");
  if (which == layers::csrf_double_submit)
    req.set(app::http::field::cookie, "__Host-csrf-token=Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9");
  app::response res{app::http::status::ok, 11};
  for (int i = 0; i < 16; ++i) application.respond(req, res);  // per-thread buffers grow
  std::uint64_t allocations = 0;
  for (auto _ : state) {
    res = app::response{app::http::status::ok, 11};
    waypoint::testing::allocation_scope scope;
    application.respond(req, res);
    allocations += scope.count();
    benchmark::DoNotOptimize(res);
  }
  state.counters["allocs"] = benchmark::Counter(static_cast<double>(allocations),
                                                benchmark::Counter::kAvgIterations);
  stderr = saved;
  std::fclose(null_file);
  ::close(null_fd);
}
BENCHMARK_CAPTURE(BM_Operations, none, layers::none);
BENCHMARK_CAPTURE(BM_Operations, access_log_fd, layers::log_fd);
BENCHMARK_CAPTURE(BM_Operations, access_log_stdio_logger, layers::log_stdio);
BENCHMARK_CAPTURE(BM_Operations, access_log_format_only, layers::log_format_only);
BENCHMARK_CAPTURE(BM_Operations, metrics, layers::metrics);
BENCHMARK_CAPTURE(BM_Operations, tracing, layers::tracing);
BENCHMARK_CAPTURE(BM_Operations, all, layers::all);
BENCHMARK_CAPTURE(BM_Operations, rate_limit_address, layers::rate_limit_address);
BENCHMARK_CAPTURE(BM_Operations, rate_limit_api_key, layers::rate_limit_api_key);
BENCHMARK_CAPTURE(BM_Operations, csrf, layers::csrf);
BENCHMARK_CAPTURE(BM_Operations, csrf_double_submit, layers::csrf_double_submit);

}  // namespace

BENCHMARK_MAIN();
