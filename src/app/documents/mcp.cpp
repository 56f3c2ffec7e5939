// The Model Context Protocol endpoint (mcp.hpp): the named typed routes as tools, rendered
// when the application freezes, and tools/call run through application::async_handle.
#include "waypoint/app/documents/mcp.hpp"

#include "app/documents/mounted_api.hpp"

#include "app/detail/client_json.hpp"

#include "app/typed/contract.hpp"
#include "app/detail/media_type.hpp"
#include "waypoint/app/async.hpp"
#include "waypoint/app/typed/schema.hpp"
#include "waypoint/beast/adapter.hpp"
#include "waypoint/detail/escape.hpp"
#include "waypoint/detail/http_grammar.hpp"
#include "waypoint/detail/url.hpp"
#include "waypoint/json_string.hpp"
#include "waypoint/url_for.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <mutex>
#include <optional>
#include <array>
#include <cctype>
#include <deque>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waypoint::app {
namespace {

using json = nlohmann::ordered_json;

// The newest first: initialize answers with the client's version when it is one of these,
// else with the newest. Stateless tools need nothing a later revision added.
constexpr std::array<std::string_view, 4> protocol_versions = {"2025-11-25", "2025-06-18",
                                                               "2025-03-26", "2024-11-05"};

bool supported_version(std::string_view v) {
  return std::find(protocol_versions.begin(), protocol_versions.end(), v) !=
         protocol_versions.end();
}

struct tool_input {
  std::string in;  // "path", "query", "header", "cookie", "form"
  std::string name;
};

enum class body_kind : std::uint8_t { none, flattened, nested };

struct tool {
  std::string name;
  std::string method;
  const pattern* route = nullptr;
  std::vector<tool_input> inputs;
  body_kind body = body_kind::none;
  bool structured = false;  // the answer is an object: structuredContent
};

struct mcp_site {
  mcp_options options;
  std::vector<tool> tools;
  std::string tools_list;  // tools/list's result, JSON text
  // tools_list with the mounted services' tools (mounted_api), written again when they change.
  std::mutex mutex;
  std::string merged_list;
  std::uint64_t merged_version = 0;
};

// --- rendering the tools ------------------------------------------------------------------

constexpr std::string_view component_prefix = "#/components/schemas/";

// The component a {"$ref": "#/components/schemas/X"} names, else the schema itself.
const json& resolved(const json& schema, const json& components) {
  auto ref = schema.find("$ref");
  if (ref == schema.end() || !ref->is_string()) return schema;
  std::string_view target = ref->get_ref<const std::string&>();
  if (target.substr(0, component_prefix.size()) != component_prefix) return schema;
  auto it = components.find(std::string(target.substr(component_prefix.size())));
  return it == components.end() ? schema : *it;
}

bool is_object_schema(const json& schema) {
  auto type = schema.find("type");
  return type != schema.end() && *type == "object";
}

// The components `schema` refers to, directly or through other components.
void collect_refs(const json& schema, const json& components, std::set<std::string>& names) {
  if (schema.is_object()) {
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      if (it.key() == "$ref" && it->is_string()) {
        std::string_view target = it->get_ref<const std::string&>();
        if (target.substr(0, component_prefix.size()) != component_prefix) continue;
        std::string name(target.substr(component_prefix.size()));
        if (names.insert(name).second && components.contains(name))
          collect_refs(components[name], components, names);
      } else {
        collect_refs(*it, components, names);
      }
    }
  } else if (schema.is_array()) {
    for (const json& element : schema) collect_refs(element, components, names);
  }
}

// `schema` standing alone: the components it names under "$defs", references rewritten.
json self_contained(json schema, const json& components) {
  std::set<std::string> names;
  collect_refs(schema, components, names);
  if (!names.empty()) {
    json defs = json::object();
    for (const std::string& name : names)
      if (components.contains(name)) defs[name] = components[name];
    schema["$defs"] = std::move(defs);
  }
  std::string text = schema.dump();
  detail::refs_to_defs(text);
  return json::parse(text);
}

json annotations_for(std::string_view method, const std::string& summary) {
  json a = json::object();
  if (!summary.empty()) a["title"] = summary;
  bool read_only = method == "GET" || method == "HEAD";
  a["readOnlyHint"] = read_only;
  if (!read_only) {
    a["destructiveHint"] = method == "DELETE";
    a["idempotentHint"] = method == "PUT" || method == "DELETE";
  }
  a["openWorldHint"] = false;
  return a;
}

[[noreturn]] void refuse_tool(const route_entry& ep, const std::string& why) {
  throw std::invalid_argument("waypoint::app: serve_mcp: route \"" +
                              std::string(ep.route_pattern().text()) + "\" registered at " +
                              ep.site().to_string() + ": " + why);
}

// A tool as it is being rendered: its inputs' schemas are collected first, for every route,
// so that the sink holds every component before any tool's schema is made self-contained.
struct tool_draft {
  const route_entry* ep = nullptr;
  tool t;
  json properties = json::object();
  json required = json::array();
  std::string body, answer;  // schema texts; empty: none
};

// Adds the input `name` (a parameter `in` "path", "query", ...) to the draft's properties.
void add_input(tool_draft& d, const std::string& in, const std::string& name, json schema,
               const std::string& description, bool required) {
  if (d.properties.contains(name))
    refuse_tool(*d.ep, "two of its inputs are named \"" + name + "\"");
  if (!description.empty()) schema["description"] = description;
  d.properties[name] = std::move(schema);
  if (required) d.required.push_back(name);
  d.t.inputs.push_back({in, name});
}

// The draft of the tool `ep` is: its declared parameters, then the path wildcards it does
// not declare (as strings), then its body's and answer's schema texts.
tool_draft draft_of(const route_entry& ep, detail::schema_sink& sink) {
  const route_doc& doc = ep.doc();
  tool_draft d;
  d.ep = &ep;
  d.t.name = doc.name;
  d.t.method = std::string(ep.route_pattern().method());
  d.t.route = &ep.route_pattern();
  for (const parameter_doc& p : doc.parameters)
    add_input(d, p.in, p.name, json::parse(detail::parameter_schema(p)), p.description, p.required);
  for (const std::string& w : ep.route_pattern().wildcard_names())
    if (std::none_of(doc.parameters.begin(), doc.parameters.end(),
                     [&](const parameter_doc& p) { return p.in == "path" && p.name == w; }))
      add_input(d, "path", w, json{{"type", "string"}}, "", true);
  d.body = detail::request_schema_text(doc, sink);
  d.answer = detail::response_schema_text(doc, sink);
  return d;
}

// Whether the body schema `object` (resolved) can be flattened into the tool's arguments:
// it is an object with properties, none named like an input.
bool flattenable(const json& object, const json& properties) {
  auto members = object.find("properties");
  bool flat = is_object_schema(object) && members != object.end() && members->is_object();
  if (flat)
    for (auto it = members->begin(); it != members->end(); ++it)
      flat = flat && !properties.contains(it.key());
  return flat;
}

// The body's members as arguments beside the inputs; whether the body refuses members it
// does not name, which then closes the arguments too.
bool flatten_body(tool_draft& d, const json& object) {
  const json& members = *object.find("properties");  // flattenable: an object
  for (auto it = members.begin(); it != members.end(); ++it) d.properties[it.key()] = it.value();
  if (auto req = object.find("required"); req != object.end())
    for (const json& name : *req) d.required.push_back(name);
  auto extra = object.find("additionalProperties");
  d.t.body = body_kind::flattened;
  return extra != object.end() && *extra == false;
}

// The draft's body among its arguments: flattened when it can be, else as the "body"
// argument. Whether arguments outside the properties are refused.
bool add_body(tool_draft& d, const json& components) {
  if (d.body.empty()) return true;
  json body = json::parse(d.body);
  const json& object = resolved(body, components);
  if (flattenable(object, d.properties)) return flatten_body(d, object);
  if (d.properties.contains("body"))
    refuse_tool(*d.ep, "an input is named \"body\" and the body cannot be flattened");
  d.properties["body"] = std::move(body);
  d.required.push_back("body");
  d.t.body = body_kind::nested;
  return true;
}

// The tool's inputSchema before it is made self-contained.
json input_schema(tool_draft& d, const json& components) {
  bool closed = add_body(d, components);
  json input = {{"type", "object"}, {"properties", std::move(d.properties)}};
  if (!d.required.empty()) input["required"] = std::move(d.required);
  if (closed) input["additionalProperties"] = false;
  return input;
}

// The tools/list entry of the draft's tool; an answer that is an object is its outputSchema
// (and is then sent as structuredContent).
json tool_entry(tool_draft& d, const json& components) {
  const route_doc& doc = d.ep->doc();
  json input = input_schema(d, components);
  // The title is the summary; the description the longer text, when there is one.
  std::string description = !doc.description.empty() ? doc.description
                            : !doc.summary.empty()   ? doc.summary
                                                     : std::string(d.ep->route_pattern().text());
  json entry = {{"name", d.t.name}};
  if (!doc.summary.empty()) entry["title"] = doc.summary;
  entry["description"] = std::move(description);
  entry["inputSchema"] = self_contained(std::move(input), components);
  if (!d.answer.empty()) {
    json parsed = json::parse(d.answer);  // outlives `answer`, which may be it
    const json& answer = resolved(parsed, components);
    if (is_object_schema(answer)) {
      entry["outputSchema"] = self_contained(answer, components);
      d.t.structured = true;
    }
  }
  entry["annotations"] = annotations_for(d.t.method, doc.summary);
  return entry;
}

// The named typed routes that are tools, as site.tools and tools/list's result.
void render_tools(const application& app, mcp_site& site) {
  detail::schema_sink sink(typed_options(app).unknown_json_members == unknown_members::refuse);
  std::vector<tool_draft> drafts;
  for (const route_entry& ep : app.routes()) {
    const route_doc& doc = ep.doc();
    if (doc.typed && !doc.name.empty() && !doc.hidden && doc.tool)
      drafts.push_back(draft_of(ep, sink));
  }
  json components = json::parse(sink.components_text());
  json list = json::array();
  for (tool_draft& d : drafts) {
    list.push_back(tool_entry(d, components));
    site.tools.push_back(std::move(d.t));
  }
  site.tools_list = json{{"tools", std::move(list)}}.dump();
}

// --- answering -----------------------------------------------------------------------------

// A JSON-RPC answer's text. Written with U+FFFD for bytes that are not UTF-8: a message may
// quote what the client sent (a protocol version, nlohmann/json's "last read: ..."), and a
// client's bad bytes must not make dump() throw, which would turn its 400 into a 500.
std::string rpc_text(const json& body) {
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A JSON-RPC error as HTTP `status`.
void rpc_error(context& ctx, int status, const json& id, int code, std::string message) {
  json body = {{"jsonrpc", "2.0"},
               {"id", id},
               {"error", {{"code", code}, {"message", std::move(message)}}}};
  ctx.response().status(status).body(rpc_text(body), "application/json");
}

void rpc_result(context& ctx, const json& id, json result) {
  json body = {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
  ctx.response().status(200).body(rpc_text(body), "application/json");
}

// Whether `origin` is http(s) on a loopback host, read by the one origin parser: no
// userinfo ("http://localhost:80@evil.example") and nothing after the host
// ("http://[::1]evil") can pass for one.
bool is_loopback_origin(std::string_view origin) {
  waypoint::detail::origin_parts parts;
  if (!waypoint::detail::split_origin(origin, parts)) return false;
  if (!waypoint::detail::iequals(parts.scheme, "http") &&
      !waypoint::detail::iequals(parts.scheme, "https"))
    return false;
  std::string_view host = parts.host.host;
  if (parts.host.bracketed) return host == "::1";
  return waypoint::detail::iequals(host, "localhost") || host == "127.0.0.1";
}

// Whether a request's Origin may use the endpoint: none (not a browser), a loopback origin
// (localhost, 127.0.0.1, [::1], any port), or one the options list. Not the request's own
// Host: a DNS-rebinding page at evil.example, its name now resolving to this server, sends
// Host: evil.example and Origin: http://evil.example, so agreeing with Host proves nothing.
bool origin_allowed(const context& ctx, const mcp_options& options) {
  std::string_view origin = ctx.header(http::field::origin);
  if (origin.empty()) return true;
  for (const std::string& allowed : options.allowed_origins)
    if (allowed == "*" || waypoint::detail::iequals(allowed, origin)) return true;
  return is_loopback_origin(origin);
}

// An argument as the text of a path, query, header or cookie value; false for what has none.
bool argument_text(const nlohmann::json& value, std::string& out) {
  if (value.is_string()) {
    out = value.get<std::string>();
  } else if (value.is_boolean()) {
    out = value.get<bool>() ? "true" : "false";
  } else if (value.is_number()) {
    out = value.dump();
  } else {
    return false;
  }
  return true;
}

struct call_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The longest header or cookie argument: the server's default header section limit
// (beast::server_options::max_header_bytes), so a call carries no value the REST request
// could not; far below the 64 KiB past which Beast's fields throw.
constexpr std::size_t max_field_argument_bytes = 16 * 1024;

// A header or cookie argument as a field value (RFC 9110 §5.5): no control bytes, which
// would end or split the field should the route forward it, and within the limit above.
void check_field_argument(const tool_input& input, std::string_view value) {
  if (value.size() > max_field_argument_bytes)
    throw call_error("argument \"" + input.name + "\" (a " + input.in + " value) is " +
                     std::to_string(value.size()) + " bytes; at most " +
                     std::to_string(max_field_argument_bytes) + " are sent");
  bool control = std::any_of(value.begin(), value.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && byte != '\t') || byte == 0x7f;
  });
  if (control)
    throw call_error("argument \"" + input.name + "\" (a " + input.in +
                     " value) holds a control character");
}

// Appends name=value to an application/x-www-form-urlencoded body: every byte but the URL
// standard's unreserved ones escaped (so '+', '&' and '=' in a value survive).
void append_form_pair(std::string& body, std::string_view name, std::string_view value) {
  using waypoint::detail::append_percent_encoded, waypoint::detail::is_unreserved;
  if (!body.empty()) body += '&';
  append_percent_encoded(body, name, is_unreserved);
  body += '=';
  append_percent_encoded(body, value, is_unreserved);
}

// The arguments a tool's inputs name, sorted by where the request carries them.
struct call_inputs {
  std::deque<std::string> texts;  // url_param holds views: a deque never moves its strings
  std::vector<url_param> path, query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string cookies;
  std::string form;  // the fields of a route that binds from::form
  bool binds_form = false;
};

// The values of one argument: each element of an array for a query or form input (a
// repeated key), else the value itself.
std::vector<const nlohmann::json*> argument_values(const tool_input& input,
                                                   const nlohmann::json& value) {
  std::vector<const nlohmann::json*> values;
  if (value.is_array() && (input.in == "query" || input.in == "form")) {
    for (const auto& v : value) values.push_back(&v);
  } else {
    values.push_back(&value);
  }
  return values;
}

void place_value(call_inputs& in, const tool_input& input, std::string text) {
  if (input.in == "header" || input.in == "cookie") check_field_argument(input, text);
  in.texts.push_back(std::move(text));
  std::string_view value = in.texts.back();
  if (input.in == "path") {
    in.path.push_back({input.name, value});
  } else if (input.in == "query") {
    in.query.push_back({input.name, value});
  } else if (input.in == "header") {
    in.headers.emplace_back(input.name, value);
  } else if (input.in == "form") {
    append_form_pair(in.form, input.name, value);
  } else {
    in.cookies += (in.cookies.empty() ? "" : "; ") + input.name + "=" + std::string(value);
    if (in.cookies.size() > max_field_argument_bytes)
      throw call_error("the cookie arguments together are longer than " +
                       std::to_string(max_field_argument_bytes) + " bytes");
  }
}

call_inputs read_inputs(const tool& t, const nlohmann::json& args) {
  call_inputs in;
  for (const tool_input& input : t.inputs) {
    in.binds_form = in.binds_form || input.in == "form";
    auto it = args.find(input.name);
    if (it == args.end() || it->is_null()) {
      if (input.in == "path")
        throw call_error("missing argument \"" + input.name + "\" (a path value)");
      continue;
    }
    for (const nlohmann::json* v : argument_values(input, *it)) {
      std::string text;
      if (!argument_text(*v, text))
        throw call_error("argument \"" + input.name + "\" must be a string, a number or a boolean");
      place_value(in, input, std::move(text));
    }
  }
  return in;
}

// The JSON body a tools/call stands for: the arguments no input names (flattened), or the
// argument "body" (nested). Dumped straight from the bounded message (parse_client_json),
// never copied into another document first.
std::string request_body(const tool& t, const nlohmann::json& args) {
  if (t.body == body_kind::nested) {
    auto it = args.find("body");
    if (it == args.end()) throw call_error("missing argument \"body\"");
    return it->dump();
  }
  std::string body = "{";
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (std::any_of(t.inputs.begin(), t.inputs.end(),
                    [&](const tool_input& i) { return i.name == it.key(); }))
      continue;
    if (body.size() > 1) body += ',';
    waypoint::append_json_string(body, it.key());
    body += ':';
    body += it.value().dump();
  }
  return body + "}";
}

// The REST request a tools/call stands for.
request build_request(const context& ctx, const tool& t, const nlohmann::json& args) {
  call_inputs in = read_inputs(t, args);
  request req;
  req.version(11);
  std::string body = t.body == body_kind::none ? std::string() : request_body(t, args);
  req.method_string(t.method.empty() ? (body.empty() ? "GET" : "POST") : t.method);
  try {
    req.target(build_path(*t.route, in.path, in.query));
  } catch (const url_error& e) {
    throw call_error(e.what());
  }
  std::string_view host = t.route->host();
  req.set(http::field::host, host.empty() ? ctx.header(http::field::host) : host);
  req.set(http::field::accept, "application/json");
  for (std::string_view carried : {"Authorization", "traceparent", "tracestate"}) {
    std::string_view value = ctx.header(carried);
    if (!value.empty()) req.set(carried, value);
  }
  for (auto& [name, value] : in.headers) req.set(name, value);
  if (!in.cookies.empty()) req.set(http::field::cookie, in.cookies);
  if (t.body != body_kind::none || in.binds_form) {
    req.set(http::field::content_type, t.body != body_kind::none
                                           ? "application/json"
                                           : "application/x-www-form-urlencoded");
    req.body() = t.body != body_kind::none ? std::move(body) : std::move(in.form);
    req.prepare_payload();
  }
  return req;
}

// A route's answer read as JSON, bounded as a client's value is: a route may echo what its
// client sent. False when it is not JSON.
bool parse_answer(std::string_view body, json& out) {
  try {
    detail::parse_client_json(body, out);
  } catch (const detail::client_json_error&) {
    return false;
  }
  return true;
}

// A REST answer that is not content, as the text of an error result: its status, and the
// problem document's title, detail, pointer and keyword when it is one.
std::string failure_text(int status, const response& res) {
  std::string text = std::to_string(status);
  std::string reason(beast::reason_phrase(static_cast<unsigned>(status)));
  json problem;
  if (!parse_answer(res.body(), problem) || !problem.is_object()) {
    text += ' ' + reason;
    if (!res.body().empty()) text += ": " + res.body().substr(0, 512);
    return text;
  }
  auto title = problem.find("title");
  text += ' ' + (title != problem.end() && title->is_string() ? title->get<std::string>() : reason);
  if (auto detail = problem.find("detail"); detail != problem.end() && detail->is_string())
    text += ": " + detail->get<std::string>();
  if (auto pointer = problem.find("pointer"); pointer != problem.end() && pointer->is_string())
    text += " (pointer \"" + pointer->get<std::string>() + "\")";
  if (auto keyword = problem.find("keyword"); keyword != problem.end() && keyword->is_string())
    text += " (keyword \"" + keyword->get<std::string>() + "\")";
  return text;
}

json text_content(std::string text) {
  return json::array({{{"type", "text"}, {"text", std::move(text)}}});
}

// The tool's answer: the REST answer as a CallToolResult. A 304 (a conditional route's
// "what you hold is current", for an If-None-Match argument) is a result, not an error.
json call_result(const tool& t, const response& res) {
  int status = res.result_int();
  json result = json::object();
  if (status == 304) {
    std::string text = "304 Not Modified";
    if (auto etag = res.find(http::field::etag); etag != res.end())
      text += ": ETag " + std::string(etag->value()) + " is current";
    result["content"] = text_content(std::move(text));
  } else if (status < 200 || status >= 300) {
    result["content"] = text_content(failure_text(status, res));
    result["isError"] = true;
  } else {
    result["content"] = res.body().empty() ? json::array() : text_content(res.body());
    json value;
    if (t.structured && parse_answer(res.body(), value) && value.is_object())
      result["structuredContent"] = std::move(value);
  }
  return result;
}

// The sum of the mounted services' versions: it changes whenever one of their lists does.
std::uint64_t mounted_version(const application& app) {
  std::uint64_t v = 1;
  for (const auto& api : detail::mounted_apis_of(app)) v += api->version();
  return v;
}

// tools/list's result: the application's tools, then each mounted service's, named
// "<service>.<tool>" (a name the application has already stays its own).
std::string tools_list(const application& app, mcp_site& site) {
  if (detail::mounted_apis_of(app).empty()) return site.tools_list;
  std::uint64_t version = mounted_version(app);
  std::lock_guard lock(site.mutex);
  if (site.merged_version == version) return site.merged_list;
  json result = json::parse(site.tools_list);
  json& listed = result["tools"];
  for (const auto& api : detail::mounted_apis_of(app)) {
    std::shared_ptr<const json> tools = api->tools();
    if (!tools) continue;
    for (const json& t : *tools) {
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) continue;
      json copy = t;
      copy["name"] = api->name() + "." + t["name"].get<std::string>();
      bool taken = std::any_of(site.tools.begin(), site.tools.end(),
                               [&](const tool& own) { return own.name == copy["name"]; });
      if (!taken) listed.push_back(std::move(copy));
    }
  }
  site.merged_list = result.dump();
  site.merged_version = version;
  return site.merged_list;
}

// tools/call of a mounted service's tool ("<service>.<tool>"): forwarded to the service,
// its answer (result or error) given back under this request's id. False when `name` names
// no such tool.
awaitable<bool> call_mounted_tool(context& ctx, const application& app, const json& id, const std::string& name,
                                  const nlohmann::json& params) {
  for (const auto& api : detail::mounted_apis_of(app)) {
    std::string prefix = api->name() + ".";
    std::shared_ptr<const json> tools = api->tools();
    if (!tools || !name.starts_with(prefix)) continue;
    std::string own = name.substr(prefix.size());
    bool listed = std::any_of(tools->begin(), tools->end(), [&](const json& t) { return t.value("name", "") == own; });
    if (!listed) continue;
    json forwarded(params);  // a recursive conversion: params came through parse_client_json
    forwarded["name"] = own;
    json answer = co_await api->call_tool(ctx, std::move(forwarded));
    if (answer.contains("error")) {
      const json& e = answer["error"];
      rpc_error(ctx, 200, id, e.value("code", -32603), e.value("message", "the service " + api->name() + " failed"));
    } else {
      rpc_result(ctx, id, std::move(answer["result"]));
    }
    co_return true;
  }
  co_return false;
}

// params.arguments: an object, or none (null or absent: no arguments); nullptr otherwise.
const nlohmann::json* call_arguments(const nlohmann::json& params) {
  static const nlohmann::json none = nlohmann::json::object();
  auto a = params.find("arguments");
  if (a == params.end() || a->is_null()) return &none;
  return a->is_object() ? &*a : nullptr;
}

awaitable<void> call_tool(context& ctx, application& app, const mcp_site& site, const json& id,
                          const nlohmann::json& params) {
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    rpc_error(ctx, 200, id, -32602, "tools/call needs params.name, a string");
    co_return;
  }
  const std::string& called = name->get_ref<const std::string&>();
  auto t = std::find_if(site.tools.begin(), site.tools.end(),
                        [&](const tool& x) { return x.name == called; });
  if (t == site.tools.end()) {
    bool forwarded = co_await call_mounted_tool(ctx, app, id, called, params);
    if (!forwarded) rpc_error(ctx, 200, id, -32602, "unknown tool \"" + called + "\"");
    co_return;
  }
  const nlohmann::json* args = call_arguments(params);
  if (!args) {
    rpc_error(ctx, 200, id, -32602, "params.arguments must be an object");
    co_return;
  }
  std::optional<request> req;
  try {
    req = build_request(ctx, *t, *args);
  } catch (const call_error& e) {
    rpc_error(ctx, 200, id, -32602, std::string("tool \"") + t->name + "\": " + e.what());
    co_return;
  }
  response res;
  res.version(11);
  co_await app.async_handle(*req, res, &ctx.endpoints());
  rpc_result(ctx, id, call_result(*t, res));
}

// What a POST must carry before its body is read: an Origin that may use the endpoint,
// Content-Type: application/json, and a protocol version this server speaks (when it names
// one). False when it has been answered.
bool check_transport(context& ctx, const mcp_options& options) {
  if (!origin_allowed(ctx, options)) {
    ctx.response().problem(403, "Origin \"" + std::string(ctx.header(http::field::origin)) +
                                    "\" may not use this endpoint");
    return false;
  }
  std::string why;
  std::optional<detail::media_type> type =
      detail::parse_media_type(ctx.header(http::field::content_type), &why);
  if (!type) {
    ctx.response().problem(400, "the Content-Type " + why);
    return false;
  }
  if (!type->is("application/json")) {
    ctx.response().problem(415, "a JSON-RPC message is sent as Content-Type: application/json");
    return false;
  }
  std::string_view version = ctx.header("MCP-Protocol-Version");
  if (!version.empty() && !supported_version(version)) {
    rpc_error(ctx, 400, nullptr, -32600,
              "MCP-Protocol-Version \"" + std::string(version) + "\" is not one this server speaks");
    return false;
  }
  return true;
}

// The message, read within the bounds of every client value (client_json.hpp): nothing
// below copies, converts or dumps a document nested deeper than max_json_depth. False when
// it has been answered: 413 past max_body_bytes, else 400 (-32700) naming the byte.
bool read_message(context& ctx, const mcp_options& options, nlohmann::json& message) {
  try {
    detail::parse_client_json(ctx.body(), message, {.max_bytes = options.max_body_bytes});
    return true;
  } catch (const detail::client_json_error& e) {
    if (e.fault() == detail::json_fault::too_large) {
      rpc_error(ctx, 413, nullptr, -32600, e.what());
    } else {
      rpc_error(ctx, 400, nullptr, -32700,
                "Parse error: malformed JSON at byte " + std::to_string(e.byte()) + ": " + e.what());
    }
    return false;
  }
}

// A request's id as its answer carries it: the string or integer, else null. Built from
// the scalar, so an id of any other shape is never copied.
json answer_id(const nlohmann::json& id) {
  if (id.is_string()) return id.get<std::string>();
  if (id.is_number_unsigned()) return id.get<std::uint64_t>();
  if (id.is_number_integer()) return id.get<std::int64_t>();
  return nullptr;
}

// A request's parts, pointing into the message.
struct rpc_request {
  json id;
  const std::string* method = nullptr;
  const nlohmann::json* params = nullptr;
};

// The message as a request; false when it has been answered (an error, or 202 for a
// notification or a response).
bool read_request(context& ctx, const nlohmann::json& message, rpc_request& out) {
  static const nlohmann::json no_params = nlohmann::json::object();
  if (message.is_array()) {
    rpc_error(ctx, 400, nullptr, -32600, "a batch is not accepted (protocol 2025-06-18 and later)");
    return false;
  }
  // find (end() for a value that is not an object), not value(), which throws for a member
  // of another type ({"jsonrpc":{}}): a 500 the fuzzer found.
  auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    rpc_error(ctx, 400, nullptr, -32600, "not a JSON-RPC 2.0 message");
    return false;
  }
  auto method = message.find("method");
  auto id = message.find("id");
  if (method == message.end() || id == message.end()) {
    // A notification, a response (to a request this server never sends): acknowledged.
    bool acknowledged = method != message.end() || message.contains("result") ||
                        message.contains("error");
    if (acknowledged) ctx.response().status(202);
    else rpc_error(ctx, 400, nullptr, -32600, "a request needs a method");
    return false;
  }
  out.id = answer_id(*id);
  if (!method->is_string() || out.id.is_null()) {
    rpc_error(ctx, 400, out.id, -32600, "a request needs a string method and a string or integer id");
    return false;
  }
  auto params = message.find("params");
  out.method = &method->get_ref<const std::string&>();
  out.params = params == message.end() ? &no_params : &*params;
  if (out.params->is_object()) return true;
  rpc_error(ctx, 200, out.id, -32602, "params must be an object");
  return false;
}

// initialize: the client's protocol version when this server speaks it, else the newest.
void initialize(context& ctx, const mcp_site& site, const rpc_request& r) {
  auto requested = r.params->find("protocolVersion");
  if (requested == r.params->end() || !requested->is_string()) {
    rpc_error(ctx, 200, r.id, -32602, "initialize needs params.protocolVersion, a string");
    return;
  }
  std::string agreed = supported_version(requested->get_ref<const std::string&>())
                           ? requested->get<std::string>()
                           : std::string(protocol_versions.front());
  json result = {{"protocolVersion", agreed},
                 {"capabilities", {{"tools", {{"listChanged", false}}}}},
                 {"serverInfo",
                  {{"name", site.options.server_name}, {"version", site.options.server_version}}}};
  if (!site.options.instructions.empty()) result["instructions"] = site.options.instructions;
  rpc_result(ctx, r.id, std::move(result));
}

awaitable<void> answer(context& ctx, application& app, mcp_site& site) {
  nlohmann::json message;
  rpc_request r;
  if (!check_transport(ctx, site.options) || !read_message(ctx, site.options, message) ||
      !read_request(ctx, message, r))
    co_return;
  const std::string& name = *r.method;
  if (name == "initialize") {
    initialize(ctx, site, r);
  } else if (name == "ping") {
    rpc_result(ctx, r.id, json::object());
  } else if (name == "tools/list") {
    // Written at freeze() (and when a mounted service's tools change): spliced in
    // rather than parsed and written again.
    ctx.response().status(200).body(R"({"jsonrpc":"2.0","id":)" + r.id.dump() + R"(,"result":)" +
                                        tools_list(app, site) + "}",
                                    "application/json");
  } else if (name == "tools/call") {
    co_await call_tool(ctx, app, site, r.id, *r.params);
  } else {
    rpc_error(ctx, 200, r.id, -32601, "method \"" + name + "\" is not one this server has");
  }
}

}  // namespace

void serve_mcp(application& app, mcp_options options) {
  auto site = std::make_shared<mcp_site>();
  site->options = std::move(options);
  application* served = &app;
  app.on_freeze(application::freeze_stage::complete,
                [site](application& frozen) { render_tools(frozen, *site); });
  app.post(site->options.path, [site, served](context& ctx) -> awaitable<void> {
    co_await answer(ctx, *served, *site);
  });
  app.describe({.undocumented = true}).body({.max_bytes = site->options.max_body_bytes});
}

}  // namespace waypoint::app
