// Pattern translation for the peer routers and their out-of-line parts (see peers.hpp).
#include "peers.hpp"

#include "waypoint/pattern.hpp"

#include <cstdlib>
#include <string_view>

namespace waypoint::bench {
namespace {

// The name given to a trailing slash's anonymous rest wildcard; its value is dropped.
constexpr std::string_view anonymous_rest = "waypoint_rest";

// Characters that are syntax in a peer's literal text.
bool literal_is_plain(std::string_view text, peer_syntax syntax) {
  std::string_view special = syntax == peer_syntax::r3 ? "{}" : ":()*?+[]{}\\";
  return text.find_first_of(special) == std::string_view::npos;
}

// `p` in the peer's syntax, or an empty string with `why` set.
std::string translate_path(const pattern& p, peer_syntax syntax, std::string& why) {
  if (!p.host().empty()) {
    why = "host patterns are not supported";
    return {};
  }
  std::string out;
  for (const segment& s : p.segments()) {
    out += '/';
    switch (s.type) {
      case segment::kind::literal: {
        std::string escaped;
        detail::append_escaped(escaped, s.text);
        if (!literal_is_plain(escaped, syntax)) {
          why = "literal \"" + escaped + "\" contains the peer's syntax characters";
          return {};
        }
        out += escaped;
        break;
      }
      case segment::kind::wildcard:
        out += syntax == peer_syntax::r3 ? "{" + s.text + "}" : ":" + s.text;
        break;
      case segment::kind::rest: {
        std::string name = s.text.empty() ? std::string(anonymous_rest) : s.text;
        out += syntax == peer_syntax::r3 ? "{" + name + ":.*}" : ":" + name + "(.*)";
        break;
      }
      case segment::kind::end:
        break;
    }
  }
  return out;
}

#if defined(WAYPOINT_BENCH_HAVE_RESTINIO)
bool express_method(std::string_view m, restinio::http_method_id_t& out) {
  if (m == "GET")
    out = restinio::http_method_get();
  else if (m == "HEAD")
    out = restinio::http_method_head();
  else if (m == "POST")
    out = restinio::http_method_post();
  else if (m == "PUT")
    out = restinio::http_method_put();
  else if (m == "PATCH")
    out = restinio::http_method_patch();
  else if (m == "DELETE")
    out = restinio::http_method_delete();
  else if (m == "OPTIONS")
    out = restinio::http_method_options();
  else
    return false;
  return true;
}
#endif

}  // namespace

std::vector<std::uint32_t> precedence_order(const route_table& table) {
  waypoint_impl w(table);
  std::vector<std::uint32_t> order;
  for (const auto* route : w.router().routes_by_precedence())
    order.push_back(static_cast<std::uint32_t>(route->position));
  return order;
}

outcome peer_outcome(const route_table& table, std::uint32_t index,
                     const std::vector<std::string>& values) {
  outcome out;
  if (index == no_route) return out;
  out.status = match_status::matched;
  out.pattern = table.patterns[index];
  pattern p = parse_pattern(out.pattern);
  const auto& names = p.wildcard_names();
  for (std::size_t i = 0; i < names.size() || i < values.size(); ++i)
    out.values.emplace_back(i < names.size() ? names[i] : "?", i < values.size() ? values[i] : "");
  return out;
}

peer_table translate(const route_table& table, peer_syntax syntax, peer_order order) {
  peer_table out;
  out.source = table;
  std::vector<std::uint32_t> indexes;
  if (order == peer_order::precedence) {
    indexes = precedence_order(table);
  } else {
    for (std::size_t i = 0; i < table.patterns.size(); ++i)
      indexes.push_back(static_cast<std::uint32_t>(i));
  }
  for (std::uint32_t i : indexes) {
    pattern p = parse_pattern(table.patterns[i]);
    std::string why;
    std::string path = translate_path(p, syntax, why);
    if (path.empty()) {
      out.rejected.push_back({i, why});
      continue;
    }
    out.paths.push_back(std::move(path));
    out.methods.emplace_back(p.method());
    out.index.push_back(i);
  }
  return out;
}

#if defined(WAYPOINT_BENCH_HAVE_RESTINIO)

restinio_impl::restinio_impl(const prepared& table) : table_(&table), rejected_(table.rejected) {
  auto options = restinio::path2regex::options_t{}.sensitive(true).strict(true);
  auto handler = [](auto, auto) { return restinio::request_rejected(); };
  entries_.reserve(table.paths.size());
  for (std::size_t i = 0; i < table.paths.size(); ++i) {
    try {
      restinio::http_method_id_t method;
      if (table.methods[i].empty()) {
        entries_.emplace_back(restinio::router::none_of_methods(), table.paths[i], options,
                              handler);
      } else if (express_method(table.methods[i], method)) {
        entries_.emplace_back(method, table.paths[i], options, handler);
      } else {
        rejected_.push_back(
            {table.index[i], "method " + table.methods[i] + " unknown to RESTinio"});
        continue;
      }
      index_.push_back(table.index[i]);
    } catch (const std::exception& e) {
      rejected_.push_back({table.index[i], e.what()});
    }
  }
}

restinio_impl::query restinio_impl::compile(const request& r) const {
  restinio::http_method_id_t method = restinio::http_method_get();
  if (!express_method(r.method, method)) method = restinio::http_method_options();
  return {restinio::http_request_header_t{method, r.target}};
}

outcome restinio_impl::answer(const request& r) const {
  query q = compile(r);
  restinio::router::impl::target_path_holder_t target{q.header.path()};
  restinio::router::route_params_t params;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i].match(q.header, target, params)) continue;
    pattern p = parse_pattern(table_->source.patterns[index_[i]]);
    std::vector<std::string> values;
    for (const std::string& n : p.wildcard_names())
      if (auto v = params.get_param(n)) values.emplace_back(v->data(), v->size());
    return peer_outcome(table_->source, index_[i], values);
  }
  return {};
}

#endif

}  // namespace waypoint::bench
