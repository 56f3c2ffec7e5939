// The main of every routing benchmark binary: each binary defines register_benchmarks(),
// which registers its suites at run time because they are built from the route tables.
#include <benchmark/benchmark.h>

namespace waypoint::bench {
void register_benchmarks();  // declared with the suites in support/suites.hpp
}  // namespace waypoint::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  waypoint::bench::register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
