// Converting match results into outcomes, and outcomes into JSON lines.
#include "outcome.hpp"

#include "json.hpp"

namespace waypoint::route_tool {

outcome bad_request_outcome(std::string error) {
  outcome o;
  o.status = match_status::bad_request;
  o.error = std::move(error);
  return o;
}

namespace {

outcome with_request(reference::outcome base, std::size_t line, std::string_view error,
                     const request& r) {
  outcome o{std::move(base), line, {}};
  if (o.status == match_status::bad_request) o.error = std::string(error);
  if (o.status == match_status::redirect) o.location = redirect_location(o.location, r.query);
  return o;
}

}  // namespace

outcome answer(const line_router& router, const request& r) {
  line_router::match_result m = router.match(r.method, r.path, r.host);
  return with_request(reference::outcome_of(m), m.route() ? m.handler() : 0, m.error(), r);
}

outcome answer(const line_reference& reference, const request& r) {
  line_reference::result m = reference.match(r.method, r.path, r.host);
  return with_request(reference::outcome_of(m), m.route ? m.route->handler : 0, m.error, r);
}

std::string to_json(const outcome& o) {
  std::string out = "{\"kind\":";
  append_json_string(out, to_string(o.status));
  switch (o.status) {
    case match_status::matched: {
      out += ",\"pattern\":";
      append_json_string(out, o.pattern);
      out += ",\"values\":{";
      for (std::size_t i = 0; i < o.values.size(); ++i) {
        if (i > 0) out += ',';
        append_json_string(out, o.values[i].first);
        out += ':';
        append_json_string(out, o.values[i].second);
      }
      out += '}';
      break;
    }
    case match_status::method_not_allowed:
      out += ",\"allow\":";
      append_json_string(out, o.allow);
      break;
    case match_status::redirect:
      out += ",\"status\":" + std::to_string(o.redirect_status) + ",\"location\":";
      append_json_string(out, o.location);
      break;
    case match_status::bad_request:
      out += ",\"error\":";
      append_json_string(out, o.error);
      break;
    case match_status::not_found:
      break;
  }
  out += '}';
  return out;
}

}  // namespace waypoint::route_tool
