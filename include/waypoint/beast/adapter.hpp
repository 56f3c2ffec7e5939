// The adapter between a Boost.Beast request and a waypoint router, for use inside any Beast
// server (waypoint::beast::server uses it too):
//
//   waypoint::basic_router<my_handler> router = ...;       // frozen
//   auto result = std::make_unique<decltype(router)::match_result>();  // ~16 KiB: reuse it
//   waypoint::beast::route_outcome o = waypoint::beast::route(router, req, *result);
//   if (o.matched()) {
//     result->handler()(req, res, *result);
//   } else {
//     waypoint::beast::prepare_response(o, res);   // 404, 405 + Allow, 3xx + Location, 400
//     res.version(req.version());
//     res.keep_alive(req.keep_alive());
//   }
//
// route() is a thin template over any Body: it reads the method, target and Host field, and
// the router does the work. It allocates nothing. Building an error response allocates only
// what Beast needs for the header fields (and a body string longer than the small-string
// buffer, unless `res` is reused). The outcome is what Go's net/http.ServeMux answers: the
// router's rules (docs/precedence.md) plus the request-target rules of target.hpp.
#pragma once

#include "waypoint/beast/target.hpp"
#include "waypoint/router.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string_view>

namespace waypoint::beast {

namespace http = boost::beast::http;

// What a request routed to, and every decision about the answer when it is not a handler
// call: a framework renders its own body from it but decides nothing again. Views point
// into the request and the match result: keep both alive while the outcome is used.
struct route_outcome {
  http::status status = http::status::ok;     // ok: call the matched route's handler
  match_status kind = match_status::matched;  // the router's outcome; bad_request also
                                              // for a target that did not resolve
  std::string_view reason;                    // otherwise: why, for the response body
  std::string_view path;   // the escaped path routed on; empty when the target did not resolve
  std::string_view query;  // the request's query (after '?'), kept in a redirect's Location
  std::string_view host;   // the host routed on, from the target or Host; may carry a port
  std::string_view location_path;  // redirect: the escaped canonical path
  method_set allow;                // 405: the methods the path serves, GET implying HEAD
  bool head = false;               // HEAD: answer without a body (finish_body)

  bool matched() const noexcept { return status == http::status::ok; }
};

namespace detail {

// The request-line facts the adapter needs, read the same way for every Body.
template <class Body, class Fields>
request_head head_of(const http::request<Body, Fields>& req) noexcept {
  request_head head;
  head.method = req.method_string();
  head.target = req.target();
  head.host_fields = req.count(http::field::host);
  if (head.host_fields != 0) head.host = req.find(http::field::host)->value();
  head.version = req.version();
  return head;
}

// A router outcome that is not a handler call, as the route_outcome to answer with.
template <class Handler, std::size_t StorageBytes>
route_outcome outcome_of(const basic_match_result<Handler, StorageBytes>& result,
                         const request_target& target, bool head) noexcept {
  route_outcome o;
  o.head = head;
  o.kind = result.status();
  o.path = target.path;
  o.query = target.query;
  o.host = target.host;
  switch (result.status()) {
    case match_status::matched:
      break;
    case match_status::not_found:
      o.status = http::status::not_found;
      o.reason = "no route serves this path";
      break;
    case match_status::method_not_allowed:
      o.status = http::status::method_not_allowed;
      o.reason = "the path does not serve this method; Allow lists the methods it serves";
      o.allow = result.allowed();
      break;
    case match_status::redirect:
      o.status = static_cast<http::status>(result.redirect_status());
      o.reason = "the path has a canonical form; follow Location";
      o.location_path = result.location_path();
      break;
    case match_status::bad_request:
      o.status = http::status::bad_request;
      o.reason = result.error();
      break;
  }
  return o;
}

}  // namespace detail

// Routes `req` with `router` (frozen), leaving the match in `result` (whose handler(),
// values and route() are set when the outcome is matched()).
template <class Handler, std::size_t StorageBytes, class Body, class Fields>
route_outcome route(const basic_router<Handler>& router, const http::request<Body, Fields>& req,
                    basic_match_result<Handler, StorageBytes>& result) noexcept {
  request_head head = detail::head_of(req);
  bool is_head = head.method == "HEAD";
  request_target target;
  if (const char* why = resolve_target(head, target)) {
    route_outcome o;
    o.status = http::status::bad_request;
    o.kind = match_status::bad_request;
    o.reason = why;
    o.head = is_head;
    return o;
  }
  router.match(head.method, target.path, target.host, result);
  return detail::outcome_of(result, target, is_head);
}

// Fills `res` with the answer to an outcome that is not matched(): write_outcome_header,
// the plain body of write_plain_error, Content-Length, and finish_body for HEAD. Leaves
// version and keep-alive to the caller. Reuses `res`'s body capacity.
void prepare_response(const route_outcome& outcome, http::response<http::string_body>& res);

// The status and the header fields the answer to an outcome that is not matched() carries,
// whoever writes its body: the outcome's status; for a 405, Allow with the methods the path
// serves in byte order, GET implying HEAD, and `automatic_method` merged in when the caller
// answers it itself on every path (waypoint::app's automatic OPTIONS); for a redirect,
// Location: the router's escaped canonical path plus "?" and the query when there is one.
// Uses `res`'s body as scratch and leaves it empty.
void write_outcome_header(const route_outcome& outcome, http::response<http::string_body>& res,
                          std::string_view automatic_method = {});

// The plain error answer every layer gives unless told otherwise: status, Content-Type
// text/plain, X-Content-Type-Options: nosniff and the one-line body "<Reason-Phrase>: <why>".
// Sets no Content-Length. prepare_response and the server's default error renderer use it.
void write_plain_error(http::status status, std::string_view why,
                       http::response<http::string_body>& res);

// The last step of every answer, the rules on content (RFC 9110 6.4.1 and 9.3.2): a 1xx,
// 204 or 304 carries none, so its body is dropped; the answer to HEAD carries the
// Content-Length of the body it would have carried (a GET route's body, when it serves the
// HEAD) and no body. That length is the body's size, unless the body is empty and a
// Content-Length is already set: a HEAD handler stating the length of a body it did not
// produce is believed, as waypoint::beast::server's writer believes it. Without memory for
// the field the body is still dropped.
void finish_body(bool head, http::response<http::string_body>& res) noexcept;

// Whether a response of this status carries content (RFC 9110 §6.4.1): not 1xx, 204, 304.
// The one rule finish_body and the server's writer both follow.
constexpr bool carries_content(unsigned status) noexcept {
  return status >= 200 && status != 204 && status != 304;
}

// RFC 9110's reason phrase for `status` (section 15), the words every layer writes on the
// status line and as a problem's title. Beast's obsolete_reason() still has RFC 7231's names
// for two of them (413 "Payload Too Large", 422 "Unprocessable Entity"). Beast's name for a
// status other RFCs define (429, 451, ...); empty for one Beast does not know either.
std::string_view reason_phrase(unsigned status) noexcept;
// The reason for `res`'s status line: one the handler set with res.reason(...), else
// reason_phrase(), else Beast's.
std::string_view status_line_reason(const http::response<http::string_body>& res) noexcept;

// The same as prepare_response, as a new response that carries the request's version and
// keep-alive.
template <class Body, class Fields>
http::response<http::string_body> make_response(const route_outcome& outcome,
                                                const http::request<Body, Fields>& req) {
  http::response<http::string_body> res;
  prepare_response(outcome, res);
  res.version(req.version());
  res.keep_alive(req.keep_alive());
  return res;
}

}  // namespace waypoint::beast
