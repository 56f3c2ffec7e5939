// WebSocket routes: registration beside a plain GET, the endpoint that tells upgrade
// requests from the others, and the hand-over of the request's context to the upgraded
// connection, where the route's handler runs.
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

}  // namespace

// The context of an upgraded request, owned by the upgrade until the connection is done
// with it. Until the server has taken the upgrade (`armed`), the dispatch still owns it.
struct detail::websocket_owner {
  context* ctx = nullptr;
  std::shared_ptr<websocket_route> route;
  bool armed = false;

  static constexpr std::string_view cannot_upgrade =
      "this server cannot upgrade the connection to a WebSocket";

  websocket_owner() = default;
  websocket_owner(const websocket_owner&) = delete;
  websocket_owner& operator=(const websocket_owner&) = delete;
  ~websocket_owner() {
    if (!armed) return;
    ctx->~context();
    ::operator delete(ctx);  // the dispatch's block (context_pool's ::operator new)
  }

  // In the route's endpoint: takes an upgrade request, answered 101 unless a layer that
  // wraps the handler changes that, or 501 at once when the connection cannot be handed
  // over (respond(), async_handle()), so that the layers log what the client gets.
  static bool take(context& ctx) {
    beast::handshake_defect defect = beast::websocket_handshake_defect(ctx.request());
    if (defect != beast::handshake_defect::none) {
      if (!asks_for_websocket(ctx.request())) return false;
      refuse_handshake(ctx, defect);
      return true;
    }
    if (!ctx.host_->can_upgrade()) {
      ctx.response().problem(501, cannot_upgrade);
      return true;
    }
    ctx.upgrade_requested_ = true;
    ctx.response().status(http::status::switching_protocols);
    return true;
  }
};

namespace {

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

}  // namespace

handler detail::websocket_endpoint(const websocket_route& route) {
  const websocket_route* r = &route;  // the endpoint holds it (endpoint::websocket)
  if (route.get.is_async()) {
    return [r](context& ctx) -> awaitable<void> {
      if (websocket_owner::take(ctx)) co_return;
      co_await r->get.coroutine()(ctx);
    };
  }
  return [r](context& ctx) {
    if (websocket_owner::take(ctx)) return;
    if (r->get) return r->get(ctx);
    refuse_plain_request(ctx);
  };
}

route_scope& route_scope::websocket(std::string_view pattern, websocket_handler fn,
                                    source_location where) {
  return websocket(pattern, std::move(fn), websocket_options{}, where);
}

route_scope& route_scope::websocket(std::string_view pattern, websocket_handler fn,
                                    const websocket_options& options, source_location where) {
  application& app = *app_;
  if (app.frozen()) throw std::logic_error("waypoint::app: route added after freeze()");
  if (!fn) throw std::invalid_argument("waypoint::app: empty WebSocket handler");
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
  auto route = std::make_shared<detail::websocket_route>();
  route->fn = std::move(fn);
  route->options = options;
  std::string text = detail::compose_pattern(*node_, "GET", pattern);
  // A plain GET of this scope on the same pattern: the two share its endpoint.
  for (detail::endpoint& ep : app.endpoints_) {
    if (ep.group != node_ || ep.websocket || ep.route->pattern.text() != text) continue;
    route->get = std::move(ep.fn);
    ep.fn = detail::websocket_endpoint(*route);
    ep.websocket = std::move(route);
    app.websocket_endpoints_.emplace_back(std::move(text), &ep);
    last_ = &ep;
    return *this;
  }
  app.adding_websocket_ = true;
  try {
    add("GET", pattern, detail::websocket_endpoint(*route), where);
  } catch (...) {
    app.adding_websocket_ = false;
    throw;
  }
  app.adding_websocket_ = false;
  last_->websocket = std::move(route);
  app.websocket_endpoints_.emplace_back(std::move(text), last_);
  return *this;
}

bool application::start_websocket(context* ctx) const noexcept {
  ctx->upgrade_requested_ = false;
  // A layer answered after the handler took the request (an error, a rewrite): that answer
  // goes out instead.
  if (ctx->response().status() != 101) return false;
  try {
    auto owner = std::make_shared<detail::websocket_owner>();
    owner->ctx = ctx;
    owner->route = ctx->match_.handler()->websocket;
    beast::websocket_upgrade upgrade;
    upgrade.options = owner->route->options;
    upgrade.run = [owner](beast::websocket_channel& channel) {
      return run_websocket(owner, channel);
    };
    if (ctx->host_->upgrade(upgrade)) {
      owner->armed = true;
      return true;
    }
    ctx->response().problem(501, detail::websocket_owner::cannot_upgrade);
  } catch (...) {
    answer_current_exception(*ctx);
  }
  return false;
}

// On the upgraded connection: the context the layers filled now points at the request and
// response the connection kept, and is routed again so that its views point there too.
awaitable<void> application::run_websocket(std::shared_ptr<detail::websocket_owner> owner,
                                           beast::websocket_channel& channel) {
  context& ctx = *owner->ctx;
  ctx.request_ = &channel.request();
  ctx.response_ = response_builder(channel.response());
  ctx.rebind(channel.host());
  ctx.app().route(ctx);
  app::websocket ws(channel);
  std::exception_ptr error;
  try {
    co_await owner->route->fn(ctx, ws);
  } catch (...) {
    error = std::current_exception();
  }
  if (!error) co_return;
  // A write to a connection already closed, or the server's cancellation, ends the handler
  // as the connection's end does; anything else is the handler's failure.
  if (channel.is_open() && !is_cancellation(error)) {
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
  std::rethrow_exception(error);
}

}  // namespace waypoint::app
