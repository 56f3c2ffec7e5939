// libFuzzer target for the server's parse loop (src/beast/http_session.cpp): a request
// stream is answered once as one read and once cut into fuzzer-chosen pieces.
// Input: the first byte picks the largest piece (1 to 64 bytes), the next two seed the
// cuts, the rest is the stream.
// Streamed bodies and chunked responses are in it (session_harness's /stream/ and /chunks/).
// Properties: no crash or sanitizer report; the two answers are byte-identical (Date
// aside); the session's input never holds more than its stated bound.
#include "check.hpp"
#include "session_harness.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace waypoint::testing;
  if (size < 3) return 0;
  std::size_t largest = 1 + data[0] % 64;
  std::uint32_t seed = static_cast<std::uint32_t>(data[1]) << 8 | data[2];
  std::string_view stream(reinterpret_cast<const char*>(data + 3), size - 3);

  // The dispatch streams the bodies of /stream/{n} and answers /chunks/{k} in chunks, so
  // the streaming paths are cut and compared too.
  static session_harness harness([] {
    waypoint::beast::server_options options;
    options.plan_body = streaming_plan(4096);
    return options;
  }());
  std::string whole = harness.run(stream, one_write());
  std::string split = harness.run(stream, random_pieces(stream.size(), seed, largest));
  waypoint::fuzzing::require(whole == split, "the answer does not depend on the reads",
                             "stream: " + waypoint::fuzzing::quoted(stream) +
                                 "\nlargest piece " + std::to_string(largest) + ", seed " +
                                 std::to_string(seed) + "\none read:  " +
                                 waypoint::fuzzing::quoted(whole) +
                                 "\nin pieces: " + waypoint::fuzzing::quoted(split));
  waypoint::fuzzing::require(harness.largest_input() <= harness.input_bound(),
                             "the input stays within its bound", waypoint::fuzzing::quoted(stream));
  return 0;
}
