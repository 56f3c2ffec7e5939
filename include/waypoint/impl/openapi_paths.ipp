// The definitions of waypoint/openapi_paths.hpp: compiled once by src/core/openapi_paths.cpp,
// or included by the header with WAYPOINT_HEADER_ONLY (detail/config.hpp).
#pragma once

#include "waypoint/openapi_paths.hpp"

#include <algorithm>
#include <cctype>

namespace waypoint {

WAYPOINT_INLINE openapi_place openapi_place_of(const pattern& p) {
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

WAYPOINT_INLINE std::string openapi_operation_id(std::string_view method,
                                                 const openapi_place& place) {
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

WAYPOINT_INLINE std::string openapi_parameters(
    const openapi_place& place,
    const std::function<std::string(std::string_view name)>& schema_of) {
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

WAYPOINT_INLINE std::string openapi_untyped_operation(
    std::string_view method, const openapi_place& place,
    const std::function<std::string(std::string_view name)>& schema_of) {
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

WAYPOINT_INLINE void openapi_path_writer::add(const pattern& p, std::string_view id,
                                              const operation_writer& operation) {
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
    // Appended in place: `"," + body.substr(1)` also trips GCC 12's -Wrestrict at -O3
    // (a false positive, GCC PR 105329) now that this is compiled on its own.
    if (body.size() > 2) {
      text += ',';
      text.append(body, 1);
    } else {
      text += '}';
    }
    it.operations[slot] = std::move(text);
  }
}

WAYPOINT_INLINE std::string openapi_path_writer::paths_text() const {
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

WAYPOINT_INLINE std::string openapi_path_writer::unplaced_text() const {
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

WAYPOINT_INLINE std::string openapi_path_writer::upper(std::string_view method) {
  std::string out;
  for (char c : method) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

WAYPOINT_INLINE std::size_t openapi_path_writer::index_of(std::string_view method) {
  for (std::size_t i = 0; i < openapi_methods.size(); ++i)
    if (openapi_methods[i] == method) return i;
  return 0;  // unreachable: methods come from openapi_methods
}

WAYPOINT_INLINE openapi_path_writer::item& openapi_path_writer::item_for(
    const openapi_place& place) {
  for (item& it : items_)
    if (it.place.path == place.path) return it;
  item& it = items_.emplace_back();
  it.place = place;
  return it;
}

WAYPOINT_INLINE std::string openapi_path_writer::unique_id(std::string id) {
  std::string candidate = id;
  for (int n = 2; std::find(ids_.begin(), ids_.end(), candidate) != ids_.end(); ++n)
    candidate = id + "_" + std::to_string(n);
  ids_.push_back(candidate);
  return candidate;
}

WAYPOINT_INLINE void openapi_path_writer::unplaced(const pattern& p, std::string reason) {
  unplaced_.emplace_back(std::string(p.text()), std::move(reason));
}

}  // namespace waypoint
