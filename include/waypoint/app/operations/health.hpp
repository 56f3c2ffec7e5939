// Liveness and readiness as built-in handlers, mounted at whatever paths the platform
// probes:
//
//   auto health = std::make_shared<waypoint::app::health>();
//   app.get("/healthz", waypoint::app::healthz());         // 200 while the process answers
//   app.get("/readyz", waypoint::app::readyz(health));     // 503 once a drain has started
//   options.drain_grace = std::chrono::seconds(2);          // readiness 503 before listeners close
//   options = waypoint::app::watch_drain(std::move(options), health);
//
// The order a load balancer needs: the stop starts (SIGTERM), readiness answers 503 at
// once while everything else still works, the balancer's next checks fail and it stops
// sending, then, drain_grace later, the listeners close and the in-flight requests finish.
// Both answers carry Cache-Control: no-store, so no cache between prober and process
// replays an old state.
#pragma once

#include "waypoint/app/context.hpp"
#include "waypoint/beast/server_options.hpp"

#include <atomic>
#include <memory>

namespace waypoint::app {

// Whether the process should receive traffic. Starts ready; any thread may read or flip it.
class health {
 public:
  bool ready() const noexcept { return ready_.load(std::memory_order_relaxed); }
  // From now on readiness answers 503 (the drain has started, or the application is not
  // yet, or no longer, able to serve).
  void start_draining() noexcept { ready_.store(false, std::memory_order_relaxed); }
  void set_ready(bool ready) noexcept { ready_.store(ready, std::memory_order_relaxed); }

 private:
  std::atomic<bool> ready_{true};
};

// 200 {"status":"ok"}: the process is alive and its threads answer.
handler healthz();

// 200 {"status":"ready"} while `state` is ready, else 503 {"status":"draining"}.
handler readyz(std::shared_ptr<const health> state);

// `options` with on_drain also marking `state` as draining (an on_drain already set still
// runs, first).
beast::server_options watch_drain(beast::server_options options, std::shared_ptr<health> state);

}  // namespace waypoint::app
