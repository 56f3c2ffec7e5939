// What every credential layer (bearer_auth in jwt.cpp, api_key_auth and basic_auth in
// auth.cpp) does alike: read `Authorization: <scheme> <credentials>` (auth.hpp's public
// authorization_credentials(), which an application's own layer uses too), keep what it
// writes into a challenge's quoted-strings plain, and refuse with a problem document and
// WWW-Authenticate. Written once here, in auth.cpp, so the three answer the same way.
#pragma once

#include "waypoint/app/security/auth.hpp"
#include "waypoint/app/context.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace waypoint::app::detail {

// Whether `text` can go inside a quoted-string (RFC 9110 §5.6.4) without escapes: printable
// ASCII but '"' and '\'. Realms and scopes must be such text.
bool is_plain_quoted(std::string_view text) noexcept;

// `text` with every byte is_plain_quoted() refuses replaced by '?': a reason made from a
// client's bytes, safe inside error_description="...".
std::string plain_quoted(std::string_view text);

// Answers `status` (401, or 403 for a credential that lacks a permission) with a problem
// document whose detail is `detail`, and WWW-Authenticate: `challenge` (RFC 9110 §11.6.1: a
// 401 carries at least one challenge). Fields set before, a request id or CORS, are kept.
void refuse_credentials(context& ctx, int status, std::string_view challenge,
                        std::string_view detail);

}  // namespace waypoint::app::detail
