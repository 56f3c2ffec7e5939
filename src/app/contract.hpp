// What a typed route promises, as its OpenAPI operation states it: the JSON Schema of the
// request body it reads, of the answer it writes, and the answer's status. Built and
// compiled by application::freeze() (build_contracts), then read by the codec
// (json_codec.ipp) on every request: the body is checked after it converts, the answer
// before it is written. Private to waypoint_app.
//
// The validators are compiled per nlohmann type: the codec runs in the caller's nlohmann
// ABI (with or without JSON_DIAGNOSTICS), reading requests as nlohmann::json and writing
// answers as nlohmann::ordered_json, so up to four. freeze() compiles the plain ABI's two,
// so that a schema the validator cannot enforce is refused there, naming the route; the
// diagnostics ABI's are compiled from the same text on first use.
#pragma once

#include "schema_validator.hpp"

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

namespace waypoint::app::detail {

class route_contract {
 public:
  // `root` is {"components":{"schemas":{...}}}, shared by every route of the application,
  // which the schemas' "$ref"s point into. An empty schema text: no body, or no content.
  route_contract(std::string request_schema, std::string response_schema, int success_status,
                 std::shared_ptr<const std::string> root)
      : request_schema_(std::move(request_schema)),
        response_schema_(std::move(response_schema)),
        success_status_(success_status),
        root_(std::move(root)) {}

  int success_status() const noexcept { return success_status_; }

  // The request body's validator; null when the route reads none.
  template <class Json>
  const schema_validator<Json>* request() const {
    return compiled<Json>(request_slot<Json>(), request_schema_);
  }
  // The answer's validator; null when the route answers without content.
  template <class Json>
  const schema_validator<Json>* response() const {
    return compiled<Json>(request_slot<Json>() + 2, response_schema_);
  }

 private:
  // Slots 0-1: requests, 2-3: answers; the odd ones for the diagnostics ABI. The macro is
  // the caller's translation unit's, as is Json: a unit sees one nlohmann ABI only.
  template <class Json>
  static constexpr std::size_t request_slot() noexcept {
#if defined(JSON_DIAGNOSTICS) && JSON_DIAGNOSTICS
    return 1;
#else
    return 0;
#endif
  }

  template <class Json>
  const schema_validator<Json>* compiled(std::size_t slot, const std::string& schema) const {
    if (schema.empty()) return nullptr;
    std::call_once(once_[slot], [&] {
      Json root = Json::parse(*root_);
      validators_[slot] = std::make_shared<const schema_validator<Json>>(
          schema_validator<Json>::compile(Json::parse(schema), &root));
    });
    return static_cast<const schema_validator<Json>*>(validators_[slot].get());
  }

  std::string request_schema_;
  std::string response_schema_;
  int success_status_;
  std::shared_ptr<const std::string> root_;
  mutable std::array<std::once_flag, 4> once_;
  mutable std::array<std::shared_ptr<const void>, 4> validators_;
};

}  // namespace waypoint::app::detail
