// The compression layer's cost per response: a JSON or HTML body of 1, 10 or 100 KB
// answered through application::respond() with compression() at each coding and a few
// levels, beside the same route without the layer (identity). Counters: the compressed
// size as a fraction of the body (`ratio`) and the bytes of body per second (BENCHMARKS.md
// §18).
#include <waypoint/app/all.hpp>
#include <waypoint/app/content/compression.hpp>

#include <benchmark/benchmark.h>

#include <string>

namespace {

namespace wa = waypoint::app;
using wa::content_coding;

std::string json_body(std::size_t bytes) {
  std::string out = "[";
  // Appended piece by piece: GCC 12 at -O3 misreads the same as one chain of operator+
  // (-Wrestrict, a false positive).
  for (int i = 0; out.size() < bytes; ++i) {
    if (i) out += ',';
    out += R"({"id":)";
    out += std::to_string(i);
    out += R"(,"name":"item )";
    out += std::to_string(i * 7919 % 1000);
    out += R"(","price":)";
    out += std::to_string(i * 31 % 997);
    out += R"(,"tags":["hardware","tools"],"in_stock":true})";
  }
  out.resize(bytes - 1);
  return out + "]";
}

std::string html_body(std::size_t bytes) {
  std::string out = "<!doctype html><html><head><title>Catalog</title></head><body><table>";
  for (int i = 0; out.size() < bytes; ++i) {
    out += "<tr class=\"row\"><td><a href=\"/items/";
    out += std::to_string(i);
    out += "\">Item ";
    out += std::to_string(i * 7919 % 1000);
    out += "</a></td><td>";
    out += std::to_string(i * 31 % 997);
    out += ".00</td></tr>\n";
  }
  out.resize(bytes);
  return out;
}

// args: size in bytes, 0 JSON / 1 HTML, coding (content_coding, 0 = no layer), level.
void BM_Respond(benchmark::State& state) {
  auto size = static_cast<std::size_t>(state.range(0));
  std::string body = state.range(1) ? html_body(size) : json_body(size);
  const char* type = state.range(1) ? "text/html" : "application/json";
  auto coding = static_cast<content_coding>(state.range(2));
  int level = static_cast<int>(state.range(3));
  wa::application app;
  if (coding != content_coding::identity)
    app.use(wa::compression({.codings = {coding},
                             .gzip_level = coding == content_coding::gzip ? level : 6,
                             .br_level = coding == content_coding::br ? level : 4,
                             .zstd_level = coding == content_coding::zstd ? level : 3}));
  app.get("/body", [&](wa::context& ctx) { ctx.response().body(body, type); });
  wa::request req;
  req.method(wa::http::verb::get);
  req.target("/body");
  req.version(11);
  req.set(wa::http::field::host, "example.com");
  req.set(wa::http::field::accept_encoding, "gzip, br, zstd");
  std::size_t sent = 0;
  for (auto _ : state) {
    wa::response res = app.respond(req);
    sent = res.body().size();
    benchmark::DoNotOptimize(res);
  }
  state.counters["ratio"] = static_cast<double>(sent) / static_cast<double>(size);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
  state.SetLabel(std::string(state.range(1) ? "html " : "json ") +
                 std::string(wa::coding_name(coding)) + " " + std::to_string(level));
}

void arguments(benchmark::internal::Benchmark* b) {
  for (long size : {1000, 10000, 100000})
    for (long kind : {0, 1}) {
      b->Args({size, kind, 0, 0});
      for (long level : {1, 6, 9}) b->Args({size, kind, static_cast<long>(content_coding::gzip), level});
      for (long level : {1, 4, 6}) b->Args({size, kind, static_cast<long>(content_coding::br), level});
      for (long level : {1, 3, 6}) b->Args({size, kind, static_cast<long>(content_coding::zstd), level});
    }
}

BENCHMARK(BM_Respond)->Apply(arguments);

}  // namespace

BENCHMARK_MAIN();
