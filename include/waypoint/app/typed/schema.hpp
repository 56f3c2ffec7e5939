// JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) of the C++ types that typed JSON
// routes read and write, exactly as json.hpp's rules read them:
//
//   bool                         {"type":"boolean"}
//   std::int32_t (any integer)   {"type":"integer","format":"int32","minimum":-2147483648,...}
//   double, float                {"type":"number","format":"double"}
//   std::string                  {"type":"string"}
//   std::optional<T>             T or null; a member of this type is not "required"
//   std::vector<T>               {"type":"array","items":T}
//   std::array<T, N>             ... "minItems":N,"maxItems":N
//   std::set<T>                  ... "uniqueItems":true
//   std::map<std::string, T>     {"type":"object","additionalProperties":T}
//   NLOHMANN_JSON_SERIALIZE_ENUM {"type":"string","enum":[the listed values]}
//   WAYPOINT_JSON_OBJECT type    {"$ref":"#/components/schemas/<Type>"}: properties in
//                                declaration order, "required", and "additionalProperties":
//                                false when unknown members are refused
//   nlohmann::json               {} (any value)
//
// A type may add constraints its validate() hook enforces, by argument-dependent lookup:
//
//   nlohmann::ordered_json schema_constraints(const order_request*) {   // a JSON merge patch
//     return {{"properties", {{"quantity", {{"minimum", 1}}}}}};
//   }
#pragma once

#include "waypoint/app/typed/codec.hpp"
#include "waypoint/app/route_doc.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace waypoint::app {
namespace detail {

// The components being collected while one document is written. Compiled once
// (src/app/documents/openapi.cpp); it takes and gives JSON as text, for the reason json.hpp gives.
class schema_sink {
 public:
  explicit schema_sink(bool refuse_unknown_members);
  ~schema_sink();
  schema_sink(const schema_sink&) = delete;
  schema_sink& operator=(const schema_sink&) = delete;

  // Every object refuses unknown members (typed_route_options::unknown_json_members).
  bool refuse_unknown_members() const noexcept;
  // The component name of the type identified by `key`, empty when it has none yet.
  std::string find(const void* key) const;
  // Reserves a component name for `key` from its C++ spelling: characters outside
  // [A-Za-z0-9._-] become '_', and a name another type holds gets a numeric suffix.
  std::string reserve(const void* key, std::string_view spelling);
  void define(const std::string& name, std::string schema_text);
  // {"<name>":<schema>,...} in definition order.
  std::string components_text() const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

template <class T>
nlohmann::ordered_json schema_of(schema_sink& sink);

inline nlohmann::ordered_json component_ref(const std::string& name) {
  return {{"$ref", "#/components/schemas/" + name}};
}

// `schema` or null, as std::optional reads and writes.
inline nlohmann::ordered_json nullable(nlohmann::ordered_json schema) {
  auto type = schema.find("type");
  if (type != schema.end() && type->is_string() && schema.find("enum") == schema.end()) {
    *type = nlohmann::ordered_json::array({*type, "null"});
    return schema;
  }
  return {{"anyOf", nlohmann::ordered_json::array({std::move(schema), {{"type", "null"}}})}};
}

namespace hook {
void schema_constraints() = delete;
template <class T>
concept has_schema_constraints = requires(const T* p) { schema_constraints(p); };
}  // namespace hook

// The visitor WAYPOINT_JSON_OBJECT's waypoint_json_describe calls.
class object_schema_builder {
 public:
  object_schema_builder(schema_sink& sink, const void* key) : sink_(&sink), key_(key) {}

  void begin_object(std::string_view spelling, bool refuse_unknown) {
    name_ = sink_->reserve(key_, spelling);  // first, so that a recursive member finds it
    refuse_ = refuse_unknown || sink_->refuse_unknown_members();
  }
  template <class M>
  void add_member(std::string_view member) {
    properties_[std::string(member)] = schema_of<M>(*sink_);
    if (!is_optional<M>::value) required_.push_back(member);
  }

  const std::string& name() const noexcept { return name_; }
  nlohmann::ordered_json finish() && {
    nlohmann::ordered_json schema = {{"type", "object"}, {"properties", std::move(properties_)}};
    if (!required_.empty()) schema["required"] = std::move(required_);
    if (refuse_) schema["additionalProperties"] = false;
    return schema;
  }

 private:
  schema_sink* sink_;
  const void* key_;
  std::string name_;
  bool refuse_ = false;
  nlohmann::ordered_json properties_ = nlohmann::ordered_json::object();
  nlohmann::ordered_json required_ = nlohmann::ordered_json::array();
};

template <class T>
concept described_object = requires(object_schema_builder& b, const T* p) {
  waypoint_json_describe(b, p);
};

template <class T>
nlohmann::ordered_json object_schema(schema_sink& sink) {
  const void* key = &value_key<T>::id;
  if (std::string known = sink.find(key); !known.empty()) return component_ref(known);
  object_schema_builder builder(sink, key);
  waypoint_json_describe(builder, static_cast<const T*>(nullptr));
  std::string name = builder.name();
  nlohmann::ordered_json schema = std::move(builder).finish();
  if constexpr (hook::has_schema_constraints<T>) {
    using hook::schema_constraints;
    schema.merge_patch(nlohmann::ordered_json(schema_constraints(static_cast<const T*>(nullptr))));
  }
  sink.define(name, dump_ordered(schema));
  return component_ref(name);
}

template <class E>
nlohmann::ordered_json enum_schema() {
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  bool strings = true;
  for (const auto& v : enum_values<E>()) {
    values.push_back(nlohmann::ordered_json(v));
    strings = strings && v.is_string();
  }
  nlohmann::ordered_json schema = nlohmann::ordered_json::object();
  if (strings) schema["type"] = "string";
  schema["enum"] = std::move(values);
  return schema;
}

template <class T>
nlohmann::ordered_json schema_of(schema_sink& sink) {
  using json = nlohmann::ordered_json;
  if constexpr (is_optional<T>::value) {
    return nullable(schema_of<typename T::value_type>(sink));
  } else if constexpr (std::is_same_v<T, bool> || std::is_arithmetic_v<T> ||
                       std::is_same_v<T, std::string>) {
    json schema;
    parse_ordered(scalar_schema<T>(), schema);
    return schema;
  } else if constexpr (is_vector<T>::value || is_std_array<T>::value || is_set<T>::value) {
    json schema = {{"type", "array"}, {"items", schema_of<typename T::value_type>(sink)}};
    if constexpr (is_std_array<T>::value) {
      schema["minItems"] = std::tuple_size_v<T>;
      schema["maxItems"] = std::tuple_size_v<T>;
    }
    if constexpr (is_set<T>::value) schema["uniqueItems"] = true;
    return schema;
  } else if constexpr (is_string_map<T>::value) {
    return {{"type", "object"}, {"additionalProperties", schema_of<typename T::mapped_type>(sink)}};
  } else if constexpr (serialized_enum<T>) {
    return enum_schema<T>();
  } else if constexpr (is_json_document_v<T>) {
    return json::object();
  } else if constexpr (described_object<T>) {
    return object_schema<T>(sink);
  } else if constexpr (std::is_enum_v<T>) {
    json schema;
    parse_ordered(scalar_schema<std::underlying_type_t<T>>(), schema);
    return schema;
  } else {
    return {{"description", "converted by the type's own to_json and from_json"}};
  }
}

// A schema_writer for T (route_doc.hpp).
template <class T>
std::string schema_text(schema_sink& sink) {
  return dump_ordered(schema_of<std::remove_cvref_t<T>>(sink));
}

}  // namespace detail

namespace detail {
// Points every "#/components/schemas/X" reference of a schema's text at "#/$defs/X": how a
// schema stands alone once the components it names are under its own "$defs" (json_schema
// below; an MCP tool's schemas, src/app/documents/mcp.cpp).
inline void refs_to_defs(std::string& text) {
  constexpr std::string_view from = "#/components/schemas/", to = "#/$defs/";
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at))
    text.replace(at, from.size(), to);
}
}  // namespace detail

// T's JSON Schema with the object types it names under "$defs": what a client validating
// one value would use (OpenAPI documents put them under components/schemas instead).
template <class T>
nlohmann::ordered_json json_schema(bool refuse_unknown_members = false) {
  detail::schema_sink sink(refuse_unknown_members);
  std::string text = detail::schema_text<T>(sink);
  std::string defs = sink.components_text();
  if (defs != "{}") text = R"({"$defs":)" + defs + "," + text.substr(1);
  detail::refs_to_defs(text);
  nlohmann::ordered_json schema;
  detail::parse_ordered(text, schema);
  return schema;
}

// --- typed routes describe themselves (application.hpp) ------------------------------

namespace detail {

// The route's body and answer schemas and success status; the parameters its input type
// binds go to `parameters`, for route_scope::add to check against the pattern.
template <class In, class Out>
void describe_typed(route_doc& doc, int status, std::vector<parameter_doc>& parameters) {
  doc.typed = true;
  if constexpr (declares_inputs<In>) {
    describe_inputs<In>(doc, parameters);
  } else if constexpr (!std::is_void_v<In>) {
    doc.request_schema = &schema_text<In>;
    doc.request_is_document = is_json_document_v<In>;
  }
  if constexpr (std::is_void_v<Out>) {
    doc.success_status = 204;
  } else {
    doc.success_status = status;
    doc.response_schema = &schema_text<Out>;
    doc.response_is_document = is_json_document_v<Out>;
  }
}

}  // namespace detail

template <class In, class Out, class F>
route_scope& route_scope::add(std::string_view method, std::string_view pattern,
                              detail::typed_route<In, Out, F> fn, const source_location& where) {
  int status = fn.default_status();
  add(method, pattern, handler(std::move(fn)), where);
  detail::register_typed_route(*app_, *last_);
  std::vector<parameter_doc> parameters;
  detail::describe_typed<In, typename detail::typed_route<In, Out, F>::output>(last_->doc_, status,
                                                                               parameters);
  for (parameter_doc& p : parameters) describe_parameter(std::move(p));
  return *this;
}

}  // namespace waypoint::app
