// A small typed body shared by the typed-inputs and MCP tests: a SKU and a quantity whose
// schema says it is at least 1 (a constraint the contract enforces with a 422).
#pragma once

#include <waypoint/app/typed/json.hpp>

#include <cstdint>
#include <string>

namespace fixtures {

struct item {
  std::string sku;
  std::int32_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(item, sku, quantity)
inline nlohmann::ordered_json schema_constraints(const item*) {
  return {{"properties", {{"quantity", {{"minimum", 1}}}}}};
}

}  // namespace fixtures
