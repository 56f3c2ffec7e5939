// How waypoint patterns read as an OpenAPI 3.1 "paths" object: shared by the framework's
// generated document (waypoint/app, with schemas) and `waypoint-route openapi` (a skeleton
// for an untyped table). Standard library only; JSON is written as text.
//
//   pattern                    path key            what the document says
//   GET /users/{id}            /users/{id}         "id": a path parameter (a string unless declared)
//   GET /files/{path...}       /files/{path}       "path": the rest of the path, '/' kept, maybe
//                                                  empty; "x-waypoint-match": "subtree"
//   GET /static/               /static/            /static/ and every path below it; "subtree"
//   GET /dir/{$}               /dir/               /dir/ only; "x-waypoint-match": "exact"
//   GET api.example.com/v1     /v1                 the path item's "servers": [{"url":
//                                                  "//api.example.com"}], "x-waypoint-host"
//   /any (no method)           /any                one operation per OpenAPI method
//   GET ...                    ...                 "get" only: HEAD is implied
//
// What OpenAPI cannot hold (a method outside its eight, or a second host for the same
// path and method) is listed in the document's "x-waypoint-unplaced" rather than dropped.
#pragma once

#include "waypoint/detail/config.hpp"
#include "waypoint/json_string.hpp"
#include "waypoint/pattern.hpp"

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waypoint {

// OpenAPI 3.1's operation fields, in the order documents usually list them.
inline constexpr std::array<std::string_view, 8> openapi_methods = {
    "get", "put", "post", "delete", "options", "head", "patch", "trace"};

// One operation's place: its path key and what the pattern's matching rule adds to it.
struct openapi_place {
  std::string path;         // the OpenAPI path template
  std::string match;        // "", "subtree" or "exact": the x-waypoint-match extension
  std::string match_rule;   // a sentence for the description; empty for a plain path
  std::string host;         // empty: every host
  std::vector<std::pair<std::string, std::string>> parameters;  // name, description
};

// Where the operations of `p` go: its path key, matching rule, host and parameters.
openapi_place openapi_place_of(const pattern& p);

// An operationId for a route without a name: the method and the path's words,
// "get_v1_users_id" for "GET /v1/users/{id}".
std::string openapi_operation_id(std::string_view method, const openapi_place& place);

// The path parameters of `place` as a JSON array; `schema_of(name)` gives each one's
// schema text (a string when it returns empty).
std::string openapi_parameters(
    const openapi_place& place,
    const std::function<std::string(std::string_view name)>& schema_of = {});

// An operation that says only what the pattern says: a summary naming the method and path,
// the matching rule, the path parameters, and an answer of unknown shape. `waypoint-route
// openapi` writes these; the framework starts from one and adds what a route declares.
std::string openapi_untyped_operation(
    std::string_view method, const openapi_place& place,
    const std::function<std::string(std::string_view name)>& schema_of = {});

// Collects operations and writes the "paths" object: path items in first-registration
// order, a path item's operations in openapi_methods order.
class openapi_path_writer {
 public:
  // The operation, as a JSON object text without "operationId", for each method `p`
  // serves; `id` is the operationId (made unique here: a repeat gets "_2", "_3", ...).
  // `operation(method, place)` gets the lowercase OpenAPI method; it puts the place's
  // match_rule in its description and its parameters in "parameters".
  using operation_writer =
      std::function<std::string(std::string_view method, const openapi_place& place)>;
  void add(const pattern& p, std::string_view id, const operation_writer& operation);

  // The "paths" object's text.
  std::string paths_text() const;

  // [{"pattern":..., "reason":...}] for what could not be placed; "[]" when all were.
  std::string unplaced_text() const;

 private:
  struct item {
    openapi_place place;
    std::array<std::string, openapi_methods.size()> operations;
  };

  static std::string upper(std::string_view method);
  static std::size_t index_of(std::string_view method);
  item& item_for(const openapi_place& place);
  std::string unique_id(std::string id);
  void unplaced(const pattern& p, std::string reason);

  std::vector<item> items_;
  std::vector<std::string> ids_;
  std::vector<std::pair<std::string, std::string>> unplaced_;
};

}  // namespace waypoint

#ifdef WAYPOINT_HEADER_ONLY
#include "waypoint/impl/openapi_paths.ipp"
#endif
