// The one way JSON text a client sends becomes a nlohmann/json document (STYLE.md rule 17).
// nlohmann/json parses and destroys iteratively, but copying, comparing, dumping and
// converting a document recurse once per level: a 100,000-level value that parses fine
// overflows the stack the first time anything copies it. So its size and depth are checked
// in the bytes here, before nlohmann/json builds anything, and every reader of a client's
// JSON parses through parse_client_json: typed routes' bodies (json_codec.ipp), Phoenix
// frames (phoenix.cpp), JWT headers and claims (jwt.cpp, with a tighter depth), MCP messages
// (mcp.cpp). CBOR, the other format a client sends, is read by the one strict reader
// (cbor.hpp), which refuses the same max_json_depth. A document from here may be copied and
// dumped freely.
#pragma once

#include "waypoint/app/typed/json.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace waypoint::app::detail {

// How much a client's JSON value may hold.
struct json_bounds {
  std::size_t max_depth = max_json_depth;  // levels of arrays and objects
  // Bytes of text. The default leaves it to the transport, which has read the text within a
  // limit already (a route's body limit, a WebSocket message limit, a header's).
  std::size_t max_bytes = std::numeric_limits<std::size_t>::max();
};

// Why a client's JSON was refused.
enum class json_fault : std::uint8_t { too_large, too_deep, malformed };

// The refusal: what() is the rule in words ("nested deeper than 256 levels", or nlohmann/
// json's message without its "[json.exception...]" id, which quotes the client's bytes).
class client_json_error : public std::runtime_error {
 public:
  client_json_error(json_fault fault, std::size_t byte, const std::string& rule)
      : std::runtime_error(rule), fault_(fault), byte_(byte) {}
  json_fault fault() const noexcept { return fault_; }
  // Where the text broke the rule, counting from 1 as nlohmann/json does; 0 for too_large.
  std::size_t byte() const noexcept { return byte_; }

 private:
  json_fault fault_;
  std::size_t byte_;
};

// The size and depth checks (json.cpp): a scan of the bytes that builds nothing. Brackets
// in strings do not nest; malformed text is left to the parser, which says where.
void check_json_bounds(std::string_view text, const json_bounds& bounds);
// A nlohmann/json exception as a client_json_error (malformed) at `byte`.
[[noreturn]] void throw_malformed_client_json(std::size_t byte, std::string_view what);

// Where nlohmann/json's parser gives up on JSON text, for the errors that carry no position
// (out_of_range.406, a number overflowing a double): read as events, keeping nothing.
template <class Json>
struct failure_scan final : nlohmann::json_sax<Json> {
  std::size_t byte = 0;  // 1-based, as nlohmann/json counts

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(typename Json::number_integer_t) override { return true; }
  bool number_unsigned(typename Json::number_unsigned_t) override { return true; }
  bool number_float(typename Json::number_float_t, const typename Json::string_t&) override {
    return true;
  }
  bool string(typename Json::string_t&) override { return true; }
  bool binary(typename Json::binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(typename Json::string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const typename Json::exception&) override {
    byte = position;
    return false;
  }
};

// The byte (1-based) at which nlohmann/json's parser gives up on `text`. The cold path of a
// refused value only: it parses `text` again.
template <class Json>
std::size_t failing_byte(std::string_view text) {
  failure_scan<Json> scan;
  (void)Json::sax_parse(text, &scan);
  return scan.byte;
}

// `text` as a document, within `bounds`; else client_json_error. `callback`, when given,
// sees every parse event as nlohmann/json's parser callback does (JWT refuses repeated
// members with it); what it throws passes through.
template <class Json>
void parse_client_json(std::string_view text, Json& out, const json_bounds& bounds = {},
                       typename Json::parser_callback_t callback = nullptr) {
  check_json_bounds(text, bounds);
  try {
    out = Json::parse(text.begin(), text.end(), std::move(callback));
  } catch (const typename Json::parse_error& e) {
    throw_malformed_client_json(e.byte, e.what());
  } catch (const typename Json::exception& e) {
    throw_malformed_client_json(failing_byte<Json>(text), e.what());
  }
}

}  // namespace waypoint::app::detail
