// Fuzzes basic_router against the reference servemux: the input's bytes choose a table
// and requests (tests/reference/scenario.hpp, the generator of the differential test), and
// any disagreement (tests/reference/differential.hpp) aborts with a shrunk reproduction.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "differential.hpp"
#include "scenario.hpp"

namespace {

// Enough requests to reach past the table, few enough that an input stays readable.
constexpr unsigned max_patterns = 10;
constexpr unsigned max_requests = 32;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace waypoint::testing;
  byte_source source(data, size);
  scenario_generator<byte_source> generator(source);
  scenario s;
  s.patterns = generator.table(max_patterns);
  do {
    s.requests.push_back(generator.request_for(s.patterns));
  } while (!source.exhausted() && s.requests.size() < max_requests);
  if (auto d = compare(s.patterns, s.requests)) {
    std::fprintf(stderr, "\n*** basic_router and the reference disagree:\n%s\n",
                 shrink(*d).to_string().c_str());
    std::abort();
  }
  return 0;
}
