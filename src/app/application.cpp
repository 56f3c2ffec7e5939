// The application: registration with prefix composition, freezing the middleware chains,
// and respond(), the one entry point per request.
#include "waypoint/app/application.hpp"

#include "waypoint/app/middleware.hpp"

#include "waypoint/beast/adapter.hpp"
#include "waypoint/json_string.hpp"

#include <boost/system/system_error.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <system_error>

namespace waypoint::app {
namespace {

// A pattern's text split per the core grammar "[METHOD ][HOST]/[PATH]".
struct pattern_parts {
  std::string_view method;
  std::string_view host;
  std::string_view path;  // from the first '/', or empty
};

pattern_parts split_pattern(std::string_view text) noexcept {
  pattern_parts parts;
  std::string_view rest = text;
  if (std::size_t blank = text.find_first_of(" \t"); blank != std::string_view::npos) {
    parts.method = text.substr(0, blank);
    std::size_t after = text.find_first_not_of(" \t", blank);
    rest = after == std::string_view::npos ? std::string_view() : text.substr(after);
  }
  std::size_t slash = rest.find('/');
  parts.host = rest.substr(0, slash);
  if (slash != std::string_view::npos) parts.path = rest.substr(slash);
  return parts;
}

[[noreturn]] void refuse(pattern_errc code, std::string_view pattern, std::string problem) {
  throw pattern_error(code, 0, pattern, problem);
}

// The one method of two (either may be empty: any method), or a pattern_error.
std::string_view combine_method(std::string_view outer, std::string_view inner,
                                std::string_view pattern, std::string_view what) {
  if (outer.empty() || outer == inner) return inner;
  if (inner.empty()) return outer;
  refuse(pattern_errc::bad_method, pattern,
         std::string(what) + " names method " + std::string(inner) + " inside a scope of method " +
             std::string(outer));
}

std::string_view combine_host(std::string_view outer, std::string_view inner,
                              std::string_view pattern) {
  if (outer.empty() || outer == inner) return inner;
  if (inner.empty()) return outer;
  refuse(pattern_errc::missing_slash, pattern,
         "the pattern names host " + std::string(inner) + " inside a group of host " +
             std::string(outer) + " (is the leading '/' of the path missing?)");
}

std::string join_pattern(std::string_view method, std::string_view host, std::string_view path) {
  std::string text;
  text.reserve(method.size() + 1 + host.size() + path.size());
  if (!method.empty()) {
    text.append(method);
    text += ' ';
  }
  text.append(host);
  text.append(path);
  return text;
}

// The method the application answers on every path that has routes (204 with Allow), so
// every Allow it sends names it.
constexpr std::string_view automatic_method = "OPTIONS";

constexpr std::string_view generic_500 =
    "the server could not complete the request; the error is logged with the request id";

void log_failure(context& ctx, std::string_view what) noexcept {
  detail::log_request(ctx, "500 for", what);
}

// Whether a chain (its layers, then `endpoint`) holds a coroutine, so that it must run as
// one; hooks and a handler returning void run without.
bool chain_is_async(const std::vector<const middleware*>& chain, const handler& endpoint) {
  return endpoint.is_async() ||
         std::any_of(chain.begin(), chain.end(), [](const middleware* layer) {
           return layer->form() == middleware::kind::coroutine;
         });
}

// Beast's serializer writes obsolete_reason() on the status line when no reason is set,
// RFC 7231's words for 413 and 422; a server other than waypoint::beast::server (whose
// writer asks status_line_reason itself) then shows the same words as the problem's title.
void name_status(response& res) noexcept {
  // Most statuses have the same words either way (200 "OK"): a table of those that do not,
  // made once from the two sources, spares every request the two lookups and compares.
  static const std::array<bool, 1000> renamed = [] {
    std::array<bool, 1000> table{};
    for (unsigned status = 100; status < table.size(); ++status) {
      std::string_view current = beast::reason_phrase(status);
      table[status] = !current.empty() &&
                      current != std::string_view(http::obsolete_reason(http::int_to_status(status)));
    }
    return table;
  }();
  unsigned status = res.result_int();
  if (status >= renamed.size() || !renamed[status]) return;
  auto given = res.reason();
  std::string_view beast_words = http::obsolete_reason(res.result());
  if (std::string_view(given.data(), given.size()) != beast_words) return;  // the handler's own
  std::string_view current = beast::reason_phrase(res.result_int());  // static storage
  if (current.empty() || current == beast_words) return;
  try {
    res.reason(current);
  } catch (...) {
    // Without memory the status line keeps Beast's words; the status itself is right.
  }
}

}  // namespace

namespace detail {

std::string compose_pattern(const group_node& group, std::string_view method,
                            std::string_view pattern) {
  pattern_parts parts = split_pattern(pattern);
  // "users" would read as a host; only an empty pattern (the prefix itself) has no '/'.
  if (parts.path.empty() && !parts.host.empty())
    refuse(pattern_errc::missing_slash, pattern, "the path must begin with '/'");
  std::string_view route_method = combine_method(method, parts.method, pattern, "the pattern");
  std::string_view final_method = combine_method(group.method, route_method, pattern, "the route");
  std::string_view host = combine_host(group.host, parts.host, pattern);
  std::string path = group.path;
  path.append(parts.path);
  return join_pattern(final_method, host, path);
}

void log_request(context& ctx, std::string_view lead, std::string_view what) noexcept {
  try {
    std::string line = "waypoint: ";
    line.append(lead);
    line += ' ';
    std::string request_line(ctx.method());  // one field: "POST /orders"
    request_line += ' ';
    request_line.append(ctx.path());
    detail::append_log_text(line, request_line);
    line += " (route \"";
    line.append(ctx.route_pattern().text());
    line += "\", request id ";
    line.append(ctx.request_id());
    line += "): ";
    detail::append_log_text(line, what);
    ctx.app().log(line);
  } catch (...) {
    ctx.app().log("waypoint: a request's log line, and no memory to write it");
  }
}

}  // namespace detail

// --- registration -------------------------------------------------------------------

route_scope& route_scope::add(std::string_view method, std::string_view pattern, handler fn,
                              const source_location& where, bool may_join) {
  application& app = *app_;
  if (app.frozen()) throw std::logic_error("waypoint::app: route added after freeze()");
  if (!fn) throw std::invalid_argument("waypoint::app: empty handler");
  std::string text = detail::compose_pattern(*node_, method, pattern);
  if (may_join && join_shared_pattern(text, fn)) return *this;
  route_entry& ep = app.endpoints_.emplace_back();
  ep.fn_ = std::move(fn);
  ep.group_ = node_;
  ep.owner_ = &app;
  try {
    ep.route_ = &app.router_.add(text, &ep, where);
  } catch (...) {
    app.endpoints_.pop_back();
    throw;
  }
  last_ = &ep;
  return *this;
}

// A route of this scope that shares `text` takes `fn` (route_entry::share_pattern), once.
bool route_scope::join_shared_pattern(std::string_view text, handler& fn) {
  for (route_entry* ep : app_->shared_patterns_) {
    if (!ep->join_ || ep->group_ != node_ || ep->route_->pattern.text() != text) continue;
    auto join = std::move(ep->join_);
    ep->join_ = nullptr;
    join(std::move(fn));
    last_ = ep;
    return true;
  }
  return false;
}

route_scope& route_scope::add_route(std::string_view method, std::string_view pattern, handler fn,
                                    source_location where) {
  return add(method, pattern, std::move(fn), where, false);
}

route_entry& route_scope::last_route() {
  if (app_->frozen()) throw std::logic_error("waypoint::app: a route changed after freeze()");
  if (!last_) throw std::logic_error("waypoint::app: no route registered yet in this scope");
  return *last_;
}

route_entry* route_scope::find_route(std::string_view method, std::string_view pattern) {
  std::string text = detail::compose_pattern(*node_, method, pattern);
  for (route_entry& ep : app_->endpoints_)
    if (ep.group_ == node_ && ep.route_->pattern.text() == text) return &ep;
  return nullptr;
}

void route_entry::share_pattern(std::function<void(handler)> join) {
  if (!join_) owner_->shared_patterns_.push_back(this);
  join_ = std::move(join);
}

route_scope& route_scope::handle(std::string_view pattern, handler fn, source_location where) {
  return add({}, pattern, std::move(fn), where);
}
route_scope& route_scope::get(std::string_view pattern, handler fn, source_location where) {
  return add("GET", pattern, std::move(fn), where);
}
route_scope& route_scope::post(std::string_view pattern, handler fn, source_location where) {
  return add("POST", pattern, std::move(fn), where);
}
route_scope& route_scope::put(std::string_view pattern, handler fn, source_location where) {
  return add("PUT", pattern, std::move(fn), where);
}
route_scope& route_scope::patch(std::string_view pattern, handler fn, source_location where) {
  return add("PATCH", pattern, std::move(fn), where);
}
route_scope& route_scope::del(std::string_view pattern, handler fn, source_location where) {
  return add("DELETE", pattern, std::move(fn), where);
}

route_scope& route_scope::use(middleware layer) {
  if (app_->frozen()) throw std::logic_error("waypoint::app: use() after freeze()");
  if (!layer) throw std::invalid_argument("waypoint::app: empty middleware");
  node_->layers.push_back(std::move(layer));
  return *this;
}

route_doc& route_scope::last_doc() {
  if (app_->frozen()) throw std::logic_error("waypoint::app: a route described after freeze()");
  if (!last_) throw std::logic_error("waypoint::app: no route to describe; register one first");
  return last_->doc_;
}

route_scope& route_scope::describe_parameter(parameter_doc parameter) {
  route_doc& doc = last_doc();
  const pattern& p = last_->route_->pattern;
  if (parameter.in == "path" &&
      std::find(p.wildcard_names().begin(), p.wildcard_names().end(), parameter.name) ==
          p.wildcard_names().end())
    throw std::invalid_argument("waypoint::app: route \"" + std::string(p.text()) +
                                "\" registered at " + last_->route_->site.to_string() +
                                " has no wildcard {" + parameter.name + "}");
  std::erase_if(doc.parameters, [&](const parameter_doc& q) {
    return q.in == parameter.in && q.name == parameter.name;
  });
  doc.parameters.push_back(std::move(parameter));
  return *this;
}

namespace {

// The schema text of a schema-first route's body or answer, after the checks
// route_info promises and the route's own (route_entry::check_schemas_with).
std::string schema_first_text(const route_entry& ep, bool is_document, std::string_view which,
                              std::string_view text,
                              const std::function<std::string(std::string_view)>& check) {
  if (!is_document)
    throw std::logic_error("waypoint::app: route \"" + std::string(ep.route_pattern().text()) +
                           "\" takes its " + std::string(which) +
                           " schema from its type; a schema-first route reads and writes "
                           "nlohmann::json");
  std::string refused = check ? check(text) : std::string();
  if (!refused.empty())
    throw std::invalid_argument("waypoint::app: route \"" + std::string(ep.route_pattern().text()) +
                                "\" registered at " + ep.site().to_string() + ": its " +
                                std::string(which) + " schema " + refused);
  return std::string(text);
}

}  // namespace

route_scope& route_scope::describe(const route_info& info, source_location where) {
  route_doc& doc = last_doc();
  // Every check first, so that a refusal changes nothing.
  std::string request_schema, response_schema;
  if (!info.request_schema.empty())
    request_schema = schema_first_text(*last_, doc.request_is_document, "request",
                                       info.request_schema, last_->schema_check_);
  if (!info.response_schema.empty())
    response_schema = schema_first_text(*last_, doc.response_is_document, "response",
                                        info.response_schema, last_->schema_check_);
  if (!info.name.empty()) {
    if (!doc.name.empty())
      throw std::logic_error("waypoint::app: route \"" +
                             std::string(last_->route_->pattern.text()) + "\" is already named \"" +
                             doc.name + "\"");
    app_->names_.add(info.name, last_->route_->pattern, where);
    doc.name = std::string(info.name);
    doc.named_at = registration_site::from(where);
  }
  if (!info.summary.empty()) doc.summary = std::string(info.summary);
  if (!info.description.empty()) doc.description = std::string(info.description);
  if (info.undocumented) doc.hidden = true;
  if (!info.tool) doc.tool = false;
  if (!request_schema.empty()) doc.request_schema_text = std::move(request_schema);
  if (!response_schema.empty()) doc.response_schema_text = std::move(response_schema);
  return *this;
}

route_scope& route_scope::body(const route_body& how) {
  last_doc();  // the same checks: a route to describe, not frozen
  if (how.streamed && !last_->fn_.is_async())
    throw std::logic_error("waypoint::app: route \"" + std::string(last_->route_->pattern.text()) +
                           "\" streams its body, so its handler must be a coroutine that "
                           "reads it (co_await ctx.read_some(...))");
  last_->body_limit_ =
      how.max_bytes.value_or(how.streamed ? route_body::default_streamed_limit : 0);
  last_->stream_body_ = how.streamed;
  return *this;
}

route_scope& route_scope::tag_routes(std::string_view tag) {
  if (app_->frozen()) throw std::logic_error("waypoint::app: tag_routes() after freeze()");
  node_->tags.emplace_back(tag);
  return *this;
}

route_group route_scope::make_group(std::string_view prefix) {
  application& app = *app_;
  if (app.frozen()) throw std::logic_error("waypoint::app: group() after freeze()");
  pattern_parts parts = split_pattern(prefix);
  std::string_view method = combine_method(node_->method, parts.method, prefix, "the group");
  std::string_view host = combine_host(node_->host, parts.host, prefix);
  std::string path = node_->path;
  path.append(parts.path);
  while (!path.empty() && path.back() == '/') path.pop_back();  // routes bring their own '/'
  // The prefix must parse as the start of a pattern: "/v1/{id" fails here, not later.
  (void)parse_pattern(join_pattern(method, host, path + "/"));
  detail::group_node& child = app.groups_.emplace_back();
  child.method = std::string(method);
  child.host = std::string(host);
  child.path = std::move(path);
  child.parent = node_;
  return route_group(app, child);
}

// --- what features read of a route ------------------------------------------------

namespace {

// The scopes around `node`'s routes, the application's root first.
std::vector<const detail::group_node*> scopes_around(const detail::group_node* node) {
  std::vector<const detail::group_node*> path;
  for (; node; node = node->parent) path.push_back(node);
  return {path.rbegin(), path.rend()};
}

std::vector<const middleware*> layers_around(const detail::group_node* node) {
  std::vector<const middleware*> chain;
  for (const detail::group_node* scope : scopes_around(node))
    for (const middleware& layer : scope->layers) chain.push_back(&layer);
  return chain;
}

}  // namespace

std::vector<const middleware*> route_entry::layers() const { return layers_around(group_); }

std::vector<std::string> route_entry::tags() const {
  std::vector<std::string> tags;
  for (const detail::group_node* scope : scopes_around(group_))
    for (const std::string& t : scope->tags)
      if (std::find(tags.begin(), tags.end(), t) == tags.end()) tags.push_back(t);
  return tags;
}

// --- the application ----------------------------------------------------------------

application::application(application_options options)
    : route_scope(*this), options_(std::move(options)) {
  node_ = &groups_.emplace_back();  // the root: members exist only now, after the base
  unrouted_ = [this](context& ctx) { answer_unrouted(ctx); };
}

application::~application() = default;

void application::not_found(handler fn) {
  if (frozen()) throw std::logic_error("waypoint::app: not_found() after freeze()");
  not_found_ = std::move(fn);
}

void application::freeze() {
  std::lock_guard lock(freeze_mutex_);
  if (frozen_.load(std::memory_order_relaxed)) return;
  for (freeze_stage stage : {freeze_stage::prepare, freeze_stage::complete})
    for (const auto& [when, hook] : freeze_hooks_)
      if (when == stage) hook(*this);
  root_chain_ = layers_around(&groups_.front());
  root_async_ = chain_is_async(root_chain_, unrouted_);
  for (const auto& r : router_.routes()) {
    auto& ep = const_cast<route_entry&>(*r.handler);  // ours: endpoints_ holds it
    ep.chain_ = ep.layers();
    ep.async_chain_ = chain_is_async(ep.chain_, ep.fn_);
  }
  router_.freeze();
  frozen_.store(true, std::memory_order_release);
}

void application::on_freeze(freeze_stage stage, std::function<void(application&)> hook) {
  if (frozen()) throw std::logic_error("waypoint::app: on_freeze() after freeze()");
  freeze_hooks_.emplace_back(stage, std::move(hook));
}

route_range<std::deque<route_entry>::iterator> application::edit_routes() {
  if (frozen()) throw std::logic_error("waypoint::app: routes changed after freeze()");
  return {endpoints_.begin(), endpoints_.end()};
}

std::string application::url_for(std::string_view route_name,
                                 std::initializer_list<url_param> values,
                                 std::initializer_list<url_param> query) const {
  return names_.url_for(route_name, values, query);
}

void application::log(std::string_view line) const noexcept {
  if (options_.logger) {
    try {
      options_.logger(line);
      return;
    } catch (...) {
      // A failing logger must not fail the request; fall back to stderr.
    }
  }
  std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
}

// The adapter's route() decides the outcome, and with it every answer rule; the
// application picks the chain and renders the bodies.
void application::route(context& ctx) const noexcept {
  beast::route_outcome& o = ctx.outcome_;
  ctx.fit_match_storage();
  o = beast::route(router_, ctx.request(), ctx.match_);
  if (o.path.empty()) {  // the target did not resolve: log it without a query
    std::string_view target = ctx.request().target();
    o.path = target.substr(0, target.find('?'));
  }
  if (o.matched()) {
    const route_entry* ep = ctx.match_.handler();
    ctx.chain_ = ep->chain_;
    ctx.endpoint_ = &ep->fn_;
    ctx.async_chain_ = ep->async_chain_;
  } else if (o.kind == match_status::not_found && not_found_) {
    ctx.chain_ = root_chain_;
    ctx.endpoint_ = &not_found_;
    ctx.async_chain_ = root_async_ || not_found_.is_async();
  } else {
    ctx.chain_ = root_chain_;
    ctx.endpoint_ = &unrouted_;
    ctx.async_chain_ = root_async_;
  }
}

void application::answer_unrouted(context& ctx) const {
  const beast::route_outcome& o = ctx.outcome();
  response_builder& res = ctx.response();
  if (o.matched()) throw std::logic_error("waypoint::app: unrouted answer for a matched request");
  beast::write_outcome_header(o, res.message(), automatic_method);
  switch (o.kind) {
    case match_status::matched:
    case match_status::redirect:  // Location says it all; no body
      return;
    case match_status::method_not_allowed: {
      if (ctx.method() == automatic_method) {
        res.status(http::status::no_content);  // finish_body() drops any body
        return;
      }
      std::string detail = "the path does not serve ";
      detail.append(ctx.method());
      detail += "; it serves ";
      detail.append(res.header("Allow"));
      res.problem(static_cast<int>(o.status), detail);
      return;
    }
    case match_status::not_found:
    case match_status::bad_request:
      res.problem(static_cast<int>(o.status), o.reason);
      return;
  }
}

// What waypoint::beast::server's writer decides for itself (the status line's words, a HEAD
// answer's length, no body where the status carries none), done to the message for those
// that write it otherwise: Beast's serializer (async_handle) and the caller of respond().
void application::finish_message(bool head, response& res) noexcept {
  beast::finish_body(head, res);
  name_status(res);
}

// --- exceptions ---------------------------------------------------------------------

namespace {
// An http_error answers with its status only when that status is an error status; any
// other (a 200 thrown by mistake) becomes a 500.
bool answerable(const http_error& e) noexcept { return e.status() >= 400 && e.status() <= 599; }

// The client closed or broke its connection before the answer was complete (a body read or
// a write failed for it): the client's doing, recorded as nginx's 499 so that leaving
// cannot raise the server's 5xx rate. The connection's own close and a write that timed out
// are told apart from a server failure the same way.
constexpr int client_closed_request = 499;

bool client_left(const std::error_code& ec) noexcept {
  return ec == std::errc::connection_aborted || ec == std::errc::connection_reset ||
         ec == std::errc::broken_pipe || ec == std::errc::not_connected;
}

// Inside a catch block: the exception is a body write to a response that carries none
// (HEAD, 204, 304). Its head has gone out, so that answer stands; the writer only stopped.
bool body_was_not_allowed() noexcept {
  try {
    throw;
  } catch (const std::system_error& e) {
    return e.code() == std::error_code(make_error_code(beast::exchange_error::body_not_allowed));
  } catch (...) {
    return false;
  }
}

// Inside a catch block: 499 when the exception says the client left, else 0.
int client_left_status() noexcept {
  try {
    throw;
  } catch (const std::system_error& e) {
    return client_left(e.code()) ? client_closed_request : 0;
  } catch (const boost::system::system_error& e) {
    return client_left(std::error_code(e.code())) ? client_closed_request : 0;
  } catch (...) {
    return 0;
  }
}
}  // namespace

void answer_current_exception(context& ctx) noexcept {
  if (body_was_not_allowed()) return;
  // The head went out with the first chunk: whatever is answered below is not sent, and the
  // body must not end as if it were complete (exchange_host::abort_response).
  if (ctx.streamed_) ctx.host_->abort_response();
  if (int status = client_left_status()) {  // nobody reads the answer: no body, no log
    ctx.response().message().result(static_cast<unsigned>(status));
    ctx.response().message().body().clear();
    return;
  }
  try {
    try {
      throw;
    } catch (const http_error& e) {
      if (!answerable(e)) {
        log_failure(ctx, "http_error with status " + std::to_string(e.status()) + ": " +
                             std::string(e.detail()));
        ctx.response().problem(500, generic_500);
        return;
      }
      std::optional<std::string_view> pointer, keyword;
      if (e.pointer()) pointer = *e.pointer();
      if (e.keyword()) keyword = *e.keyword();
      ctx.response().problem(e.status(), e.detail(), pointer, keyword);
    } catch (const std::exception& e) {
      log_failure(ctx, e.what());
      ctx.response().problem(500, generic_500);
    } catch (...) {
      log_failure(ctx, "an exception not derived from std::exception");
      ctx.response().problem(500, generic_500);
    }
  } catch (...) {
    // Writing the problem document failed (no memory): a bare 500 still answers.
    response& res = ctx.response().message();
    res.result(http::status::internal_server_error);
    res.body().clear();
  }
}

int answered_status(context& ctx, const std::exception_ptr& error) noexcept {
  if (!error) return ctx.response().status();
  try {
    std::rethrow_exception(error);
  } catch (...) {
    return body_was_not_allowed() ? ctx.response().status() : current_exception_status();
  }
}

int current_exception_status() noexcept {
  if (int status = client_left_status()) return status;
  try {
    throw;
  } catch (const http_error& e) {
    return answerable(e) ? e.status() : 500;
  } catch (...) {
    return 500;
  }
}

}  // namespace waypoint::app
