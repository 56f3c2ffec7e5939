// prepare_response: the bytes of the answers that are not a handler call. Compiled once, so
// that users' translation units carry only route()'s few lines of template.
#include "waypoint/beast/adapter.hpp"

#include <boost/beast/http/field.hpp>

namespace waypoint::beast {
namespace {

// The Allow value ("GET, HEAD, POST"), written into `out` so a reused response's body
// capacity serves as scratch.
void write_allow(const method_set& allow, std::string& out) {
  out.clear();
  allow.append_to(out);
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

void prepare_response(const route_outcome& o, http::response<http::string_body>& res) {
  res.result(o.status);
  std::string& body = res.body();
  if (o.status == http::status::method_not_allowed) {
    write_allow(o.allow, body);
    res.set(http::field::allow, body);
  }
  if (!o.location_path.empty()) {
    write_location(o, body);
    res.set(http::field::location, body);
  }
  write_plain_error(o.status, o.reason, res);
  res.content_length(body.size());
  if (o.head) body.clear();  // Content-Length still tells the size a GET would get
}

void write_plain_error(http::status status, std::string_view why,
                       http::response<http::string_body>& res) {
  res.result(status);
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  res.set("X-Content-Type-Options", "nosniff");
  std::string& body = res.body();
  body.assign(http::obsolete_reason(status));
  body += ": ";
  body.append(why);
  body += '\n';
}

}  // namespace waypoint::beast
