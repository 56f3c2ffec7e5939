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
#include "waypoint/app/extensions.hpp"
#include "waypoint/app/route_doc.hpp"
#include "waypoint/router.hpp"
#include "waypoint/source_location.hpp"
#include "waypoint/url_for.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace waypoint::app {

struct application_options {
  // Receives one line per 500 (with the exception's text) and per access_log() entry;
  // when empty, lines go to stderr.
  std::function<void(std::string_view line)> logger{};
};

class application;
class route_group;
class route_entry;

// The output type of post<In>(pattern, fn), put and patch when not given: fn's result's.
struct deduced_output {};

namespace detail {

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

// A typed route: fn's input In (void: none) read from the body, its result written as
// Out; fn may return Out or awaitable<Out>. Defined in waypoint/app/typed/json.hpp, which a
// translation unit includes to register one (an "incomplete type" error below means it
// is missing).
template <class In, class Out, class F>
class typed_route;
// An input type that binds members to the path, query, headers, cookies and body (inputs.hpp).
template <class T>
concept declares_inputs = requires { T::inputs.bindings; };
// The input type of a get or del handler: void for fn(context&) and fn(), else the type of
// its last parameter, which declares its inputs (json.hpp).
template <class F>
struct handler_input;

}  // namespace detail

// A registered route as features see it: its pattern and registration site, what it says
// of itself (route_doc), how it takes its body, and what features attached to it
// (extensions.hpp). Registration reaches it through route_scope::last_route() and
// application::edit_routes(); a request through context::matched_route(); a document
// through application::routes(). Stable in memory for the application's life.
class route_entry {
 public:
  // The composed pattern ("GET api.example.com/v1/users/{id}") and where it was registered.
  const waypoint::pattern& route_pattern() const noexcept { return route_->pattern; }
  const registration_site& site() const noexcept { return route_->site; }
  const route_doc& doc() const noexcept { return doc_; }
  // Before freeze(): what a feature documents of the route (route_doc::other_answers).
  route_doc& edit_doc() noexcept { return doc_; }
  const handler& target() const noexcept { return fn_; }
  // The longest body the route accepts (0: the server's max_body_bytes), and whether its
  // handler reads the body as it arrives (route_scope::body).
  std::uint64_t body_limit() const noexcept { return body_limit_; }
  bool streams_body() const noexcept { return stream_body_; }
  // The layers that wrap the route, outermost (the application's first) first, and the
  // tags of its scopes (route_scope::tag_routes), each once, outermost first.
  std::vector<const middleware*> layers() const;
  std::vector<std::string> tags() const;

  // A feature's values on this route, keyed by type; written only before freeze().
  const extensions& features() const noexcept { return features_; }
  extensions& features() noexcept { return features_; }

  // Before freeze(): the handler the route runs, in place of the one registered (a feature
  // that wraps it keeps the old one, target()).
  void replace_target(handler fn) { fn_ = std::move(fn); }
  // Before freeze(): a later registration of the same composed pattern in the same scope
  // hands its handler to `join` and describes this route, instead of being refused as a
  // conflict (a WebSocket route and a plain GET share one route). Once.
  void share_pattern(std::function<void(handler)> join);
  // Before freeze(): why `text` cannot be this route's request or response schema, empty
  // when it can; describe() asks it (set by the module that reads the route's bodies).
  void check_schemas_with(std::function<std::string(std::string_view text)> check) {
    schema_check_ = std::move(check);
  }

 private:
  friend class route_scope;
  friend class application;

  handler fn_;
  application* owner_ = nullptr;
  const detail::group_node* group_ = nullptr;
  // Every layer that wraps the route, outermost (the application's first) first; built by
  // freeze().
  std::vector<const middleware*> chain_;
  bool async_chain_ = false;                                // the handler or a layer is a coroutine
  const basic_route<const route_entry*>* route_ = nullptr;  // in the router; stable
  route_doc doc_;
  std::uint64_t body_limit_ = 0;
  bool stream_body_ = false;
  extensions features_;
  std::function<void(handler)> join_;
  std::function<std::string(std::string_view)> schema_check_;
};

// A run of routes to iterate over (application::routes()). Not std::ranges::subrange:
// clang 14's concepts cannot check it over libstdc++ 12's deque iterators.
template <class Iterator>
class route_range {
 public:
  route_range(Iterator first, Iterator last) noexcept : begin_(first), end_(last) {}
  Iterator begin() const noexcept { return begin_; }
  Iterator end() const noexcept { return end_; }

 private:
  Iterator begin_, end_;
};

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
  template <class In, class Out = deduced_output, class F>
  route_scope& post(std::string_view pattern, F fn,
                    source_location where = source_location::current()) {
    return add("POST", pattern, detail::typed_route<In, Out, F>(std::move(fn), 201), where);
  }
  template <class In, class Out = deduced_output, class F>
  route_scope& put(std::string_view pattern, F fn,
                   source_location where = source_location::current()) {
    return add("PUT", pattern, detail::typed_route<In, Out, F>(std::move(fn), 200), where);
  }
  template <class In, class Out = deduced_output, class F>
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

  // --- for features that register routes of their own kind (docs/framework.md) ---------
  // The application this scope registers in.
  application& app() const noexcept { return *app_; }
  // The route this scope registered last; std::logic_error when none, or after freeze().
  route_entry& last_route();
  // The route of this scope whose composed pattern is `method` + `pattern` as add() would
  // compose them; null when there is none.
  route_entry* find_route(std::string_view method, std::string_view pattern);
  // Registers a route as get() and the others do (`method` empty: every method), except
  // that it never joins a route that shares its pattern (route_entry::share_pattern).
  route_scope& add_route(std::string_view method, std::string_view pattern, handler fn,
                         source_location where = source_location::current());

 protected:
  route_scope(application& app, detail::group_node& node) noexcept : app_(&app), node_(&node) {}
  // For the application, whose root node is a member built after this base.
  explicit route_scope(application& app) noexcept : app_(&app), node_(nullptr) {}

  route_scope& add(std::string_view method, std::string_view pattern, handler fn,
                   const source_location& where, bool may_join = true);
  // A typed route: registered as above, then described (defined in schema.hpp).
  template <class In, class Out, class F>
  route_scope& add(std::string_view method, std::string_view pattern,
                   detail::typed_route<In, Out, F> fn, const source_location& where);
  route_group make_group(std::string_view prefix);
  bool join_shared_pattern(std::string_view text, handler& fn);
  route_doc& last_doc();
  // Adds (or replaces) a parameter of the route registered last; std::invalid_argument
  // naming the route when a path parameter names no wildcard of its pattern.
  route_scope& describe_parameter(parameter_doc parameter);

  application* app_;
  detail::group_node* node_;
  route_entry* last_ = nullptr;  // the route this scope registered last
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
  using router_type = basic_router<const route_entry*>;

  explicit application(application_options options = {});
  // With features' settings as well, each kept as the extension of its type:
  // application app({}, typed_route_options{.json_body_limit = 64 * 1024}).
  template <class... Settings>
  requires(sizeof...(Settings) > 0) explicit application(application_options options,
                                                         Settings&&... settings)
      : application(std::move(options)) {
    (extensions_.set(std::forward<Settings>(settings)), ...);
  }
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

  const application_options& options() const noexcept { return options_; }

  // --- the seam features build on (docs/framework.md, "Building a feature") -----------
  // A feature's application-wide value of type T (extensions.hpp), value-initialised on
  // first use; std::logic_error after freeze().
  template <class T>
  T& extension() {
    if (frozen()) throw std::logic_error("waypoint::app: an extension changed after freeze()");
    return extensions_.get<T>();
  }
  // The value of type T, null when none was made; safe from any thread once frozen.
  template <class T>
  const T* find_extension() const noexcept {
    return extensions_.find<T>();
  }
  // Every route, in registration order.
  route_range<std::deque<route_entry>::const_iterator> routes() const noexcept {
    return {endpoints_.cbegin(), endpoints_.cend()};
  }
  // The same, to attach values to: during registration and freeze hooks; std::logic_error
  // after freeze().
  route_range<std::deque<route_entry>::iterator> edit_routes();
  // When a freeze hook runs: `prepare` hooks first (compiling what routes declared, such as
  // typed routes' contracts), then `complete` hooks (what reads every route as prepared,
  // such as a document), each group in the order added.
  enum class freeze_stage : std::uint8_t { prepare, complete };
  // `hook` runs in freeze(), after the last registration and before the first request; a
  // throw fails freeze() and leaves the application unfrozen.
  void on_freeze(freeze_stage stage, std::function<void(application&)> hook);
  bool frozen() const noexcept { return frozen_.load(std::memory_order_acquire); }

  // The server's entry point (dispatch_to() in serve.hpp): answers at once, or defers the
  // exchange for a coroutine or deferred response and sends it when done.
  void dispatch(beast::exchange& x) noexcept;
  // The server's plan for a request's body (server_options::plan_body, set by
  // options_for()): the matched route's limit (`server_limit` when it sets none), whether
  // it streams, and the request routed already, for dispatch() to take from the exchange
  // (beast::body_plan::planned), so that it is matched once. Freezes like dispatch().
  beast::body_plan plan_body(const request& header, std::uint64_t server_limit) noexcept;

 private:
  friend class route_scope;
  friend class route_entry;
  friend struct detail::pending_upgrade;  // routes the request again on its new connection

  // The endpoint of requests that no route serves: 404, 405 (or the automatic OPTIONS),
  // redirect, 400.
  void answer_unrouted(context& ctx) const;
  void route(context& ctx) const noexcept;
  static void finish_message(bool head, response& res) noexcept;
  bool run_now(context& ctx) const noexcept;
  // After the chain of a request whose handler asked for the connection
  // (context::upgrade): hands it over (true: `ctx` is the upgrade's now), or answers 501
  // when it cannot be.
  bool start_upgrade(context* ctx) const noexcept;
  awaitable<void> run_rest(context& ctx) const;

  application_options options_;
  router_type router_;
  std::deque<detail::group_node> groups_;  // deque: nodes are referenced by address
  std::deque<route_entry> endpoints_;
  // Routes that a later registration of their pattern joins (route_entry::share_pattern).
  std::vector<route_entry*> shared_patterns_;
  std::vector<const middleware*> root_chain_;  // the application's layers, once frozen
  bool root_async_ = false;                    // ... hold a coroutine
  handler unrouted_;                           // calls answer_unrouted()
  handler not_found_;
  route_names names_;
  std::vector<std::pair<freeze_stage, std::function<void(application&)>>> freeze_hooks_;
  extensions extensions_;
  std::atomic<bool> frozen_{false};
  std::mutex freeze_mutex_;
};

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
