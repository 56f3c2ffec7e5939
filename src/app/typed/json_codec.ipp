// The codec of typed routes (json.hpp's parse_json_body, write_typed, parse_ordered,
// dump_ordered), written once and compiled twice: by json_codec.cpp for callers built
// without JSON_DIAGNOSTICS and by json_codec_diagnostics.cpp for those built with it.
// Included by those two files only.
#include "app/typed/cbor_json.ipp"
#include "app/detail/client_json.hpp"
#include "app/typed/contract.hpp"
#include "waypoint/app/typed/json.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace waypoint::app::detail {
namespace {

// A CBOR body as a document, read strictly (cbor_json.ipp): every refusal is a 400 naming
// the byte offset (0-based) of the item at fault and the rule it broke.
template <class Json>
void parse_cbor(std::string_view bytes, Json& out) {
  try {
    cbor_json::read_strict(bytes, out);
  } catch (const cbor::malformed& e) {
    throw_malformed_cbor(e.byte(), e.what());
  }
}

// "/quantity is 0; the minimum is 1": the violation as a problem's detail or a log line.
std::string described(const schema_violation& broken) {
  return (broken.pointer.empty() ? std::string("the value") : broken.pointer) + ' ' +
         broken.message;
}

// The answer against the route's contract: its status, then its body. False when it broke
// it and typed_route_options::response_contract enforces: a 500 replaced it.
bool keeps_contract(context& ctx, const nlohmann::ordered_json& value) {
  if (!status_keeps_contract(ctx)) return false;
  if (typed_options(ctx.app()).response_contract == contract_check::off)
    return true;
  const route_contract* contract = detail::contract_of(ctx);
  const auto* schema = contract ? contract->response<nlohmann::ordered_json>() : nullptr;
  if (!schema || schema->valid(value)) return true;
  std::optional<schema_violation> broken = schema->check(value);  // as for a request
  if (!broken) return true;
  return !report_broken_answer(ctx,
                               described(*broken) + " (keyword \"" + broken->keyword + "\")");
}

}  // namespace

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
void parse_json_body(context& ctx, nlohmann::json& out) {
  switch (check_json_request(ctx)) {
    case body_format::cbor: return parse_cbor(ctx.body(), out);
    case body_format::cose: return parse_cbor(open_cose_body(ctx), out);
    case body_format::json: break;
  }
  try {
    parse_client_json(ctx.body(), out);
  } catch (const client_json_error& e) {
    throw_malformed_json(e.byte(), e.what());
  }
}

void check_request_contract(context& ctx, const nlohmann::json& document) {
  contract_check mode = typed_options(ctx.app()).request_contract;
  const route_contract* contract =
      mode == contract_check::off ? nullptr : detail::contract_of(ctx);
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
  contract_check mode = typed_options(ctx.app()).request_contract;
  const route_contract* contract =
      mode == contract_check::off ? nullptr : detail::contract_of(ctx);
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
  std::string bytes;
  cbor_json::write_deterministic(value, bytes);
  write_typed_body(ctx, std::move(bytes), format);
}

void parse_ordered(std::string_view text, nlohmann::ordered_json& out) {
  out = nlohmann::ordered_json::parse(text);
}

std::string dump_ordered(const nlohmann::ordered_json& value) { return value.dump(); }

}  // namespace waypoint::app::detail
