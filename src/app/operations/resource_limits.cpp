// require_descriptor, require_share, require_more: a share or a problem document with
// Retry-After.
#include "waypoint/app/operations/resource_limits.hpp"

#include "waypoint/app/http_error.hpp"

#include <algorithm>
#include <string>

namespace waypoint::app {

namespace {
[[noreturn]] void refuse(context& ctx, int status, std::string_view what) {
  ctx.response().header(http::field::retry_after, std::to_string(resource_retry_after_seconds));
  throw http_error(status, "the server has no room for " + std::string(what) +
                               " now; retry after " +
                               std::to_string(resource_retry_after_seconds) + " s");
}
}  // namespace

beast::resource_permit require_descriptor(context& ctx, std::string_view what) {
  beast::resource_permit permit = ctx.acquire_descriptor();
  if (!permit) refuse(ctx, 503, std::string(what) + " (a descriptor)");
  return permit;
}

namespace {
void refuse_past_the_whole(const beast::resource_budget& budget, std::uint64_t units,
                           std::string_view what) {
  if (units > budget.limit())
    throw http_error(413, std::string(what) + " has room for " + std::to_string(budget.limit()) +
                              " at most, less than this request needs");
}
}  // namespace

beast::resource_permit require_share(context& ctx, beast::resource_budget& budget,
                                     std::uint64_t units, int status, std::string_view what) {
  refuse_past_the_whole(budget, units, what);
  beast::resource_permit permit = budget.try_acquire(units);
  if (!permit) refuse(ctx, status, what);
  return permit;
}

beast::resource_permit require_room(context& ctx, beast::resource_budget& budget,
                                    std::uint64_t expected, int status, std::string_view what) {
  refuse_past_the_whole(budget, expected, what);
  // Read without taking: another request may take the room next, which the require_more of
  // the bytes themselves then answers.
  if (expected > budget.limit() - std::min(budget.in_use(), budget.limit())) refuse(ctx, status, what);
  return budget.try_acquire(0);
}

void require_more(context& ctx, beast::resource_permit& permit, std::uint64_t more, int status,
                  std::string_view what) {
  if (!permit.try_grow(more)) refuse(ctx, status, what);
}

}  // namespace waypoint::app
