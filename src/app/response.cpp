// The response builder, and the RFC 9457 problem documents every error answer uses.
#include "waypoint/app/response.hpp"

#include "waypoint/beast/adapter.hpp"

#include <waypoint/json_string.hpp>

#include <stdexcept>

namespace waypoint::app {
namespace {

// The status's reason phrase, RFC 9110's as on the status line (beast::reason_phrase).
std::string_view title_of(int status) noexcept {
  std::string_view reason = beast::reason_phrase(static_cast<unsigned>(status));
  return reason.empty() ? std::string_view("Error") : reason;
}

}  // namespace

namespace detail {

std::string_view clip_client_text(std::string_view text, std::string& scratch) {
  if (text.size() <= max_client_text_bytes) return text;
  // Back up over continuation bytes (10xxxxxx) to the lead byte of the sequence the limit
  // splits, which goes with the cut part. Three at most: no UTF-8 sequence is longer, and
  // text that is not UTF-8 is cut anywhere (its writers replace stray bytes with U+FFFD).
  std::size_t cut = max_client_text_bytes;
  while (cut > max_client_text_bytes - 3 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  scratch.clear();
  scratch.reserve(cut + 32);
  scratch.append(text.substr(0, cut));
  scratch += "\xE2\x80\xA6 (+";  // U+2026 HORIZONTAL ELLIPSIS
  scratch += std::to_string(text.size() - cut);
  scratch += " bytes)";
  return scratch;
}

void append_log_text(std::string& line, std::string_view text) {
  std::string clipped;  // allocates only for text too long to log whole
  waypoint::append_json_string(line, clip_client_text(text, clipped));
}

}  // namespace detail

response_builder& response_builder::status(int code) {
  if (code < 100 || code > 999)
    throw std::invalid_argument("waypoint::app: status " + std::to_string(code) +
                                " is not a three-digit HTTP status");
  message_->result(static_cast<unsigned>(code));
  return *this;
}

response_builder& response_builder::status(http::status code) noexcept {
  message_->result(code);
  return *this;
}

response_builder& response_builder::header(std::string_view name, std::string_view value) {
  message_->set(name, value);
  return *this;
}

response_builder& response_builder::header(http::field name, std::string_view value) {
  message_->set(name, value);
  return *this;
}

response_builder& response_builder::append_header(std::string_view name, std::string_view value) {
  message_->insert(name, value);
  return *this;
}

std::string_view response_builder::header(std::string_view name) const noexcept {
  auto it = message_->find(name);
  return it == message_->end() ? std::string_view() : std::string_view(it->value());
}

response_builder& response_builder::body(std::string text, std::string_view content_type) {
  message_->body() = std::move(text);
  message_->set(http::field::content_type, content_type);
  return *this;
}

response_builder& response_builder::redirect(int code, std::string_view location) {
  if (code < 300 || code > 399)
    throw std::invalid_argument("waypoint::app: redirect status " + std::to_string(code) +
                                " is not a 3xx");
  status(code);
  message_->set(http::field::location, location);
  message_->body().clear();
  return *this;
}

response_builder& response_builder::problem(int code, std::string_view text,
                                            std::optional<std::string_view> pointer,
                                            std::optional<std::string_view> keyword) {
  status(code);
  // The fields that described a body the handler may have started are not this body's.
  message_->erase(http::field::content_encoding);
  message_->erase(http::field::content_language);
  message_->erase(http::field::etag);
  message_->erase(http::field::last_modified);
  message_->set(http::field::content_type, "application/problem+json");
  std::string clipped;  // allocates only for a detail too long to send whole
  text = detail::clip_client_text(text, clipped);
  // Written by hand: one string, sized once, instead of a JSON object per error.
  std::string& out = message_->body();
  out.clear();
  out.reserve(96 + text.size() + (pointer ? pointer->size() : 0) +
              (keyword ? 13 + keyword->size() : 0));
  out += R"({"type":"about:blank","title":)";
  waypoint::append_json_string(out, title_of(code));
  out += R"(,"status":)";
  out += std::to_string(code);
  out += R"(,"detail":)";
  waypoint::append_json_string(out, text);
  if (pointer) {
    out += R"(,"pointer":)";
    waypoint::append_json_string(out, *pointer);
  }
  if (keyword) {
    out += R"(,"keyword":)";
    waypoint::append_json_string(out, *keyword);
  }
  out += '}';
  return *this;
}

void render_problem(http::status status, std::string_view detail, response& res) {
  response_builder(res).problem(static_cast<int>(status), detail);
}

}  // namespace waypoint::app
