// libFuzzer target for the bodies typed routes read before any handler: CBOR through the
// strict reader (src/app/typed/cbor_json.ipp) and COSE messages through keyring::open (cose.hpp).
// The first byte picks the path, so one corpus holds both; the seeds are valid messages made
// with the keys below (fuzz/corpus/fuzz_cbor_cose/), which mutation turns into near misses.
// Properties:
//   - CBOR: a refusal is cbor::malformed at an offset inside the input; an accepted document
//     written deterministically reads back to itself, and that encoding is a fixed point.
//   - COSE: open() either returns a payload or throws cose::error with 400 or 401; nothing
//     else escapes.
#include "check.hpp"

#include "app/typed/cbor_json.ipp"

#include <waypoint/app/security/cose.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

namespace cbor = waypoint::app::detail::cbor;
namespace cbor_json = waypoint::app::detail::cbor_json;
namespace cose = waypoint::app::cose;
using waypoint::fuzzing::quoted;
using waypoint::fuzzing::require;

const cose::keyring& keys() {
  static const cose::keyring ring = [] {
    cose::keyring r;
    r.current(cose::key::symmetric("fuzz", cose::algorithm::chacha20_poly1305,
                                   std::string(32, '\x01')))
        .grace(cose::key::symmetric("fuzz-gcm", cose::algorithm::a256gcm, std::string(32, '\x02')))
        .grace(cose::key::symmetric("fuzz-mac", cose::algorithm::hmac_256, std::string(32, '\x03')));
    return r;
  }();
  return ring;
}

void check_cbor(std::string_view bytes) {
  nlohmann::json document;
  try {
    cbor_json::read_strict(bytes, document);
  } catch (const cbor::malformed& e) {
    require(e.byte() <= bytes.size(), "a refusal names a byte inside the input",
            quoted(bytes) + " refused at " + std::to_string(e.byte()));
    return;
  }
  std::string once;
  cbor_json::write_deterministic(document, once);
  nlohmann::json again;
  cbor_json::read_strict(once, again);
  require(again == document, "the deterministic encoding reads back to the document",
          quoted(bytes));
  std::string twice;
  cbor_json::write_deterministic(again, twice);
  require(twice == once, "the deterministic encoding is a fixed point", quoted(bytes));
}

void check_cose(std::string_view bytes) {
  try {
    (void)keys().open(bytes);
  } catch (const cose::error& e) {
    require(e.status() == 400 || e.status() == 401, "a refusal is 400 or 401",
            quoted(bytes) + " gave " + std::to_string(e.status()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1)
    check_cose(bytes);
  else
    check_cbor(bytes);
  return 0;
}
