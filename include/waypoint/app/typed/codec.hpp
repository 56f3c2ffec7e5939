// The values typed routes read and write: the settings of typed routes, the decoding rules
// (json_field, read_json, the conversions of standard types), the typed route itself, and the
// WAYPOINT_JSON_OBJECT macros. The rules are documented in json.hpp, which every user
// includes (it adds the schemas and typed inputs); schema.hpp and inputs.hpp build on this
// header, which includes neither, so the module's headers form no cycle.
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/app/http_error.hpp"
#include "waypoint/app/typed/json_depth.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace waypoint::app {

// max_json_depth: waypoint/app/typed/json_depth.hpp, the one bound for JSON and CBOR alike.

namespace cose {
class keyring;  // waypoint/app/security/cose.hpp
}  // namespace cose

// What typed routes do with object members a WAYPOINT_JSON_OBJECT type does not declare.
enum class unknown_members : std::uint8_t {
  ignore,  // nlohmann/json's and most frameworks' default: a newer client's extra field passes
  refuse,  // a 422 naming them: a typo ("quantiy") is caught instead of defaulted
};

// What typed routes do with a request body their schema refuses, or an answer that breaks
// their contract (a body their response schema refuses, a status they do not declare).
enum class contract_check : std::uint8_t {
  off,      // unchecked
  log,      // let through; a line names the route and what broke (to try a new constraint)
  enforce,  // refused (a request: 422; an answer: 500), and for an answer the line
};

// The application's settings for its typed routes: an extension of the application
// (extensions.hpp), given to its constructor,
//   waypoint::app::application app({}, typed_route_options{.json_body_limit = 4096});
// or set before the first request: app.extension<typed_route_options>().json_body_limit = 4096.
struct typed_route_options {
  // Typed routes answer 413 to a body longer than this. 1 MiB, like the server's default
  // body limit, so the app's answer is what a client of the server sees.
  std::size_t json_body_limit = 1024 * 1024;
  // For every WAYPOINT_JSON_OBJECT type of every typed route (WAYPOINT_JSON_STRICT_OBJECT
  // types refuse whatever this says).
  unknown_members unknown_json_members = unknown_members::ignore;
  // For the query keys of typed routes whose input type declares its inputs (inputs.hpp):
  // refuse answers 400 naming a key the type does not bind (a typo, "?limt=5").
  unknown_members unknown_query_parameters = unknown_members::ignore;
  // Typed routes' request bodies checked against the document (docs/framework.md,
  // "Contracts"). `off` is for measuring what the check costs.
  contract_check request_contract = contract_check::enforce;
  // Typed routes' answers checked against the document.
  // enforce: the document is what clients generate code from, so an answer it does not
  // allow is the server's bug, answered and logged as one (FastAPI's response_model does
  // the same), rather than a surprise in a client. The check costs a schema walk per answer
  // (BENCHMARKS.md); `log` keeps the line and sends the answer, `off` skips the walk.
  contract_check response_contract = contract_check::enforce;
  // The keys typed routes open application/cose request bodies with and protect answers with
  // (waypoint/app/security/cose.hpp, docs/framework.md "COSE"). Null: a COSE body, or an
  // Accept that ranks application/cose first, is answered 503.
  std::shared_ptr<const cose::keyring> cose_keys{};
};

// The settings `app` was given, or the defaults.
const typed_route_options& typed_options(const application& app) noexcept;

template <class T>
void json_field(const nlohmann::json& object, std::string_view name, T& out);
template <class T>
T read_json(context& ctx);

namespace detail {

// Non-template parts, compiled once in src/app/typed/json.cpp. They take no nlohmann/json type:
// a translation unit built with JSON_DIAGNOSTICS=1 uses another nlohmann ABI (another
// inline namespace), and must link against the same library as one built without.

// A typed route was registered: its schemas are checked as typed routes read them, and the
// application builds their contracts when it freezes (src/app/typed/contract.cpp).
void register_typed_route(application& app, route_entry& route);

// The formats of typed bodies, in a request and in an answer. cose is CBOR inside a COSE
// message.
enum class body_format : std::uint8_t { json, cbor, cose };
// The 413, 415 (and 400) checks of a typed request body; which format it is.
body_format check_json_request(context& ctx);
// The payload of an application/cose request body, opened with the application's keys: 503
// without keys, 400 when it is not a COSE message, 401 (with WWW-Authenticate) when its key
// id names no key or its protection does not verify.
std::string open_cose_body(context& ctx);
// The answer's format: cose for a request whose body is COSE (an answer to a protected
// request is never sent in the clear), else the one the request's Accept ranks first (RFC
// 9110 12.5.1: the most specific range gives each its weight), JSON on a tie and when there
// is no Accept.
body_format answer_format(const context& ctx) noexcept;
// The 406 for a request whose Accept takes none of JSON, CBOR and COSE, and the 503 for one
// whose answer would be COSE from an application without keys (typed routes that answer
// with content; before the handler runs, so that nothing is done for an answer that cannot
// be sent).
void check_acceptable(const context& ctx);
// A typed answer's status against its route's contract (the body's is write_typed's): false
// when it broke it and typed_route_options::response_contract enforces, and a 500 replaced
// it; the line is logged unless the check is off.
bool status_keeps_contract(context& ctx);
// For a route that binds If-None-Match (inputs.hpp), a GET or HEAD whose If-None-Match names
// the ETag the handler set: answers 304 without content, and true.
bool answers_not_modified(context& ctx);
// Logs `broken` (what the answer broke) for the route; with enforce, answers 500 and true.
bool report_broken_answer(context& ctx, std::string_view broken);
// The body of a typed answer with Content-Type and Vary: Accept: JSON text, or deterministic
// CBOR, which cose protects with the application's current key.
void write_typed_body(context& ctx, std::string body, body_format format);
// The 400 for a body that is not JSON; `byte` as nlohmann/json counts it (1-based).
[[noreturn]] void throw_malformed_json(std::size_t byte, std::string_view message);
// The 400 for a body that is not strict CBOR; `byte` the offset of the item at fault
// (0-based), `rule` what it broke.
[[noreturn]] void throw_malformed_cbor(std::size_t byte, std::string_view rule);
// A conversion error from nlohmann/json (`id` and what()) as a 422. `pointer` names the
// value at fault when the caller knows it; otherwise a JSON_DIAGNOSTICS prefix in the
// message is used when present.
[[noreturn]] void throw_conversion_error(int id, std::string_view message,
                                         std::optional<std::string> pointer = std::nullopt);
// 422s naming the value itself (pointer ""); json_field() prefixes the member. Each names
// the keyword of the type's schema (schema.hpp) that the value broke, as the contract's
// 422s do: "type", "minimum" or "maximum" (an integer beyond its type's range; `below`
// says which side), "required".
[[noreturn]] void throw_wrong_type(std::string_view type_name, std::string_view expected);
[[noreturn]] void throw_out_of_range(std::string_view value, std::string_view range, bool below);
[[noreturn]] void throw_missing_member(std::string_view name);
// The 422s of the stricter containers: a std::array of the wrong length (pointer: the first
// missing or extra index; keyword "minItems" or "maxItems"), a set's repeated element
// ("uniqueItems"), an enum value the type does not list (each value as JSON text; "enum"),
// and members the type does not declare (pointer: the first; "additionalProperties").
[[noreturn]] void throw_wrong_length(std::size_t expected, std::size_t given);
[[noreturn]] void throw_duplicate_element(std::size_t index, std::size_t first);
[[noreturn]] void throw_not_enumerated(std::string_view value,
                                       std::span<const std::string> allowed);
[[noreturn]] void throw_unknown_members(std::span<const std::string_view> unknown,
                                        std::span<const std::string_view> known);
// The unknown_members policy of the request being decoded on this thread (read_json sets
// it for the duration of a conversion; ignore outside one). A thread-local because from_json
// has no context parameter; decoding runs synchronously inside read_json.
unknown_members decoding_unknown_members() noexcept;
class decoding_scope {
 public:
  explicit decoding_scope(unknown_members policy) noexcept;
  ~decoding_scope();
  decoding_scope(const decoding_scope&) = delete;
  decoding_scope& operator=(const decoding_scope&) = delete;

 private:
  unknown_members previous_;
};
// "/" + name with '~' and '/' escaped (RFC 6901).
std::string pointer_token(std::string_view name);

// The codec of typed routes: the body parsed (JSON, or CBOR; after the 413, 415 and 400
// checks) and the answer encoded in the format the client prefers (answer_format). Compiled
// once per nlohmann ABI (src/app/typed/json_codec.cpp, json_codec_diagnostics.cpp): each
// declaration names the caller's nlohmann type, whose inline namespace says whether it
// was built with JSON_DIAGNOSTICS, so the linker picks the matching definition. The parser,
// the CBOR reader and the serializers are then instantiated in the library, not in every
// translation unit that registers a typed route (bench/compile/run measures that).
void parse_json_body(context& ctx, nlohmann::json& out);
// The route's contract on the way in (docs/framework.md, "Contracts"): `document`, which has
// converted, against the request schema the document shows; a 422 naming the value's
// pointer and the keyword it broke. Nothing for a route without a contract.
void check_request_contract(context& ctx, const nlohmann::json& document);
// The answer, checked against the route's contract as typed_route_options::response_contract
// says, then encoded.
void write_typed(context& ctx, const nlohmann::ordered_json& value);
// Schema text (schema.hpp) read and written: the same parser and serializer, compiled once.
// An out parameter: a return type is not part of a function's mangled name, the parameter's
// inline namespace is.
void parse_ordered(std::string_view text, nlohmann::ordered_json& out);
std::string dump_ordered(const nlohmann::ordered_json& value);

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_set : std::false_type {};
template <class T, class C, class A>
struct is_set<std::set<T, C, A>> : std::true_type {};
template <class T, class H, class E, class A>
struct is_set<std::unordered_set<T, H, E, A>> : std::true_type {};
// Maps keyed by strings: JSON objects. Maps with other keys are left to nlohmann/json.
template <class T>
struct is_string_map : std::false_type {};
template <class V, class C, class A>
struct is_string_map<std::map<std::string, V, C, A>> : std::true_type {};
template <class V, class H, class E, class A>
struct is_string_map<std::unordered_map<std::string, V, H, E, A>> : std::true_type {};

template <class Json>
inline constexpr bool is_json_document_v = nlohmann::detail::is_basic_json<Json>::value;

// The values an enum serialized with NLOHMANN_JSON_SERIALIZE_ENUM lists. That macro's
// from_json is a template on the JSON type that compares the value against each listed one
// in turn; instantiated with this probe, whose == records the value it is compared with,
// it lists them all. Hand-written from_json functions for an enum take no probe.
template <class Json>
class enum_probe {
 public:
  enum_probe(std::vector<Json>* seen) noexcept : seen_(seen) {}
  template <class V>
    requires(!std::same_as<std::remove_cvref_t<V>, enum_probe>)
  enum_probe(V&& value) : value_(std::forward<V>(value)) {}

  friend bool operator==(const enum_probe& listed, const enum_probe& probe) {
    if (probe.seen_) probe.seen_->push_back(listed.value_);
    return false;
  }

 private:
  Json value_;
  std::vector<Json>* seen_ = nullptr;
};

template <class E>
concept serialized_enum = std::is_enum_v<E> && requires(const enum_probe<nlohmann::json>& probe,
                                                        E& out) { from_json(probe, out); };

template <serialized_enum E>
const std::vector<nlohmann::json>& enum_values() {
  static const std::vector<nlohmann::json> values = [] {
    std::vector<nlohmann::json> seen;
    E ignored{};
    from_json(enum_probe<nlohmann::json>(&seen), ignored);
    return seen;
  }();
  return values;
}

template <serialized_enum E>
void read_enum(const nlohmann::json& value, E& out) {
  const auto& values = enum_values<E>();
  if (std::find(values.begin(), values.end(), value) == values.end()) {
    std::vector<std::string> allowed;
    allowed.reserve(values.size());
    for (const auto& v : values) allowed.push_back(v.dump());
    throw_not_enumerated(value.dump(), allowed);
  }
  value.get_to(out);
}

// Runs `read` and prefixes any validation_error's pointer with `token`.
template <class Read>
void at_pointer(std::string_view token, Read&& read) {
  try {
    read();
  } catch (validation_error& e) {
    e.prefix_pointer(token);
    throw;
  }
}

// Appended rather than "/" + std::to_string(i): GCC 12 at -O3 reports that operator+ as an
// overlapping memcpy (-Wrestrict, GCC bug 105329), a false positive that -Werror would make
// fatal in optimised builds of every user of this header.
inline std::string index_token(std::size_t i) {
  std::string token = "/";
  token += std::to_string(i);
  return token;
}

template <class T>
[[noreturn]] void throw_integer_out_of_range(const nlohmann::json& value) {
  bool below = value.is_number_float() ? value.get<double>() < 0
                                       : !value.is_number_unsigned() && value.get<std::int64_t>() < 0;
  throw_out_of_range(value.dump(),
                     std::to_string(std::numeric_limits<T>::min()) + " to " +
                         std::to_string(std::numeric_limits<T>::max()),
                     below);
}

// An integer member takes what JSON Schema's "integer" (the document's type) takes: a number
// without a fractional part, so 2.0 and 1e3 as well as 2 (RFC 8259 has one number type; the
// contract's validator and every 2020-12 validator accept 2.0, and refusing it would answer a
// valid document with a 422).
template <class T>
void read_integer(const nlohmann::json& value, T& out) {
  if (value.is_number_float()) {
    double d = value.get<double>();
    if (!(d == std::trunc(d))) throw_wrong_type(value.type_name(), "an integer");
    // Within T's range exactly: the bounds are powers of two (or next to one), exact in double.
    if (d < static_cast<double>(std::numeric_limits<T>::min()) ||
        d >= static_cast<double>(std::numeric_limits<T>::max()) + 1.0)
      throw_integer_out_of_range<T>(value);
    out = static_cast<T>(d);
    return;
  }
  if (!value.is_number_integer()) throw_wrong_type(value.type_name(), "an integer");
  if (value.is_number_unsigned()) {
    auto v = value.get<std::uint64_t>();
    if (!std::in_range<T>(v)) throw_integer_out_of_range<T>(value);
    out = static_cast<T>(v);
  } else {
    auto v = value.get<std::int64_t>();
    if (!std::in_range<T>(v)) throw_integer_out_of_range<T>(value);
    out = static_cast<T>(v);
  }
}

// Reads `value` into `out`: strictly for the standard types, through from_json (ADL)
// otherwise. Errors are validation_errors whose pointer is relative to `value`. Declared
// here for the readers of containers below, which read their elements with it.
template <class T>
void read_value(const nlohmann::json& value, T& out);

// null empties the optional; anything else is read as its value type.
template <class T>
void read_optional(const nlohmann::json& value, T& out) {
  if (value.is_null()) {
    out.reset();
    return;
  }
  typename T::value_type inner{};
  read_value(value, inner);
  out = std::move(inner);
}

inline void read_boolean(const nlohmann::json& value, bool& out) {
  if (!value.is_boolean()) throw_wrong_type(value.type_name(), "a boolean");
  out = value.get<bool>();
}

template <class T>
void read_floating(const nlohmann::json& value, T& out) {
  if (!value.is_number()) throw_wrong_type(value.type_name(), "a number");
  out = value.get<T>();
}

inline void read_string(const nlohmann::json& value, std::string& out) {
  if (!value.is_string()) throw_wrong_type(value.type_name(), "a string");
  out = value.get_ref<const std::string&>();
}

template <class T>
void read_vector(const nlohmann::json& value, T& out) {
  if (!value.is_array()) throw_wrong_type(value.type_name(), "an array");
  out.clear();
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    typename T::value_type element{};
    at_pointer(index_token(i), [&] { read_value(value[i], element); });
    out.push_back(std::move(element));
  }
}

// An array of exactly the std::array's size; a wrong length is reported at the first index
// where the two differ.
template <class T>
void read_std_array(const nlohmann::json& value, T& out) {
  if (!value.is_array()) throw_wrong_type(value.type_name(), "an array");
  if (value.size() != out.size())
    at_pointer(index_token(std::min(value.size(), out.size())),
               [&] { throw_wrong_length(out.size(), value.size()); });
  for (std::size_t i = 0; i < out.size(); ++i)
    at_pointer(index_token(i), [&] { read_value(value[i], out[i]); });
}

// An array without repeats; a repeat is reported at its index, naming the first equal one.
template <class T>
void read_set(const nlohmann::json& value, T& out) {
  if (!value.is_array()) throw_wrong_type(value.type_name(), "an array");
  out.clear();
  for (std::size_t i = 0; i < value.size(); ++i) {
    typename T::value_type element{};
    at_pointer(index_token(i), [&] { read_value(value[i], element); });
    if (!out.insert(std::move(element)).second) {
      std::size_t first = 0;
      while (first < i && value[first] != value[i]) ++first;  // i: equal only in C++
      at_pointer(index_token(i), [&] { throw_duplicate_element(i, first); });
    }
  }
}

template <class T>
void read_string_map(const nlohmann::json& value, T& out) {
  if (!value.is_object()) throw_wrong_type(value.type_name(), "an object");
  out.clear();
  for (auto it = value.begin(); it != value.end(); ++it) {
    typename T::mapped_type element{};
    at_pointer(pointer_token(it.key()), [&] { read_value(it.value(), element); });
    out.emplace(it.key(), std::move(element));
  }
}

template <class T>
void read_value(const nlohmann::json& value, T& out) {
  if constexpr (is_optional<T>::value)
    read_optional(value, out);
  else if constexpr (std::is_same_v<T, bool>)
    read_boolean(value, out);
  else if constexpr (std::is_integral_v<T>)
    read_integer(value, out);
  else if constexpr (std::is_floating_point_v<T>)
    read_floating(value, out);
  else if constexpr (std::is_same_v<T, std::string>)
    read_string(value, out);
  else if constexpr (is_vector<T>::value)
    read_vector(value, out);
  else if constexpr (is_std_array<T>::value)
    read_std_array(value, out);
  else if constexpr (is_set<T>::value)
    read_set(value, out);
  else if constexpr (is_string_map<T>::value)
    read_string_map(value, out);
  else if constexpr (serialized_enum<T>)
    read_enum(value, out);
  else
    value.get_to(out);
}

// `value` as a Json document; std::optional (empty: null) inside containers included,
// which nlohmann/json 3.11 does not convert by itself. Json is nlohmann::ordered_json for
// responses, so that objects keep their members in declaration order; a type whose to_json
// takes only nlohmann::json goes through that (its members then come out sorted).
template <class Json = nlohmann::json, class T>
Json write_value(const T& value) {
  if constexpr (is_optional<T>::value) {
    return value ? write_value<Json>(*value) : Json(nullptr);
  } else if constexpr (is_vector<T>::value || is_std_array<T>::value || is_set<T>::value) {
    Json array = Json::array();
    for (const auto& element : value) array.push_back(write_value<Json>(element));
    return array;
  } else if constexpr (is_string_map<T>::value) {
    Json object = Json::object();
    for (const auto& [key, element] : value) object[key] = write_value<Json>(element);
    return object;
  } else if constexpr (std::is_constructible_v<Json, const T&>) {
    return Json(value);
  } else {
    return Json(nlohmann::json(value));
  }
}

// For WAYPOINT_JSON_OBJECT's to_json: an ordered_json object is a vector, sized once.
template <class Json>
void reserve_members(Json& object, std::initializer_list<std::string_view> names) {
  auto& members = object.template get_ref<typename Json::object_t&>();
  if constexpr (requires { members.reserve(names.size()); }) members.reserve(names.size());
}

// For WAYPOINT_JSON_OBJECT's from_json: refuses members outside `known` when the type or
// the decoding request says so.
template <class Json>
void check_members(const Json& object, std::initializer_list<std::string_view> known,
                   bool type_refuses) {
  if (!type_refuses && decoding_unknown_members() != unknown_members::refuse) return;
  if (!object.is_object()) return;  // reading the members has refused it already
  std::vector<std::string_view> unknown;
  for (auto it = object.begin(); it != object.end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) unknown.push_back(it.key());
  if (!unknown.empty())
    throw_unknown_members(unknown, std::span<const std::string_view>(known.begin(), known.size()));
}

// The body converted to T, as a 422 when it does not convert. Every nlohmann/json exception
// here is a 422, whatever its class: the body parsed, so it is well-formed JSON, and a
// conversion that fails (type_error.302 "type must be number", out_of_range.401/403 an index
// or key that is not there, invalid_iterator or other_error from a hand-written from_json)
// says the value has the wrong shape for T (RFC 9110 15.5.21).
template <class T>
T convert_body(const nlohmann::json& document) {
  try {
    if constexpr (std::is_default_constructible_v<T>) {
      T value{};
      read_value(document, value);
      return value;
    } else {
      return document.get<T>();
    }
  } catch (const nlohmann::json::exception& e) {
    throw_conversion_error(e.id, e.what());
  }
}

// The validation hook, found only by argument-dependent lookup: the deleted overload
// hides any `validate` of enclosing namespaces.
namespace hook {
void validate() = delete;

template <class T>
concept has_validate = requires(const T& value) {
  validate(value);
};

// validate(value) may return void (and throw validation_error), or something optional-like
// (std::optional<std::string>, or std::optional<validation_error> to carry a pointer)
// whose presence means the value is refused.
template <class T>
void run_validate(const T& value) {
  if constexpr (has_validate<T>) {
    using result = decltype(validate(value));
    if constexpr (std::is_void_v<result>) {
      validate(value);
    } else {
      auto problem = validate(value);
      if (!problem) return;
      using reason = std::decay_t<decltype(*problem)>;
      if constexpr (std::is_base_of_v<http_error, reason>)
        throw *problem;
      else
        throw validation_error(std::string(*problem));
    }
  }
}
}  // namespace hook

// The input type read from the path, query, headers, cookies and body (inputs.hpp).
template <declares_inputs T>
T read_inputs(context& ctx);
template <declares_inputs T>
void describe_inputs(route_doc& doc, std::vector<parameter_doc>& parameters);

// A typed route's input: its declared inputs, or the body.
template <class In>
In read_input(context& ctx) {
  if constexpr (declares_inputs<In>)
    return read_inputs<In>(ctx);
  else
    return read_json<In>(ctx);
}

template <class F>
struct call_signature : call_signature<decltype(&F::operator())> {};
template <class R, class... A>
struct call_signature<R (*)(A...)> {
  using last = std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>;
};
template <class R, class C, class... A>
struct call_signature<R (C::*)(A...)> : call_signature<R (*)(A...)> {};
template <class R, class C, class... A>
struct call_signature<R (C::*)(A...) const> : call_signature<R (*)(A...)> {};
template <class R, class C, class... A>
struct call_signature<R (C::*)(A...) noexcept> : call_signature<R (*)(A...)> {};
template <class R, class C, class... A>
struct call_signature<R (C::*)(A...) const noexcept> : call_signature<R (*)(A...)> {};
template <class R, class... A>
struct call_signature<R (*)(A...) noexcept> : call_signature<R (*)(A...)> {};

template <class F>
struct last_parameter {
  using type = std::remove_cvref_t<typename call_signature<F>::last>;
};

template <class F>
struct handler_input {
  static constexpr bool takes_none =
      std::is_invocable_v<F&, context&> || std::is_invocable_v<F&>;
  using type =
      typename std::conditional_t<takes_none, std::type_identity<void>, last_parameter<F>>::type;
  static_assert(std::is_void_v<type> || declares_inputs<type>,
                "a get or del handler takes context&, or an input type that declares its "
                "inputs (a static constexpr `inputs` member, waypoint/app/typed/inputs.hpp): these "
                "routes read no body");
};

// Calls fn with the context when it takes one.
template <class F, class... Args>
decltype(auto) call_handler(F& fn, context& ctx, Args&&... args) {
  if constexpr (std::is_invocable_v<F&, context&, Args&&...>)
    return std::invoke(fn, ctx, std::forward<Args>(args)...);
  else
    return std::invoke(fn, std::forward<Args>(args)...);
}

// Runs `produce` and writes its result with `default_status`; void results answer 204.
template <class Out, class Produce>
void write_result(context& ctx, int default_status, Produce&& produce) {
  using produced = decltype(produce());
  using result = std::conditional_t<std::is_same_v<Out, deduced_output>, produced, Out>;
  if constexpr (std::is_void_v<result>) {
    ctx.response().status(204);
    produce();
    (void)status_keeps_contract(ctx);
  } else {
    ctx.response().status(default_status);
    result out = produce();
    write_typed(ctx, write_value<nlohmann::ordered_json>(out));
  }
}

template <class T>
struct awaited {
  using type = T;  // not a coroutine's result: as it is
};
template <class T, class Executor>
struct awaited<boost::asio::awaitable<T, Executor>> {
  using type = T;
  static constexpr bool coroutine = true;
};
template <class T>
concept awaitable_result = requires { awaited<T>::coroutine; };

// awaitable<void> on the executor of `Work` (an awaitable<R>): a return type that names a
// template parameter, so that only code that instantiates it needs Asio's definition.
template <class Work>
using awaitable_like = boost::asio::awaitable<void, typename Work::executor_type>;

// Awaits `work` (an awaitable<R>) and writes its result as write_result() does.
template <class Out, class Work>
awaitable_like<Work> write_awaited(context& ctx, int default_status, Work work) {
  using value = typename awaited<Work>::type;
  if constexpr (std::is_void_v<value>) {
    co_await std::move(work);
    write_result<Out>(ctx, default_status, [] {});
  } else {
    value out = co_await std::move(work);
    write_result<Out>(ctx, default_status, [&]() -> value { return std::move(out); });
  }
}

// What fn(context&, In) or fn(In) returns (In void: fn(context&) or fn()).
template <class In, class F>
struct typed_call {
  using type = decltype(call_handler(std::declval<F&>(), std::declval<context&>(),
                                     std::declval<In>()));
};
template <class F>
struct typed_call<void, F> {
  using type = decltype(call_handler(std::declval<F&>(), std::declval<context&>()));
};

// The one typed route: reads In (none when void) from the body or its declared inputs, calls fn, and writes its
// result, awaited first when fn is a coroutine, as Out (fn's result when Out is
// deduced_output) with `default_status` (204 for void). As a handler it returns void or
// awaitable<void> as fn does, so a synchronous typed route costs no coroutine frame.
template <class In, class Out, class F>
class typed_route {
 public:
  using result = typename typed_call<In, F>::type;
  static constexpr bool coroutine = awaitable_result<result>;
  using output = std::conditional_t<std::is_same_v<Out, deduced_output>,
                                    typename awaited<result>::type, Out>;

  typed_route(F fn, int default_status) : fn_(std::move(fn)), default_status_(default_status) {}
  int default_status() const noexcept { return default_status_; }

  std::conditional_t<coroutine, awaitable<void>, void> operator()(context& ctx) {
    if constexpr (!std::is_void_v<output>) check_acceptable(ctx);
    if constexpr (coroutine) {
      return run_coroutine<result>(ctx);
    } else if constexpr (std::is_void_v<In>) {
      write_result<Out>(ctx, default_status_,
                        [&]() -> decltype(auto) { return call_handler(fn_, ctx); });
    } else {
      In input = read_input<In>(ctx);
      write_result<Out>(ctx, default_status_, [&]() -> decltype(auto) {
        return call_handler(fn_, ctx, std::move(input));
      });
    }
  }

 private:
  template <class Work>
  awaitable_like<Work> run_coroutine(context& ctx) {
    if constexpr (std::is_void_v<In>) {
      co_await write_awaited<Out>(ctx, default_status_, call_handler(fn_, ctx));
    } else {
      In input = read_input<In>(ctx);
      co_await write_awaited<Out>(ctx, default_status_, call_handler(fn_, ctx, std::move(input)));
    }
  }

  F fn_;
  int default_status_;
};

}  // namespace detail

// Reads member `name` of `object` into `out`, for from_json functions. A missing member is
// a 422 naming it, unless `out` is a std::optional (then left empty, as for null); a
// wrong type is a 422 naming the member, or the nested value at fault.
template <class T>
void json_field(const nlohmann::json& object, std::string_view name, T& out) {
  if (!object.is_object()) detail::throw_wrong_type(object.type_name(), "an object");
  auto it = object.find(name);
  if (it == object.end()) {
    if constexpr (detail::is_optional<T>::value) {
      out.reset();
      return;
    } else {
      detail::throw_missing_member(name);
    }
  }
  try {
    detail::read_value(*it, out);
  } catch (validation_error& e) {
    e.prefix_pointer(detail::pointer_token(name));
    throw;
  } catch (const nlohmann::json::exception& e) {
    detail::throw_conversion_error(e.id, e.what(), detail::pointer_token(name));
  }
}

// Sets member `name` of `object` to `value`, for to_json functions; an empty std::optional
// is written as null.
template <class Json, class T>
  requires detail::is_json_document_v<Json>
void json_put(Json& object, std::string_view name, const T& value) {
  object[name] = detail::write_value<Json>(value);
}

// The request body decoded as T with the typed routes' rules (413, 415, 400, 422 and the
// validate() hook), for hand-written handlers.
template <class T>
T read_json(context& ctx) {
  nlohmann::json document;
  detail::parse_json_body(ctx, document);
  detail::decoding_scope policy(typed_options(ctx.app()).unknown_json_members);
  T value = detail::convert_body<T>(document);
  detail::check_request_contract(ctx, document);
  detail::hook::run_validate(value);
  return value;
}

}  // namespace waypoint::app

// Defines to_json and from_json for a struct's members, like nlohmann/json's
// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE, with from_json going through json_field() so that
// errors name members as JSON Pointers, to_json writing any nlohmann document type (an
// ordered_json keeps declaration order), and waypoint_json_describe listing the members for
// JSON Schema (schema.hpp). Use it at namespace scope, next to the type.
// WAYPOINT_JSON_STRICT_OBJECT also refuses members the type does not declare (422 naming
// them), whatever the application's unknown_json_members says.
#define WAYPOINT_JSON_FROM_MEMBER(field) \
  ::waypoint::app::json_field(nlohmann_json_j, #field, nlohmann_json_t.field);
#define WAYPOINT_JSON_TO_MEMBER(field) \
  ::waypoint::app::json_put(nlohmann_json_j, #field, nlohmann_json_t.field);
#define WAYPOINT_JSON_NAME_OF(field) #field,
#define WAYPOINT_JSON_DESCRIBE_MEMBER(field) \
  waypoint_json_v.template add_member<decltype(waypoint_json_type::field)>(#field);
#define WAYPOINT_JSON_OBJECT_WITH(Type, refuse_unknown, ...)                                     \
  template <class Json>                                                                          \
    requires ::waypoint::app::detail::is_json_document_v<Json>                                   \
  inline void to_json(Json& nlohmann_json_j, const Type& nlohmann_json_t) {                      \
    nlohmann_json_j = Json::object();                                                            \
    ::waypoint::app::detail::reserve_members(                                                    \
        nlohmann_json_j, {NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(WAYPOINT_JSON_NAME_OF, __VA_ARGS__))}); \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(WAYPOINT_JSON_TO_MEMBER, __VA_ARGS__))              \
  }                                                                                              \
  [[maybe_unused]] inline void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) { \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(WAYPOINT_JSON_FROM_MEMBER, __VA_ARGS__))            \
    ::waypoint::app::detail::check_members(                                                      \
        nlohmann_json_j, {NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(WAYPOINT_JSON_NAME_OF, __VA_ARGS__))}, \
        refuse_unknown);                                                                         \
  }                                                                                              \
  template <class Visitor>                                                                       \
  inline void waypoint_json_describe(Visitor& waypoint_json_v, const Type*) {                    \
    using waypoint_json_type = Type;                                                             \
    waypoint_json_v.begin_object(#Type, refuse_unknown);                                         \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(WAYPOINT_JSON_DESCRIBE_MEMBER, __VA_ARGS__))        \
  }
#define WAYPOINT_JSON_OBJECT(Type, ...) WAYPOINT_JSON_OBJECT_WITH(Type, false, __VA_ARGS__)
#define WAYPOINT_JSON_STRICT_OBJECT(Type, ...) WAYPOINT_JSON_OBJECT_WITH(Type, true, __VA_ARGS__)
