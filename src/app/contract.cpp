// Typed routes' contracts, built when the application freezes: each route's schemas as the
// OpenAPI document writes them, with the components they name, compiled to validators.
#include "contract.hpp"

#include "waypoint/app/application.hpp"
#include "waypoint/app/schema.hpp"

#include <stdexcept>

namespace waypoint::app::detail {

const route_contract* application_access::contract_of(const context& ctx) noexcept {
  if (ctx.outcome().kind != match_status::matched || !ctx.match_.route()) return nullptr;
  const endpoint* ep = ctx.match_.handler();
  return ep ? ep->contract.get() : nullptr;
}

void build_contracts(std::deque<endpoint>& endpoints, bool refuse_unknown_members) {
  schema_sink sink(refuse_unknown_members);
  struct texts {
    endpoint* route;
    std::string request, response;
  };
  std::vector<texts> typed;
  for (endpoint& ep : endpoints) {
    if (!ep.doc.typed) continue;
    typed.push_back({&ep, ep.doc.request_schema ? ep.doc.request_schema(sink) : std::string(),
                     ep.doc.response_schema ? ep.doc.response_schema(sink) : std::string()});
  }
  if (typed.empty()) return;
  auto root = std::make_shared<const std::string>(R"({"components":{"schemas":)" +
                                                  sink.components_text() + "}}");
  // Every contract compiled before any is given: a refusal leaves no route with one.
  std::vector<std::shared_ptr<const route_contract>> contracts;
  contracts.reserve(typed.size());
  for (texts& t : typed) {
    auto contract = std::make_shared<route_contract>(
        std::move(t.request), std::move(t.response), t.route->doc.success_status, root);
    try {
      (void)contract->request<nlohmann::json>();
      (void)contract->response<nlohmann::ordered_json>();
    } catch (const std::exception& e) {
      throw std::invalid_argument("waypoint::app: route \"" +
                                  std::string(t.route->route->pattern.text()) + "\" registered at " +
                                  t.route->route->site.to_string() +
                                  ": its schema cannot be enforced: " + e.what());
    }
    contracts.push_back(std::move(contract));
  }
  for (std::size_t i = 0; i < typed.size(); ++i) typed[i].route->contract = std::move(contracts[i]);
}

}  // namespace waypoint::app::detail
