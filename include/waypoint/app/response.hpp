// The response builder handed to handlers (ctx.response()), and the problem documents the
// framework answers its errors with.
#pragma once

#include "waypoint/app/message.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace waypoint::app {

// Builds the response in place. Every setter returns *this so calls chain:
//   ctx.response().status(201).header("Location", url).json(order);
class response_builder {
 public:
  explicit response_builder(app::response& message) noexcept : message_(&message) {}

  // Throws std::invalid_argument outside 100..999.
  response_builder& status(int code);
  response_builder& status(http::status code) noexcept;
  int status() const noexcept { return static_cast<int>(message_->result_int()); }

  // Sets a header field, replacing any with the same name.
  response_builder& header(std::string_view name, std::string_view value);
  response_builder& header(http::field name, std::string_view value);
  // Adds a header field, keeping those with the same name (Set-Cookie, Vary).
  response_builder& append_header(std::string_view name, std::string_view value);
  // The first value set for `name`, empty when none.
  std::string_view header(std::string_view name) const noexcept;

  // The body and its Content-Type (already serialized JSON: "application/json").
  response_builder& body(std::string text,
                         std::string_view content_type = "text/plain; charset=utf-8");
  std::string& body() noexcept { return message_->body(); }
  // `value` serialized, with Content-Type: application/json. A template only so that the
  // caller's nlohmann/json (and its JSON_DIAGNOSTICS setting) does the serializing.
  template <class Json = nlohmann::json>
  response_builder& json(const std::type_identity_t<Json>& value) {
    return body(value.dump(), "application/json");
  }
  // `code` (a 3xx) with Location: `location`.
  response_builder& redirect(int code, std::string_view location);
  // An RFC 9457 problem document, {"type","title","status","detail"[,"pointer"][,"keyword"]},
  // with Content-Type: application/problem+json. Other headers already set are kept, so a
  // request id or CORS fields survive an error. A detail longer than max_client_text_bytes
  // is cut (detail::clip_client_text), as it may quote the client.
  response_builder& problem(int code, std::string_view detail,
                            std::optional<std::string_view> pointer = std::nullopt,
                            std::optional<std::string_view> keyword = std::nullopt);

  app::response& message() noexcept { return *message_; }
  const app::response& message() const noexcept { return *message_; }

 private:
  friend class context;
  response_builder() noexcept = default;  // a context routed before its exchange is known

  app::response* message_ = nullptr;
};

// The most bytes of client-supplied text (a path, a header value, the token nlohmann/json
// quotes in its message) that the framework copies into a problem's "detail" or into a log
// line; the rest is cut and the cut marked. The framework's own words around such text are
// at most about 100 bytes (a 415 naming a Content-Type, nlohmann/json's malformed-JSON
// messages), so 256 keeps every ordinary detail whole with room for a 64-byte id or a long
// number, and keeps an access-log line with two clipped fields (method, path) under 1 KiB.
// A 10,000-digit number or a 100 KiB path then costs the log 256 bytes, not the whole token.
inline constexpr std::size_t max_client_text_bytes = 256;

// Writes into `res` the problem document the application answers for its own errors of
// `status` (the same writer, response_builder::problem): Content-Type
// application/problem+json and {"type":"about:blank","title":<the RFC 9110 reason
// phrase>,"status":<status>,"detail":<detail, cut at max_client_text_bytes>}; the body and
// the fields that described an earlier body are replaced, others kept. For errors answered
// outside the application, so that a client sees one error shape: waypoint::beast::server's
// own 400, 408, 413, 414, 417, 431, 501 and 503 (app::response is beast::response):
//   options.render_error = waypoint::app::render_problem;
// Throws std::invalid_argument for a status outside 100..999, std::bad_alloc.
void render_problem(http::status status, std::string_view detail, response& res);

namespace detail {

// `text` when it is at most max_client_text_bytes long; otherwise its first bytes up to
// that limit, cut before any UTF-8 sequence the limit would split, followed by
// "… (+N bytes)" naming what was cut, written into `scratch` (the only allocation, and
// only when cutting). Used wherever the framework writes text a client may have supplied:
// problem details and, through append_log_text, every log line.
std::string_view clip_client_text(std::string_view text, std::string& scratch);

// Appends text a client may have supplied (a path, a topic, an exception's what() quoting a
// body) to a log line: clipped (clip_client_text), then written as a JSON string literal,
// quotes included (append_json_string), so that no CR or LF in it starts a forged line, no
// escape sequence reaches a terminal, and a quote in it cannot end the field early. The
// one rule for client text in every log line: the access log's fields, the 500 line, the
// WebSocket and Phoenix lines.
void append_log_text(std::string& line, std::string_view text);

}  // namespace detail

}  // namespace waypoint::app
