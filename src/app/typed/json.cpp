// The non-template half of typed JSON routes: the request checks (413, 415), and turning
// parse and conversion failures into 400 and 422 problems. Nothing here names a
// nlohmann/json type (see json.hpp), so it serves callers built with or without
// JSON_DIAGNOSTICS.
#include "waypoint/app/typed/json.hpp"

#include "app/detail/client_json.hpp"
#include "app/typed/contract.hpp"
#include "app/detail/media_type.hpp"
#include "waypoint/app/security/cose.hpp"
#include "waypoint/detail/http_grammar.hpp"
#include "waypoint/json_string.hpp"

#include <algorithm>
#include <optional>
#include <system_error>

namespace waypoint::app::detail {
namespace {

using waypoint::detail::for_each_list_element;
using waypoint::detail::iequals;
using waypoint::detail::parse_weighted_element;
using waypoint::detail::weighted_element;

// application/<format> or application/<anything>+<format> (RFC 6839), parameters aside,
// case ignored as media types are case-insensitive.
bool is_media_type_of(const media_type& type, std::string_view format) noexcept {
  return iequals(type.type, "application") &&
         (iequals(type.subtype, format) || iequals(type.suffix(), format));
}

// is_media_type_of for a media range of Accept: false for one that does not parse.
bool is_media_type_of(std::string_view text, std::string_view format) noexcept {
  std::optional<media_type> type = parse_media_type(text);
  return type && is_media_type_of(*type, format);
}

// The weight (RFC 9110 12.4.2) `accept` gives application/<subtype>: that of the most
// specific range matching it (application/<subtype>, application/*, */*), 0 when none does
// or when that range's weight cannot be read; then `*unreadable` is set, when given.
double accept_weight(std::string_view accept, std::string_view subtype,
                     bool* unreadable = nullptr) noexcept {
  int best_specificity = -1;
  double weight = 0;
  bool weight_unreadable = false;
  for_each_list_element(accept, [&](std::string_view range) {
    weighted_element element = parse_weighted_element(range);
    std::string_view type = element.value;
    int specificity = -1;
    if (type == "*/*") specificity = 0;
    else if (iequals(type, "application/*")) specificity = 1;
    else if (is_media_type_of(type, subtype) && type.find('+') == std::string_view::npos)
      specificity = 2;
    if (specificity <= best_specificity) return;
    best_specificity = specificity;
    weight_unreadable = element.q < 0;
    weight = weight_unreadable ? 0 : element.q / 1000.0;
  });
  if (unreadable && weight_unreadable) *unreadable = true;
  return weight;
}

// nlohmann/json's what() without its "[json.exception.type_error.302] " prefix.
std::string_view without_id(std::string_view what) noexcept {
  if (what.starts_with("[json.exception.")) {
    std::size_t close = what.find("] ");
    if (close != std::string_view::npos) what.remove_prefix(close + 2);
  }
  return what;
}

// JSON_DIAGNOSTICS builds prefix messages with "(/pointer) "; splits that off.
std::optional<std::string> take_diagnostics_pointer(std::string_view& message) {
  if (!message.starts_with("(/")) return std::nullopt;
  std::size_t close = message.find(") ");
  if (close == std::string_view::npos) return std::nullopt;
  std::string pointer(message.substr(1, close - 1));
  message.remove_prefix(close + 2);
  return pointer;
}

std::string with_article(std::string_view type_name) {
  if (type_name == "null") return "null";
  if (type_name == "object" || type_name == "array") return "an " + std::string(type_name);
  return "a " + std::string(type_name);
}

}  // namespace

body_format check_json_request(context& ctx) {
  std::size_t limit = typed_options(ctx.app()).json_body_limit;
  if (ctx.body().size() > limit)
    throw http_error(413, "the body is " + std::to_string(ctx.body().size()) +
                              " bytes; this endpoint accepts at most " + std::to_string(limit));
  std::string_view content_type = ctx.header(http::field::content_type);
  if (content_type.empty()) throw http_error(415, "the body needs Content-Type: application/json");
  std::string why;
  std::optional<media_type> type = parse_media_type(content_type, &why);
  if (!type)
    throw http_error(400, "the Content-Type \"" + std::string(content_type.substr(0, 128)) + "\" " + why);
  if (is_media_type_of(*type, "json")) return body_format::json;
  if (is_media_type_of(*type, "cbor")) return body_format::cbor;
  if (is_media_type_of(*type, "cose")) return body_format::cose;
  throw http_error(415, "Content-Type \"" + std::string(content_type) +
                            "\" is not JSON; send application/json (or application/cbor, "
                            "application/cose)");
}

namespace {

// The application's keys, or the 503 of a server that cannot do what the request needs:
// open a COSE body (any key), or protect an answer (a current key).
const cose::keyring& cose_keys_or_503(const context& ctx, bool to_protect) {
  const cose::keyring* keys = typed_options(ctx.app()).cose_keys.get();
  if (!keys || keys->empty())
    throw http_error(503, "this server holds no COSE keys: it cannot open or protect "
                          "application/cose");
  if (to_protect && !keys->current_key())
    throw http_error(503, "this server holds no current COSE key to protect answers with");
  return *keys;
}

}  // namespace

std::string open_cose_body(context& ctx) {
  const cose::keyring& keys = cose_keys_or_503(ctx, false);
  try {
    return keys.open(ctx.body());
  } catch (const cose::error& e) {
    // RFC 9110 15.5.2: a 401 names the scheme that would authenticate the request. The
    // message's key id and tag are its credentials, so a failed check is a failed
    // authentication, not a malformed request (400) nor a refused identity (403).
    if (e.status() == 401) ctx.response().header(http::field::www_authenticate, "COSE");
    throw http_error(e.status(), e.what());
  }
}

bool report_broken_answer(context& ctx, std::string_view broken) {
  contract_check mode = typed_options(ctx.app()).response_contract;
  log_request(ctx, mode == contract_check::enforce ? "500 for" : "sent anyway,",
              "the response broke the route's contract: " + std::string(broken));
  if (mode != contract_check::enforce) return false;
  ctx.response().problem(500, "the response broke the route's contract");
  return true;
}

bool answers_not_modified(context& ctx) {
  const route_contract* contract = detail::contract_of(ctx);
  if (!contract || !contract->conditional()) return false;
  if (ctx.request().method() != http::verb::get && ctx.request().method() != http::verb::head)
    return false;
  std::string_view etag = ctx.response().header("ETag");
  std::string_view none_match = ctx.header(http::field::if_none_match);
  if (etag.empty() || none_match.empty() || !waypoint::detail::etag_listed(none_match, etag)) return false;
  // RFC 9110 15.4.5: the 304 carries the ETag and Vary a 200 would have, and no content.
  ctx.response().status(304);
  ctx.response().header(http::field::vary, "Accept");
  return true;
}

bool status_keeps_contract(context& ctx) {
  if (typed_options(ctx.app()).response_contract == contract_check::off) return true;
  const route_contract* contract = detail::contract_of(ctx);
  int status = ctx.response().status();
  if (!contract || status == contract->success_status() ||
      (status == 304 && contract->conditional()))
    return true;
  return !report_broken_answer(ctx, "status " + std::to_string(status) + " is not the route's " +
                                        std::to_string(contract->success_status()));
}

void check_acceptable(const context& ctx) {
  std::string_view accept = ctx.header(http::field::accept);
  // An Accept whose weights cannot be read says nothing certain: answered as without one.
  bool unreadable = false;
  if (!(accept.empty() || accept_weight(accept, "json", &unreadable) > 0 ||
        accept_weight(accept, "cbor", &unreadable) > 0 ||
        accept_weight(accept, "cose", &unreadable) > 0 || unreadable))
    throw http_error(406, "this route answers application/json, application/cbor or "
                          "application/cose; Accept \"" + std::string(accept) + "\" takes none");
  // Accept is walked again only where the 503 is possible: an application with a current
  // key answers COSE, and write_typed() reads the format once more when it encodes.
  const cose::keyring* keys = typed_options(ctx.app()).cose_keys.get();
  if ((!keys || !keys->current_key()) && answer_format(ctx) == body_format::cose)
    (void)cose_keys_or_503(ctx, true);
}

body_format answer_format(const context& ctx) noexcept {
  if (is_media_type_of(ctx.header(http::field::content_type), "cose")) return body_format::cose;
  std::string_view accept = ctx.header(http::field::accept);
  if (accept.empty()) return body_format::json;
  double json = accept_weight(accept, "json");
  double cbor = accept_weight(accept, "cbor");
  double cose = accept_weight(accept, "cose");
  if (cose > json && cose > cbor) return body_format::cose;
  return cbor > json ? body_format::cbor : body_format::json;
}

void write_typed_body(context& ctx, std::string body, body_format format) {
  response_builder& res = ctx.response();
  if (format == body_format::cose) {
    const cose::keyring& keys = cose_keys_or_503(ctx, true);
    // RFC 9052 §9: cose-type names the message, for a reader that meets it untagged.
    static constexpr std::string_view content_types[] = {
        "application/cose; cose-type=\"cose-encrypt0\"", "application/cose; cose-type=\"cose-mac0\"",
        "application/cose; cose-type=\"cose-sign1\""};
    std::size_t type = static_cast<std::size_t>(keys.current_key()->type()) -
                       static_cast<std::size_t>(cose::message_type::encrypt0);
    res.body(keys.protect(body), content_types[type]);
  } else if (format == body_format::cbor) {
    res.body(std::move(body), "application/cbor");
  } else {
    res.body(std::move(body), "application/json");
  }
  // The encoding follows Accept: a cache must not answer a JSON client with CBOR.
  res.header(http::field::vary, "Accept");
}

namespace {

// The byte (1-based) that opens an array or object past `max_depth` levels; 0 when none does.
// An escaped quote does not end a string; unbalanced closers are left to the parser.
std::size_t first_byte_too_deep(std::string_view text, std::size_t max_depth) noexcept {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i + 1;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return 0;
}

}  // namespace

void check_json_bounds(std::string_view text, const json_bounds& bounds) {
  if (text.size() > bounds.max_bytes)
    throw client_json_error(json_fault::too_large, 0,
                            "the value is " + std::to_string(text.size()) +
                                " bytes; at most " + std::to_string(bounds.max_bytes) + " are read");
  if (std::size_t byte = first_byte_too_deep(text, bounds.max_depth))
    throw client_json_error(json_fault::too_deep, byte,
                            "nested deeper than " + std::to_string(bounds.max_depth) + " levels");
}

void throw_malformed_client_json(std::size_t byte, std::string_view what) {
  throw client_json_error(json_fault::malformed, byte, std::string(without_id(what)));
}

void throw_malformed_json(std::size_t byte, std::string_view message) {
  throw http_error(400, "malformed JSON at byte " + std::to_string(byte) + ": " +
                            std::string(without_id(message)));
}

void throw_malformed_cbor(std::size_t byte, std::string_view rule) {
  throw http_error(400, "malformed CBOR at byte " + std::to_string(byte) + ": " +
                            std::string(rule));
}

void throw_conversion_error(int id, std::string_view message, std::optional<std::string> pointer) {
  std::string_view text = without_id(message);
  std::optional<std::string> diagnosed = take_diagnostics_pointer(text);
  // out_of_range.403 is "key 'name' not found": the pointer names the object, the key
  // is the member.
  constexpr int missing_key = 403;
  if (id == missing_key && text.starts_with("key '") && text.ends_with("' not found")) {
    std::string_view key = text.substr(5, text.size() - 5 - 11);
    if (!pointer && diagnosed) pointer = *diagnosed + pointer_token(key);
    throw validation_error("missing member \"" + std::string(key) + "\"", std::move(pointer),
                           "required");
  }
  if (!pointer) pointer = std::move(diagnosed);
  // out_of_range.401 is an index past an array's end: the array is shorter than the reader
  // needs. Every other failure of a conversion (type_error.302 "type must be number" above
  // all, or whatever a hand-written from_json raises) says the value is not of the type.
  constexpr int index_past_end = 401;
  throw validation_error(std::string(text), std::move(pointer),
                         id == index_past_end ? "minItems" : "type");
}

void throw_wrong_type(std::string_view type_name, std::string_view expected) {
  throw validation_error("must be " + std::string(expected) + ", not " + with_article(type_name),
                         std::string(), "type");
}

void throw_out_of_range(std::string_view value, std::string_view range, bool below) {
  throw validation_error(std::string(value) + " is out of range (" + std::string(range) + ")",
                         std::string(), below ? "minimum" : "maximum");
}

void throw_missing_member(std::string_view name) {
  throw validation_error("missing member \"" + std::string(name) + "\"", pointer_token(name),
                         "required");
}

void throw_wrong_length(std::size_t expected, std::size_t given) {
  std::string detail = given < expected ? "missing element: " : "unexpected element: ";
  detail += "the array must have exactly " + std::to_string(expected) + " elements, not " +
            std::to_string(given);
  throw validation_error(std::move(detail), std::string(),
                         given < expected ? "minItems" : "maxItems");
}

void throw_duplicate_element(std::size_t index, std::size_t first) {
  std::string detail = "element " + std::to_string(index) + " repeats ";
  detail += first < index ? "element " + std::to_string(first) : std::string("an earlier one");
  throw validation_error(detail + "; the elements must be unique", std::string(), "uniqueItems");
}

void throw_not_enumerated(std::string_view value, std::span<const std::string> allowed) {
  std::string detail = "must be one of ";
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    if (i != 0) detail += i + 1 == allowed.size() ? " or " : ", ";
    detail += allowed[i];
  }
  detail += ", not ";
  detail.append(value);
  throw validation_error(std::move(detail), std::string(), "enum");
}

void throw_unknown_members(std::span<const std::string_view> unknown,
                           std::span<const std::string_view> known) {
  std::string detail = unknown.size() == 1 ? "unknown member " : "unknown members ";
  for (std::size_t i = 0; i < unknown.size(); ++i) {
    if (i != 0) detail += ", ";
    waypoint::append_json_string(detail, unknown[i]);
  }
  detail += "; the object has ";
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (i != 0) detail += ", ";
    waypoint::append_json_string(detail, known[i]);
  }
  throw validation_error(std::move(detail), pointer_token(unknown.front()), "additionalProperties");
}

namespace {
thread_local unknown_members current_unknown_members = unknown_members::ignore;
}  // namespace

unknown_members decoding_unknown_members() noexcept { return current_unknown_members; }

decoding_scope::decoding_scope(unknown_members policy) noexcept
    : previous_(current_unknown_members) {
  current_unknown_members = policy;
}

decoding_scope::~decoding_scope() { current_unknown_members = previous_; }

std::string pointer_token(std::string_view name) {
  std::string token = "/";
  for (char c : name) {
    if (c == '~')
      token += "~0";
    else if (c == '/')
      token += "~1";
    else
      token += c;
  }
  return token;
}

}  // namespace waypoint::app::detail

namespace waypoint::app {

const typed_route_options& typed_options(const application& app) noexcept {
  static const typed_route_options defaults{};
  const typed_route_options* options = app.find_extension<typed_route_options>();
  return options ? *options : defaults;
}

}  // namespace waypoint::app
