// The application's typed operations as Model Context Protocol tools: a Streamable HTTP
// endpoint (JSON-RPC 2.0 over POST, stateless: no session, no server-initiated stream) whose
// tools are the named typed routes.
//
//   app.post<order_request, order>("/v1/orders", place).describe({.name = "placeOrder"});
//   waypoint::app::serve_mcp(app);   // POST /mcp
//
// A tool per named, documented typed route (route_info::tool = false leaves one out):
//   name           the route's name (its OpenAPI operationId)
//   title          its summary; description: its description, else its summary
//   inputSchema    one object: the route's path, query, header and cookie inputs by name, and
//                  its body. The body's members are flattened in beside the inputs when the
//                  body is an object whose member names none of the inputs has; otherwise the
//                  body is the member "body". Object types are under "$defs".
//   outputSchema   the answer's schema when the answer is an object
//   annotations    GET: readOnlyHint; PUT, DELETE: idempotentHint; DELETE: destructiveHint
// The list is written once, when the application freezes.
//
// tools/call builds the route's request in process (path from the path inputs, query, headers,
// Cookie, a JSON body) with the caller's Host, Authorization, traceparent and tracestate, and
// runs it through application::async_handle: every layer, limit, contract, metric and log
// line applies as for the REST call. A 2xx answer is a text block (the body) and, for an
// object, structuredContent; a 304 (a conditional route given an If-None-Match argument that
// names its ETag) is a result too, its text "304 Not Modified: ETag ... is current"; any
// other is isError: true, with the problem document's status, detail and pointer in the
// text. A header or cookie argument longer than 16 KiB (the server's default header limit)
// or holding a control character is -32602.
//
// A message is parsed within the bounds of every client value (json_depth.hpp): nested
// deeper than max_json_depth (256) is -32700 with HTTP 400, found in the bytes before
// anything is built, so that no member (id, params, an argument) is ever copied or written
// out at a depth that could exhaust the stack. Answers quote what the client sent with
// U+FFFD for bytes that are not UTF-8: a body or MCP-Protocol-Version that is not UTF-8 is
// a 400, not a 500.
//
// Methods: initialize, notifications/initialized, ping, tools/list, tools/call; protocol
// versions 2025-11-25, 2025-06-18 and 2025-03-26 (2024-11-05 too: this endpoint needs nothing
// newer). JSON-RPC errors: -32700 (not JSON: HTTP 400), -32600 (not a request, or a batch:
// HTTP 400), -32601 (unknown method), -32602 (bad params, an unknown tool, a path input
// missing). A notification or a response is 202 without a body. GET and DELETE are 405
// (there is no stream to open, no session to end). A request whose Origin is neither a
// loopback origin (http or https, host localhost, 127.0.0.1 or [::1], any port, nothing else:
// read as waypoint/detail/url.hpp's split_origin reads a serialised origin, so that
// "http://localhost:80@evil.example" is not one) nor in mcp_options::allowed_origins is 403,
// the specification's defence against DNS rebinding (an Origin equal to the request's Host
// is not enough: a rebound name sends both); an unsupported MCP-Protocol-Version is 400.
#pragma once

#include "waypoint/app/application.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace waypoint::app {

struct mcp_options {
  std::string path = "/mcp";
  // serverInfo of the initialize answer.
  std::string server_name = "waypoint";
  std::string server_version = "0.1.0";
  std::string instructions{};  // empty: none
  // Origins ("https://app.example.com", scheme://host[:port] as browsers send them) allowed
  // besides loopback ones; "*" allows any. A browser client served from the API's own origin
  // needs it listed here.
  std::vector<std::string> allowed_origins{};
  // The longest JSON-RPC message read; longer is a 413 before any layer runs.
  std::uint64_t max_body_bytes = 1024 * 1024;
};

// Registers POST, GET and DELETE `options.path` on the application's root, left out of the
// OpenAPI document. Tools are rendered when the application freezes; a tool whose input names
// cannot be told apart (two inputs of one name) makes freeze() throw std::invalid_argument
// naming the route.
void serve_mcp(application& app, mcp_options options = {});

}  // namespace waypoint::app
