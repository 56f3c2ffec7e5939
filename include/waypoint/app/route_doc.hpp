// What a route says about itself beyond its pattern: the name url_for builds by, and what
// the OpenAPI document (openapi.hpp) shows. Routes are described where they are registered:
//
//   app.get("/users/{id}", show_user)
//       .describe({.name = "user", .summary = "One user"})  // operationId; app.url_for("user")
//       .path_param<std::int64_t>("id", "the user's number");
//   auto shop = app.group("/v1/commerce");
//   shop.tag_routes("commerce");                         // every route of the group
//
// Typed JSON routes (json.hpp) fill in their request and response schemas and success
// status themselves. Standard library only: the schemas are carried as JSON text and as
// functions compiled in the registering translation unit, so that this header stays free of
// nlohmann/json and of its two ABIs.
#pragma once

#include "waypoint/route.hpp"

#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace waypoint::app {

namespace detail {

class schema_sink;  // components/schemas while a document is written (openapi.hpp)
// Writes the JSON Schema of one C++ type as JSON text, registering the object types it
// names in the sink's components.
using schema_writer = std::string (*)(schema_sink&);

// "int32", "uint8", ...: the OpenAPI Format Registry's names for integers.
template <class T>
std::string integer_format() {
  return std::string(std::is_signed_v<T> ? "int" : "uint") + std::to_string(sizeof(T) * 8);
}

// The JSON Schema text of a scalar as context::path_value<T> and the typed JSON layer read
// it: integers with their exact range, so that a client sees what 422s and 400s refuse.
template <class T>
std::string scalar_schema() {
  if constexpr (std::is_same_v<T, bool>) {
    return R"({"type":"boolean"})";
  } else if constexpr (std::is_integral_v<T>) {
    return R"({"type":"integer","format":")" + integer_format<T>() + R"(","minimum":)" +
           std::to_string(std::numeric_limits<T>::min()) +
           R"(,"maximum":)" + std::to_string(std::numeric_limits<T>::max()) + "}";
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::string(R"({"type":"number","format":")") +
           (sizeof(T) == sizeof(float) ? "float" : "double") + R"("})";
  } else {
    static_assert(std::is_convertible_v<T, std::string_view>,
                  "a path value is a string, a number or a boolean");
    return R"({"type":"string"})";
  }
}

}  // namespace detail

// One input of an operation other than its body: a path wildcard (path_param<T>, or a
// typed route's from::path), or a query parameter, header or cookie a typed route's input
// type binds (inputs.hpp). The OpenAPI "parameters" entry and the 422 check are made from it.
struct parameter_doc {
  std::string in;  // "path", "query", "header" or "cookie"
  std::string name;
  std::string schema;  // JSON Schema text of the value's type
  std::string description{};
  std::string constraints{};    // a JSON merge patch onto `schema`, enforced; empty: none
  std::string default_value{};  // JSON text of the value an absent input keeps; empty: none
  bool required = true;
  bool repeated = false;  // a query key that may come many times (an array)
};

// A security requirement a layer places on the routes it wraps (middleware::security()): the
// OpenAPI document lists `scheme` under components.securitySchemes as `name`, and every
// operation behind the layer requires `name` with `scopes`.
struct security_requirement {
  std::string name;    // "bearerAuth"
  std::string scheme;  // the Security Scheme Object as JSON text: {"type":"http",...}
  std::vector<std::string> scopes{};
};

struct route_doc {
  std::string name;  // unique in the application; the operationId; empty: none
  registration_site named_at;
  std::string summary;
  std::string description{};
  // Declared ones; undeclared path wildcards are strings.
  std::vector<parameter_doc> parameters;
  bool hidden = false;                      // left out of the document (its own routes)
  bool tool = true;                         // a tool of serve_mcp() when named and typed
  // Set by typed routes: the status of success, the body's schema (nullptr: no body) and the
  // answer's (nullptr: 204 without content).
  bool typed = false;
  int success_status = 0;
  detail::schema_writer request_schema = nullptr;
  detail::schema_writer response_schema = nullptr;
  // Whether the body read (the answer written) is a nlohmann::json, whose schema a
  // schema-first route states (route_scope::request_schema) in the text, used instead of
  // the writer when not empty.
  bool request_is_document = false;
  bool response_is_document = false;
  std::string request_schema_text{};
  std::string response_schema_text{};
  // The route reads If-None-Match (inputs.hpp): it may answer 304.
  bool conditional = false;
  // Answers a feature documents for the route besides these (a WebSocket route's 101 and
  // 426): status and description. With only_other_answers, the handler's own answer (the
  // document's "default") is not one of them.
  std::vector<std::pair<int, std::string>> other_answers{};
  bool only_other_answers = false;
};

// What route_scope::describe() says of the route registered last; each member is optional
// and is set only when given (a second describe() adds to the first, and may not rename).
struct route_info {
  // Unique in the application: url_for builds its path by it, and it is the operationId.
  std::string_view name{};
  std::string_view summary{};
  std::string_view description{};
  bool undocumented = false;  // left out of the document (the document's own routes)
  // A schema-first route: the JSON Schema (draft 2020-12, as text) of the body a typed route
  // on nlohmann::json reads, and of the answer it writes; documented and enforced like a
  // type's. std::invalid_argument when the text is not a JSON object, holds a "$ref" (the
  // schema stands alone in the document) or a keyword the validator cannot enforce;
  // std::logic_error when that side of the route is not a nlohmann::json (a type's schema
  // comes from the type).
  std::string_view request_schema{};
  std::string_view response_schema{};
  // A named typed route is a Model Context Protocol tool (mcp.hpp) unless this is false.
  bool tool = true;
};

}  // namespace waypoint::app
