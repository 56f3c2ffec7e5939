// Shares of what the process holds for its requests, taken by a handler before it opens a
// descriptor or fills disk, and answered for it when none is left: a descriptor permit
// from the server's budget (503), or units of a budget of the application's own, such as
// the bytes of temporary disk that uploads may fill together (507, or the status given).
// Every refusal is a problem document with Retry-After, since the shares come back as
// other requests end.
//
//   waypoint::beast::resource_budget disk(2ull << 30);            // shared by the route
//   app.post("/v1/upload", [disk](waypoint::app::context& ctx) mutable -> awaitable<void> {
//     auto file_descriptor = waypoint::app::require_descriptor(ctx, "the upload's file");
//     auto space = waypoint::app::require_room(ctx, disk, declared_length,
//                                              507, "temporary disk for uploads");
//     ...  as each piece of n bytes arrives: require_more(ctx, space, n, 507, ...)
//   });
//
// Held in the handler's frame, a permit goes back however the request ends: answered, a
// client that left, an error.
#pragma once

#include "waypoint/app/context.hpp"
#include "waypoint/beast/resource_budget.hpp"

#include <cstdint>
#include <string_view>

namespace waypoint::app {

// Retry-After, in seconds, of a refusal for want of a share. A share comes back when a
// request ends, which for the uploads and proxied requests that hold them takes about a
// second or more; one second keeps a well-behaved client from polling in a tight loop
// without making it wait long once the share is back.
inline constexpr unsigned resource_retry_after_seconds = 1;

// A descriptor permit from the server the request came on (exchange_host::
// acquire_descriptor; outside a server always granted), for the descriptor the handler is
// about to open; `what` names it ("the upload's temporary file"). Hold it as long as the
// descriptor is open. None left: throws http_error(503) naming `what`, with Retry-After
// set on ctx's response.
beast::resource_permit require_descriptor(context& ctx, std::string_view what);

// `units` of `budget` for the request. Do not fit: throws http_error(`status`) naming
// `what`, with Retry-After set on ctx's response; when `units` exceed the whole budget,
// which no wait can cure, http_error(413) without Retry-After.
beast::resource_permit require_share(context& ctx, beast::resource_budget& budget,
                                     std::uint64_t units, int status, std::string_view what);

// A share of `budget` that starts empty and grows with require_more as what it counts
// arrives, for a body that declares it will need `expected` units (Content-Length; 0 when
// unknown). Refused at once, as require_share refuses, when `expected` could not fit: more
// than the whole budget (413) or more than is free now (`status` with Retry-After), so that
// a client told to wait is told before it sends its body. Nothing is reserved for bytes not
// yet sent: a client that declares much and sends slowly holds what it has sent, not the
// budget (two uploads declaring 1 GiB and sending 1.5 KB/s held a 2 GiB budget that way,
// issue #44). A body that passed this check can still be refused mid-way, by require_more,
// when others have filled the budget meanwhile.
beast::resource_permit require_room(context& ctx, beast::resource_budget& budget,
                                    std::uint64_t expected, int status, std::string_view what);

// `more` units added to `permit` (a share that grows as a body arrives), or the refusal
// of require_share (the whole budget unknown here: always `status` with Retry-After).
void require_more(context& ctx, beast::resource_permit& permit, std::uint64_t more, int status,
                  std::string_view what);

}  // namespace waypoint::app
