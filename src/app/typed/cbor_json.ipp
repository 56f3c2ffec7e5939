// The typed routes' JSON documents as CBOR (RFC 8949), on cbor.hpp's items: answers written
// in the core deterministic encoding (§4.2.1), so that one document is always the same bytes
// (an ETag or a signature over an answer means something), and request bodies read strictly,
// so that a body has one meaning (no duplicate keys where two readers would keep different
// members). Templated on the nlohmann/json type: json_codec.ipp is compiled once per
// nlohmann ABI, and tests/app/cbor_test.cpp and cbor_cli.cpp include it directly.
//
// Neither function recurses: both keep an explicit stack of open containers, so a document's
// depth costs heap (at most max_depth frames when reading), never the thread's stack.
#pragma once

#include "app/typed/cbor.hpp"
#include "waypoint/json_string.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app::detail::cbor_json {

namespace cbor = waypoint::app::detail::cbor;

// --- Writing ------------------------------------------------------------------------------

// One member of a map being written: offsets into the output of its encoded key (from begin
// to key_end) and of the value after it (to end).
struct encoded_pair {
  std::size_t begin, key_end, end;
};

// A container being written: where it is in the document, and for a map, its members so far
// (sorted once the map is complete, when all their bytes are known).
template <class Json>
struct write_frame {
  typename Json::const_iterator next, end;
  bool is_map;
  std::size_t pairs_begin;          // maps: where the first member's key starts
  std::vector<encoded_pair> pairs;  // maps: each member as written, in document order
};

// §4.2.1: a map's keys sorted by the bytewise order of their encodings. For text keys that is
// shorter first, then bytewise: the head holds the length. Two keys of a map are never equal,
// so their encodings are never one a prefix of the other and the order is total.
inline void sort_map(std::string& out, std::vector<encoded_pair>& pairs, std::size_t pairs_begin,
                     std::string& scratch) {
  auto key = [&](const encoded_pair& p) {
    return std::string_view(out).substr(p.begin, p.key_end - p.begin);
  };
  auto before = [&](const encoded_pair& a, const encoded_pair& b) { return key(a) < key(b); };
  if (std::is_sorted(pairs.begin(), pairs.end(), before)) return;
  std::sort(pairs.begin(), pairs.end(), before);
  scratch.clear();
  for (const encoded_pair& p : pairs) scratch.append(out, p.begin, p.end - p.begin);
  out.replace(pairs_begin, scratch.size(), scratch);
}

// A value that is not a container, or the head of one (then its frame is pushed).
template <class Json>
void write_item(const Json& value, cbor::writer& w, std::string& out,
                std::vector<write_frame<Json>>& open) {
  switch (value.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      w.null();
      return;
    case Json::value_t::boolean:
      w.boolean(value.template get<bool>());
      return;
    case Json::value_t::number_integer:
      w.integer(value.template get<typename Json::number_integer_t>());
      return;
    case Json::value_t::number_unsigned:
      w.unsigned_integer(value.template get<typename Json::number_unsigned_t>());
      return;
    case Json::value_t::number_float:
      w.floating(value.template get<typename Json::number_float_t>());
      return;
    case Json::value_t::string:
      w.text(value.template get_ref<const typename Json::string_t&>());
      return;
    case Json::value_t::binary: {
      const auto& bytes = value.get_binary();
      w.bytes(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      return;
    }
    case Json::value_t::array:
      w.array(value.size());
      open.push_back({value.cbegin(), value.cend(), false, 0, {}});
      return;
    case Json::value_t::object:
      w.map(value.size());
      open.push_back({value.cbegin(), value.cend(), true, out.size(), {}});
      return;
  }
}

// `value` appended to `out` in the core deterministic encoding (RFC 8949 §4.2.1): map keys
// sorted, every head and length in its shortest form, floats in the shortest of half, single
// and double that holds them exactly (never turned into integers: 2.0 stays a float, as the
// document says), binary as a byte string. The deterministic form of a NaN is 0xf97e00.
template <class Json>
void write_deterministic(const Json& value, std::string& out) {
  cbor::writer w(out);
  std::vector<write_frame<Json>> open;
  std::string scratch;  // one buffer for every map that needs sorting
  write_item(value, w, out, open);
  while (!open.empty()) {
    write_frame<Json>& frame = open.back();
    if (frame.is_map && !frame.pairs.empty()) frame.pairs.back().end = out.size();
    if (frame.next == frame.end) {
      if (frame.is_map) sort_map(out, frame.pairs, frame.pairs_begin, scratch);
      open.pop_back();
      continue;
    }
    auto member = frame.next++;
    if (frame.is_map) {
      std::size_t begin = out.size();
      w.text(member.key());
      frame.pairs.push_back({begin, out.size(), 0});
    }
    write_item(*member, w, out, open);  // may push: `frame` is not used after this
  }
}

// --- Reading ------------------------------------------------------------------------------

// A container being filled: the document value, and the items still to come (pairs for a
// map).
template <class Json>
struct read_frame {
  Json* container;
  std::uint64_t left;
  bool is_map;
};

// A key as a rule quotes it: JSON-escaped, and cut (at a character boundary) when long, so a
// detail stays a line however long the client's key.
inline std::string quoted_key(std::string_view key) {
  constexpr std::size_t longest_quoted = 64;
  std::string out;
  if (key.size() <= longest_quoted) {
    waypoint::append_json_string(out, key);
    return out;
  }
  std::size_t cut = longest_quoted;
  while (cut > 0 && (static_cast<unsigned char>(key[cut]) & 0xc0) == 0x80) --cut;
  waypoint::append_json_string(out, key.substr(0, cut));
  out.insert(out.size() - 1, "...");
  return out;
}

// The scalar `it` as a document value, or the refusal of an item no JSON value is.
template <class Json>
Json scalar_of(const cbor::item& it) {
  switch (it.type) {
    case cbor::kind::unsigned_integer:
      // A non-negative integer is number_unsigned, as nlohmann/json's parser makes one from
      // JSON text: a body means the same thing to the conversions in either format.
      return Json(static_cast<typename Json::number_unsigned_t>(it.argument));
    case cbor::kind::negative_integer:
      if (it.argument > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw cbor::malformed(it.offset, "integer below -2^63 (no JSON integer here holds it)");
      return Json(-1 - static_cast<std::int64_t>(it.argument));
    case cbor::kind::text_string:
      return Json(typename Json::string_t(it.content));
    case cbor::kind::boolean:
      return Json(it.argument != 0);
    case cbor::kind::null:
      return Json(nullptr);
    case cbor::kind::floating:
      return Json(it.number);
    case cbor::kind::byte_string:
      throw cbor::malformed(it.offset, "byte string (no JSON value is one)");
    case cbor::kind::tag:
      throw cbor::malformed(it.offset,
                            "tag " + std::to_string(it.argument) + " (no JSON value is tagged)");
    case cbor::kind::array:
    case cbor::kind::map:
      break;  // read_strict's
  }
  return Json();
}

// Reads the next map key of `frame` and makes its member: the slot its value goes into.
template <class Json>
Json* member_slot(cbor::reader& r, read_frame<Json>& frame) {
  cbor::item key = r.next();
  if (key.type != cbor::kind::text_string)
    throw cbor::malformed(key.offset, "map key not a text string (JSON keys are text)");
  auto [member, inserted] = frame.container->emplace(typename Json::string_t(key.content), nullptr);
  if (!inserted) throw cbor::malformed(key.offset, "duplicate map key " + quoted_key(key.content));
  return &member.value();
}

// `bytes`, one CBOR item, as a document; cbor::malformed (the byte offset, 0-based, of the
// item at fault, and the rule) for anything else. Beyond cbor::reader's rules (definite
// lengths, shortest heads, UTF-8, no undefined or simple values, no NaN or infinity, at most
// max_depth levels, nothing after the item), refused because no JSON document holds them or
// because they would give one body two meanings: duplicate map keys (one reader keeps the
// first, another the last), keys that are not text, tags, byte strings, integers below -2^63.
//
// Lenient where the value is unambiguous: map keys in any order, and floats of any width
// (1.5 as a double is 1.5). §4.2.1 constrains how a deterministic encoder writes; a decoder
// that refused a client's unsorted map or a float widened to double would refuse the output
// of most CBOR libraries' defaults while gaining nothing: the document is the same.
//
// Built through basic_json's public operations (push_back, emplace, assignment), which keep
// JSON_DIAGNOSTICS' parent pointers right.
template <class Json>
void read_strict(std::string_view bytes, Json& out) {
  cbor::reader r(bytes);
  std::vector<read_frame<Json>> open;
  Json* slot = &out;
  while (true) {
    cbor::item it = r.next();
    if (it.type == cbor::kind::array || it.type == cbor::kind::map) {
      r.enter(it);
      bool is_map = it.type == cbor::kind::map;
      *slot = is_map ? Json::object() : Json::array();
      open.push_back({slot, it.argument, is_map});
    } else {
      *slot = scalar_of<Json>(it);
    }
    // The next slot to fill: the next element or member of the innermost container that
    // still expects one, closing those that are complete.
    while (true) {
      if (open.empty()) {
        r.expect_end();
        return;
      }
      read_frame<Json>& frame = open.back();
      if (frame.left == 0) {
        r.leave();
        open.pop_back();
        continue;
      }
      --frame.left;
      if (frame.is_map) {
        slot = member_slot(r, frame);
      } else {
        frame.container->push_back(Json());
        slot = &frame.container->back();
      }
      break;
    }
  }
}

}  // namespace waypoint::app::detail::cbor_json
