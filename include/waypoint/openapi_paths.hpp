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

#include "waypoint/json_string.hpp"
#include "waypoint/pattern.hpp"

#include <algorithm>
#include <array>
#include <cctype>
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

inline openapi_place openapi_place_of(const pattern& p) {
  openapi_place place;
  place.host = std::string(p.host());
  std::string shown;  // the path as a person reads it, for the rule's sentence
  for (const segment& s : p.segments()) {
    switch (s.type) {
      case segment::kind::literal:
        place.path += '/';
        detail::append_escaped(place.path, s.text);
        break;
      case segment::kind::wildcard:
        place.path += "/{" + s.text + "}";
        place.parameters.emplace_back(s.text, "one path segment, percent-decoded");
        break;
      case segment::kind::rest:
        if (s.text.empty()) {
          place.path += '/';
          place.match = "subtree";
          place.match_rule = "Matches " + place.path +
                             " and every path below it (the pattern ends in '/'); a request "
                             "for the path without its last '/' is redirected here.";
        } else {
          place.path += "/{" + s.text + "}";
          place.match = "subtree";
          place.match_rule = "{" + s.text + "} is the rest of the path (waypoint's {" + s.text +
                             "...}): zero or more segments, '/' kept.";
          place.parameters.emplace_back(
              s.text, "the rest of the path after the preceding segments: zero or more "
                      "segments with their '/' separators, percent-decoded; may be empty");
        }
        break;
      case segment::kind::end:
        place.path += '/';
        place.match = "exact";
        place.match_rule = "Matches " + place.path + " only, not the paths below it ({$}).";
        break;
    }
  }
  return place;
}

// An operationId for a route without a name: the method and the path's words,
// "get_v1_users_id" for "GET /v1/users/{id}".
inline std::string openapi_operation_id(std::string_view method, const openapi_place& place) {
  std::string id(method);
  bool gap = true;
  for (char c : place.path) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (gap) id += '_';
      id += c;
      gap = false;
    } else {
      gap = true;
    }
  }
  return id;
}

// The path parameters of `place` as a JSON array; `schema_of(name)` gives each one's
// schema text (a string when it returns empty).
inline std::string openapi_parameters(
    const openapi_place& place,
    const std::function<std::string(std::string_view name)>& schema_of = {}) {
  std::string out = "[";
  for (const auto& [name, description] : place.parameters) {
    if (out.size() > 1) out += ',';
    std::string schema = schema_of ? schema_of(name) : std::string();
    out += R"({"name":)";
    append_json_string(out, name);
    out += R"(,"in":"path","required":true,"description":)";
    append_json_string(out, description);
    out += R"(,"schema":)";
    out += schema.empty() ? std::string(R"({"type":"string"})") : schema;
    out += '}';
  }
  return out + "]";
}

// An operation that says only what the pattern says: a summary naming the method and path,
// the matching rule, the path parameters, and an answer of unknown shape. `waypoint-route
// openapi` writes these; the framework starts from one and adds what a route declares.
inline std::string openapi_untyped_operation(
    std::string_view method, const openapi_place& place,
    const std::function<std::string(std::string_view name)>& schema_of = {}) {
  std::string out = R"({"summary":)";
  std::string summary;
  for (char c : method) summary += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  append_json_string(out, summary + " " + place.path);
  out += ',';
  if (!place.match_rule.empty()) {
    out += R"("description":)";
    append_json_string(out, place.match_rule);
    out += ',';
  }
  if (!place.parameters.empty()) out += R"("parameters":)" + openapi_parameters(place, schema_of) + ",";
  out += R"("responses":{"default":{"description":"The route's answer; the route table does not )"
         R"(say its status or shape."}}})";
  return out;
}

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
  void add(const pattern& p, std::string_view id, const operation_writer& operation) {
    openapi_place place = openapi_place_of(p);
    std::vector<std::string_view> methods;
    if (p.method().empty()) {
      methods.assign(openapi_methods.begin(), openapi_methods.end());
    } else {
      // Methods are case-sensitive (RFC 9110 9.1): only GET, not "get", is OpenAPI's "get".
      auto known = std::find_if(openapi_methods.begin(), openapi_methods.end(),
                                [&](std::string_view m) { return upper(m) == p.method(); });
      if (known == openapi_methods.end())
        return unplaced(p, "OpenAPI 3.1 has no field for method " + std::string(p.method()));
      methods.push_back(*known);
    }
    item& it = item_for(place);
    if (it.place.host != place.host)
      return unplaced(p, "another host's route has the same path; OpenAPI keys paths without hosts");
    for (std::string_view method : methods) {
      std::size_t slot = index_of(method);
      if (!it.operations[slot].empty())
        return unplaced(p, "another route already documents " + upper(method) + " " + place.path);
      std::string op_id = unique_id(methods.size() == 1 ? std::string(id)
                                                        : std::string(id) + "_" + std::string(method));
      std::string body = operation(method, place);
      // Invariant: body is a JSON object's text, "{" first.
      std::string text = R"({"operationId":)";
      append_json_string(text, op_id);
      text += R"(,"x-waypoint-pattern":)";
      append_json_string(text, p.text());
      if (!place.match.empty()) {
        text += R"(,"x-waypoint-match":)";
        append_json_string(text, place.match);
      }
      text += body.size() > 2 ? "," + body.substr(1) : std::string("}");
      it.operations[slot] = std::move(text);
    }
  }

  // The "paths" object's text.
  std::string paths_text() const {
    std::string out = "{";
    for (const item& it : items_) {
      if (out.size() > 1) out += ',';
      append_json_string(out, it.place.path);
      out += ":{";
      bool first = true;
      auto field = [&](std::string_view name, const std::string& value) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, name);
        out += ':';
        out += value;
      };
      if (!it.place.host.empty()) {
        std::string host;
        append_json_string(host, it.place.host);
        std::string url;
        append_json_string(url, "//" + it.place.host);
        field("servers", R"([{"url":)" + url + "}]");
        field("x-waypoint-host", host);
      }
      for (std::size_t i = 0; i < openapi_methods.size(); ++i)
        if (!it.operations[i].empty()) field(openapi_methods[i], it.operations[i]);
      out += '}';
    }
    return out + "}";
  }

  // [{"pattern":..., "reason":...}] for what could not be placed; "[]" when all were.
  std::string unplaced_text() const {
    std::string out = "[";
    for (const auto& [pattern_text, reason] : unplaced_) {
      if (out.size() > 1) out += ',';
      out += R"({"pattern":)";
      append_json_string(out, pattern_text);
      out += R"(,"reason":)";
      append_json_string(out, reason);
      out += '}';
    }
    return out + "]";
  }

 private:
  struct item {
    openapi_place place;
    std::array<std::string, openapi_methods.size()> operations;
  };

  static std::string upper(std::string_view method) {
    std::string out;
    for (char c : method) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
  }
  static std::size_t index_of(std::string_view method) {
    for (std::size_t i = 0; i < openapi_methods.size(); ++i)
      if (openapi_methods[i] == method) return i;
    return 0;  // unreachable: methods come from openapi_methods
  }

  item& item_for(const openapi_place& place) {
    for (item& it : items_)
      if (it.place.path == place.path) return it;
    item& it = items_.emplace_back();
    it.place = place;
    return it;
  }

  std::string unique_id(std::string id) {
    std::string candidate = id;
    for (int n = 2; std::find(ids_.begin(), ids_.end(), candidate) != ids_.end(); ++n)
      candidate = id + "_" + std::to_string(n);
    ids_.push_back(candidate);
    return candidate;
  }

  void unplaced(const pattern& p, std::string reason) {
    unplaced_.emplace_back(std::string(p.text()), std::move(reason));
  }

  std::vector<item> items_;
  std::vector<std::string> ids_;
  std::vector<std::pair<std::string, std::string>> unplaced_;
};

}  // namespace waypoint
