// CBOR (RFC 8949) at the level of data items: a writer that produces the core deterministic
// encoding of §4.2.1 (every head in its shortest form, definite lengths only; sorting map
// keys is the caller's, since only the caller holds the whole map), and a strict pull reader.
// The typed routes' JSON mapping (cbor_json.ipp) and COSE (cose.cpp) are both built on it, so
// there is one place that decides what a well-formed item is.
//
// Hand-written rather than nlohmann/json's CBOR: its writer is not deterministic (map order is
// the document's, integers that fit a smaller head are widened for floats), its reader keeps
// the last of duplicate keys and reads recursively, and neither reads byte strings keyed by
// integers as COSE headers are. The code is small, and tests/app/cbor_test.cpp checks it
// against RFC 8949 Appendix A and python3-cbor2.
#pragma once

#include "waypoint/app/typed/json_depth.hpp"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace waypoint::app::detail::cbor {

// RFC 8949 §3.1.
enum class major : std::uint8_t {
  unsigned_integer = 0,
  negative_integer = 1,
  byte_string = 2,
  text_string = 3,
  array = 4,
  map = 5,
  tag = 6,
  simple = 7,  // false, true, null, undefined, floats
};

// The deepest nesting of arrays and maps the reader follows: the one bound on a client's
// value (json_depth.hpp), as for JSON.
inline constexpr std::size_t max_depth = max_json_depth;

// Appends items to a string in the deterministic encoding. Floats are written in the shortest
// of half, single and double precision that holds the value exactly (§4.2.1, preferred
// serialization); NaN is the canonical half-precision quiet NaN 0xf97e00.
class writer {
 public:
  explicit writer(std::string& out) noexcept : out_(out) {}

  void head(major type, std::uint64_t argument);
  void integer(std::int64_t value);
  void unsigned_integer(std::uint64_t value) { head(major::unsigned_integer, value); }
  void bytes(std::string_view value);
  void text(std::string_view value);  // the caller's text is UTF-8; not checked here
  void array(std::uint64_t count) { head(major::array, count); }
  void map(std::uint64_t pairs) { head(major::map, pairs); }
  void tag(std::uint64_t number) { head(major::tag, number); }
  void boolean(bool value);
  void null();
  void floating(double value);
  // Bytes that are already one or more encoded items (a nested message, a sorted map's pairs).
  void raw(std::string_view encoded) { out_.append(encoded); }

 private:
  std::string& out_;
};

// What the reader refuses: the byte offset (0-based) of the item at fault, and the rule it
// broke in words ("integer not in its shortest form").
class malformed : public std::runtime_error {
 public:
  malformed(std::size_t byte, const std::string& rule)
      : std::runtime_error(rule), byte_(byte) {}
  std::size_t byte() const noexcept { return byte_; }

 private:
  std::size_t byte_;
};

// The kind of one item as the reader sees it; simple values are split out.
enum class kind : std::uint8_t {
  unsigned_integer,  // argument: the value
  negative_integer,  // the value is -1 - argument
  byte_string,       // content(): the bytes
  text_string,       // content(): the text, checked to be UTF-8
  array,             // argument: the element count
  map,               // argument: the pair count
  tag,               // argument: the tag number; the tagged item follows
  boolean,           // argument: 0 or 1
  null,
  floating,  // number: the value (never NaN or infinite: those are refused)
};

struct item {
  kind type = kind::null;
  std::uint64_t argument = 0;
  double number = 0;
  std::string_view content;  // strings only: a view into the reader's bytes
  std::size_t offset = 0;    // where the item's head starts
};

// Reads items one at a time, strictly. Refused, as `malformed`:
//   - indefinite lengths and the reserved additional information 28-30;
//   - an integer, length, count or tag whose head is longer than it needs (§4.2.1);
//   - a string or a container claiming more than the bytes left (checked before anything is
//     allocated: a head of 2^63 costs nothing);
//   - text that is not UTF-8;
//   - undefined, other simple values, NaN and infinities (no JSON or COSE value is one);
//   - nesting deeper than max_depth (enter() counts it; the caller says when it leaves).
// Floats of any width are taken (an encoder that writes every float as a double is common and
// means the same number); map key order and duplicates are the caller's to check.
class reader {
 public:
  explicit reader(std::string_view bytes) noexcept : bytes_(bytes) {}

  item next();
  // The caller is entering (true) or leaving an array or map; refuses past max_depth.
  void enter(const item& container);
  void leave() noexcept { --depth_; }
  // The whole input was one item: refuses trailing bytes.
  void expect_end() const;

  std::size_t position() const noexcept { return at_; }
  bool at_end() const noexcept { return at_ == bytes_.size(); }
  // The encoded bytes of [from, position()): an item just read, for re-encoding checks.
  std::string_view encoded_since(std::size_t from) const noexcept {
    return bytes_.substr(from, at_ - from);
  }
  // Skips one whole item (with everything nested in it), applying every rule above.
  void skip();

 private:
  std::uint64_t argument(std::size_t head_at, unsigned additional);
  std::string_view take(std::size_t head_at, std::uint64_t length);
  // The rest of next(): a simple value or float (major type 7), or another type's content.
  void read_simple(item& out, unsigned additional);
  void read_content(item& out, major type);

  std::string_view bytes_;
  std::size_t at_ = 0;
  std::size_t depth_ = 0;
};

}  // namespace waypoint::app::detail::cbor
