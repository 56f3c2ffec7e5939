// dispatch_to: the router-backed dispatch. One match result per server thread: a result is
// ~16 KiB, too big to build per request and only used for the length of one call.
#include "waypoint/beast/router_dispatch.hpp"

#include "waypoint/beast/adapter.hpp"

namespace waypoint::beast {

dispatch_function dispatch_to(const router& r) {
  return [&r](const request& req, response& res) {
    thread_local route_match result;
    route_outcome o = route(r, req, result);
    if (o.matched()) {
      result.handler()(req, res, result);
    } else {
      prepare_response(o, res);
    }
  };
}

}  // namespace waypoint::beast
