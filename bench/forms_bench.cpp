// Multipart parsing throughput (BENCHMARKS.md §17): waypoint::app::multipart_parser fed a
// body in 64 KiB reads, as multipart_reader feeds it from the connection, with the events
// consumed as read_form would (data summed, fields' headers read). Two shapes: one part of
// 10 MB (the scan for the delimiter dominates) and 1000 small fields (the per-part header
// parsing dominates). Bytes per second are the body's.
#include <waypoint/app/content/form_parser.hpp>

#include <benchmark/benchmark.h>

#include <random>
#include <string>

namespace {

using waypoint::app::multipart_event;

constexpr std::size_t read_bytes = 64 * 1024;
// Chrome's boundary shape.
constexpr std::string_view boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW";

std::string one_file(std::size_t size) {
  std::mt19937 random(1);
  std::string content(size, '\0');
  for (char& c : content) c = static_cast<char>(random());
  return "--" + std::string(boundary) +
         "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
         "Content-Type: application/octet-stream\r\n\r\n" +
         content + "\r\n--" + std::string(boundary) + "--\r\n";
}

std::string small_fields(int count) {
  std::string body;
  for (int i = 0; i < count; ++i)
    body += "--" + std::string(boundary) + "\r\nContent-Disposition: form-data; name=\"field" +
            std::to_string(i) + "\"\r\n\r\nvalue number " + std::to_string(i) + "\r\n";
  return body + "--" + std::string(boundary) + "--\r\n";
}

void parse(benchmark::State& state, const std::string& body) {
  waypoint::app::form_limits limits;
  limits.max_parts = 100'000;
  for (auto _ : state) {
    waypoint::app::multipart_parser parser(boundary, limits);
    std::size_t content = 0, parts = 0;
    for (std::size_t at = 0; at < body.size(); at += read_bytes) {
      std::string_view piece = std::string_view(body).substr(at, read_bytes);
      for (multipart_event e = parser.next(piece); e != multipart_event::need_more;
           e = parser.next(piece)) {
        if (e == multipart_event::data) content += parser.data().size();
        if (e == multipart_event::part_begin) parts += parser.part().name.size();
        if (e == multipart_event::error) state.SkipWithError("parse error");
      }
    }
    if (parser.finish() != multipart_event::done) state.SkipWithError("no final boundary");
    benchmark::DoNotOptimize(content);
    benchmark::DoNotOptimize(parts);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}

void BM_MultipartOneFile10MB(benchmark::State& state) {
  static const std::string body = one_file(10'000'000);
  parse(state, body);
}
BENCHMARK(BM_MultipartOneFile10MB)->Unit(benchmark::kMillisecond);

void BM_Multipart1000Fields(benchmark::State& state) {
  static const std::string body = small_fields(1000);
  parse(state, body);
}
BENCHMARK(BM_Multipart1000Fields)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
