// Typed routes' contracts, built when the application freezes: each route's schemas as the
// OpenAPI document writes them, with the components they name, compiled to validators.
#include "app/typed/contract.hpp"

#include "waypoint/app/application.hpp"
#include "waypoint/app/typed/inputs.hpp"

#include <stdexcept>
#include <unordered_map>

namespace waypoint::app::detail {

const route_contract* contract_of(const context& ctx) noexcept {
  const route_entry* route = ctx.matched_route();
  return route ? route->features().find<route_contract>() : nullptr;
}

namespace {
// The application's typed routes have a freeze hook that builds their contracts.
struct contracts_hooked {
  bool yes = false;
};
}  // namespace

void register_typed_route(application& app, route_entry& route) {
  route.check_schemas_with(&refuse_schema_text);
  bool& hooked = app.extension<contracts_hooked>().yes;
  if (hooked) return;
  app.on_freeze(application::freeze_stage::prepare, &build_contracts);
  hooked = true;
}

std::string request_schema_text(const route_doc& doc, schema_sink& sink) {
  if (!doc.request_schema_text.empty()) return doc.request_schema_text;
  return doc.request_schema ? doc.request_schema(sink) : std::string();
}

std::string response_schema_text(const route_doc& doc, schema_sink& sink) {
  if (!doc.response_schema_text.empty()) return doc.response_schema_text;
  return doc.response_schema ? doc.response_schema(sink) : std::string();
}

std::string parameter_schema(const parameter_doc& parameter) {
  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(parameter.schema);
  if (!parameter.constraints.empty())
    schema.merge_patch(nlohmann::ordered_json::parse(parameter.constraints));
  if (!parameter.default_value.empty())
    schema["default"] = nlohmann::ordered_json::parse(parameter.default_value);
  if (parameter.repeated) schema = {{"type", "array"}, {"items", std::move(schema)}};
  return schema.dump();
}

std::string refuse_schema_text(std::string_view text) {
  nlohmann::json schema = nlohmann::json::parse(text, nullptr, false);
  if (schema.is_discarded()) return "is not JSON";
  if (!schema.is_object()) return "is not a JSON object";
  if (schema.dump().find("\"$ref\"") != std::string::npos)
    return "holds a \"$ref\"; a schema-first route's schema stands alone";
  try {
    (void)schema_validator<nlohmann::json>::compile(schema);
  } catch (const std::invalid_argument& e) {
    return std::string("cannot be enforced: ") + e.what();
  }
  return {};
}

void build_contracts(application& app) {
  schema_sink sink(typed_options(app).unknown_json_members == unknown_members::refuse);
  struct texts {
    route_entry* route;
    std::string request, response;
  };
  std::vector<texts> typed;
  for (route_entry& ep : app.edit_routes()) {
    if (!ep.doc().typed) continue;
    typed.push_back(
        {&ep, request_schema_text(ep.doc(), sink), response_schema_text(ep.doc(), sink)});
  }
  if (typed.empty()) return;
  auto root = std::make_shared<const std::string>(R"({"components":{"schemas":)" +
                                                  sink.components_text() + "}}");
  // One validator per distinct schema text, shared by the routes that have it.
  std::unordered_map<std::string, route_contract::validator> compiled;
  auto validator_for = [&](std::string text) {
    auto [it, added] = compiled.try_emplace(text);
    if (added) it->second = std::make_shared<const lazy_validator>(std::move(text), root);
    return it->second;
  };
  // Every contract compiled before any is given: a refusal leaves no route with one.
  std::vector<std::shared_ptr<const route_contract>> contracts;
  contracts.reserve(typed.size());
  for (texts& t : typed) {
    const route_doc& doc = t.route->doc();
    std::string checking = "its schema";
    try {
      auto contract = std::make_shared<route_contract>(validator_for(std::move(t.request)),
                                                       validator_for(std::move(t.response)),
                                                       doc.success_status, doc.conditional);
      (void)contract->request<nlohmann::json>();
      (void)contract->response<nlohmann::ordered_json>();
      for (std::size_t i = 0; i < doc.parameters.size(); ++i) {
        const parameter_doc& p = doc.parameters[i];
        checking = "the schema of its " + input_named(p.in, p.name);
        contract->add_parameter(
            validator_for(p.constraints.empty() ? std::string() : parameter_schema(p)),
            input_named(p.in, p.name));
        (void)contract->parameter<nlohmann::json>(i);
      }
      contracts.push_back(std::move(contract));
    } catch (const std::exception& e) {
      throw std::invalid_argument("waypoint::app: route \"" +
                                  std::string(t.route->route_pattern().text()) +
                                  "\" registered at " + t.route->site().to_string() + ": " +
                                  checking + " cannot be enforced: " + e.what());
    }
  }
  for (std::size_t i = 0; i < typed.size(); ++i)
    typed[i].route->features().put(std::move(contracts[i]));
}

}  // namespace waypoint::app::detail
