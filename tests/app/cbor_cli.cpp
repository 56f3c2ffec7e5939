// The typed routes' CBOR codec (cbor_json.ipp) on standard input, one line in, one line out,
// for the differential test against python3-cbor2 (cbor_differential.py):
//   cbor_cli write   JSON text lines -> the deterministic encoding, in hex
//   cbor_cli read    hex lines       -> "ok <the document as JSON text>" or
//                                       "refused <byte> <rule>"
// JSON text is read as nlohmann::ordered_json, so members arrive in the order the driver
// wrote them and the writer's sorting is what puts them in order.
#include "hex_text.hpp"
#include "app/typed/cbor_json.ipp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <string_view>

namespace {

using waypoint::app::testing::from_hex;
using waypoint::app::testing::to_hex;

namespace cbor = waypoint::app::detail::cbor;
namespace cbor_json = waypoint::app::detail::cbor_json;

}  // namespace

int main(int argc, char** argv) {
  std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode != "write" && mode != "read") {
    std::cerr << "usage: cbor_cli write|read < lines\n";
    return 2;
  }
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (mode == "write") {
      std::string bytes;
      cbor_json::write_deterministic(nlohmann::ordered_json::parse(line), bytes);
      std::cout << to_hex(bytes) << '\n';
      continue;
    }
    try {
      nlohmann::json document;
      cbor_json::read_strict(from_hex(line), document);
      std::cout << "ok " << document.dump() << '\n';
    } catch (const cbor::malformed& e) {
      std::cout << "refused " << e.byte() << ' ' << e.what() << '\n';
    }
  }
}
