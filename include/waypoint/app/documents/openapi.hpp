// The OpenAPI 3.1 document of an application, and serving it with a documentation page.
//
//   app.post<order_request, order>("/orders", place).describe({.name = "placeOrder"});
//   waypoint::app::serve_openapi(app, {.title = "Shop", .version = "2.1.0"},
//                                {.ui_directory = "/usr/share/swagger-ui"});
//   // GET /openapi.json: the document; GET /docs/: Swagger UI reading it
//   nlohmann::json doc = app.openapi({.title = "Shop"});   // or the document directly
//
// The document (application::openapi) holds, per route:
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

#include <string>

namespace waypoint::app {

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
