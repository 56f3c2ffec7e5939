// The OpenAPI 3.1 document of an application, and serving it with a documentation page.
//
//   app.post<order_request, order>("/orders", place).describe({.name = "placeOrder"});
//   waypoint::app::serve_openapi(app, {.title = "Shop", .version = "2.1.0"},
//                                {.ui_directory = "/usr/share/swagger-ui"});
//   // GET /openapi.json: the document; GET /docs/: Swagger UI reading it
//   nlohmann::json doc = waypoint::app::openapi(app, {.title = "Shop"});   // or the document
//
// The document holds, per route:
//   - its path and matching rule as waypoint/openapi_paths.hpp reads patterns;
//   - operationId: the route's name, else one made of the method and path;
//   - summary, description, and tags from every enclosing scope's tag_routes();
//   - path parameters typed as declared with path_param<T>(), else strings;
//   - for typed routes: the request body's schema from In (application/json and
//     application/cbor, required), the success status (201, 200, 204) with Out's schema in
//     both encodings, and the problem documents (application/problem+json) the typed
//     layer answers: 400 (malformed JSON, or a path value that does not convert), 413, 415
//     and 422 for routes with a body, 500 for every route;
// and, once: components/schemas with every object type (schema.hpp) and RFC 9457's problem
// schema, components/responses for each problem status, and "x-waypoint-unrouted" with the
// 404 and 405 (with Allow) the application answers for requests no route serves.
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/embedded_directory.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace waypoint::app {

// The document's "info" and "servers".
struct openapi_info {
  std::string title = "waypoint application";
  std::string version = "1.0.0";
  std::string description{};
  std::string license{};               // an SPDX identifier ("BSL-1.0"); empty: none stated
  std::vector<std::string> servers{};  // URLs; none: relative to where the document is served
  // Patterns served beside the application (a plain router in front of it), documented as
  // untyped operations, as `waypoint-route openapi` documents a route table.
  std::vector<std::string> other_routes{};
};

namespace detail {
// The document as text (src/app/documents/openapi.cpp).
std::string openapi_text(const application& app, const openapi_info& info);
}  // namespace detail

// The OpenAPI 3.1 document of `app`'s routes, parsed as `Json` (nlohmann::ordered_json keeps
// the order it was written in). Call it once routes are registered; it does not freeze.
template <class Json = nlohmann::json>
Json openapi(const application& app, const openapi_info& info = {}) {
  return Json::parse(detail::openapi_text(app, info));
}

struct openapi_page_options {
  std::string document_path = "/openapi.json";
  // The documentation page is this path ("/docs/" serves "/docs/", its files below it).
  std::string page_path = "/docs/";
  // Where swagger-ui-dist's files are (the install step copies them into the build: see
  // docs/framework.md); read once, here, and served below the page. Empty, or a file missing:
  // the page loads the swagger-ui-dist version tests/openapi/package-lock.json locks from
  // https://cdn.jsdelivr.net with Subresource Integrity hashes (scripts/pin-swagger-ui), and
  // its file paths redirect there.
  std::string ui_directory{};
  // The same files compiled into the binary (waypoint_embed_directory() of a directory
  // holding them), used in place of ui_directory when it holds every one: a page that needs
  // neither the network nor a file at run time.
  embedded_directory ui_files{};
};

// Registers GET `document_path` (the document of every other route, written once, on the
// first request, when the application is frozen) and the page, on the application's root.
// Neither appears in the document.
void serve_openapi(application& app, openapi_info info, openapi_page_options options = {});

}  // namespace waypoint::app
