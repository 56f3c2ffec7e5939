// A service in its own process, mounted at a prefix of the application (zip's Load, a
// sidecar the application runs itself): waypoint starts the executable with a unix socket to
// listen on, waits until its readiness path answers 2xx, and forwards the prefix to it over
// that socket. Responses stream (a server-sent event stream passes event by event), and a
// WebSocket upgrade is relayed message by message.
//
//   auto reports = std::make_shared<waypoint::app::child_service>("reports",
//       waypoint::app::child_service_options{
//           .command = {"/usr/lib/acme/reports", "--unix", "{socket}"}, .lazy = true});
//   waypoint::app::mount(app, "/reports", reports);  // GET /reports/x -> GET /x on the child
//   ...serve...
//   reports->stop().get();                            // after the server's drain
//
// The child's lifecycle:
//   - started at once (start()), or at the first request (`lazy`), which waits for it;
//   - stopped when idle (`idle_stop`) and started again by the next request;
//   - restarted when it exits by itself, with a delay that doubles from `restart_delay` to
//     `max_restart_delay`: meanwhile requests are answered 503 with Retry-After;
//   - replaced by reload(): the new process starts on a new socket, traffic switches once it
//     is ready, and the old one gets SIGTERM once its requests in flight are done (or after
//     stop_timeout), so no request fails;
//   - stopped by stop(): SIGTERM, then SIGKILL after stop_timeout.
// The child dies with the thread that supervises it (PR_SET_PDEATHSIG), so a host killed with
// SIGKILL leaves no orphan; it inherits no descriptor but 0, 1 and 2, and the default signal
// mask. Any executable that serves HTTP/1.1 on a unix socket can be a child; a waypoint
// application listens with listen_address::unix_socket (examples/child_service.cpp).
#pragma once

#include "waypoint/app/services/upstream.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

class route_scope;

namespace detail {
struct child_supervisor;  // src/app/services/child_service.cpp
}

struct child_service_options {
  // The executable (an absolute path, run as is: no PATH search) and its arguments; each
  // "{socket}" in an argument is replaced by the path of the socket the child must listen on.
  std::vector<std::string> command;
  // Where the sockets go: $XDG_RUNTIME_DIR, else /tmp, when empty. The service makes a
  // directory of its own there (mkdtemp: waypoint-<name>-XXXXXX, mode 0700, checked at each
  // start, removed by stop() and by an idle stop), and each process of the child gets a
  // file in it named for its generation ("3.sock"): no other local user can put a listener
  // where the child's socket will be. Each connection to a socket is checked before
  // anything is written to it (its listener, SO_PEERCRED, must be the child or a process of
  // this user): a request, its Authorization and Cookie included, goes to no one else.
  std::string socket_directory = {};
  // GET on this path, over the socket, must answer 2xx before the child gets traffic.
  std::string ready_path = "/healthz";
  bool lazy = false;                           // start at the first request, not at start()
  std::chrono::milliseconds idle_stop{0};      // stop after this long without requests; 0: never
  std::chrono::milliseconds start_timeout{10'000};  // from the spawn until ready
  std::chrono::milliseconds stop_timeout{10'000};   // in-flight requests, then SIGTERM -> SIGKILL
  std::chrono::milliseconds restart_delay{100};     // after a crash; doubles at each crash in a row
  std::chrono::milliseconds max_restart_delay{10'000};
  // Where the child serves its OpenAPI document and its MCP endpoint (serve_openapi and
  // serve_mcp's defaults), read after each start: the host's document shows its operations
  // under the prefix (their operationIds, and components that differ from the host's,
  // prefixed with the service's name and a '.'), and the host's MCP endpoint lists its
  // tools, named the same way, and forwards their calls. Empty: none. A child that answers
  // 404 has none; a lazy child's show once it has started.
  std::string openapi_path = "/openapi.json";
  std::string mcp_path = "/mcp";
  // Timeouts and limits of the forwarded requests (the url is the child's socket). A
  // streamed response is cut when the child sends nothing for response_timeout: 60 s here,
  // past the 15 s heartbeat of an event stream.
  upstream_options forwarding = {.url = {}, .response_timeout = std::chrono::seconds(60)};
  // The supervisor's lines (started, exited, restarting, reloaded); stderr when empty.
  std::function<void(std::string_view line)> logger = {};
};

enum class child_state {
  stopped,   // not running: before start(), lazily idle, or after stop()
  starting,  // spawned, its readiness path not yet 2xx
  running,
  crashed,   // exited by itself, or never became ready: restarting after a delay
};

struct child_status {
  child_state state = child_state::stopped;
  pid_t pid = 0;                  // the process serving traffic, 0 when none
  std::uint64_t generation = 0;   // processes started so far
  std::uint64_t crashes = 0;      // exits nobody asked for, failed starts included
  std::uint64_t reloads = 0;
  std::string last_error;         // why the last start failed or the child exited
};

// One mounted service. Its supervisor (a thread of its own) starts, watches and stops the
// processes; requests, on the server's threads, only take a reference to the current one.
// The futures complete on the supervisor's thread; don't wait on them from a server thread.
class child_service {
 public:
  // Throws std::invalid_argument naming what is wrong: an empty command, an executable that
  // does not exist or is not executable, a ready_path not starting with '/', a timeout not
  // positive.
  child_service(std::string name, child_service_options options);
  ~child_service();  // stop(), waited for
  child_service(const child_service&) = delete;
  child_service& operator=(const child_service&) = delete;

  // Starts the child and completes once it is ready; for a lazy service, completes at once.
  // The future's exception names why a start failed (the process exited, never became ready).
  std::future<void> start();
  // A new process on a new socket; traffic switches once it is ready, then the old one
  // drains and stops. When the new one fails to start, the old one keeps serving and the
  // future holds the error. A service not running starts instead.
  std::future<void> reload();
  // Stops the child (requests then get 503) and completes once it has exited.
  std::future<void> stop();

  child_status status() const;
  const std::string& name() const noexcept;

 private:
  friend void mount(route_scope& scope, std::string_view prefix,
                    std::shared_ptr<child_service> service);
  std::shared_ptr<detail::child_supervisor> supervisor_;
};

// Forwards GET (HEAD), POST, PUT, PATCH and DELETE under `prefix` ("/reports" takes
// "/reports/..."; OPTIONS stays the host's, for CORS) to the child, the prefix removed, with forwarded_request()'s fields (Via, X-Forwarded-For,
// Forwarded) and the trace; WebSocket upgrades under it become a WebSocket to the child at
// the same path. The request's body is forwarded whole (up to the route's body limit, 1 MiB
// unless route_body::max_bytes says otherwise); the response streams. Answers 503 with a
// problem document and Retry-After while the child is down (a request the process refused
// or dropped because it was dying included), 502/504 as upstream::send does otherwise.
void mount(route_scope& scope, std::string_view prefix, std::shared_ptr<child_service> service);

}  // namespace waypoint::app
