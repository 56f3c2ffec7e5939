// Deferred responses: ctx.defer(), the handle a callback finishes from any thread, and the
// wait on the connection's thread that takes the response back.
#include "waypoint/app/context.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <stdexcept>

namespace waypoint::app {

namespace asio = boost::asio;

// Shared by the handle (any thread) and the context (the connection's thread only). The
// response lives here, not in the context, so a callback that writes it late can never
// race the connection sending or dropping it.
struct detail::deferred_state {
  deferred_state(asio::any_io_executor on, app::response&& started)
      : executor(std::move(on)), message(std::move(started)), builder(message) {}

  asio::any_io_executor executor;
  app::response message;
  response_builder builder;
  std::atomic<bool> sent{false};
  std::atomic<bool> cancelled{false};
  // The connection's thread only:
  context* ctx = nullptr;              // null once the request no longer waits
  asio::steady_timer* wake = nullptr;  // the waiting coroutine's, cancelled on arrival
  bool arrived = false;
};

deferred_response context::defer() {
  if (deferred_) throw std::logic_error("waypoint::app: defer() called twice for one request");
  auto state =
      std::make_shared<detail::deferred_state>(host_->executor(), std::move(response_.message()));
  response_.message() = app::response(http::status::ok, request_->version());
  state->ctx = this;
  deferred_ = state;
  return deferred_response(std::move(state));
}

void context::detach_deferred() noexcept {
  deferred_->ctx = nullptr;
  if (!deferred_->arrived) deferred_->cancelled.store(true, std::memory_order_release);
  deferred_.reset();
}

awaitable<void> context::finish_deferred() {
  detail::deferred_state& state = *deferred_;
  if (!state.arrived) {
    asio::steady_timer wake(state.executor, asio::steady_timer::time_point::max());
    state.wake = &wake;
    boost::system::error_code ignored;
    try {
      co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    } catch (...) {
      // Already cancelled when the wait began; the same as cancelled during it.
    }
    state.wake = nullptr;
    if (!state.arrived) {  // cancelled: the client went away, or a deadline answered
      detach_deferred();
      throw boost::system::system_error(asio::error::operation_aborted);
    }
  }
  response_.message() = std::move(state.message);
  detach_deferred();
  run_postponed();
}

deferred_response& deferred_response::operator=(deferred_response&& other) noexcept {
  if (this != &other) {
    deferred_response dropped(std::move(*this));
    state_ = std::move(other.state_);
  }
  return *this;
}

deferred_response::~deferred_response() {
  if (!state_ || state_->sent.load(std::memory_order_relaxed) || cancelled()) return;
  try {
    state_->builder.problem(500, "the handler dropped its deferred response");
  } catch (...) {
    state_->message.result(http::status::internal_server_error);
  }
  send();
}

response_builder& deferred_response::response() {
  if (!state_) throw std::logic_error("waypoint::app: an empty deferred_response");
  return state_->builder;
}

bool deferred_response::cancelled() const noexcept {
  return state_ && state_->cancelled.load(std::memory_order_acquire);
}

void deferred_response::send() noexcept {
  // Nobody waits for a cancelled one, and its io_context may be gone by now.
  if (!state_ || state_->sent.exchange(true) || cancelled()) return;
  try {
    asio::post(state_->executor, [state = state_] {
      if (!state->ctx) return;  // nobody waits any more
      state->arrived = true;
      if (state->wake) state->wake->cancel();
    });
  } catch (...) {
    // No memory to post with: the request waits for its deadline or its client.
  }
}

}  // namespace waypoint::app
