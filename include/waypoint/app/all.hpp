// Everything of waypoint::app: the application, the context, typed JSON routes, the
// built-in middleware and serving with waypoint::beast::server.
#pragma once

#include "waypoint/app/application.hpp"
#include "waypoint/app/context.hpp"
#include "waypoint/app/http_error.hpp"
#include "waypoint/app/json.hpp"
#include "waypoint/app/middleware.hpp"
#include "waypoint/app/openapi.hpp"
#include "waypoint/app/serve.hpp"
