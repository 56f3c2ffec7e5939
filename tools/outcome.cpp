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

outcome answer(const line_router& router, const request& r) {
  line_router::match_result m = router.match(r.method, r.path, r.host);
  outcome o;
  o.status = m.status();
  switch (o.status) {
    case match_status::matched: {
      o.pattern = std::string(m.route()->pattern.text());
      o.line = m.handler();
      const auto& names = m.route()->pattern.wildcard_names();
      for (std::size_t i = 0; i < m.value_count() && i < names.size(); ++i)
        o.values.emplace_back(names[i], std::string(m.value(i)));
      break;
    }
    case match_status::method_not_allowed:
      o.allow = m.allowed().to_string();
      break;
    case match_status::redirect:
      o.redirect_status = m.redirect_status();
      o.location = redirect_location(m.location_path(), r.query);
      break;
    case match_status::bad_request:
      o.error = std::string(m.error());
      break;
    case match_status::not_found:
      break;
  }
  return o;
}

outcome answer(const line_reference& reference, const request& r) {
  line_reference::result m = reference.match(r.method, r.path, r.host);
  outcome o;
  o.status = m.status;
  switch (o.status) {
    case match_status::matched:
      o.pattern = std::string(m.route->pattern.text());
      o.line = m.route->handler;
      o.values = std::move(m.values);
      break;
    case match_status::method_not_allowed:
      o.allow = std::move(m.allow);
      break;
    case match_status::redirect:
      o.redirect_status = m.redirect_status;
      o.location = redirect_location(m.location, r.query);
      break;
    case match_status::bad_request:
      o.error = std::move(m.error);
      break;
    case match_status::not_found:
      break;
  }
  return o;
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
