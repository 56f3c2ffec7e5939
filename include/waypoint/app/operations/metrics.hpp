// Request metrics in the Prometheus text exposition format (version 0.0.4), at whatever
// path the application mounts them:
//
//   auto metrics = std::make_shared<waypoint::app::metrics>();
//   app.use(metrics->layer());                   // outermost but the access log
//   app.get("/metrics", metrics->endpoint());
//   waypoint::beast::server server(options, waypoint::app::dispatch_to(app));
//   metrics->watch(server);                      // connections, bytes, parse errors, timeouts
//
// Families (docs/framework.md lists them with their labels):
//   waypoint_http_requests_total{route,method,status}     route: the matched pattern, never
//                                                         the raw path ("" when none matched);
//                                                         method: one of nine, else "OTHER";
//                                                         status: "2xx", "4xx", ...
//   waypoint_http_request_duration_seconds{route}         histogram, metrics_options buckets
//   waypoint_http_unrouted_requests_total{outcome}        not_found, method_not_allowed,
//                                                         redirect, bad_request
//   waypoint_http_requests_in_flight
//   and, once watch()ed, the server's: waypoint_server_connections_open,
//   waypoint_server_connections_total, waypoint_server_connections_refused_total,
//   waypoint_server_received_bytes_total, waypoint_server_sent_bytes_total,
//   waypoint_server_errors_total{status} (requests refused before dispatch: 400, 408, 413, ...)
//   and waypoint_server_timeouts_total{kind} (idle, header, body, write);
//   and, for each topic hub watch()ed under a name (label hub), the hub's stats():
//   waypoint_topic_topics, waypoint_topic_subscribers, waypoint_topic_queued_bytes (gauges),
//   waypoint_topic_published_total, waypoint_topic_received_total,
//   waypoint_topic_delivered_total, waypoint_topic_dropped_total and
//   waypoint_topic_slow_consumer_closes_total (counters).
//
// The counting is per thread: each thread that answers requests owns a shard (allocated
// the first time it counts, then reused), which only it writes, with plain relaxed stores,
// so the request path takes no lock and does not allocate. A scrape sums the shards.
#pragma once

#include "waypoint/app/context.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace waypoint::beast {
class server;
}

namespace waypoint::app {
class topic_hub;
}

namespace waypoint::app {

struct metrics_options {
  // Upper bounds of the latency histogram's buckets, in seconds, increasing (+Inf is
  // added). The default spans a cached answer (0.5 ms) to a slow upstream (10 s).
  std::vector<double> latency_buckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                      0.1,    0.25,  0.5,    1,     2.5,  5,    10};
  // Distinct (route, method, status class) series a thread counts; past it a request is
  // counted under route "(overflow)". Routes x methods used x classes seen, with room:
  // 512 covers a 100-route service whose routes see two or three statuses each.
  std::size_t max_series = 512;
};

namespace detail {
struct metrics_state;
}

class metrics {
 public:
  // Throws std::invalid_argument when the buckets are empty, not increasing or not positive.
  explicit metrics(metrics_options options = {});
  ~metrics();
  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  // Counts every request that passes through it; around everything whose time counts.
  middleware layer() const;
  // GET handler answering render() as text/plain; version=0.0.4.
  handler endpoint() const;
  // Adds the server's counters to every scrape; `server` must outlive the scrapes.
  void watch(const beast::server& server);
  // Adds a topic hub's stats() to every scrape, labelled hub="name" (a name per hub: two
  // hubs under one name would write the same series twice). Holds the hub.
  void watch(std::shared_ptr<const topic_hub> hub, std::string name);

  // The exposition text, summed over every thread's shard.
  std::string render() const;

 private:
  std::shared_ptr<detail::metrics_state> state_;
};

}  // namespace waypoint::app
