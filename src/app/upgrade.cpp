// Handing a connection over after the answer (context::upgrade): the kernel's half of a
// WebSocket route. The request's context outlives the exchange: the upgrade owns it until
// the upgraded connection is done with it.
#include "waypoint/app/application.hpp"
#include "waypoint/app/async.hpp"
#include "waypoint/beast/websocket.hpp"

#include <new>

namespace waypoint::app {

namespace {
constexpr std::string_view cannot_upgrade =
    "this server cannot upgrade the connection to a WebSocket";
}  // namespace

// What context::upgrade() asked for, then the owner of the context once the server has
// taken the upgrade (`armed`); until then the dispatch owns it.
struct detail::pending_upgrade {
  beast::websocket_options options;
  context::upgrade_run run;
  context* ctx = nullptr;
  bool armed = false;

  pending_upgrade() = default;
  pending_upgrade(const pending_upgrade&) = delete;
  pending_upgrade& operator=(const pending_upgrade&) = delete;
  ~pending_upgrade() {
    if (!armed) return;
    ctx->~context();
    ::operator delete(ctx);  // the dispatch's block (context_pool's ::operator new)
  }

  // On the upgraded connection: the context the layers filled now points at the request
  // and response the connection kept, and is routed again so that its views point there.
  static awaitable<void> start(std::shared_ptr<pending_upgrade> self,
                               beast::websocket_channel& channel) {
    context& ctx = *self->ctx;
    ctx.request_ = &channel.request();
    ctx.response_ = response_builder(channel.response());
    ctx.rebind(channel.host());
    ctx.app().route(ctx);
    co_await self->run(ctx, channel);
  }
};

bool context::can_upgrade() const noexcept { return host_->can_upgrade(); }

void context::upgrade(const beast::websocket_options& options, upgrade_run run) {
  if (!can_upgrade()) {
    response().problem(501, cannot_upgrade);
    return;
  }
  auto pending = std::make_shared<detail::pending_upgrade>();
  pending->options = options;
  pending->run = std::move(run);
  upgrade_ = std::move(pending);
  response().status(http::status::switching_protocols);
}

bool application::start_upgrade(context* ctx) const noexcept {
  std::shared_ptr<detail::pending_upgrade> pending = std::move(ctx->upgrade_);
  // A layer answered after the handler took the request (an error, a rewrite): that answer
  // goes out instead.
  if (ctx->response().status() != 101) return false;
  try {
    pending->ctx = ctx;
    beast::websocket_upgrade upgrade;
    upgrade.options = pending->options;
    upgrade.run = [pending](beast::websocket_channel& channel) {
      return detail::pending_upgrade::start(pending, channel);
    };
    if (ctx->host_->upgrade(upgrade)) {
      pending->armed = true;
      return true;
    }
    ctx->response().problem(501, cannot_upgrade);
  } catch (...) {
    answer_current_exception(*ctx);
  }
  return false;
}

}  // namespace waypoint::app
