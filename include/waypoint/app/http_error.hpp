// The exceptions a handler throws to answer with an error: waypoint::http_error for any
// status, waypoint::app::validation_error for a 422 that names the offending field. The
// application turns both into RFC 9457 problem documents (application/problem+json); any
// other exception becomes a 500 whose text is logged, never sent.
//
//   if (!found) throw waypoint::http_error(404, "no order " + std::string(id));
//   if (q.quantity < 1) throw waypoint::app::validation_error("must be at least 1", "/quantity");
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace waypoint {

// An error answered with `status` (4xx or 5xx; anything else is answered as 500) and a
// problem document whose "detail" is `detail`. `pointer`, when set, is a JSON Pointer
// (RFC 6901) into the request body naming the value at fault; it becomes "pointer".
// `keyword`, when set, is the JSON Schema keyword the value broke ("maximum"); it becomes
// "keyword".
class http_error : public std::runtime_error {
 public:
  http_error(int status, std::string detail, std::optional<std::string> pointer = std::nullopt,
             std::optional<std::string> keyword = std::nullopt)
      : std::runtime_error(detail),
        status_(status),
        pointer_(std::move(pointer)),
        keyword_(std::move(keyword)) {}

  int status() const noexcept { return status_; }
  std::string_view detail() const noexcept { return what(); }
  const std::optional<std::string>& pointer() const noexcept { return pointer_; }
  const std::optional<std::string>& keyword() const noexcept { return keyword_; }

 protected:
  // Decoders name a nested value by prefixing the pointer of each enclosing member on the
  // way out ("/quantity" inside "/items/0" becomes "/items/0/quantity").
  void prefix_pointer(std::string_view prefix) {
    pointer_ = std::string(prefix) + pointer_.value_or("");
  }

 private:
  int status_;
  std::optional<std::string> pointer_;
  std::optional<std::string> keyword_;
};

namespace app {

// A request body that is well-formed JSON but not an acceptable value: 422 Unprocessable
// Content. Thrown by json_field() for a missing member or a wrong type, and by validation
// hooks and handlers for a value out of bounds. The pointer is relative to the value being
// decoded; typed routes report it relative to the whole body.
class validation_error : public http_error {
 public:
  explicit validation_error(std::string detail, std::optional<std::string> pointer = std::nullopt,
                            std::optional<std::string> keyword = std::nullopt)
      : http_error(422, std::move(detail), std::move(pointer), std::move(keyword)) {}

  using http_error::prefix_pointer;
};

}  // namespace app
}  // namespace waypoint
