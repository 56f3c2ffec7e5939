// The per-request context of waypoint::app: one object, built on the stack of
// application::respond(), handed by reference to every middleware layer and to the handler.
// It carries the request, a response builder, the route's path values (raw or typed), the
// query (parsed on first use, percent-decoded), request headers, a request id and typed
// request-scoped values that middleware sets and handlers read.
//
//   app.get("/users/{id}", [](waypoint::app::context& ctx) {
//     auto id = ctx.path_value<std::int64_t>("id");       // 400 problem when not a number
//     auto verbose = ctx.query("verbose");                  // std::optional<std::string_view>
//     const user& who = ctx.get<user>();                    // set by an auth middleware
//     ctx.response().status(200).json({{"id", id}, {"by", who.name}});
//   });
//
// Nothing here allocates per middleware layer: `next` is a chain index, not a closure, and
// the context's storage (match result, query index, value slots) is fixed-size. Allocations
// come from what a handler asks for (header fields, long bodies) and from the cold spill
// paths named below.
#pragma once

#include "waypoint/app/http_error.hpp"
#include "waypoint/beast/adapter.hpp"
#include "waypoint/beast/server.hpp"
#include "waypoint/router.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <nlohmann/json_fwd.hpp>

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

// Declared, not included: only code that writes coroutines needs Asio, and it includes
// waypoint/app/async.hpp (or Asio itself).
namespace boost::asio {
template <typename T, typename Executor>
class awaitable;
class any_io_executor;
}  // namespace boost::asio

namespace waypoint::app {

namespace http = boost::beast::http;

using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

// What a coroutine handler or middleware returns: boost::asio::awaitable<T> on Asio's
// default executor, the type `-> boost::asio::awaitable<void>` names.
template <class T = void>
using awaitable = boost::asio::awaitable<T, boost::asio::any_io_executor>;

class application;
class context;

// The rest of the chain, as seen by one synchronous middleware layer: calling it runs the
// inner layers and the handler, and exceptions they throw come out of the call. Two words,
// copied freely; it never allocates.
class next {
 public:
  void operator()() const;

 private:
  friend class context;
  next(context& ctx, std::uint32_t index) noexcept : ctx_(&ctx), index_(index) {}

  context* ctx_;
  std::uint32_t index_;  // the chain position this call runs
};

// The same for a coroutine layer: `co_await next()` runs the inner layers and the handler,
// synchronous or not, and rethrows what they threw.
class async_next {
 public:
  awaitable<void> operator()() const;

 private:
  friend class context;
  async_next(context& ctx, std::uint32_t index) noexcept : ctx_(&ctx), index_(index) {}

  context* ctx_;
  std::uint32_t index_;
};

namespace detail {
template <class F, class... Args>
constexpr bool returns_awaitable() {
  if constexpr (std::is_invocable_v<F&, Args...>)
    return std::is_same_v<std::invoke_result_t<F&, Args...>, awaitable<void>>;
  else
    return false;
}
}  // namespace detail

// A route's handler: fn(context&) returning void, or a coroutine returning
// awaitable<void>. The callable's return type decides, so a coroutine is never taken for a
// function whose result may be dropped.
class handler {
 public:
  using sync_function = std::function<void(context&)>;
  using async_function = std::function<awaitable<void>(context&)>;

  handler() noexcept = default;
  handler(std::nullptr_t) noexcept {}
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, handler> && std::is_invocable_v<F&, context&>)
  handler(F fn) {
    if constexpr (detail::returns_awaitable<F, context&>()) {
      async_ = std::move(fn);
    } else {
      static_assert(std::is_void_v<std::invoke_result_t<F&, context&>>,
                    "a handler returns void or waypoint::app::awaitable<void>");
      sync_ = std::move(fn);
    }
  }

  explicit operator bool() const noexcept { return sync_ || async_; }
  bool is_async() const noexcept { return static_cast<bool>(async_); }
  // Runs a synchronous handler.
  void operator()(context& ctx) const { sync_(ctx); }
  const async_function& coroutine() const noexcept { return async_; }

 private:
  sync_function sync_;
  async_function async_;
};

// The two halves of a layer that works around synchronous and coroutine chains alike:
// `before` runs first and returns false when it answered (the inner layers and the handler
// are then skipped); `after` runs once the inner layers are done, also when they threw
// (`error` holds the exception: clear it to answer, keep it to pass it on), and for a
// deferred response once that is sent. Either may be empty.
struct layer_hooks {
  std::function<bool(context&)> before;
  std::function<void(context&, std::exception_ptr& error)> after;
};

// One middleware layer: fn(context&, next) returning void; a coroutine
// fn(context&, async_next) returning awaitable<void>; or layer_hooks. A synchronous layer
// cannot wait, so it may not wrap a coroutine (freeze() refuses such a chain, naming the
// route); coroutine layers and hooks wrap anything.
class middleware {
 public:
  enum class kind : std::uint8_t { none, sync, coroutine, hooks };
  using sync_function = std::function<void(context&, next)>;
  using async_function = std::function<awaitable<void>(context&, async_next)>;

  middleware() noexcept = default;
  middleware(std::nullptr_t) noexcept {}
  middleware(layer_hooks hooks) : kind_(kind::hooks), hooks_(std::move(hooks)) {}
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, middleware> &&
             !std::is_same_v<std::decay_t<F>, layer_hooks> &&
             (std::is_invocable_v<F&, context&, next> ||
              std::is_invocable_v<F&, context&, async_next>))
  middleware(F fn) {
    if constexpr (detail::returns_awaitable<F, context&, async_next>()) {
      kind_ = kind::coroutine;
      async_ = std::move(fn);
    } else {
      static_assert(std::is_invocable_v<F&, context&, next>,
                    "a coroutine middleware takes async_next and returns awaitable<void>");
      kind_ = kind::sync;
      sync_ = std::move(fn);
    }
  }

  explicit operator bool() const noexcept { return kind_ != kind::none; }
  kind form() const noexcept { return kind_; }
  void operator()(context& ctx, next inner) const { sync_(ctx, inner); }
  const async_function& coroutine() const noexcept { return async_; }
  const layer_hooks& hooks() const noexcept { return hooks_; }

 private:
  kind kind_ = kind::none;
  sync_function sync_;
  async_function async_;
  layer_hooks hooks_;
};

// One decoded query parameter: "a+b=c%26d" gives name "a b", value "c&d".
struct query_param {
  std::string_view name;
  std::string_view value;
};

// Builds the response in place. Every setter returns *this so calls chain:
//   ctx.response().status(201).header("Location", url).json(order);
class response_builder {
 public:
  explicit response_builder(app::response& message) noexcept : message_(&message) {}

  // Throws std::invalid_argument outside 100..999.
  response_builder& status(int code);
  response_builder& status(http::status code) noexcept;
  int status() const noexcept { return static_cast<int>(message_->result_int()); }

  // Sets a header field, replacing any with the same name.
  response_builder& header(std::string_view name, std::string_view value);
  response_builder& header(http::field name, std::string_view value);
  // Adds a header field, keeping those with the same name (Set-Cookie, Vary).
  response_builder& append_header(std::string_view name, std::string_view value);
  // The first value set for `name`, empty when none.
  std::string_view header(std::string_view name) const noexcept;

  response_builder& body(std::string text,
                         std::string_view content_type = "text/plain; charset=utf-8");
  std::string& body() noexcept { return message_->body(); }
  // `value` serialized, with Content-Type: application/json. A template only so that the
  // caller's nlohmann/json (and its JSON_DIAGNOSTICS setting) does the serializing.
  template <class Json = nlohmann::json>
  response_builder& json(const std::type_identity_t<Json>& value) {
    return json_text(value.dump());
  }
  // `text`, already serialized JSON, with Content-Type: application/json.
  response_builder& json_text(std::string text);
  // 204 and no body.
  response_builder& no_content() noexcept;
  // `code` (a 3xx) with Location: `location`.
  response_builder& redirect(int code, std::string_view location);
  // An RFC 9457 problem document: {"type","title","status","detail"[,"pointer"]} with
  // Content-Type: application/problem+json. Other headers already set are kept, so a
  // request id or CORS fields survive an error. A detail longer than max_client_text_bytes
  // is cut (detail::clip_client_text), as it may quote the client.
  response_builder& problem(int code, std::string_view detail,
                            std::optional<std::string_view> pointer = std::nullopt);

  app::response& message() noexcept { return *message_; }
  const app::response& message() const noexcept { return *message_; }

 private:
  app::response* message_;
};

// The most bytes of client-supplied text (a path, a header value, the token nlohmann/json
// quotes in its message) that the framework copies into a problem's "detail" or into a log
// line; the rest is cut and the cut marked. The framework's own words around such text are
// at most about 100 bytes (a 415 naming a Content-Type, nlohmann/json's malformed-JSON
// messages), so 256 keeps every ordinary detail whole with room for a 64-byte id or a long
// number, and keeps an access-log line with two clipped fields (method, path) under 1 KiB.
// A 10,000-digit number or a 100 KiB path then costs the log 256 bytes, not the whole token.
inline constexpr std::size_t max_client_text_bytes = 256;

// Writes into `res` the problem document the application answers for its own errors of
// `status` (the same writer, response_builder::problem): Content-Type
// application/problem+json and {"type":"about:blank","title":<the RFC 9110 reason
// phrase>,"status":<status>,"detail":<detail, cut at max_client_text_bytes>}; the body and
// the fields that described an earlier body are replaced, others kept. For errors answered
// outside the application, so that a client sees one error shape: waypoint::beast::server's
// own 400, 408, 413, 414, 417, 431, 501 and 503 (app::response is beast::response):
//   options.render_error = waypoint::app::render_problem;
// Throws std::invalid_argument for a status outside 100..999, std::bad_alloc.
void render_problem(http::status status, std::string_view detail, response& res);

namespace detail {
struct deferred_state;   // src/app/deferred.cpp
struct websocket_owner;  // src/app/websocket.cpp
}

// A response a handler finishes later, from any thread: ctx.defer() moves the response
// built so far in here; fill it through response(), then send(). Until then the context,
// the request and the layers around the handler wait on the connection's thread; touch
// none of them from another thread (copy what the work needs before it starts). Destroyed
// unsent, it answers 500. Move-only.
class deferred_response {
 public:
  deferred_response() noexcept = default;
  deferred_response(deferred_response&&) noexcept = default;
  deferred_response& operator=(deferred_response&& other) noexcept;
  ~deferred_response();

  response_builder& response();
  // Hands the response back to the connection's thread, which runs the layers still
  // waiting and sends it. The first call counts; later ones do nothing.
  void send() noexcept;
  // The response is no longer wanted (the client went away, or a deadline answered): the
  // work may stop early; send() then sends nothing.
  bool cancelled() const noexcept;
  explicit operator bool() const noexcept { return static_cast<bool>(state_); }

 private:
  friend class context;
  explicit deferred_response(std::shared_ptr<detail::deferred_state> state) noexcept
      : state_(std::move(state)) {}

  std::shared_ptr<detail::deferred_state> state_;
};

namespace detail {

struct endpoint;  // a registered route: handler and middleware chain (application.hpp)

// One address per type, used as the key of a request-scoped value.
template <class T>
struct value_key {
  static constexpr char id = 0;
};

// T built from `args` at `where` (nullptr: on the heap): T(args...) when T has such a
// constructor, else T{args...}. C++20 lets an aggregate take parenthesised values (P0960),
// but clang before 16 does not implement it, and emplace<tenant>(7) must build there too.
template <class T, class... Args>
T* construct_value(void* where, Args&&... args) {
  if constexpr (std::is_constructible_v<T, Args&&...>) {
    return where ? ::new (where) T(std::forward<Args>(args)...)
                 : new T(std::forward<Args>(args)...);
  } else {
    return where ? ::new (where) T{std::forward<Args>(args)...}
                 : new T{std::forward<Args>(args)...};
  }
}

// Request-scoped values keyed by type: a fixed array of slots, each with inline storage,
// searched linearly. Middleware sets a handful of values at most, so a scan of a few
// pointers beats any map and nothing is allocated for values that fit a slot.
class value_slots {
 public:
  // Eight values and 48 bytes each hold a user record, a tenant, a deadline, a trace span
  // and a few flags; a larger or over-aligned value is heap-allocated (the cold path).
  static constexpr std::size_t capacity = 8;
  static constexpr std::size_t inline_bytes = 48;

  value_slots() noexcept = default;
  value_slots(const value_slots&) = delete;
  value_slots& operator=(const value_slots&) = delete;
  ~value_slots() { clear(); }

  template <class T, class... Args>
  T& emplace(Args&&... args) {
    static_assert(std::is_object_v<T> && !std::is_const_v<T>, "request values are objects");
    slot& s = vacate(&value_key<T>::id);
    T* object;
    if constexpr (fits_inline<T>) {
      object = construct_value<T>(static_cast<void*>(s.storage), std::forward<Args>(args)...);
      s.destroy = [](void* p) noexcept { static_cast<T*>(p)->~T(); };
    } else {
      object = construct_value<T>(nullptr, std::forward<Args>(args)...);
      s.destroy = [](void* p) noexcept { delete static_cast<T*>(p); };
    }
    s.object = object;
    s.key = &value_key<T>::id;  // last: a throwing constructor leaves the slot free
    return *object;
  }

  template <class T>
  T* find() const noexcept {
    for (std::size_t i = 0; i < used_; ++i)
      if (slots_[i].key == &value_key<T>::id) return static_cast<T*>(slots_[i].object);
    return nullptr;
  }

  void clear() noexcept {
    for (std::size_t i = 0; i < used_; ++i)
      if (slots_[i].key) slots_[i].destroy(slots_[i].object);
    used_ = 0;
  }

 private:
  template <class T>
  static constexpr bool fits_inline = sizeof(T) <= inline_bytes &&
                                      alignof(T) <= alignof(std::max_align_t);

  // Invariant: a slot below used_ holds a value exactly when key is non-null.
  struct slot {
    const void* key;
    void* object;
    void (*destroy)(void*) noexcept;
    alignas(std::max_align_t) unsigned char storage[inline_bytes];
  };

  // The slot for `key`, emptied: the one holding the key (its value destroyed), else a
  // free one. Throws std::length_error when all are taken.
  slot& vacate(const void* key);

  std::array<slot, capacity> slots_;
  std::size_t used_ = 0;
};

// The query split into decoded parameters on first use. Decoded text is never longer than
// the raw query, so one buffer of the query's size holds all of it.
class query_index {
 public:
  // Sixteen parameters and 512 bytes cover API queries (filters, paging, sort); longer
  // queries spill to the heap once per request.
  static constexpr std::size_t inline_params = 16;
  static constexpr std::size_t inline_bytes = 512;

  std::span<const query_param> params(std::string_view raw);

 private:
  void parse(std::string_view raw);
  void push(query_param p);

  // Left unconstructed until parse() fills it: a context is built per request and most
  // requests never read their query.
  union inline_storage {
    inline_storage() noexcept {}
    query_param items[inline_params];
  };

  bool parsed_ = false;
  std::size_t count_ = 0;
  inline_storage params_;
  std::vector<query_param> spilled_params_;  // every parameter, once there are too many
  char bytes_[inline_bytes];
  std::unique_ptr<char[]> spilled_bytes_;
};

// Parses `text` as a T (integers and floating-point numbers in full, "true"/"false",
// strings as they are); false when it is not one.
template <class T>
bool parse_text(std::string_view text, T& out) noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    if (text == "true") return out = true, true;
    if (text == "false") return out = false, true;
    return false;
  } else if constexpr (std::is_arithmetic_v<T>) {
    if (text.empty()) return false;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc() && ptr == end;
  } else if constexpr (std::is_constructible_v<T, std::string_view>) {
    out = T(text);
    return true;
  } else {
    static_assert(std::is_arithmetic_v<T>,
                  "path and query values convert to numbers, "
                  "bool, std::string or std::string_view");
    return false;
  }
}

// `text` when it is at most max_client_text_bytes long; otherwise its first bytes up to
// that limit, cut before any UTF-8 sequence the limit would split, followed by
// "… (+N bytes)" naming what was cut, written into `scratch` (the only allocation, and
// only when cutting). Used wherever the framework writes text a client may have supplied:
// problem details, the access log, the 500 log line.
std::string_view clip_client_text(std::string_view text, std::string& scratch);

// Throws the 400 http_error for a path or query value that is not a `T`.
[[noreturn]] void throw_bad_value(std::string_view where, std::string_view name,
                                  std::string_view text, std::string_view expected);

template <class T>
constexpr std::string_view expected_name() noexcept {
  if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_integral_v<T>)
    return "an integer in range";
  else if constexpr (std::is_floating_point_v<T>)
    return "a number";
  else
    return "text";
}

}  // namespace detail

// Longest request id kept; a longer X-Request-Id is replaced by a generated one.
inline constexpr std::size_t max_request_id_length = 64;

class context {
 public:
  // `connection`: where the request came from (its executor and endpoints); null for
  // application::respond(), which has none.
  context(application& app, const app::request& req, app::response& res,
          beast::exchange_host* connection = nullptr) noexcept
      : app_(&app), request_(&req), response_(res), connection_(connection) {}
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  ~context() {
    if (deferred_) detach_deferred();
  }

  application& app() const noexcept { return *app_; }

  // --- the connection ----------------------------------------------------------------
  // The executor of the connection's thread: `co_await` clients and timers on it, and the
  // request's other work stays on one thread. Throws std::logic_error under respond().
  boost::asio::any_io_executor executor() const;
  // The socket's two ends (a proxy in front is the remote one: waypoint/app/forwarded.hpp
  // reads past trusted proxies). Empty addresses under respond().
  const beast::connection_endpoints& endpoints() const;

  // --- answering later ---------------------------------------------------------------
  // Takes the response out of the handler: it is sent once the returned handle's send()
  // has run, from any thread; the layers around the handler finish then. For libraries
  // that call back. Once per request; throws std::logic_error on a second call or under
  // respond(), which must answer before it returns.
  deferred_response defer();
  bool deferred() const noexcept { return static_cast<bool>(deferred_); }

  // --- the request -------------------------------------------------------------------
  const app::request& request() const noexcept { return *request_; }
  std::string_view method() const noexcept { return request_->method_string(); }
  // The escaped path as on the request line, without the query.
  std::string_view path() const noexcept { return outcome_.path; }
  // The host routed on (from the target or the Host field); may carry a port.
  std::string_view host() const noexcept { return outcome_.host; }
  // The first value of a request header field, empty when absent.
  std::string_view header(std::string_view name) const noexcept;
  std::string_view header(http::field name) const noexcept;
  // The whole body; empty for a route that streams it (route_scope::stream_body).
  const std::string& body() const noexcept { return request_->body(); }

  // --- streaming (coroutine handlers; docs/files.md) ------------------------------------
  // The body arrives as read_some() takes it: the route streams it and the server serves
  // it so (waypoint::app::serve, or options_for()).
  bool body_streamed() const noexcept;
  // The next body bytes, up to into.size(); 0 once the body is complete. For a route that
  // does not stream, the same over body(). Throws http_error when the body cannot be read
  // on: 413 (longer than the route accepts), 431 (trailers too large), 408 (it stalled for
  // the server's body_timeout), 400 (bad chunked framing) — the connection closes after
  // the answer — or std::system_error when the client has gone. An
  // `Expect: 100-continue` is answered by the first call, so a handler that refuses
  // without reading spares the client the upload.
  awaitable<std::size_t> read_some(std::span<char> into);
  // Sends `data` as the next piece of the body, and returns once it is with the kernel
  // (so one piece is in memory at a time, and a slow reader slows the writer). The first
  // call sends the response's head as it stands, chunked (HTTP/1.0: until the connection
  // closes); what layers set afterwards is not sent. Throws std::system_error when the
  // client has gone or stopped reading for write_timeout. Outside waypoint::beast::server
  // (respond(), async_handle()) the pieces are gathered into the body.
  awaitable<void> write_chunk(std::string_view data);
  // A field sent after the last chunk (announce it with a `Trailer` header before the
  // first write_chunk). Replaces one of the same name.
  void set_trailer(std::string_view name, std::string_view value);
  // Body bytes written by write_chunk so far.
  std::uint64_t chunked_bytes() const noexcept { return chunked_bytes_; }

  // --- routing -----------------------------------------------------------------------
  // matched when a route's handler runs; otherwise what the app answers.
  match_status route_status() const noexcept { return outcome_.kind; }
  // The adapter's outcome (waypoint/beast/adapter.hpp) the application answers from:
  // status, Allow set, redirect target, HEAD, the path, query and host routed on.
  const beast::route_outcome& outcome() const noexcept { return outcome_; }
  // The matched route's pattern as registered (group prefix included), e.g.
  // "GET api.example.com/v1/users/{id}"; empty when no route matched.
  std::string_view route_pattern() const noexcept;
  // The matched route's parsed pattern (its wildcard names, in order), null when none.
  const waypoint::pattern* matched_pattern() const noexcept {
    return route_status() == match_status::matched && match_.route() ? &match_.route()->pattern
                                                                     : nullptr;
  }
  // route_status() == method_not_allowed: the methods the path serves (GET implies HEAD).
  method_set allowed_methods() const noexcept { return outcome_.allow; }
  // Why the request could not be routed, when route_status() == bad_request.
  std::string_view route_error() const noexcept {
    return outcome_.kind == match_status::bad_request ? outcome_.reason : std::string_view();
  }

  // --- path values -------------------------------------------------------------------
  bool has_path_value(std::string_view name) const noexcept;
  // The percent-decoded value of wildcard `name`; throws std::logic_error (a 500: a
  // programming error) when the matched route has no such wildcard.
  std::string_view path_value(std::string_view name) const;
  // The value converted to T; throws a 400 http_error naming the value when it does not
  // convert ("/users/abc" for path_value<std::int64_t>("id")).
  template <class T>
  T path_value(std::string_view name) const {
    std::string_view text = path_value(name);
    T value{};
    if (!detail::parse_text(text, value))
      detail::throw_bad_value("path value", name, text, detail::expected_name<T>());
    return value;
  }

  // --- query -------------------------------------------------------------------------
  // The raw query (after '?'), empty when none.
  std::string_view raw_query() const noexcept { return outcome_.query; }
  // Every parameter in order, names and values percent-decoded ('+' is a space).
  std::span<const query_param> query_params() { return query_index_.params(outcome_.query); }
  // The first value of `name`; nullopt when absent ("?flag" gives an empty value).
  std::optional<std::string_view> query(std::string_view name);
  // The first value of `name` converted to T; nullopt when absent, a 400 http_error when
  // present but not a T.
  template <class T>
  std::optional<T> query_value(std::string_view name) {
    std::optional<std::string_view> text = query(name);
    if (!text) return std::nullopt;
    T value{};
    if (!detail::parse_text(*text, value))
      detail::throw_bad_value("query parameter", name, *text, detail::expected_name<T>());
    return value;
  }

  // --- the response ------------------------------------------------------------------
  response_builder& response() noexcept { return response_; }

  // The open file range `file` is the body (its fields are the caller's: Content-Type,
  // Content-Length is written from the range). Served by waypoint::beast::server it is sent
  // with sendfile, never read into memory; elsewhere (respond(), async_handle()) it is read
  // into the body once the chain is done. A layer that writes a body, or a status without
  // content (304), replaces it.
  void send_file(beast::file_payload file) noexcept;
  // The body's length as it will be sent: the range given to send_file() unless a layer
  // replaced it (0 for HEAD), else the body written. What the access log reports.
  std::uint64_t body_size() const noexcept;

  // --- request-scoped values ----------------------------------------------------------
  // Stores a value of type T, replacing any earlier one; lives until the response is done.
  template <class T, class... Args>
  T& emplace(Args&&... args) {
    return values_.emplace<T>(std::forward<Args>(args)...);
  }
  template <class T>
  std::decay_t<T>& set(T&& value) {
    return values_.emplace<std::decay_t<T>>(std::forward<T>(value));
  }
  // The value of type T, or nullptr when no layer set one.
  template <class T>
  T* find() const noexcept {
    return values_.find<T>();
  }
  // The value of type T; throws std::logic_error (a 500) when none was set.
  template <class T>
  T& get() const {
    if (T* value = values_.find<T>()) return *value;
    throw_missing_value();
  }

  // --- request id --------------------------------------------------------------------
  // This request's id: the one set by set_request_id() (request_id middleware), else one
  // generated on first use, unique within the process.
  std::string_view request_id();
  // Adopts `id` when it is 1..max_request_id_length bytes of [A-Za-z0-9._:+/=-]; false
  // (and nothing changed) otherwise.
  bool set_request_id(std::string_view id) noexcept;

 private:
  friend class application;
  friend class next;
  friend class async_next;
  friend struct detail::deferred_state;
  friend struct detail::websocket_owner;

  void detach_deferred() noexcept;  // the deferred response outlives its request

  // Runs chain position `index`: a middleware layer, or past the last one the endpoint.
  // Synchronous layers and hooks only: a chain with a coroutine runs through run_async.
  void run(std::uint32_t index) {
    if (index < chain_.size()) {
      const middleware& layer = *chain_[index];
      if (layer.form() == middleware::kind::sync) return layer(*this, next(*this, index + 1));
      return run_hooks(layer.hooks(), index);
    }
    (*endpoint_)(*this);
  }
  void run_hooks(const layer_hooks& hooks, std::uint32_t index);
  // Any chain, from position `index`; waits for a deferred response (src/app/async.cpp).
  awaitable<void> run_async(std::uint32_t index);
  // After a synchronous part of the chain deferred: waits until the response is sent,
  // then runs the hooks it postponed.
  awaitable<void> finish_deferred();
  // The `after` hooks a deferred response postponed, innermost first.
  void run_postponed();

  [[noreturn]] static void throw_missing_value();
  // After the chain: the file body goes to the connection, or into the body (src/app/async.cpp).
  void hand_over_file() noexcept;

  application* app_;
  const app::request* request_;
  response_builder response_;
  beast::exchange_host* connection_;
  // Set by application::route() before any layer runs; for a target that did not
  // resolve, its path is the target up to any '?' (a query may carry secrets), for logs.
  beast::route_outcome outcome_;
  std::span<const middleware* const> chain_;
  const handler* endpoint_ = nullptr;
  basic_match_result<const detail::endpoint*> match_;
  detail::query_index query_index_;
  detail::value_slots values_;
  std::uint8_t request_id_length_ = 0;
  std::array<char, max_request_id_length> request_id_;
  // Set by defer(); with the chain positions of hooks whose `after` waits for it.
  std::shared_ptr<detail::deferred_state> deferred_;
  std::vector<std::uint32_t> postponed_;
  bool async_chain_ = false;  // the chain holds a coroutine: it runs through run_async
  bool upgrade_requested_ = false;  // a WebSocket route took the request (status 101)
  beast::file_payload file_;  // send_file(): the body, unless a layer replaced it
  std::size_t body_read_ = 0;         // read_some() over a whole body: where it is
  std::uint64_t chunked_bytes_ = 0;   // write_chunk(): the body sent so far
  std::unique_ptr<http::fields> trailers_;  // set_trailer()
};

inline void next::operator()() const { ctx_->run(index_); }

}  // namespace waypoint::app
