// The kernel's built-in layers: recover and request id (deadline: async.cpp).
#include "waypoint/app/middleware.hpp"

#include <algorithm>
#include <exception>
#include <utility>

namespace waypoint::app {

// The built-ins are layer_hooks, so they wrap synchronous and coroutine routes alike.

middleware recover() {
  return layer_hooks{{}, [](context& ctx, std::exception_ptr& error) {
                       if (!error) return;
                       try {
                         std::rethrow_exception(std::exchange(error, nullptr));
                       } catch (...) {
                         answer_current_exception(ctx);
                       }
                     }};
}

middleware request_id() {
  return layer_hooks{[](context& ctx) {
                       std::string_view incoming = ctx.header("X-Request-Id");
                       if (!incoming.empty()) ctx.request_id(incoming);  // else generated
                       // Set before the inner layers run: error answers keep it.
                       ctx.response().header("X-Request-Id", ctx.request_id());
                       return true;
                     },
                     {}};
}

}  // namespace waypoint::app
