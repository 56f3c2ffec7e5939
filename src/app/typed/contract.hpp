// What a typed route promises, as its OpenAPI operation states it: the JSON Schema of the
// request body it reads, of each constrained parameter (query, header, cookie, path) its input
// type binds, of the answer it writes, and the answer's status. Built and compiled by
// application::freeze() (build_contracts), then read by the codec (json_codec.ipp) on every
// request: parameters as they are read, the body after it converts, the answer before it is
// written. Private to waypoint_app.
//
// Each validator is compiled per nlohmann ABI: the codec runs in the caller's (with or
// without JSON_DIAGNOSTICS), so a schema may be needed in both. freeze() compiles the plain
// ABI's, so that a schema the validator cannot enforce is refused there, naming the route;
// the diagnostics ABI's are compiled from the same text on first use.
#pragma once

#include "app/typed/schema_validator.hpp"
#include "waypoint/app/application.hpp"
#include "waypoint/app/route_doc.hpp"

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace waypoint::app::detail {

// One schema's text, compiled on first use for each ABI and document type that asks.
class lazy_validator {
 public:
  // `root`: the document "$ref"s resolve in; null: the schema itself. An empty text: none.
  lazy_validator(std::string schema, std::shared_ptr<const std::string> root)
      : schema_(std::move(schema)), root_(std::move(root)) {}

  // Null when there is no schema. Json is the caller's nlohmann type (nlohmann::json for
  // requests and parameters, ordered_json for answers); the macro is the caller's
  // translation unit's, which sees one ABI only.
  template <class Json>
  const schema_validator<Json>* get() const {
    if (schema_.empty()) return nullptr;
    // A slot per ABI and per document type: routes share a text, and one route's request
    // (nlohmann::json) and answer (ordered_json) may have the same.
#if defined(JSON_DIAGNOSTICS) && JSON_DIAGNOSTICS
    constexpr std::size_t abi = 2;
#else
    constexpr std::size_t abi = 0;
#endif
    constexpr std::size_t slot = abi + (std::is_same_v<Json, nlohmann::json> ? 0 : 1);
    std::call_once(once_[slot], [&] {
      Json schema = Json::parse(schema_);
      Json root = root_ ? Json::parse(*root_) : schema;
      compiled_[slot] = std::make_shared<const schema_validator<Json>>(
          schema_validator<Json>::compile(schema, &root));
    });
    return static_cast<const schema_validator<Json>*>(compiled_[slot].get());
  }

 private:
  std::string schema_;
  std::shared_ptr<const std::string> root_;
  mutable std::array<std::once_flag, 4> once_;
  mutable std::array<std::shared_ptr<const void>, 4> compiled_;
};

class route_contract {
 public:
  using validator = std::shared_ptr<const lazy_validator>;

  // Routes with the same schema share its validator (build_contracts): a table of 300 record
  // routes walks one compiled schema, which stays in cache, not 300.
  route_contract(validator request, validator response, int success_status, bool conditional)
      : request_(std::move(request)),
        response_(std::move(response)),
        success_status_(success_status),
        conditional_(conditional) {}

  int success_status() const noexcept { return success_status_; }
  // The route reads If-None-Match: 304 keeps the contract too.
  bool conditional() const noexcept { return conditional_; }

  // The request body's validator; null when the route reads none.
  template <class Json>
  const schema_validator<Json>* request() const {
    return request_->get<Json>();
  }
  // The answer's validator; null when the route answers without content.
  template <class Json>
  const schema_validator<Json>* response() const {
    return response_->get<Json>();
  }
  // The validator of the route's parameter `index` (route_doc::parameters' order); null when
  // it has no constraints.
  template <class Json>
  const schema_validator<Json>* parameter(std::size_t index) const {
    return index < parameters_.size() ? parameters_[index]->get<Json>() : nullptr;
  }
  // "query parameter \"limit\"": how a 422 names parameter `index`.
  const std::string& parameter_label(std::size_t index) const { return labels_.at(index); }
  void add_parameter(validator schema, std::string label) {
    parameters_.push_back(std::move(schema));
    labels_.push_back(std::move(label));
  }

 private:
  validator request_;
  validator response_;
  std::vector<validator> parameters_;
  std::vector<std::string> labels_;
  int success_status_;
  bool conditional_;
};

// The schema text of a typed route's body and answer, as the document shows them: a
// schema-first route's text, else its type's (registering object types in `sink`); empty for
// no body, or no content.
std::string request_schema_text(const route_doc& doc, schema_sink& sink);
std::string response_schema_text(const route_doc& doc, schema_sink& sink);

// The JSON Schema of a parameter as the document shows it: its type's, with its constraints
// merged in and its default. What the route enforces when it has constraints.
std::string parameter_schema(const parameter_doc& parameter);

// The contract of the route that matched `ctx`, null when it has none.
const route_contract* contract_of(const context& ctx) noexcept;
// Gives every typed route of `app` its contract: the freeze hook typed routes add (a
// `prepare` one, so that a refusal leaves the application unfrozen). Throws
// std::invalid_argument naming the route and its registration site when a schema holds
// what the validator cannot enforce.
void build_contracts(application& app);
// Why `text` cannot be a schema-first route's schema ("is not JSON: ...", "holds a $ref"),
// empty when it can.
std::string refuse_schema_text(std::string_view text);

}  // namespace waypoint::app::detail
