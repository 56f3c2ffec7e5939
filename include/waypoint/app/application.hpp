// waypoint::app::application: routes with handlers, onion-model middleware and route
// groups on top of the core router and Boost.Beast's message types. It answers a
// boost::beast::http::request<string_body> with a response<string_body> directly
// (respond()), so it runs without sockets in tests and plugs into any server as its
// dispatch (serve.hpp plugs it into waypoint::beast::server).
//
//   waypoint::app::application app;
//   app.use(waypoint::app::request_id());                    // every request
//   auto v1 = app.group("api.example.com/v1", require_token);  // host + path prefix, a layer
//   v1.get("/users/{id}", show_user);          // "GET api.example.com/v1/users/{id}"
//   v1.post<new_user, user>("/users", create);  // typed JSON (waypoint/app/typed/json.hpp)
//   response res = app.respond(req);
//
// Patterns follow the core grammar (waypoint/pattern.hpp); a group's prefix may carry a
// method, a host and a path, composed with each route's: a conflict between the composed
// patterns throws the core's conflict_error naming both. Requests are routed by
// waypoint::beast::route() (adapter.hpp), so the answers to those no route serves are the
// adapter's decisions rendered as problem documents: 404, 405 with Allow, 400, and the
// router's redirect with Location (query kept); an OPTIONS request to a path that has
// routes but no OPTIONS route gets 204 with Allow, and every Allow names OPTIONS.
//
// Middleware registered with use() wraps every request, routed or not; a group's layers
// wrap its routes only, inside the application's, in registration order. The set of
// layers is fixed by freeze() (called by the first respond()), after which the
// application is immutable and respond() may run on many threads.
#pragma once

#include "waypoint/app/context.hpp"
#include "waypoint/app/route_doc.hpp"
#include "waypoint/router.hpp"
#include "waypoint/source_location.hpp"
#include "waypoint/url_for.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace waypoint {
class embedded_directory;  // waypoint/embedded_directory.hpp
}  // namespace waypoint

namespace waypoint::app {

namespace cose {
class keyring;  // waypoint/app/security/cose.hpp
}  // namespace cose

// What typed routes do with object members a WAYPOINT_JSON_OBJECT type does not declare.
enum class unknown_members : std::uint8_t {
  ignore,  // nlohmann/json's and most frameworks' default: a newer client's extra field passes
  refuse,  // a 422 naming them: a typo ("quantiy") is caught instead of defaulted
};

// What typed routes do with a request body their schema refuses, or an answer that breaks
// their contract (a body their response schema refuses, a status they do not declare).
enum class contract_check : std::uint8_t {
  off,      // unchecked
  log,      // let through; a line names the route and what broke (to try a new constraint)
  enforce,  // refused (a request: 422; an answer: 500), and for an answer the line
};

struct application_options {
  // Typed routes answer 413 to a body longer than this. 1 MiB, like the server's default
  // body limit, so the app's answer is what a client of the server sees.
  std::size_t json_body_limit = 1024 * 1024;
  // Receives one line per 500 (with the exception's text) and per access_log() entry;
  // when empty, lines go to stderr.
  std::function<void(std::string_view line)> logger{};
  // For every WAYPOINT_JSON_OBJECT type of every typed route (WAYPOINT_JSON_STRICT_OBJECT
  // types refuse whatever this says).
  unknown_members unknown_json_members = unknown_members::ignore;
  // For the query keys of typed routes whose input type declares its inputs (inputs.hpp):
  // refuse answers 400 naming a key the type does not bind (a typo, "?limt=5").
  unknown_members unknown_query_parameters = unknown_members::ignore;
  // Typed routes' request bodies checked against the document (docs/framework.md,
  // "Contracts"). `off` is for measuring what the check costs.
  contract_check request_contract = contract_check::enforce;
  // Typed routes' answers checked against the document.
  // enforce: the document is what clients generate code from, so an answer it does not
  // allow is the server's bug, answered and logged as one (FastAPI's response_model does
  // the same), rather than a surprise in a client. The check costs a schema walk per answer
  // (BENCHMARKS.md); `log` keeps the line and sends the answer, `off` skips the walk.
  contract_check response_contract = contract_check::enforce;
  // The keys typed routes open application/cose request bodies with and protect answers with
  // (waypoint/app/security/cose.hpp, docs/framework.md "COSE"). Null: a COSE body, or an Accept that
  // ranks application/cose first, is answered 503.
  std::shared_ptr<const cose::keyring> cose_keys{};
};

class application;
class route_group;
struct static_file_options;  // waypoint/app/content/static_files.hpp
class websocket_handler;     // waypoint/app/realtime/websocket.hpp

namespace detail {

struct websocket_route;  // waypoint/app/realtime/websocket.hpp
class route_contract;    // src/app/typed/contract.hpp
struct websocket_owner;  // src/app/realtime/websocket.cpp
struct mounted_api;      // src/app/documents/mounted_api.hpp

// A group's composed prefix and its own middleware. Node 0 is the application's root:
// an empty prefix, and the layers of application::use().
struct group_node {
  std::string method;  // empty: any method
  std::string host;    // empty: any host
  std::string path;    // "" or "/seg/..." without a trailing slash
  const group_node* parent = nullptr;
  std::vector<middleware> layers;
  std::vector<std::string> tags;  // OpenAPI tags of its routes (route_scope::tag_routes)
};

// A registered route: what the router's match returns.
struct endpoint {
  handler fn;
  const group_node* group = nullptr;
  // Every layer that wraps the route, outermost (the application's first) first;
  // built by freeze().
  std::vector<const middleware*> chain;
  bool async_chain = false;  // the handler or a layer is a coroutine
  const basic_route<const endpoint*>* route = nullptr;  // in the router; stable
  route_doc doc;
  std::uint64_t body_limit = 0;  // 0: the server's max_body_bytes
  bool stream_body = false;      // the handler reads the body (context::read_some)
  // A WebSocket route (route_scope::websocket): `fn` sends its upgrade requests here.
  std::shared_ptr<websocket_route> websocket;
  // A typed route's schemas, compiled by freeze(); null for other routes.
  std::shared_ptr<const route_contract> contract;
};

// A typed route: fn's input In (void: none) read from the body, its result written as
// Out; fn may return Out or awaitable<Out>. Defined in waypoint/app/typed/json.hpp, which a
// translation unit includes to register one (an "incomplete type" error below means it
// is missing).
template <class In, class Out, class F>
class typed_route;
// post<In>(pattern, fn) takes its output type from fn's result.
struct deduced_output {};
// An input type that binds members to the path, query, headers, cookies and body (inputs.hpp).
template <class T>
concept declares_inputs = requires { T::inputs.bindings; };
// The input type of a get or del handler: void for fn(context&) and fn(), else the type of
// its last parameter, which declares its inputs (json.hpp).
template <class F>
struct handler_input;

struct application_access;  // below

// Gives every typed route of `endpoints` its contract (src/app/typed/contract.cpp; freeze() calls
// it first, so that a refusal leaves the application as it was). Throws
// std::invalid_argument naming the route and its registration site when a schema holds
// what the validator cannot enforce.
void build_contracts(std::deque<endpoint>& endpoints, bool refuse_unknown_members);
// Why `text` cannot be a schema-first route's schema ("is not JSON: ...", "holds a $ref"),
// empty when it can (src/app/typed/contract.cpp).
std::string refuse_schema_text(std::string_view text);

// The handler of a WebSocket route's endpoint: upgrade requests to the route, others to
// its plain GET handler or a 426 (src/app/realtime/websocket.cpp).
handler websocket_endpoint(const websocket_route& route);

// "METHOD host/path" from a group's parts and a route's pattern text; throws
// pattern_error when they cannot combine (two methods, two hosts, no leading '/').
std::string compose_pattern(const group_node& group, std::string_view method,
                            std::string_view pattern);

}  // namespace detail

// How a route takes its request body (route_scope::body).
struct route_body {
  // The longest body accepted: 413 past it, before any layer runs. Unset: the server's
  // server_options::max_body_bytes for a whole body, default_streamed_limit for a streamed one.
  std::optional<std::uint64_t> max_bytes{};
  // false: the server reads the whole body into ctx.body() before the layers run.
  // true: the handler reads it as it arrives (co_await ctx.read_some(...)), so the server
  // reads no further than the handler does and memory stays one read's worth whatever the
  // size; ctx.body() stays empty, so typed JSON routes cannot stream.
  bool streamed = false;
  static constexpr std::uint64_t default_streamed_limit = std::uint64_t{1} << 30;  // 1 GiB
};

// The registration API shared by the application and its groups. Each call returns the
// scope, so registrations chain.
class route_scope {
 public:
  // A route whose method (if any) is in the pattern: "GET /a", "/b" (every method).
  route_scope& handle(std::string_view pattern, handler fn,
                      source_location where = source_location::current());
  route_scope& get(std::string_view pattern, handler fn,
                   source_location where = source_location::current());
  route_scope& post(std::string_view pattern, handler fn,
                    source_location where = source_location::current());
  route_scope& put(std::string_view pattern, handler fn,
                   source_location where = source_location::current());
  route_scope& patch(std::string_view pattern, handler fn,
                     source_location where = source_location::current());
  route_scope& del(std::string_view pattern, handler fn,
                   source_location where = source_location::current());

  // Files under the directory `root`, served at `prefix` (ending in '/') by GET and HEAD
  // "<prefix>{path...}" (waypoint/app/content/static_files.hpp says what may be reached and what is
  // answered). Throws std::system_error when `root` cannot be opened as a directory.
  route_scope& static_files(std::string_view prefix, const std::string& root,
                            const static_file_options& options,
                            source_location where = source_location::current());
  route_scope& static_files(std::string_view prefix, const std::string& root,
                            source_location where = source_location::current());
  // The same, for files compiled into the binary by waypoint_embed_directory()
  // (waypoint/embedded_directory.hpp): `files` views static data, and is copied.
  route_scope& static_files(std::string_view prefix, const embedded_directory& files,
                            const static_file_options& options,
                            source_location where = source_location::current());
  route_scope& static_files(std::string_view prefix, const embedded_directory& files,
                            source_location where = source_location::current());

  // A WebSocket route: GET `pattern`, whose upgrade requests run `fn` on the upgraded
  // connection (include waypoint/app/realtime/websocket.hpp, which says what is answered). A plain
  // GET on the same pattern in the same scope shares the endpoint.
  route_scope& websocket(std::string_view pattern, websocket_handler fn,
                         source_location where = source_location::current());
  route_scope& websocket(std::string_view pattern, websocket_handler fn,
                         const beast::websocket_options& options,
                         source_location where = source_location::current());

  // Adds a layer around every route of this scope (and, for the application, around
  // every request). Throws std::logic_error after freeze().
  route_scope& use(middleware layer);

  // A nested scope: `prefix` ("/v1", "api.example.com/v1", "GET /admin") composed with
  // this scope's, and `layers` around its routes.
  template <class... Layers>
  route_group group(std::string_view prefix, Layers&&... layers);

  // Typed JSON routes (include waypoint/app/typed/json.hpp). `fn` is fn(context&, In) -> Out or
  // fn(In) -> Out; get and del take fn(context&) -> Out or fn() -> Out, or an In whose type
  // declares where its members come from (waypoint/app/typed/inputs.hpp), as post, put and patch
  // may. The response is 201 for post, 200 otherwise, 204 when Out is void, unless fn sets
  // another status.
  template <class Out, class F>
  route_scope& get(std::string_view pattern, F fn,
                   source_location where = source_location::current()) {
    using In = typename detail::handler_input<F>::type;
    return add("GET", pattern, detail::typed_route<In, Out, F>(std::move(fn), 200), where);
  }
  template <class Out, class F>
  route_scope& del(std::string_view pattern, F fn,
                   source_location where = source_location::current()) {
    using In = typename detail::handler_input<F>::type;
    return add("DELETE", pattern, detail::typed_route<In, Out, F>(std::move(fn), 200), where);
  }
  template <class In, class Out = detail::deduced_output, class F>
  route_scope& post(std::string_view pattern, F fn,
                    source_location where = source_location::current()) {
    return add("POST", pattern, detail::typed_route<In, Out, F>(std::move(fn), 201), where);
  }
  template <class In, class Out = detail::deduced_output, class F>
  route_scope& put(std::string_view pattern, F fn,
                   source_location where = source_location::current()) {
    return add("PUT", pattern, detail::typed_route<In, Out, F>(std::move(fn), 200), where);
  }
  template <class In, class Out = detail::deduced_output, class F>
  route_scope& patch(std::string_view pattern, F fn,
                     source_location where = source_location::current()) {
    return add("PATCH", pattern, detail::typed_route<In, Out, F>(std::move(fn), 200), where);
  }

  // Describes the route this scope registered last (route_info, route_doc.hpp): its name
  // for url_for and the document, what the document says of it, and a schema-first route's
  // schemas. Throws std::logic_error when the scope has registered no route, after
  // freeze(), or when the route is named twice; waypoint::route_name_error when another
  // route has the name, naming both routes and sites; for a schema, what route_info says.
  route_scope& describe(const route_info& info,
                        source_location where = source_location::current());
  // The type of a wildcard's value (as ctx.path_value<T> reads it), for the document;
  // std::invalid_argument when the route has no such wildcard. (A typed route's input type
  // declares its wildcards itself: inputs.hpp.)
  template <class T>
  route_scope& path_param(std::string_view wildcard, std::string_view text = {}) {
    return describe_parameter({.in = "path",
                               .name = std::string(wildcard),
                               .schema = detail::scalar_schema<T>(),
                               .description = std::string(text)});
  }
  // How the route registered last takes its body (route_body); served by serve() or
  // options_for() (serve.hpp). Throws std::logic_error when the scope has registered no
  // route, after freeze(), or for a streamed body whose handler is not a coroutine.
  route_scope& body(const route_body& how);
  // Tags every route of this scope, registered before or after, in the document.
  route_scope& tag_routes(std::string_view tag);

 protected:
  route_scope(application& app, detail::group_node& node) noexcept : app_(&app), node_(&node) {}
  // For the application, whose root node is a member built after this base.
  explicit route_scope(application& app) noexcept : app_(&app), node_(nullptr) {}

  route_scope& add(std::string_view method, std::string_view pattern, handler fn,
                   const source_location& where);
  // A typed route: registered as above, then described (defined in schema.hpp).
  template <class In, class Out, class F>
  route_scope& add(std::string_view method, std::string_view pattern,
                   detail::typed_route<In, Out, F> fn, const source_location& where);
  route_group make_group(std::string_view prefix);
  route_doc& last_doc();
  // Adds (or replaces) a parameter of the route registered last; std::invalid_argument
  // naming the route when a path parameter names no wildcard of its pattern.
  route_scope& describe_parameter(parameter_doc parameter);

  application* app_;
  detail::group_node* node_;
  detail::endpoint* last_ = nullptr;  // the route this scope registered last

 private:
  friend struct detail::application_access;
};

// A scope with a prefix and its own layers; a small handle into the application, copied
// freely, valid as long as the application.
class route_group : public route_scope {
 private:
  friend class route_scope;
  using route_scope::route_scope;
};

template <class... Layers>
route_group route_scope::group(std::string_view prefix, Layers&&... layers) {
  route_group g = make_group(prefix);
  (g.use(middleware(std::forward<Layers>(layers))), ...);
  return g;
}

class application : public route_scope {
 public:
  using router_type = basic_router<const detail::endpoint*>;

  explicit application(application_options options = {});
  application(const application&) = delete;
  application& operator=(const application&) = delete;
  ~application();

  // Answers `req` into `res` (expected fresh: 200, empty body, the request's version, as
  // waypoint::beast::server passes it) in process, through dispatch() as the server would,
  // over a connection in memory: coroutine routes and deferred responses are waited for
  // on the calling thread (on an io_context made for the request, only when it waits), a
  // file body is read into the string, a WebSocket route answers 501, and there are no
  // endpoints. Never throws: an exception no layer handled becomes its problem document
  // (http_error) or a logged 500. For HEAD, the body is dropped and Content-Length says
  // its size (waypoint::beast::finish_body, which also keeps a length a HEAD handler stated
  // without a body). Safe to call from many threads. A deferred response that is never
  // sent (nor dropped) keeps it waiting: there is no client to time out.
  void respond(const request& req, response& res) noexcept;
  // The same into a new response.
  response respond(const request& req);

  // Answers `req` into `res` from a coroutine of your own server (a Beast awaitable
  // server, say): `co_await app.async_handle(req, res)`. Any route: synchronous ones
  // answer without suspending. Runs on the awaiting coroutine's executor, and stops when
  // its cancellation slot fires (the request is then unanswered: close the connection).
  // `ends`: the connection's endpoints, for context::endpoints(); may be null. `res` comes
  // back ready for http::async_write: Content-Length set (for HEAD, the length of the body
  // a GET would carry, and no body); keep-alive is the caller's.
  awaitable<void> async_handle(const request& req, response& res,
                               const beast::connection_endpoints* ends = nullptr);
  // The same for a request with any body Beast reads into a buffer sequence
  // (dynamic_body, flat_buffer bodies): its body is copied into a string first.
  template <class Body>
    requires(!std::is_same_v<Body, http::string_body>)
  awaitable<void> async_handle(const http::request<Body>& req, response& res,
                               const beast::connection_endpoints* ends = nullptr);

  // Fixes routes and layers; later registrations throw std::logic_error. respond() calls
  // it on first use; call it yourself before sharing the application between threads.
  void freeze();

  // Replaces the 404 answer for requests no route serves (application layers still wrap it).
  void not_found(handler fn);

  // Writes one line to the options' logger, or to stderr.
  void log(std::string_view line) const noexcept;

  const router_type& router() const noexcept { return router_; }

  // The path of the route called `route_name` with these wildcard values, and `query`
  // (waypoint/url_for.hpp: each value escaped for its segment); waypoint::url_error when no
  // route has the name or a value is missing, extra or cannot route back.
  std::string url_for(std::string_view route_name, std::initializer_list<url_param> values = {},
                      std::initializer_list<url_param> query = {}) const;

  // The OpenAPI 3.1 document of the routes (openapi.hpp says what it holds), parsed as
  // `Json` (nlohmann::ordered_json keeps the order it was written in). Call it once routes
  // are registered; it does not freeze.
  template <class Json = nlohmann::json>
  Json openapi(const openapi_info& info = {}) const {
    return Json::parse(openapi_text(info));
  }

 private:
  friend class route_scope;
  friend struct detail::application_access;

  // The server's entry point (dispatch_to() in serve.hpp): answers at once, or defers the
  // exchange for a coroutine or deferred response and sends it when done.
  void dispatch(beast::exchange& x) noexcept;
  // The server's plan for a request's body (server_options::plan_body, set by
  // options_for()): the matched route's limit (`server_limit` when it sets none) and
  // whether it streams.
  beast::body_plan plan_body(const request& header, std::uint64_t server_limit) const noexcept;
  bool frozen() const noexcept { return frozen_.load(std::memory_order_acquire); }
  std::string openapi_text(const openapi_info& info) const;

  // The endpoint of requests that no route serves: 404, 405 (or the automatic OPTIONS),
  // redirect, 400.
  void answer_unrouted(context& ctx) const;
  void route(context& ctx) const noexcept;
  void finish(context& ctx) const noexcept;
  bool run_now(context& ctx) const noexcept;
  // After the chain of a request a WebSocket route accepted: hands the connection over
  // (true: `ctx` is the WebSocket's now), or answers 501 when it cannot be.
  bool start_websocket(context* ctx) const noexcept;
  static awaitable<void> run_websocket(std::shared_ptr<detail::websocket_owner> owner,
                                       beast::websocket_channel& channel);
  awaitable<void> run_rest(context& ctx) const;

  application_options options_;
  router_type router_;
  std::deque<detail::group_node> groups_;  // deque: nodes are referenced by address
  std::deque<detail::endpoint> endpoints_;
  // WebSocket endpoints by composed pattern, for a GET registered after them.
  std::vector<std::pair<std::string, detail::endpoint*>> websocket_endpoints_;
  bool adding_websocket_ = false;  // add() then registers, never joins a WebSocket endpoint
  std::vector<const middleware*> root_chain_;  // the application's layers, once frozen
  bool root_async_ = false;                    // ... hold a coroutine
  handler unrouted_;                           // calls answer_unrouted()
  handler not_found_;
  route_names names_;
  // Run by freeze() once the routes and contracts are complete (serve_mcp renders its tools).
  std::vector<std::function<void()>> freeze_hooks_;
  // Services mounted at a prefix (mount(), child_service.hpp), for the document and MCP.
  std::vector<std::shared_ptr<const detail::mounted_api>> mounted_apis_;
  std::atomic<bool> frozen_{false};
  std::mutex freeze_mutex_;
};

namespace detail {

// What the framework's own parts (the server's wiring in serve.hpp, typed routes, the
// document's route) reach inside an application for. Not for applications: a handler
// author meets none of it, which keeps the application's own surface to what registers,
// answers and documents routes.
struct application_access {
  static void dispatch(application& app, beast::exchange& x) noexcept { app.dispatch(x); }
  static beast::body_plan plan_body(const application& app, const request& header,
                                    std::uint64_t server_limit) noexcept {
    return app.plan_body(header, server_limit);
  }
  static const application_options& options(const application& app) noexcept {
    return app.options_;
  }
  static std::string openapi_text(const application& app, const openapi_info& info) {
    return app.openapi_text(info);
  }
  // The route that matched `ctx`, null when none did.
  static const endpoint* endpoint_of(const context& ctx) noexcept;
  // The contract of the route that matched `ctx`, null when it has none.
  static const route_contract* contract_of(const context& ctx) noexcept;
  // Every route, in registration order.
  static const std::deque<endpoint>& endpoints(const application& app) noexcept {
    return app.endpoints_;
  }
  // `hook` runs when the application freezes, after the contracts are built; a throw fails
  // freeze().
  static void on_freeze(application& app, std::function<void()> hook) {
    app.freeze_hooks_.push_back(std::move(hook));
  }
  static application& application_of(route_scope& scope) noexcept { return *scope.app_; }
  // The route `scope` registered last.
  static const endpoint& last_endpoint(route_scope& scope) noexcept { return *scope.last_; }
  static void add_mounted_api(application& app, std::shared_ptr<const mounted_api> api) {
    app.mounted_apis_.push_back(std::move(api));
  }
  static const std::vector<std::shared_ptr<const mounted_api>>& mounted_apis(const application& app) noexcept {
    return app.mounted_apis_;
  }
};

}  // namespace detail

namespace detail {
// One line to the application's log about a request: 'waypoint: <lead> "METHOD path" (route
// "...", request id ...): "<what>"', the client's text through append_log_text (src/app).
void log_request(context& ctx, std::string_view lead, std::string_view what) noexcept;
}  // namespace detail

// Inside a catch block: answers the exception being handled as recover() does (an
// http_error's problem document, a 500 whose text goes to the log, a 499 if the client left).
void answer_current_exception(context& ctx) noexcept;
// Inside a catch block: the status answer_current_exception() would answer with.
int current_exception_status() noexcept;

}  // namespace waypoint::app
