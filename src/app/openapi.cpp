// The OpenAPI document of an application (application::openapi_text), the component
// collection its schemas go through (schema_sink), and serving both with Swagger UI.
// Schemas arrive as JSON text written in the registering translation unit (schema.hpp), so
// nothing here shares a nlohmann/json type with user code.
#include "waypoint/app/openapi.hpp"
#include "waypoint/app/websocket.hpp"

#include "waypoint/app/schema.hpp"
#include "waypoint/beast/adapter.hpp"
#include "waypoint/openapi_paths.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace waypoint::app {

// --- components ---------------------------------------------------------------------

namespace detail {

struct schema_sink::state {
  bool refuse_unknown_members;
  std::vector<std::pair<const void*, std::string>> names;  // type -> component name
  std::vector<std::pair<std::string, std::string>> schemas;  // name -> schema text
};

schema_sink::schema_sink(bool refuse_unknown_members)
    : state_(std::make_unique<state>(state{refuse_unknown_members, {}, {}})) {}
schema_sink::~schema_sink() = default;

bool schema_sink::refuse_unknown_members() const noexcept {
  return state_->refuse_unknown_members;
}

std::string schema_sink::find(const void* key) const {
  for (const auto& [k, name] : state_->names)
    if (k == key) return name;
  return {};
}

std::string schema_sink::reserve(const void* key, std::string_view spelling) {
  if (std::string known = find(key); !known.empty()) return known;
  std::string base;
  for (char c : spelling) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    base += keep ? c : '_';
  }
  if (base.empty()) base = "object";
  std::string name = base;
  auto taken = [&](const std::string& n) {
    return std::any_of(state_->names.begin(), state_->names.end(),
                       [&](const auto& entry) { return entry.second == n; }) ||
           n == "Problem";
  };
  for (int n = 2; taken(name); ++n) name = base + "_" + std::to_string(n);
  state_->names.emplace_back(key, name);
  return name;
}

void schema_sink::define(const std::string& name, std::string schema_text) {
  state_->schemas.emplace_back(name, std::move(schema_text));
}

std::string schema_sink::components_text() const {
  std::string out = "{";
  for (const auto& [name, schema] : state_->schemas) {
    if (out.size() > 1) out += ',';
    waypoint::append_json_string(out, name);
    out += ':';
    out += schema;
  }
  return out + "}";
}

}  // namespace detail

namespace {

using json = nlohmann::ordered_json;

// The problem statuses and the names of their components/responses.
struct problem_response {
  int status;
  const char* component;
  const char* when;
};
constexpr problem_response problem_responses[] = {
    {400, "BadRequest", "The body is not JSON, or a path value does not convert."},
    {404, "NotFound", "No route serves the path."},
    {405, "MethodNotAllowed", "Routes serve the path, but not with this method."},
    {413, "ContentTooLarge", "The body is longer than the application accepts."},
    {415, "UnsupportedMediaType", "The body is neither application/json nor application/cbor."},
    {422, "UnprocessableContent",
     "The body is JSON of the wrong shape, or the validation hook refused it; \"pointer\" "
     "names the value."},
    {500, "InternalServerError", "The handler failed; the cause is logged, not sent."},
};

// A typed body's content: the same schema in JSON and in CBOR (RFC 8949), which typed
// routes read and, when Accept ranks it first, answer in.
json typed_content(const json& schema) {
  return {{"application/json", {{"schema", schema}}}, {"application/cbor", {{"schema", schema}}}};
}

json problem_ref(int status) {
  for (const auto& p : problem_responses)
    if (p.status == status)
      return {{"$ref", std::string("#/components/responses/") + p.component}};
  return json::object();
}

// RFC 9457's members, and the "pointer" extension waypoint adds to a 422.
json problem_schema() {
  return json::parse(R"({
    "type": "object",
    "description": "A problem document (RFC 9457), as every waypoint error answer carries.",
    "properties": {
      "type": {"type": "string", "format": "uri-reference", "default": "about:blank"},
      "title": {"type": "string", "description": "The status's reason phrase (RFC 9110)."},
      "status": {"type": "integer", "minimum": 100, "maximum": 599},
      "detail": {"type": "string"},
      "instance": {"type": "string", "format": "uri-reference"},
      "pointer": {"type": "string",
                  "description": "A JSON Pointer (RFC 6901) to the value at fault in the body."}
    },
    "required": ["type", "title", "status"]
  })");
}

// components/responses, keyed by name as references use them.
json problem_components() {
  json responses = json::object();
  for (const auto& p : problem_responses) {
    json response = {
        {"description", p.when},
        {"content",
         {{"application/problem+json", {{"schema", {{"$ref", "#/components/schemas/Problem"}}}}}}}};
    if (p.status == 405)
      response["headers"] = {
          {"Allow",
           {{"description", "The methods the path serves, and OPTIONS."},
            {"schema", {{"type", "string"}}}}}};
    responses[p.component] = std::move(response);
  }
  return responses;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> tags_of(const detail::group_node* node) {
  std::vector<const detail::group_node*> path;
  for (; node; node = node->parent) path.push_back(node);
  std::vector<std::string> tags;
  for (auto it = path.rbegin(); it != path.rend(); ++it)
    for (const std::string& t : (*it)->tags)
      if (std::find(tags.begin(), tags.end(), t) == tags.end()) tags.push_back(t);
  return tags;
}

// One operation of an application route.
json operation_of(const detail::endpoint& ep, std::string_view method,
                  const openapi_place& place, detail::schema_sink& sink) {
  const route_doc& doc = ep.doc;
  json op = json::parse(openapi_untyped_operation(method, place, [&](std::string_view name) {
    for (const path_param_doc& p : doc.path_params)
      if (p.name == name) return p.schema;
    return std::string();
  }));
  // Declared descriptions replace the generic ones.
  if (op.contains("parameters"))
    for (json& parameter : op["parameters"])
      for (const path_param_doc& p : doc.path_params)
        if (p.name == parameter["name"] && !p.description.empty())
          parameter["description"] = p.description;
  json described = json::object();
  described["summary"] = doc.summary.empty() ? op["summary"] : json(doc.summary);
  std::string description = doc.description;
  if (!place.match_rule.empty())
    description += (description.empty() ? "" : "\n\n") + place.match_rule;
  if (!description.empty()) described["description"] = description;
  std::vector<std::string> tags = tags_of(ep.group);
  if (!tags.empty()) described["tags"] = tags;
  op.erase("summary");
  op.erase("description");
  described.update(op);  // parameters, responses
  op = std::move(described);
  op.erase("responses");

  json responses = json::object();
  if (!doc.typed) {
    responses["default"] = {{"description", "The handler's answer (an untyped route)."}};
  } else {
    std::string status = std::to_string(doc.success_status);
    std::string reason(beast::reason_phrase(static_cast<unsigned>(doc.success_status)));
    json success = {{"description", reason.empty() ? std::string("Success") : reason}};
    if (doc.response_schema) success["content"] = typed_content(json::parse(doc.response_schema(sink)));
    responses[status] = std::move(success);
    bool typed_path_values = !doc.path_params.empty();
    if (doc.request_schema) {
      op["requestBody"] = {{"required", true},
                           {"content", typed_content(json::parse(doc.request_schema(sink)))}};
    }
    if (doc.request_schema || typed_path_values) responses["400"] = problem_ref(400);
    if (doc.request_schema) {
      responses["413"] = problem_ref(413);
      responses["415"] = problem_ref(415);
      responses["422"] = problem_ref(422);
    }
  }
  responses["500"] = problem_ref(500);
  // A WebSocket route is the GET that upgrades (OpenAPI has no WebSocket operations).
  if (ep.websocket) {
    responses["101"] = {{"description", "Switching Protocols: the connection becomes a "
                                        "WebSocket (send Connection: Upgrade, Upgrade: websocket)"}};
    if (!ep.websocket->get) {
      responses.erase("default");
      responses["426"] = {{"description", "Upgrade Required: the route serves WebSocket only"}};
    }
  }
  op["responses"] = std::move(responses);
  return op;
}

}  // namespace

std::string application::openapi_text(const openapi_info& info) const {
  detail::schema_sink sink(options_.unknown_json_members == unknown_members::refuse);
  openapi_path_writer paths;
  std::vector<std::string> all_tags;
  for (const detail::endpoint& ep : endpoints_) {
    if (ep.doc.hidden) continue;
    const pattern& p = ep.route->pattern;
    std::string method = p.method().empty() ? std::string("any") : lowercase(p.method());
    std::string id = ep.doc.name.empty() ? openapi_operation_id(method, openapi_place_of(p))
                                         : ep.doc.name;
    paths.add(p, id, [&](std::string_view op_method, const openapi_place& place) {
      return operation_of(ep, op_method, place, sink).dump();
    });
    for (const std::string& t : tags_of(ep.group))
      if (std::find(all_tags.begin(), all_tags.end(), t) == all_tags.end()) all_tags.push_back(t);
  }
  for (const std::string& text : info.other_routes) {
    pattern p = parse_pattern(text);
    std::string method = p.method().empty() ? std::string("any") : lowercase(p.method());
    paths.add(p, openapi_operation_id(method, openapi_place_of(p)),
              [](std::string_view op_method, const openapi_place& place) {
                return openapi_untyped_operation(op_method, place);
              });
  }

  json doc = json::object();
  doc["openapi"] = "3.1.0";
  json about = {{"title", info.title}, {"version", info.version}};
  if (!info.description.empty()) about["description"] = info.description;
  if (!info.license.empty()) about["license"] = {{"name", info.license}, {"identifier", info.license}};
  doc["info"] = std::move(about);
  // "/": relative to where the document is served, which is where the application is.
  json servers = json::array();
  for (const std::string& url : info.servers) servers.push_back({{"url", url}});
  if (servers.empty()) servers.push_back({{"url", "/"}});
  doc["servers"] = std::move(servers);
  // The application knows no security scheme: none is required, as far as it can tell.
  doc["security"] = json::array();
  if (!all_tags.empty()) {
    json tags = json::array();
    for (const std::string& t : all_tags) tags.push_back({{"name", t}});
    doc["tags"] = std::move(tags);
  }
  doc["paths"] = json::parse(paths.paths_text());
  json schemas = {{"Problem", problem_schema()}};
  schemas.update(json::parse(sink.components_text()));
  doc["components"] = {{"schemas", std::move(schemas)}, {"responses", problem_components()}};
  doc["x-waypoint-unrouted"] = {{"404", problem_ref(404)}, {"405", problem_ref(405)}};
  json unplaced = json::parse(paths.unplaced_text());
  if (!unplaced.empty()) doc["x-waypoint-unplaced"] = std::move(unplaced);
  return doc.dump();
}

// --- serving ------------------------------------------------------------------------

namespace {

std::string html_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The files of swagger-ui-dist the page loads; nothing else below the page is served.
struct page_file {
  const char* name;
  const char* content_type;
};
constexpr page_file page_files[] = {
    {"swagger-ui.css", "text/css; charset=utf-8"},
    {"swagger-ui-bundle.js", "text/javascript; charset=utf-8"},
    {"favicon-32x32.png", "image/png"},
};

std::optional<std::string> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct openapi_site {
  openapi_info info;
  openapi_page_options options;
  std::once_flag written;
  std::string document;
  std::string page;
  std::vector<std::pair<std::string, std::string>> files;  // name -> bytes; empty: missing
  std::string missing;  // the first file that could not be read
};

}  // namespace

void serve_openapi(application& app, openapi_info info, openapi_page_options options) {
  auto site = std::make_shared<openapi_site>();
  site->info = std::move(info);
  site->options = std::move(options);
  for (const page_file& f : page_files) {
    std::optional<std::string> bytes;
    if (!site->options.ui_directory.empty())
      bytes = read_whole(site->options.ui_directory + "/" + f.name);
    if (!bytes && site->missing.empty())
      site->missing = site->options.ui_directory.empty()
                          ? std::string("no ui_directory was given")
                          : site->options.ui_directory + "/" + f.name + " cannot be read";
    site->files.emplace_back(f.name, bytes.value_or(std::string()));
  }
  site->page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
               html_escaped(site->info.title) +
               "</title><link rel=\"stylesheet\" href=\"swagger-ui.css\">"
               "<link rel=\"icon\" href=\"favicon-32x32.png\"></head>\n<body><div id=\"ui\"></div>"
               "<script src=\"swagger-ui-bundle.js\"></script>\n<script>window.ui = "
               "SwaggerUIBundle({url: \"" +
               html_escaped(site->options.document_path) +
               "\", dom_id: \"#ui\"});</script></body></html>\n";

  const application* documented = &app;
  app.get(site->options.document_path, [site, documented](context& ctx) {
    std::call_once(site->written, [&] { site->document = documented->openapi_text(site->info); });
    ctx.response().body(site->document, "application/json");
  });
  app.undocumented();
  auto unavailable = [site](context& ctx) {
    ctx.response().problem(503, "the documentation page's files are not installed (" +
                                    site->missing +
                                    "); run scripts/install-deps openapi and rebuild");
  };
  std::string page = site->options.page_path;
  if (page.empty() || page.back() != '/') page += '/';
  app.get(page + "{$}", [site, unavailable](context& ctx) {
    if (!site->missing.empty()) return unavailable(ctx);
    ctx.response().body(site->page, "text/html; charset=utf-8");
  });
  app.undocumented();
  app.get(page + "{file}", [site, unavailable](context& ctx) {
    std::string_view name = ctx.path_value("file");
    for (std::size_t i = 0; i < std::size(page_files); ++i) {
      if (name != page_files[i].name) continue;
      if (!site->missing.empty()) return unavailable(ctx);
      ctx.response().body(site->files[i].second, page_files[i].content_type);
      ctx.response().header("Cache-Control", "max-age=3600");
      return;
    }
    ctx.response().problem(404, "the documentation page has no file \"" + std::string(name) + "\"");
  });
  app.undocumented();
}

}  // namespace waypoint::app
