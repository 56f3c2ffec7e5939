// Everything of waypoint::app: the application, the context, typed JSON routes, coroutine
// routes, the built-in middleware, trusted proxies, static files and serving with
// waypoint::beast::server.
// The upstream client (waypoint/app/services/upstream.hpp) and mounted child services
// (waypoint/app/services/child_service.hpp, which includes it) are included where they are used.
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/app/async.hpp"
#include "waypoint/app/content/event_stream.hpp"
#include "waypoint/app/content/forms.hpp"
#include "waypoint/app/content/static_files.hpp"
#include "waypoint/app/context.hpp"
#include "waypoint/app/documents/openapi.hpp"
#include "waypoint/app/http_error.hpp"
#include "waypoint/app/middleware.hpp"
#include "waypoint/app/operations/access_log.hpp"
#include "waypoint/app/operations/forwarded.hpp"
#include "waypoint/app/operations/health.hpp"
#include "waypoint/app/operations/metrics.hpp"
#include "waypoint/app/operations/trace_context.hpp"
#include "waypoint/app/realtime/phoenix.hpp"
#include "waypoint/app/realtime/topics.hpp"
#include "waypoint/app/realtime/websocket.hpp"
#include "waypoint/app/security/auth.hpp"
#include "waypoint/app/security/cookies.hpp"
#include "waypoint/app/security/cors.hpp"
#include "waypoint/app/security/cose.hpp"
#include "waypoint/app/security/csrf.hpp"
#include "waypoint/app/security/jwt.hpp"
#include "waypoint/app/security/rate_limit.hpp"
#include "waypoint/app/security/security_headers.hpp"
#include "waypoint/app/security/sessions.hpp"
#include "waypoint/app/serve.hpp"
#include "waypoint/app/typed/json.hpp"
