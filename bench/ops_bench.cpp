// What each operational layer costs a request (application::respond, one param route):
// none, the access log to /dev/null by one write(2) a line (the gateway's way), the same
// line through the application's logger (fprintf to stderr, which takes stdio's lock),
// the line only (a sink that drops it: the formatting alone), the metrics layer, trace
// context, and all of them. Every row reports allocs/op (waypoint_bench_alloc_counter).
#include <waypoint/app/metrics.hpp>
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/trace_context.hpp>

#include <benchmark/benchmark.h>
#include <alloc_counter.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

namespace app = waypoint::app;

enum class layers { none, log_fd, log_stdio, log_format_only, metrics, tracing, all };

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
  }
  application.get("/v1/users/{id}", [](app::context& ctx) { ctx.response().body() = "user"; });
  application.freeze();
  app::request req = param_request();
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

}  // namespace

BENCHMARK_MAIN();
