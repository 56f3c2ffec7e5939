// A service mounted at a prefix whose own operations and tools the host shows as its own:
// child_service.cpp implements it (the child's document and tools, read from the child after
// each start), openapi.cpp merges the documents into the application's, and mcp.cpp lists
// the tools beside the application's and forwards their calls.
#pragma once

#include "waypoint/app/application.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace waypoint::app {

namespace detail {

struct mounted_api {
  virtual ~mounted_api() = default;
  // Names the service's components and tools in the host's ("example" -> "example.greet").
  virtual const std::string& name() const noexcept = 0;
  // The composed path prefix ("/v1/child"), the host's group prefix included.
  virtual const std::string& prefix() const noexcept = 0;
  // Its OpenAPI document and its tools (tools/list's "tools"), as last read; null: none yet
  // (not started, or it serves none).
  virtual std::shared_ptr<const nlohmann::ordered_json> document() const = 0;
  virtual std::shared_ptr<const nlohmann::ordered_json> tools() const = 0;
  // Changes whenever document() or tools() does: the host's rendered copies are stale then.
  virtual std::uint64_t version() const noexcept = 0;
  // tools/call of one of tools(), `params` as the host received them with the service's own
  // tool name: the service's JSON-RPC answer (a result or an error member). Throws
  // http_error when the service cannot be reached.
  virtual awaitable<nlohmann::ordered_json> call_tool(context& ctx, nlohmann::ordered_json params) const = 0;
};

// The services mounted in an application, in the order mounted: its extension.
struct mounted_apis {
  std::vector<std::shared_ptr<const mounted_api>> list;
};

inline const std::vector<std::shared_ptr<const mounted_api>>& mounted_apis_of(
    const application& app) noexcept {
  static const mounted_apis none;
  const mounted_apis* apis = app.find_extension<mounted_apis>();
  return (apis ? apis : &none)->list;
}

}  // namespace detail
}  // namespace waypoint::app
