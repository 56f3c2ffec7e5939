// The codec of typed routes (json.hpp's parse_json_body, write_typed, parse_ordered,
// dump_ordered), written once and compiled twice: by json_codec.cpp for callers built
// without JSON_DIAGNOSTICS and by json_codec_diagnostics.cpp for those built with it.
// Included by those two files only.
#include "contract.hpp"
#include "waypoint/app/json.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app::detail {
namespace {

// Reads a document as events, keeping nothing: where nlohmann/json's parser gives up, and
// whether the document nests deeper than max_json_depth (then it stops there, before any
// recursion deeper than that: nlohmann/json reads CBOR recursively, one call per level).
template <class Json>
struct document_scan final : nlohmann::json_sax<Json> {
  std::size_t byte = 0;  // 1-based for JSON, 0-based for CBOR, as nlohmann/json counts
  std::string message;
  std::size_t depth = 0;
  bool too_deep = false;

  static document_scan of(std::string_view bytes, nlohmann::json::input_format_t format) {
    document_scan scan;
    (void)Json::sax_parse(bytes, &scan, format);
    return scan;
  }
  bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(typename Json::number_integer_t) override { return true; }
    bool number_unsigned(typename Json::number_unsigned_t) override { return true; }
    bool number_float(typename Json::number_float_t, const typename Json::string_t&) override {
      return true;
    }
  bool string(typename Json::string_t&) override { return true; }
  bool binary(typename Json::binary_t&) override { return true; }
  bool start_object(std::size_t) override { return enter(); }
  bool key(typename Json::string_t&) override { return true; }
  bool end_object() override { return leave(); }
  bool start_array(std::size_t) override { return enter(); }
  bool end_array() override { return leave(); }
  bool parse_error(std::size_t position, const std::string&,
                   const typename Json::exception& e) override {
    byte = position;
    message = e.what();
    return false;
  }

 private:
  bool enter() {
    too_deep = ++depth > max_json_depth;
    return !too_deep;
  }
  bool leave() {
    --depth;
    return true;
  }
};

// The byte (1-based) at which nlohmann/json's parser gives up on `text`, for the errors
// that carry no position (out_of_range.406, a number overflowing a double). The cold path
// of a refused body only: it parses `text` again.
template <class Json>
std::size_t failing_byte(std::string_view text) {
  return document_scan<Json>::of(text, nlohmann::json::input_format_t::json).byte;
}

// A CBOR body as a document: scanned first, so that nesting beyond max_json_depth is a 400
// before the recursive reader sees it. Every failure is a 400, as for JSON.
template <class Json>
void parse_cbor(std::string_view bytes, Json& out) {
  auto scan = document_scan<Json>::of(bytes, nlohmann::json::input_format_t::cbor);
  if (scan.too_deep)
    throw_malformed_cbor(scan.byte, "nested deeper than " + std::to_string(max_json_depth) +
                                        " levels");
  if (!scan.message.empty()) throw_malformed_cbor(scan.byte, scan.message);
  try {
    out = Json::from_cbor(bytes);
  } catch (const nlohmann::json::exception& e) {
    throw_malformed_cbor(0, e.what());
  }
}

// The request body as a JSON document, after the 413, 415 and 400 checks.
//
// Every nlohmann/json exception out of parse() is a 400, whatever its class: parsing looks
// at no type, so whatever stops it means the bytes cannot be read as a JSON value, which is
// the client's malformed request (RFC 9110 15.5.1), never the server's fault and never a
// question of shape (that is convert_body's 422). In nlohmann/json 3.11 parse() throws
// parse_error.101 (syntax, invalid UTF-8, a lone surrogate, a truncated document) and
// out_of_range.406 (a number beyond any double: 1e400, a 10,000-digit integer); the other
// classes (type_error, invalid_iterator, other_error) are caught alike should a later
// version raise them here.
// "/quantity is 0; the minimum is 1": the violation as a problem's detail or a log line.
std::string described(const schema_violation& broken) {
  return (broken.pointer.empty() ? std::string("the value") : broken.pointer) + ' ' +
         broken.message;
}

// The answer against the route's contract: its status, then its body. False when it broke
// it and application_options::response_contract enforces: a 500 replaced it.
bool keeps_contract(context& ctx, const nlohmann::ordered_json& value) {
  if (!status_keeps_contract(ctx)) return false;
  if (application_access::options(ctx.app()).response_contract == contract_check::off)
    return true;
  const route_contract* contract = application_access::contract_of(ctx);
  const auto* schema = contract ? contract->response<nlohmann::ordered_json>() : nullptr;
  if (!schema || schema->valid(value)) return true;
  std::optional<schema_violation> broken = schema->check(value);  // as for a request
  if (!broken) return true;
  return !report_broken_answer(ctx,
                               described(*broken) + " (keyword \"" + broken->keyword + "\")");
}

}  // namespace

void parse_json_body(context& ctx, nlohmann::json& out) {
  switch (check_json_request(ctx)) {
    case body_format::cbor: return parse_cbor(ctx.body(), out);
    case body_format::cose: return parse_cbor(open_cose_body(ctx), out);
    case body_format::json: break;
  }
  check_json_depth(ctx.body());
  try {
    out = nlohmann::json::parse(ctx.body());
  } catch (const nlohmann::json::parse_error& e) {
    throw_malformed_json(e.byte, e.what());
  } catch (const nlohmann::json::exception& e) {
    throw_malformed_json(failing_byte<nlohmann::json>(ctx.body()), e.what());
  }
}

void check_request_contract(context& ctx, const nlohmann::json& document) {
  contract_check mode = application_access::options(ctx.app()).request_contract;
  const route_contract* contract =
      mode == contract_check::off ? nullptr : application_access::contract_of(ctx);
  const schema_validator<nlohmann::json>* schema = contract ? contract->request<nlohmann::json>()
                                                            : nullptr;
  if (!schema || schema->valid(document)) return;
  // valid() is also false when it could not allocate (uniqueItems' sort index): check()
  // judges again, and its nullopt means the body is valid.
  std::optional<schema_violation> broken = schema->check(document);
  if (!broken) return;
  if (mode == contract_check::log) {
    log_request(ctx, "let through,",
                "the request broke the route's contract: " + described(*broken) +
                    " (keyword \"" + broken->keyword + "\")");
    return;
  }
  throw validation_error(described(*broken), broken->pointer, broken->keyword);
}

void check_parameter(context& ctx, std::size_t index, const nlohmann::json& value) {
  contract_check mode = application_access::options(ctx.app()).request_contract;
  const route_contract* contract =
      mode == contract_check::off ? nullptr : application_access::contract_of(ctx);
  const schema_validator<nlohmann::json>* schema =
      contract ? contract->parameter<nlohmann::json>(index) : nullptr;
  if (!schema || schema->valid(value)) return;
  std::optional<schema_violation> broken = schema->check(value);  // as for a body
  if (!broken) return;
  std::string what = contract->parameter_label(index) +
                     (broken->pointer.empty() ? "" : ", value " + broken->pointer.substr(1) + ",") +
                     ' ' + broken->message;
  if (mode == contract_check::log) {
    log_request(ctx, "let through,",
                "the request broke the route's contract: " + what + " (keyword \"" +
                    broken->keyword + "\")");
    return;
  }
  throw validation_error(std::move(what), std::nullopt, broken->keyword);
}

void write_typed(context& ctx, const nlohmann::ordered_json& value) {
  if (!keeps_contract(ctx, value)) return;
  if (answers_not_modified(ctx)) return;
  body_format format = answer_format(ctx);
  if (format == body_format::json) return write_typed_body(ctx, value.dump(), format);
  std::vector<std::uint8_t> bytes = nlohmann::ordered_json::to_cbor(value);
  write_typed_body(ctx, std::string(bytes.begin(), bytes.end()), format);
}

void parse_ordered(std::string_view text, nlohmann::ordered_json& out) {
  out = nlohmann::ordered_json::parse(text);
}

std::string dump_ordered(const nlohmann::ordered_json& value) { return value.dump(); }

}  // namespace waypoint::app::detail
