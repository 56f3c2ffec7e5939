// The typed write route of a gateway serving a --routes table: every POST, PUT and PATCH
// pattern decodes an 8-field JSON record and answers a 5-field JSON object, the writes of
// the mixed-application workload (BENCHMARKS.md §11).
//
//   $ curl -i localhost:8080/v1/things -H 'Content-Type: application/json' -d '{"name":"a",
//       "email":"a@example.com","quantity":1,"active":true,"score":0.5,"tags":["x"],
//       "region":"eu","note":null}'
#pragma once

#include <waypoint/app/typed/json.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::examples {

struct record_request {
  std::string name;
  std::string email;
  std::int64_t quantity = 0;
  bool active = false;
  double score = 0;
  std::vector<std::string> tags;
  std::string region;
  std::optional<std::string> note;
};
WAYPOINT_JSON_OBJECT(record_request, name, email, quantity, active, score, tags, region, note)

// The record's rules, as its schema: documented, and enforced before the handler runs (a 422
// naming the member and the keyword). The gateway's --contracts off skips them, which is what
// bench/load/mixed's app-unchecked configuration measures.
inline nlohmann::ordered_json schema_constraints(const record_request*) {
  return {{"properties",
           {{"name", {{"minLength", 1}, {"maxLength", 64}}},
            {"email", {{"format", "email"}, {"maxLength", 254}}},
            {"quantity", {{"minimum", 0}, {"maximum", 1000000}}},
            {"score", {{"minimum", 0}, {"maximum", 10}}},
            {"tags", {{"maxItems", 16}, {"items", {{"pattern", "^[a-z0-9-]{1,32}$"}}}}},
            {"region", {{"enum", {"us-east", "us-west", "eu-west", "eu-central", "ap-south"}}}},
            {"note", {{"maxLength", 280}}}}}};
}

struct record {
  std::string id;
  std::string route;
  std::string name;
  std::int64_t quantity = 0;
  std::size_t tags = 0;
};
WAYPOINT_JSON_OBJECT(record, id, route, name, quantity, tags)

// Registers `pattern` ("POST /v1/things/{id}") as a typed record route; false when its
// method is not one that writes.
inline bool add_record_route(app::route_scope& scope, std::string_view pattern) {
  std::size_t blank = pattern.find(' ');
  if (blank == std::string_view::npos) return false;
  std::string_view method = pattern.substr(0, blank);
  std::string_view rest = pattern.substr(blank + 1);
  static std::atomic<std::uint64_t> last_id{0};
  auto answer = [](app::context& ctx, record_request in) {
    std::uint64_t id = last_id.fetch_add(1, std::memory_order_relaxed) + 1;
    return record{"r-" + std::to_string(id), std::string(ctx.route_pattern().text()), std::move(in.name),
                  in.quantity, in.tags.size()};
  };
  if (method == "POST") {
    scope.post<record_request, record>(rest, answer);
  } else if (method == "PUT") {
    scope.put<record_request, record>(rest, answer);
  } else if (method == "PATCH") {
    scope.patch<record_request, record>(rest, answer);
  } else {
    return false;
  }
  return true;
}

}  // namespace waypoint::examples
