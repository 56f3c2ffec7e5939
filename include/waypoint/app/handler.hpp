// The one handler model of waypoint::app: a handler is fn(context&), a layer is a
// coroutine fn(context&, next) or its synchronous convenience, layer_hooks.
// docs/architecture.md says why, and what each costs.
#pragma once

#include "waypoint/app/message.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace waypoint::app {

// The rest of the chain, as seen by one layer: `co_await next()` runs the inner layers and
// the handler, whatever their return types, and rethrows what they threw. Two words,
// copied freely.
class next {
 public:
  awaitable<void> operator()() const;

 private:
  friend class context;
  next(context& ctx, std::uint32_t index) noexcept : ctx_(&ctx), index_(index) {}

  context* ctx_;
  std::uint32_t index_;  // the chain position this call runs
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

// A route's handler: fn(context&). One shape, two return types: a handler that waits for
// something returns awaitable<void> and is a coroutine; one that does not returns void,
// and is then the same as a coroutine that never suspends, without the coroutine's frame.
// Every layer wraps either, and every way in (the server, respond(), async_handle()) runs
// either (docs/architecture.md says why there is no third form).
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

// The synchronous convenience for layers: `before` runs first and returns false when it
// answered (the inner layers and the handler are then skipped); `after` runs once the
// inner layers are done, also when they threw (`error` holds the exception: clear it to
// answer, keep it to pass it on), and for a deferred response once that is sent. Either
// may be empty. A route whose layers are all hooks and whose handler returns void runs
// without a coroutine: no allocation on the server path.
struct layer_hooks {
  std::function<bool(context&)> before{};
  std::function<void(context&, std::exception_ptr& error)> after{};
};

struct security_requirement;  // route_doc.hpp

// One middleware layer: a coroutine fn(context&, next) returning awaitable<void>, which
// `co_await next()`s where the inner layers and the handler run; or layer_hooks.
class middleware {
 public:
  enum class kind : std::uint8_t { none, coroutine, hooks };
  using function = std::function<awaitable<void>(context&, next)>;

  middleware() noexcept = default;
  middleware(std::nullptr_t) noexcept {}
  middleware(layer_hooks hooks) : kind_(kind::hooks), hooks_(std::move(hooks)) {}
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, middleware> &&
             !std::is_same_v<std::decay_t<F>, layer_hooks> &&
             std::is_invocable_v<F&, context&, next>)
  middleware(F fn) : kind_(kind::coroutine), coroutine_(std::move(fn)) {
    static_assert(detail::returns_awaitable<F, context&, next>(),
                  "a layer is a coroutine: fn(context&, next) -> awaitable<void> that "
                  "co_awaits next(); or layer_hooks{before, after}");
  }

  explicit operator bool() const noexcept { return kind_ != kind::none; }
  kind form() const noexcept { return kind_; }
  const function& coroutine() const noexcept { return coroutine_; }
  const layer_hooks& hooks() const noexcept { return hooks_; }

  // What the layer asks of every request it wraps, as the OpenAPI document shows it (the
  // credential layers of jwt.hpp and auth.hpp set one); null for most layers.
  const security_requirement* security() const noexcept { return security_.get(); }
  middleware& require_security(std::shared_ptr<const security_requirement> requirement) noexcept {
    security_ = std::move(requirement);
    return *this;
  }

  // The statuses the layer answers itself, in place of the inner layers and the handler
  // (a rate limit's 429), as the OpenAPI document lists them on every operation behind it.
  std::span<const int> answers() const noexcept { return answers_; }
  middleware& may_answer(int status) {
    answers_.push_back(status);
    return *this;
  }

 private:
  kind kind_ = kind::none;
  function coroutine_;
  layer_hooks hooks_;
  std::shared_ptr<const security_requirement> security_;
  std::vector<int> answers_;
};

}  // namespace waypoint::app
