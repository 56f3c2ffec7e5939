// WebSocket routes, built on the kernel's seam: a route whose handler tells upgrade
// requests from the others and asks for the connection (context::upgrade), sharing its
// pattern with a plain GET (route_entry::share_pattern), and the handler run on the
// upgraded connection.
#include "waypoint/app/realtime/websocket.hpp"

#include "waypoint/app/middleware.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

#include <new>
#include <stdexcept>
#include <string_view>

namespace waypoint::app {

namespace {

// A GET over HTTP/1.1 whose Upgrade field names websocket asks for a WebSocket: it is
// answered as a handshake, 101 or why not (RFC 6455 §4.2.1: "an appropriate error code
// (such as 400)"), never by a plain GET handler beside the route, whose page would reach a
// WebSocket client as an unexplained status.
bool asks_for_websocket(const request& req) noexcept {
  return req.method() == http::verb::get && req.version() >= 11 &&
         waypoint::detail::list_has_token(req[http::field::upgrade], "websocket");
}

// 426 with the version spoken for a version other than 13 (RFC 6455 §4.4), 400 naming the
// defect for the others.
void refuse_handshake(context& ctx, beast::handshake_defect defect) {
  if (defect == beast::handshake_defect::bad_version) {
    ctx.response().header(http::field::upgrade, "websocket");
    ctx.response().header(http::field::sec_websocket_version, "13");
    ctx.response().problem(426, beast::describe(defect));
    return;
  }
  ctx.response().problem(400, beast::describe(defect));
}

// What a WebSocket route holds besides its handler: a route extension (extensions.hpp).
struct websocket_route {
  websocket_handler fn;
  websocket_options options;
  handler get;  // the plain GET handler sharing the pattern, if any
};

void refuse_plain_request(context& ctx) {
  ctx.response().header(http::field::upgrade, "websocket");
  ctx.response().header(http::field::sec_websocket_version, "13");  // RFC 6455 §4.4
  ctx.response().problem(426, "this route serves WebSocket only: send GET with "
                              "Connection: upgrade and Upgrade: websocket");
}

bool is_cancellation(const std::exception_ptr& error) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const boost::system::system_error& e) {
    return e.code() == boost::asio::error::operation_aborted;
  } catch (...) {
    return false;
  }
}

// A handler that threw on an open connection: its line, then the close with 1011.
void log_handler_failure(context& ctx, const std::exception_ptr& error) {
  std::string line = "waypoint: WebSocket handler of route \"";
  line.append(ctx.route_pattern().text());
  line += "\" (request id ";
  line.append(ctx.request_id());
  line += ") threw; closing with 1011: ";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    detail::append_log_text(line, e.what());  // it may quote the client
  } catch (...) {
    line += "an exception not derived from std::exception";
  }
  ctx.app().log(line);
}

// On the upgraded connection: the route's handler.
awaitable<void> run_handler(const websocket_route& route, context& ctx,
                            beast::websocket_channel& channel) {
  app::websocket ws(channel);
  std::exception_ptr error;
  try {
    co_await route.fn(ctx, ws);
  } catch (...) {
    error = std::current_exception();
  }
  if (!error) co_return;
  // A write to a connection already closed, or the server's cancellation, ends the handler
  // as the connection's end does; anything else is the handler's failure.
  if (channel.is_open() && !is_cancellation(error)) log_handler_failure(ctx, error);
  std::rethrow_exception(error);
}

// An upgrade request is answered 101 (the connection handed over once the layers are
// done, unless one of them changes the answer), or why not; true when it was one. So that
// the layers log what the client gets, the refusals are answered here.
bool take_upgrade(const websocket_route& route, context& ctx) {
  beast::handshake_defect defect = beast::websocket_handshake_defect(ctx.request());
  if (defect != beast::handshake_defect::none) {
    if (!asks_for_websocket(ctx.request())) return false;
    refuse_handshake(ctx, defect);
    return true;
  }
  const websocket_route* r = &route;  // the route's extension: it lives as long as the route
  ctx.upgrade(route.options, [r](context& c, beast::websocket_channel& channel) {
    return run_handler(*r, c, channel);
  });
  return true;
}

// The route's handler: upgrade requests to the WebSocket, others to the plain GET handler
// sharing the route, or a 426.
handler websocket_target(const websocket_route& route) {
  const websocket_route* r = &route;
  if (route.get.is_async()) {
    return [r](context& ctx) -> awaitable<void> {
      if (take_upgrade(*r, ctx)) co_return;
      co_await r->get.coroutine()(ctx);
    };
  }
  return [r](context& ctx) {
    if (take_upgrade(*r, ctx)) return;
    if (r->get) return r->get(ctx);
    refuse_plain_request(ctx);
  };
}

void check_options(const websocket_options& options) {
  if (options.max_message_bytes == 0)
    throw std::invalid_argument("waypoint::app: a WebSocket's max_message_bytes must be positive");
  if (options.max_message_frames == 0)
    throw std::invalid_argument("waypoint::app: a WebSocket's max_message_frames must be positive");
  if (options.permessage_deflate &&
      (options.deflate_window_bits < 9 || options.deflate_window_bits > 15 ||
       options.deflate_mem_level < 1 || options.deflate_mem_level > 9))
    throw std::invalid_argument("waypoint::app: a WebSocket's deflate_window_bits is 9..15 and "
                                "deflate_mem_level 1..9, not " +
                                std::to_string(options.deflate_window_bits) + " and " +
                                std::to_string(options.deflate_mem_level));
  if (options.write_timeout <= std::chrono::milliseconds::zero())
    throw std::invalid_argument("waypoint::app: a WebSocket's write_timeout must be positive");
}

// The route's handler, and its answers in the document: a WebSocket route is the GET that
// upgrades (OpenAPI has no WebSocket operations), and without a plain GET beside it, 426
// is all it answers otherwise.
void serve(route_entry& entry, const websocket_route& route) {
  entry.replace_target(websocket_target(route));
  route_doc& doc = entry.edit_doc();
  doc.other_answers = {{101,
                        "Switching Protocols: the connection becomes a WebSocket (send "
                        "Connection: Upgrade, Upgrade: websocket)"}};
  doc.only_other_answers = !route.get;
  if (!route.get)
    doc.other_answers.emplace_back(426, "Upgrade Required: the route serves WebSocket only");
}

// `entry` becomes the WebSocket route; without a plain GET yet, one registered later on its
// pattern joins it (once: a second is a conflict, as for any GET).
void make_websocket_route(route_entry& entry, websocket_route route) {
  websocket_route* r = entry.features().put(std::make_shared<websocket_route>(std::move(route)));
  serve(entry, *r);
  if (r->get) return;
  entry.share_pattern([&entry, r](handler get) {
    r->get = std::move(get);
    serve(entry, *r);
  });
}

}  // namespace

route_scope& serve_websocket(route_scope& scope, std::string_view pattern, websocket_handler fn,
                             const websocket_options& options, source_location where) {
  if (scope.app().frozen()) throw std::logic_error("waypoint::app: route added after freeze()");
  if (!fn) throw std::invalid_argument("waypoint::app: empty WebSocket handler");
  check_options(options);
  websocket_route route{std::move(fn), options, {}};
  // A plain GET of this scope on the same pattern: the two share its route.
  route_entry* get = scope.find_route("GET", pattern);
  if (get && !get->features().find<websocket_route>()) {
    route.get = get->target();
    make_websocket_route(*get, std::move(route));
    return scope;
  }
  scope.add_route(
      "GET", pattern, [](context&) {}, where);
  make_websocket_route(scope.last_route(), std::move(route));
  return scope;
}

}  // namespace waypoint::app
