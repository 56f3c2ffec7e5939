// Request metrics: per-thread shards of series counted on the request path without a lock
// or an allocation, summed into the Prometheus text exposition at scrape time.
#include "waypoint/app/operations/metrics.hpp"

#include "waypoint/app/application.hpp"
#include "waypoint/app/middleware.hpp"
#include "waypoint/app/realtime/topics.hpp"
#include "waypoint/beast/server.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

namespace waypoint::app {
namespace {

using counter = std::atomic<std::uint64_t>;

// Single writer (the shard's thread): a relaxed load and store, no locked instruction.
void add(counter& c, std::uint64_t n = 1) noexcept {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
std::uint64_t read(const counter& c) noexcept { return c.load(std::memory_order_relaxed); }

// The method label: the registered methods by name, anything else (a client's invention)
// as OTHER, so a client cannot add series.
constexpr std::array<std::string_view, 10> method_labels{
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "OTHER"};

std::uint8_t method_index(std::string_view method) noexcept {
  for (std::size_t i = 0; i + 1 < method_labels.size(); ++i)
    if (method_labels[i] == method) return static_cast<std::uint8_t>(i);
  return static_cast<std::uint8_t>(method_labels.size() - 1);
}

// Why a request had no route, as the unrouted family's outcome label; 0 when it had one.
constexpr std::array<std::string_view, 5> outcome_labels{"", "not_found", "method_not_allowed",
                                                         "redirect", "bad_request"};

std::uint8_t outcome_index(match_status status) noexcept {
  switch (status) {
    case match_status::matched: return 0;
    case match_status::not_found: return 1;
    case match_status::method_not_allowed: return 2;
    case match_status::redirect: return 3;
    case match_status::bad_request: return 4;
  }
  return 0;
}

// A series' labels. `route` points into the router's patterns, which live as long as the
// application, so the pointer is the identity and the text is read only at scrape time.
struct series_key {
  const char* route = nullptr;  // null: no route matched (see outcome)
  std::uint32_t route_size = 0;
  std::uint8_t method = 0;
  std::uint8_t status_class = 0;  // 1..5; 0 outside 100..599
  std::uint8_t outcome = 0;
  bool overflow = false;  // counted past max_series

  bool operator==(const series_key&) const = default;
};

// One series in a shard. Invariant: `key` is written before `used` is set (release) and
// never after, so a scrape that sees `used` (acquire) reads a complete key.
struct series {
  std::atomic<bool> used{false};
  series_key key;
  counter count{0};
  counter sum_us{0};
  counter* buckets = nullptr;  // latency_buckets.size() + 1 counters, the last +Inf
};

struct request_start {
  std::chrono::steady_clock::time_point at;
};

// Past max_series, a request is counted in one of these, by method and status class.
constexpr std::size_t overflow_series = method_labels.size() * 6;

// One thread's counts. Only that thread writes; scrapes read.
struct metrics_shard {
  metrics_shard(std::size_t max_series, std::size_t bucket_count)
      : capacity(std::bit_ceil(2 * std::max<std::size_t>(max_series, 1))),
        limit(max_series),
        table(std::make_unique<series[]>(size())),
        bucket_storage(std::make_unique<counter[]>(size() * bucket_count)) {
    for (std::size_t i = 0; i < size(); ++i) table[i].buckets = &bucket_storage[i * bucket_count];
  }

  // The hash table, then the overflow series.
  std::size_t size() const noexcept { return capacity + overflow_series; }

  // The series for `key`, added when new; an overflow series once `limit` are in use.
  series& find(const series_key& key) noexcept {
    std::size_t h = std::hash<const void*>{}(key.route) ^ (key.route_size * 31u) ^
                    (key.method * 131u) ^ (key.status_class * 1031u) ^ (key.outcome * 8191u);
    for (std::size_t i = 0; i < capacity; ++i) {
      series& s = table[(h + i) & (capacity - 1)];
      if (!s.used.load(std::memory_order_relaxed)) {
        if (in_use == limit) break;
        s.key = key;
        s.used.store(true, std::memory_order_release);
        ++in_use;
        return s;
      }
      if (s.key == key) return s;
    }
    series& o = table[capacity + key.method * 6u + key.status_class];
    if (!o.used.load(std::memory_order_relaxed)) {
      o.key = {nullptr, 0, key.method, key.status_class, 0, true};
      o.used.store(true, std::memory_order_release);
    }
    return o;
  }

  std::thread::id owner = std::this_thread::get_id();
  std::size_t capacity;  // a power of two, at least twice `limit`: probes stay short
  std::size_t limit;
  std::size_t in_use = 0;  // the owner's only
  std::unique_ptr<series[]> table;
  std::unique_ptr<counter[]> bucket_storage;
  counter started{0};
  counter finished{0};
};

}  // namespace

struct detail::metrics_state {
  explicit metrics_state(metrics_options o) : options(std::move(o)) {
    const auto& b = options.latency_buckets;
    if (b.empty() || b.front() <= 0 || !std::is_sorted(b.begin(), b.end()) ||
        std::adjacent_find(b.begin(), b.end()) != b.end())
      throw std::invalid_argument(
          "metrics: latency_buckets must be positive and strictly increasing");
    for (double seconds : b) bounds_us.push_back(static_cast<std::uint64_t>(seconds * 1e6));
  }

  metrics_shard& shard() {
    // A thread's shards, by state id: ids are never reused, so an entry of a state that
    // is gone can never be taken for a new one.
    struct cached {
      std::uint64_t id = 0;
      metrics_shard* shard = nullptr;
    };
    thread_local std::array<cached, 4> cache{};
    thread_local std::size_t next_slot = 0;
    for (const cached& c : cache)
      if (c.id == id) return *c.shard;
    metrics_shard* s = create_shard();  // once per thread: the cold path
    cache[next_slot++ % cache.size()] = {id, s};
    return *s;
  }

  metrics_shard* create_shard() {
    std::lock_guard lock(mutex);
    for (auto& s : shards)
      if (s->owner == std::this_thread::get_id()) return s.get();
    shards.push_back(std::make_unique<metrics_shard>(options.max_series, bounds_us.size() + 1));
    return shards.back().get();
  }

  void count(context& ctx, int status, std::chrono::steady_clock::duration elapsed) noexcept {
    series_key key;
    std::string_view route = ctx.route_pattern().text();
    key.route = route.empty() ? nullptr : route.data();
    key.route_size = static_cast<std::uint32_t>(route.size());
    key.method = method_index(ctx.method());
    key.status_class = status >= 100 && status < 600 ? static_cast<std::uint8_t>(status / 100) : 0;
    key.outcome = outcome_index(ctx.outcome().kind);
    metrics_shard& s = shard();
    series& entry = s.find(key);
    auto us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
    add(entry.count);
    add(entry.sum_us, us);
    std::size_t b = 0;
    while (b < bounds_us.size() && us > bounds_us[b]) ++b;
    add(entry.buckets[b]);
    add(s.finished);
  }

  std::string render() const;

  static inline std::atomic<std::uint64_t> next_id{1};
  const std::uint64_t id = next_id.fetch_add(1);
  metrics_options options;
  std::vector<std::uint64_t> bounds_us;
  mutable std::mutex mutex;  // guards `shards` (the list, not the counts)
  std::vector<std::unique_ptr<metrics_shard>> shards;
  std::atomic<const beast::server*> server{nullptr};
  std::vector<std::pair<std::string, std::shared_ptr<const topic_hub>>> hubs;  // guarded by mutex
};

namespace {

// A label value: backslash, double quote and newline escaped (the exposition format).
void append_label(std::string& out, std::string_view name, std::string_view value) {
  out += name;
  out += "=\"";
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
}

void append_seconds(std::string& out, double seconds) {
  char text[32];
  int n = std::snprintf(text, sizeof text, "%.9g", seconds);
  out.append(text, static_cast<std::size_t>(n));
}

void append_family(std::string& out, std::string_view name, std::string_view type,
                   std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

// One sample: name{labels} value.
void append_sample(std::string& out, std::string_view name, std::string_view labels,
                   std::uint64_t value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    out += labels;
    out += '}';
  }
  out += ' ';
  waypoint::detail::append_decimal(out, value);
  out += '\n';
}

// One sample with a single label: name{label="value"} n.
void append_labelled_sample(std::string& out, std::string_view name, std::string_view label,
                            std::string_view value, std::uint64_t n) {
  std::string labels;
  append_label(labels, label, value);
  append_sample(out, name, labels, n);
}

// A family that has one sample and no labels (a server-wide gauge or counter).
struct unlabelled_family {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  std::uint64_t value;
};

void append_unlabelled(std::string& out, const unlabelled_family& f) {
  append_family(out, f.name, f.type, f.help);
  append_sample(out, f.name, "", f.value);
}

// A family whose samples differ by one label: (label value, count) pairs.
void append_by_label(std::string& out, std::string_view name, std::string_view label,
                     std::span<const std::pair<std::string_view, std::uint64_t>> samples) {
  for (const auto& [value, n] : samples) append_labelled_sample(out, name, label, value, n);
}

std::string route_text(const series_key& k) {
  if (k.overflow) return "(overflow)";
  return k.route ? std::string(k.route, k.route_size) : std::string();
}

struct latency_sum {
  std::vector<std::uint64_t> buckets;
  std::uint64_t count = 0;
  std::uint64_t sum_us = 0;
};

void render_server_counts(std::string& out, const beast::server_stats& s) {
  const unlabelled_family families[] = {
      {"waypoint_server_connections_open", "gauge", "Connections open now.", s.open},
      {"waypoint_server_descriptors_in_use", "gauge",
       "Of the descriptor budget (max_connections): connections and request permits.",
       s.descriptors},
      {"waypoint_server_connections_total", "counter", "Connections accepted.", s.connections},
      {"waypoint_server_connections_refused_total", "counter",
       "Connections refused at max_connections.", s.refused},
      {"waypoint_server_received_bytes_total", "counter", "Bytes read from connections.",
       s.bytes_received},
      {"waypoint_server_sent_bytes_total", "counter", "Bytes written to connections.",
       s.bytes_sent},
  };
  for (const unlabelled_family& f : families) append_unlabelled(out, f);
}

void render_server_errors(std::string& out, const beast::server_stats& s) {
  append_family(out, "waypoint_server_errors_total", "counter",
                "Requests the server answered itself (unparsable, over a limit, timed out), by status.");
  for (std::size_t i = 0; i < s.errors.size(); ++i)
    append_labelled_sample(out, "waypoint_server_errors_total", "status",
                           std::to_string(beast::server_stats::error_statuses[i]), s.errors[i]);
}

void render_server(std::string& out, const beast::server_stats& s) {
  render_server_counts(out, s);
  render_server_errors(out, s);
  append_family(out, "waypoint_server_timeouts_total", "counter",
                "Connections timed out, by what the server waited for.");
  const std::pair<std::string_view, std::uint64_t> kinds[] = {
      {"idle", s.timeouts.idle}, {"header", s.timeouts.header},
      {"body", s.timeouts.body}, {"write", s.timeouts.write},
      {"tls_handshake", s.timeouts.tls_handshake}};
  append_by_label(out, "waypoint_server_timeouts_total", "kind", kinds);
  append_family(out, "waypoint_server_tls_total", "counter",
                "TLS listeners: handshakes completed and failed, and the wrong protocol on a port.");
  const std::pair<std::string_view, std::uint64_t> events[] = {
      {"handshake", s.tls.handshakes}, {"handshake_failure", s.tls.handshake_failures},
      {"plaintext_on_tls", s.tls.plaintext_on_tls}, {"tls_on_plaintext", s.tls.tls_on_plaintext}};
  append_by_label(out, "waypoint_server_tls_total", "event", events);
  append_family(out, "waypoint_server_http2_total", "counter",
                "HTTP/2: connections, streams, resets each way, connections ended for a flood.");
  const std::pair<std::string_view, std::uint64_t> http2[] = {
      {"connection", s.http2.connections},
      {"stream", s.http2.streams},
      {"reset_received", s.http2.resets_received},
      {"reset_sent", s.http2.resets_sent},
      {"flood", s.http2.floods}};
  append_by_label(out, "waypoint_server_http2_total", "event", http2);
}

}  // namespace

namespace {

// The hubs' stats, a family at a time (the format wants a family's samples together).
void render_topics(std::string& out,
                   const std::vector<std::pair<std::string, topic_hub_stats>>& hubs) {
  if (hubs.empty()) return;
  struct family {
    const char* name;
    const char* type;
    const char* help;
    std::uint64_t (*value)(const topic_hub_stats&);
  };
  static constexpr family families[] = {
      {"waypoint_topic_topics", "gauge", "Topic names and prefix patterns with a subscriber now.",
       [](const topic_hub_stats& s) -> std::uint64_t { return s.topics; }},
      {"waypoint_topic_subscribers", "gauge", "Connections in at least one topic now.",
       [](const topic_hub_stats& s) -> std::uint64_t { return s.subscribers; }},
      {"waypoint_topic_queued_bytes", "gauge",
       "Payload bytes queued to subscribers and not yet sent, all subscribers.",
       [](const topic_hub_stats& s) -> std::uint64_t { return s.queued_bytes; }},
      {"waypoint_topic_published_total", "counter", "Messages published on this instance.",
       [](const topic_hub_stats& s) -> std::uint64_t { return s.published; }},
      {"waypoint_topic_received_total", "counter",
       "Messages published on other instances, received through the broker.",
       [](const topic_hub_stats& s) -> std::uint64_t { return s.received; }},
      {"waypoint_topic_delivered_total", "counter", "Messages queued to a subscriber (one per subscriber reached).",
       [](const topic_hub_stats& s) -> std::uint64_t { return s.delivered; }},
      {"waypoint_topic_dropped_total", "counter",
       "Messages dropped by the drop_oldest overflow policy, or from another instance and larger than a queue.",
       [](const topic_hub_stats& s) -> std::uint64_t { return s.dropped; }},
      {"waypoint_topic_slow_consumer_closes_total", "counter",
       "Connections closed (1008) by the close overflow policy.",
       [](const topic_hub_stats& s) -> std::uint64_t { return s.slow_closes; }},
  };
  for (const family& f : families) {
    append_family(out, f.name, f.type, f.help);
    for (const auto& [name, stats] : hubs)
      append_labelled_sample(out, f.name, "hub", name, f.value(stats));
  }
}

// A scrape's sums over the shards: by (route, method, class) for the counter, by route for
// the histogram, by outcome for the unrouted family.
struct metrics_totals {
  std::map<std::tuple<std::string, std::uint8_t, std::uint8_t>, std::uint64_t> requests;
  std::map<std::string, latency_sum> latency;
  std::array<std::uint64_t, outcome_labels.size()> outcomes{};
  std::uint64_t started = 0, finished = 0;
};

// Adds one series' counts; `bucket_count` is the number of bounds plus +Inf.
void add_series(metrics_totals& totals, const series& e, std::size_t bucket_count) {
  std::uint64_t n = read(e.count);
  if (n == 0) return;
  std::string route = route_text(e.key);
  totals.requests[{route, e.key.method, e.key.status_class}] += n;
  totals.outcomes[e.key.outcome] += n;
  latency_sum& l = totals.latency[route];
  l.buckets.resize(bucket_count);
  for (std::size_t b = 0; b < bucket_count; ++b) l.buckets[b] += read(e.buckets[b]);
  l.count += n;
  l.sum_us += read(e.sum_us);
}

void add_shard(metrics_totals& totals, const metrics_shard& s, std::size_t bucket_count) {
  totals.started += read(s.started);
  totals.finished += read(s.finished);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const series& e = s.table[i];
    if (e.used.load(std::memory_order_acquire)) add_series(totals, e, bucket_count);
  }
}

void render_requests(std::string& out, const metrics_totals& totals) {
  append_family(out, "waypoint_http_requests_total", "counter",
                "Requests answered, by matched route pattern (empty: none matched), method and status class.");
  for (const auto& [k, n] : totals.requests) {
    const auto& [route, method, status_class] = k;
    std::string labels;
    append_label(labels, "route", route);
    labels += ',';
    append_label(labels, "method", method_labels[method]);
    labels += ',';
    append_label(labels, "status", status_class ? std::string(1, char('0' + status_class)) + "xx"
                                                : std::string("other"));
    append_sample(out, "waypoint_http_requests_total", labels, n);
  }
}

// One route's histogram: cumulative buckets by upper bound (`bounds`, then +Inf), sum, count.
void render_route_latency(std::string& out, const std::string& route, const latency_sum& l,
                          const std::vector<double>& bounds) {
  std::string route_label;
  append_label(route_label, "route", route);
  std::uint64_t cumulative = 0;
  for (std::size_t b = 0; b <= bounds.size(); ++b) {
    cumulative += l.buckets[b];
    std::string labels = route_label + ",le=\"";
    if (b < bounds.size())
      append_seconds(labels, bounds[b]);
    else
      labels += "+Inf";
    labels += '"';
    append_sample(out, "waypoint_http_request_duration_seconds_bucket", labels, cumulative);
  }
  out += "waypoint_http_request_duration_seconds_sum{" + route_label + "} ";
  append_seconds(out, static_cast<double>(l.sum_us) / 1e6);
  out += '\n';
  append_sample(out, "waypoint_http_request_duration_seconds_count", route_label, l.count);
}

void render_unrouted(std::string& out, const metrics_totals& totals) {
  append_family(out, "waypoint_http_unrouted_requests_total", "counter",
                "Requests no route served, by what the router answered.");
  for (std::size_t i = 1; i < outcome_labels.size(); ++i)
    append_labelled_sample(out, "waypoint_http_unrouted_requests_total", "outcome",
                           outcome_labels[i], totals.outcomes[i]);
}

}  // namespace

std::string detail::metrics_state::render() const {
  metrics_totals totals;
  std::vector<std::pair<std::string, topic_hub_stats>> hub_stats;
  {
    std::lock_guard lock(mutex);
    for (const auto& [name, hub] : hubs) hub_stats.emplace_back(name, hub->stats());
    for (const auto& s : shards) add_shard(totals, *s, bounds_us.size() + 1);
  }
  std::string out;
  render_requests(out, totals);
  append_family(out, "waypoint_http_request_duration_seconds", "histogram",
                "Time from the metrics layer's entry to its exit, by matched route pattern.");
  for (const auto& [route, l] : totals.latency)
    render_route_latency(out, route, l, options.latency_buckets);
  render_unrouted(out, totals);
  append_family(out, "waypoint_http_requests_in_flight", "gauge",
                "Requests inside the metrics layer now (a scrape counts itself).");
  append_sample(out, "waypoint_http_requests_in_flight", "",
                totals.started >= totals.finished ? totals.started - totals.finished : 0);
  if (const beast::server* s = server.load(std::memory_order_acquire)) render_server(out, s->stats());
  render_topics(out, hub_stats);
  return out;
}

metrics::metrics(metrics_options options)
    : state_(std::make_shared<detail::metrics_state>(std::move(options))) {}

metrics::~metrics() = default;

middleware metrics::layer() const {
  auto before = [state = state_](context& ctx) {
    add(state->shard().started);
    ctx.set<request_start>(std::chrono::steady_clock::now());
    return true;
  };
  auto after = [state = state_](context& ctx, std::exception_ptr& error) {
    int status = answered_status(ctx, error);
    const request_start* start = ctx.find<request_start>();
    auto elapsed = start ? std::chrono::steady_clock::now() - start->at
                         : std::chrono::steady_clock::duration::zero();
    state->count(ctx, status, elapsed);
  };
  return layer_hooks{std::move(before), std::move(after)};
}

handler metrics::endpoint() const {
  return [state = state_](context& ctx) {
    ctx.response()
        .header(http::field::cache_control, "no-store")
        .body(state->render(), "text/plain; version=0.0.4; charset=utf-8");
  };
}

void metrics::watch(const beast::server& server) {
  state_->server.store(&server, std::memory_order_release);
}

void metrics::watch(std::shared_ptr<const topic_hub> hub, std::string name) {
  std::lock_guard lock(state_->mutex);
  state_->hubs.emplace_back(std::move(name), std::move(hub));
}

std::string metrics::render() const { return state_->render(); }

}  // namespace waypoint::app
