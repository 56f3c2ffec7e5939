// The synchronous half of running a chain: layer_hooks around the inner layers, and the
// `after` hooks a deferred response postponed. The coroutine half is in async.cpp.
#include "waypoint/app/context.hpp"

namespace waypoint::app {

void context::run_hooks(const layer_hooks& hooks, std::uint32_t index) {
  if (hooks.before && !hooks.before(*this)) return;
  std::exception_ptr error;
  try {
    run(index + 1);
  } catch (...) {
    error = std::current_exception();
  }
  // The response is not done yet: `after` waits for it (finish_deferred).
  if (deferred_ && !error) return postponed_.push_back(index);
  if (hooks.after) hooks.after(*this, error);
  if (error) std::rethrow_exception(error);
}

// Innermost first, as the unwinding would have run them; an error one of them keeps (or
// raises) goes on to the next, as an exception would.
void context::run_postponed() {
  std::exception_ptr error;
  for (std::uint32_t index : postponed_) {
    const layer_hooks& hooks = chain_[index]->hooks();
    if (!hooks.after) continue;
    try {
      hooks.after(*this, error);
    } catch (...) {
      error = std::current_exception();
    }
  }
  postponed_.clear();
  if (error) std::rethrow_exception(error);
}

}  // namespace waypoint::app
