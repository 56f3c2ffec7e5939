// The answers that are not a handler call, and the rules every layer's answers share:
// the outcome's header fields, the plain error body, HEAD and content-less statuses.
// Compiled once, so that users' translation units carry only route()'s few lines of
// template; waypoint::app calls the same functions.
#include "waypoint/beast/adapter.hpp"

#include <boost/beast/http/field.hpp>

namespace waypoint::beast {
namespace {

// The Allow value ("GET, HEAD, POST"), written into `out` so a reused response's body
// capacity serves as scratch.
void write_allow(const method_set& allow, std::string_view automatic_method, std::string& out) {
  out.clear();
  allow.append_to(out, automatic_method);
}

// Location is the router's escaped canonical path (only path bytes, '/' and %XX) plus the
// query, which resolve_target has confined to visible ASCII: no byte can end the header.
void write_location(const route_outcome& o, std::string& out) {
  out.assign(o.location_path);
  if (!o.query.empty()) {
    out += '?';
    out.append(o.query);
  }
}

}  // namespace

void write_outcome_header(const route_outcome& o, http::response<http::string_body>& res,
                          std::string_view automatic_method) {
  res.result(o.status);
  std::string& scratch = res.body();
  // By status and fields rather than kind, so that an outcome built by hand answers too.
  if (o.status == http::status::method_not_allowed) {
    write_allow(o.allow, automatic_method, scratch);
    res.set(http::field::allow, scratch);
  }
  if (!o.location_path.empty()) {
    write_location(o, scratch);
    res.set(http::field::location, scratch);
  }
  scratch.clear();
}

void prepare_response(const route_outcome& o, http::response<http::string_body>& res) {
  write_outcome_header(o, res);
  write_plain_error(o.status, o.reason, res);
  if (!o.head) res.content_length(res.body().size());  // finish_body sets HEAD's
  finish_body(o.head, res);
}

void write_plain_error(http::status status, std::string_view why,
                       http::response<http::string_body>& res) {
  res.result(status);
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  res.set("X-Content-Type-Options", "nosniff");
  std::string& body = res.body();
  body.assign(reason_phrase(static_cast<unsigned>(status)));
  body += ": ";
  body.append(why);
  body += '\n';
}

std::string_view reason_phrase(unsigned status) noexcept {
  switch (status) {
    case 413:
      return "Content Too Large";
    case 422:
      return "Unprocessable Content";
    default:
      break;
  }
  auto reason = http::obsolete_reason(http::int_to_status(status));
  std::string_view text(reason.data(), reason.size());
  return text == "<unknown-status>" ? std::string_view() : text;
}

std::string_view status_line_reason(const http::response<http::string_body>& res) noexcept {
  auto given = res.reason();
  std::string_view reason(given.data(), given.size());
  // Beast answers obsolete_reason() when no reason was set; a custom one is kept as is.
  if (reason != std::string_view(http::obsolete_reason(res.result()))) return reason;
  std::string_view current = reason_phrase(res.result_int());
  return current.empty() ? reason : current;
}

void finish_body(bool head, http::response<http::string_body>& res) noexcept {
  std::string& body = res.body();
  if (!carries_content(res.result_int())) {
    body.clear();
    return;
  }
  if (!head) return;
  if (!body.empty() || res.find(http::field::content_length) == res.end()) {
    try {
      res.content_length(body.size());
    } catch (...) {
      // Without memory for the field the server still sends a valid (empty) answer.
    }
  }
  body.clear();
}

}  // namespace waypoint::beast
