// Where a Redis store of waypoint::app_redis connects and how long it waits: the part of
// redis_session_store_options and redis_rate_limit_store_options that is the same for both,
// written once (`.connection = {.host = "10.0.0.5", .port = 6379}`).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace waypoint::app {

struct redis_connection_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  // For connecting and for each command: past it the call throws and the connection is
  // dropped (a session store's request then gets a 500; a rate limiter does what
  // rate_limit_options::fail_open says). Both stores sit in front of requests: keep it short.
  std::chrono::milliseconds timeout{100};
  // Connections kept open between calls, at most. A call takes an idle one or opens one, so
  // as many are open as calls run at once (at most the server's threads); past this many,
  // those handed back are closed.
  std::size_t max_idle_connections = 8;
};

}  // namespace waypoint::app
