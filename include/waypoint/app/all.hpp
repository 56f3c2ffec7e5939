// Everything of waypoint::app: the application, the context, typed JSON routes, coroutine
// routes, the built-in middleware, trusted proxies, static files and serving with
// waypoint::beast::server.
// The upstream client (waypoint/app/upstream.hpp) and mounted child services
// (waypoint/app/child_service.hpp, which includes it) are included where they are used.
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/app/async.hpp"
#include "waypoint/app/auth.hpp"
#include "waypoint/app/context.hpp"
#include "waypoint/app/cookies.hpp"
#include "waypoint/app/cose.hpp"
#include "waypoint/app/csrf.hpp"
#include "waypoint/app/event_stream.hpp"
#include "waypoint/app/forms.hpp"
#include "waypoint/app/forwarded.hpp"
#include "waypoint/app/health.hpp"
#include "waypoint/app/http_error.hpp"
#include "waypoint/app/jwt.hpp"
#include "waypoint/app/json.hpp"
#include "waypoint/app/metrics.hpp"
#include "waypoint/app/middleware.hpp"
#include "waypoint/app/openapi.hpp"
#include "waypoint/app/phoenix.hpp"
#include "waypoint/app/rate_limit.hpp"
#include "waypoint/app/security_headers.hpp"
#include "waypoint/app/serve.hpp"
#include "waypoint/app/sessions.hpp"
#include "waypoint/app/static_files.hpp"
#include "waypoint/app/trace_context.hpp"
#include "waypoint/app/topics.hpp"
#include "waypoint/app/websocket.hpp"
