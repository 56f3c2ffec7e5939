// WebSocket topic fan-out (BENCHMARKS.md §22): one topic, N subscribers, a publisher thread
// publishing messages that carry the time they were published; each subscriber records
// when it received each. Reported per configuration (subscribers x server threads): messages
// delivered per second (deliveries = publishes x subscribers), p50/p99 delivery latency,
// and the server threads' CPU per delivery, at two loads: "saturated" (the publisher keeps
// at most --window publishes in flight, so the queues stay bounded and the rate is what the
// ends can carry) and "paced" (--paced deliveries a second, spread as evenly as a sleeping
// thread can). Then the slow-consumer row: --stall-percent of the first --subscribers count
// stop reading under a paced load of bigger messages (--slow-paced, --slow-bytes), with a
// 64 KiB receive buffer (a reader on a slow link: its kernel buffers, then its hub queue,
// fill in seconds, not minutes); the others'
// latency and rate against the same load without a stall, the policy's closes, and the
// server's RSS. And memory per idle subscriber: the server process's RSS with N idle
// subscribers minus without.
//
// Two processes, forked before any thread starts: the server (waypoint::beast::server, the
// hub, the publisher) in the parent and the Beast clients, on one thread, in the child. 10,000
// connections need 10,000 descriptors at each end and the hard limit here is 20,000; and the
// server's RSS is then its own. They share one anonymous mapping: the child's received count
// (read by the saturated publisher), its latency histogram, and a command word.
//
//   waypoint_bench_fanout [--subscribers 1000,10000] [--threads 1,2] [--seconds S] [--repeat R]
//       [--bytes 64] [--window 1] [--paced 20000] [--stall-percent 1] [--slow-paced 20000]
//       [--slow-bytes 4096] [--slow-seconds 150] [--slow-repeat 3] [--write-timeout-ms 30000]
#include "ws_bench.hpp"

#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/topics.hpp>
#include <waypoint/app/realtime/websocket.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint_bench;
namespace app = waypoint::app;
using clock_type = std::chrono::steady_clock;  // CLOCK_MONOTONIC: the same in both processes

// --- what the two processes share -------------------------------------------------------

// Latency buckets 2% wide, in microseconds: bucket i holds [1.02^(i-1), 1.02^i).
constexpr std::size_t buckets = 1024;
constexpr double bucket_ratio = 1.02;

enum class op : std::uint32_t { none, open, start_recording, stop_recording, stall, close, exit };

struct shared_area {
  std::atomic<std::uint32_t> command{0};  // sequence << 8 | op
  std::atomic<std::uint32_t> done{0};     // the sequence the child finished last
  std::uint16_t port = 0;
  std::int32_t connections = 0;
  std::int32_t stall = 0;
  std::int32_t small_window = 0;            // the first this many opened get a 64 KiB SO_RCVBUF
  bool unsubscribed = false;                // open on the route that joins no topic
  std::int32_t failed = 0;                  // connections the child could not open
  std::atomic<std::uint64_t> received{0};   // messages read by the clients, since they opened
  std::array<std::uint64_t, buckets> histogram{};  // stable between stop_recording and start
};

// The parent's side of a command: waits until the child has carried it out.
void ask(shared_area& area, op what) {
  std::uint32_t sequence = (area.command.load() >> 8) + 1;
  area.command.store(sequence << 8 | static_cast<std::uint32_t>(what), std::memory_order_release);
  while (area.done.load(std::memory_order_acquire) != sequence)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch())
      .count();
}

// --- the client process -----------------------------------------------------------------

struct recorder {
  shared_area* area;
  bool recording = false;
  std::uint64_t received = 0;

  void record(std::int64_t published_ns) {
    area->received.store(++received, std::memory_order_relaxed);
    if (!recording) return;
    double us = static_cast<double>(now_ns() - published_ns) / 1000.0;
    std::size_t i = us < 1 ? 0 : static_cast<std::size_t>(std::log(us) / std::log(bucket_ratio)) + 1;
    ++area->histogram[std::min(i, buckets - 1)];
  }
};

class subscriber_client {
 public:
  subscriber_client(asio::io_context& io, recorder& r) : ws_(io), recorder_(r) {}
  // A small receive buffer (which also turns the kernel's autotuning off for the socket)
  // stands for a reader on a slow link; with the default, a stalled reader's kernel holds
  // megabytes (tcp_rmem's ceiling is 32 MiB here) before the server's queue sees anything.
  void open(std::uint16_t port, bool small_window, const std::string& target) {
    if (small_window) {
      ws_.next_layer().open(tcp::v4());
      ws_.next_layer().set_option(asio::socket_base::receive_buffer_size(64 * 1024));
    }
    connect_websocket(ws_, port, target);
  }
  void read() {
    ws_.async_read(buffer_, [this](error_code ec, std::size_t) {
      if (ec) return;
      std::int64_t stamp = 0;
      if (buffer_.size() >= sizeof stamp) std::memcpy(&stamp, buffer_.data().data(), sizeof stamp);
      buffer_.consume(buffer_.size());
      if (stalled_) return;  // reads no more: the kernel's buffers fill, then the server's queue
      recorder_.record(stamp);
      read();
    });
  }
  void stall() { stalled_ = true; }
  void cut() {
    error_code ignored;
    ws_.next_layer().close(ignored);
  }

 private:
  ws::stream<tcp::socket> ws_;
  boost::beast::flat_buffer buffer_;
  recorder& recorder_;
  bool stalled_ = false;
};

void client_process(shared_area& area) {
  asio::io_context io{1};
  recorder rec{&area};
  std::vector<std::unique_ptr<subscriber_client>> clients;
  std::uint32_t seen = 0;
  for (;;) {
    std::uint32_t command = area.command.load(std::memory_order_acquire);
    if (command != seen) {
      seen = command;
      switch (static_cast<op>(command & 0xff)) {
        case op::open:
          area.failed = 0;
          for (int i = 0; i < area.connections; ++i) {
            auto c = std::make_unique<subscriber_client>(io, rec);
            try {
              c->open(area.port, i < area.small_window, area.unsubscribed ? "/idle" : "/topic");
              c->read();
              clients.push_back(std::move(c));
            } catch (const std::exception&) {
              ++area.failed;
            }
          }
          break;
        case op::start_recording:
          area.histogram.fill(0);
          rec.recording = true;
          break;
        case op::stop_recording: rec.recording = false; break;
        case op::stall:
          for (int i = 0; i < area.stall && i < static_cast<int>(clients.size()); ++i) clients[i]->stall();
          break;
        case op::close:
          for (auto& c : clients) c->cut();
          io.poll();  // the pending reads end
          clients.clear();
          io.restart();
          break;
        case op::exit: area.done.store(command >> 8, std::memory_order_release); return;
        case op::none: break;
      }
      area.done.store(command >> 8, std::memory_order_release);
    }
    if (clients.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else {
      io.run_for(std::chrono::milliseconds(2));
      io.restart();
    }
  }
}

// --- the server process -----------------------------------------------------------------

class fanout_server {
 public:
  // The hub has the gateway's rooms' bounds (examples/websocket_echo.hpp), but closes.
  fanout_server(int threads, std::chrono::milliseconds write_timeout)
      : hub_(std::make_shared<app::topic_hub>(app::topic_hub_options{
            .max_queued_bytes = 256 * 1024, .max_queued_messages = 256,
            .on_overflow = app::overflow_policy::close})) {
    app::websocket_options options;
    options.write_timeout = write_timeout;
    // A stalled reader answers no ping: past Beast's idle timeout (60 s) it would be cut for
    // that, before the queue's policy or write_timeout had their say.
    options.idle_timeout = std::chrono::minutes(10);
    serve_websocket(
        app_, "/topic",
        [hub = hub_](app::websocket& w) -> app::awaitable<void> {
          app::topic_subscriber member(*hub, w);
          member.subscribe("bench");
          co_await member.run();
        },
        options);
    // The same connection in no topic: what a subscriber costs beyond a WebSocket.
    serve_websocket(
        app_, "/idle",
        [](app::websocket& w) -> app::awaitable<void> {
          app::websocket_message m;
          for (;;) {
            bool more = co_await w.read(m);  // named: GCC 12 and a co_await in a condition
            if (!more) break;
          }
        },
        options);
    app_.freeze();
    waypoint::beast::server_options server_options;
    server_options.listen = {{"127.0.0.1", 0}};
    server_options.handle_signals = false;
    server_options.drain_timeout = std::chrono::milliseconds(200);
    std::vector<asio::io_context*> contexts;
    for (int i = 0; i < threads; ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      contexts.push_back(contexts_.back().get());
    }
    server_ = std::make_unique<waypoint::beast::server>(contexts, server_options,
                                                        app::dispatch_to(app_));
    server_->start();
    for (auto& c : contexts_) threads_.emplace_back([io = c.get()] { io->run(); });
  }
  ~fanout_server() {
    server_->stop();
    server_->wait();
    for (auto& t : threads_) t.join();
  }
  std::uint16_t port() const { return server_->endpoints().front().port; }
  app::topic_hub& hub() { return *hub_; }
  double cpu() const {
    double sum = 0;
    for (const std::thread& t : threads_) sum += cpu_seconds(clock_of(t));
    return sum;
  }
  // Waits until `n` connections are in the topic; false after 60 s.
  bool await_subscribers(std::size_t n) const {
    for (int i = 0; i < 60'000; ++i) {
      if (hub_->subscribers("bench") == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

 private:
  std::shared_ptr<app::topic_hub> hub_;
  app::application app_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::unique_ptr<waypoint::beast::server> server_;
  std::vector<std::thread> threads_;
};

// Publishes on a thread of its own until stopped: either as fast as `window` publishes in
// flight allow (in flight: published x subscribers not yet received by the clients), or
// `per_second` publishes a second.
class publisher {
 public:
  publisher(app::topic_hub& hub, shared_area& area, std::size_t bytes, std::size_t subscribers,
            std::size_t window, double per_second)
      : thread_([=, this, &hub, &area] {
          std::string payload(std::max(bytes, sizeof(std::int64_t)), 'x');
          std::uint64_t base = area.received.load();
          auto start = clock_type::now();
          std::uint64_t published = 0;
          while (!stop_.load(std::memory_order_relaxed)) {
            if (per_second > 0) {
              std::this_thread::sleep_until(
                  start + std::chrono::duration_cast<clock_type::duration>(
                              std::chrono::duration<double>(static_cast<double>(published) / per_second)));
            } else if (static_cast<std::int64_t>(published * subscribers) -
                           static_cast<std::int64_t>(area.received.load(std::memory_order_relaxed) - base) >=
                       static_cast<std::int64_t>(window * subscribers)) {
              std::this_thread::sleep_for(std::chrono::microseconds(20));
              continue;
            }
            std::int64_t stamp = now_ns();
            std::memcpy(payload.data(), &stamp, sizeof stamp);
            hub.publish("bench", payload, true);
            ++published;
          }
        }) {}
  ~publisher() {
    stop_ = true;
    thread_.join();
  }
  double cpu() const { return cpu_seconds(clock_of(thread_)); }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

double percentile(const shared_area& area, double p) {
  std::uint64_t total = 0;
  for (std::uint64_t n : area.histogram) total += n;
  if (!total) return 0;
  std::uint64_t target = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(total)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < buckets; ++i) {
    seen += area.histogram[i];
    if (seen >= target) return std::pow(bucket_ratio, static_cast<double>(i));  // the bucket's top
  }
  return std::pow(bucket_ratio, static_cast<double>(buckets));
}

struct measurement {
  double delivered_per_second = 0;
  double p50_us = 0, p99_us = 0;
  double server_cpu_us = 0;     // server threads, per delivery
  double publisher_cpu_us = 0;  // the publishing thread (the hub's publish), per delivery
};

// Waits until the clients have received everything published (the count stops moving).
void await_quiet(shared_area& area) {
  std::uint64_t last = area.received.load();
  for (int i = 0; i < 500; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::uint64_t now = area.received.load();
    if (now == last) return;
    last = now;
  }
}

measurement measure(fanout_server& server, shared_area& area, std::size_t subscribers,
                    std::size_t bytes, std::size_t window, double per_second, double seconds) {
  measurement m;
  {
    publisher p(server.hub(), area, bytes, subscribers, window, per_second);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // warm-up
    ask(area, op::start_recording);
    std::uint64_t received = area.received.load();
    double cpu = server.cpu(), publisher_cpu = p.cpu();
    auto wall = clock_type::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    double elapsed = std::chrono::duration<double>(clock_type::now() - wall).count();
    auto deliveries = static_cast<double>(area.received.load() - received);
    cpu = server.cpu() - cpu;
    publisher_cpu = p.cpu() - publisher_cpu;
    ask(area, op::stop_recording);
    m.delivered_per_second = deliveries / elapsed;
    m.server_cpu_us = deliveries > 0 ? cpu * 1e6 / deliveries : 0;
    m.publisher_cpu_us = deliveries > 0 ? publisher_cpu * 1e6 / deliveries : 0;
  }
  m.p50_us = percentile(area, 0.50);
  m.p99_us = percentile(area, 0.99);
  await_quiet(area);
  return m;
}

bool open_clients(fanout_server& server, shared_area& area, std::size_t n,
                  std::size_t small_window = 0) {
  area.port = server.port();
  area.small_window = static_cast<int>(small_window);
  area.unsubscribed = false;
  area.connections = static_cast<int>(n);
  ask(area, op::open);
  if (area.failed) std::fprintf(stderr, "%d of %zu connections failed to open\n", area.failed, n);
  return server.await_subscribers(n - static_cast<std::size_t>(area.failed));
}

void close_clients(fanout_server& server, shared_area& area) {
  ask(area, op::close);
  server.await_subscribers(0);
}

std::size_t trimmed_rss() {
  malloc_trim(0);  // what the allocator holds free is not the subscribers'
  return rss_bytes();
}

struct series {
  std::vector<double> rate, p50, p99, cpu, publisher_cpu;
  void add(const measurement& m) {
    rate.push_back(m.delivered_per_second);
    p50.push_back(m.p50_us);
    p99.push_back(m.p99_us);
    cpu.push_back(m.server_cpu_us);
    publisher_cpu.push_back(m.publisher_cpu_us);
  }
};

std::string spread(const std::vector<double>& v, const char* format) {
  if (v.empty()) return "-";
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  char text[128];
  std::snprintf(text, sizeof text, format, median(v), *lo, *hi);
  return text;
}

struct slow_run {
  measurement baseline, stalled;
  std::uint64_t closes = 0;
  double policy_s = -1, gone_s = -1;  // from the stall; -1: not within the run
  double queued_peak = 0, rss_before = 0, rss_peak = 0, rss_after = 0;  // bytes
};

// A fresh server, n subscribers (the first `stalled` on a small receive buffer): the paced
// load with every reader reading, then with the first `stalled` no longer reading, until
// their connections are gone (and a second more) or `limit` seconds.
slow_run run_slow(shared_area& area, std::size_t n, std::size_t stalled, double per_second,
                  std::size_t bytes, std::size_t window, double seconds, double limit,
                  std::chrono::milliseconds write_timeout) {
  slow_run out;
  fanout_server server(1, write_timeout);
  if (!open_clients(server, area, n, stalled)) std::exit(2);
  out.baseline = measure(server, area, n, bytes, window, per_second, seconds);
  out.rss_before = out.rss_peak = static_cast<double>(rss_bytes());
  {
    publisher p(server.hub(), area, bytes, n, window, per_second);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    area.stall = static_cast<int>(stalled);
    ask(area, op::stall);
    ask(area, op::start_recording);
    std::uint64_t received = area.received.load();
    double cpu = server.cpu();
    auto wall = clock_type::now();
    std::uint64_t closes_before = server.hub().stats().slow_closes;
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      double t = std::chrono::duration<double>(clock_type::now() - wall).count();
      app::topic_hub_stats st = server.hub().stats();
      out.rss_peak = std::max(out.rss_peak, static_cast<double>(rss_bytes()));
      out.queued_peak = std::max(out.queued_peak, static_cast<double>(st.queued_bytes));
      if (out.policy_s < 0 && st.slow_closes - closes_before >= stalled) out.policy_s = t;
      if (out.gone_s < 0 && server.hub().subscribers("bench") <= n - stalled) out.gone_s = t;
      if ((out.gone_s >= 0 && t >= out.gone_s + 1) || t >= limit) break;
    }
    double elapsed = std::chrono::duration<double>(clock_type::now() - wall).count();
    auto deliveries = static_cast<double>(area.received.load() - received);
    out.stalled.delivered_per_second = deliveries / elapsed;
    out.stalled.server_cpu_us = deliveries > 0 ? (server.cpu() - cpu) * 1e6 / deliveries : 0;
    ask(area, op::stop_recording);
    out.closes = server.hub().stats().slow_closes - closes_before;
  }
  out.stalled.p50_us = percentile(area, 0.50);
  out.stalled.p99_us = percentile(area, 0.99);
  out.rss_after = static_cast<double>(rss_bytes());
  close_clients(server, area);
  return out;
}

struct slow_series {
  series without, with;
  std::vector<double> closes, policy_s, gone_s, queued_mib, rss_before, rss_peak, rss_after;
  void add(const slow_run& r) {
    without.add(r.baseline);
    with.add(r.stalled);
    closes.push_back(static_cast<double>(r.closes));
    policy_s.push_back(r.policy_s);
    gone_s.push_back(r.gone_s);
    queued_mib.push_back(r.queued_peak / 1048576);
    rss_before.push_back(r.rss_before / 1048576);
    rss_peak.push_back(r.rss_peak / 1048576);
    rss_after.push_back(r.rss_after / 1048576);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> subscriber_counts{1000, 10000};
  std::vector<long> thread_counts{1, 2};
  double seconds = 3, slow_seconds = 150, paced = 20000, slow_paced = 20000, stall_percent = 1;
  int repeat = 3, slow_repeat = 3;
  std::size_t bytes = 64, slow_bytes = 4096, window = 1;
  long write_timeout_ms = 30000;  // websocket_options' default
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--subscribers") subscriber_counts = list_of(argv[i + 1]);
    else if (flag == "--threads") thread_counts = list_of(argv[i + 1]);
    else if (flag == "--seconds") seconds = std::atof(argv[i + 1]);
    else if (flag == "--slow-seconds") slow_seconds = std::atof(argv[i + 1]);
    else if (flag == "--repeat") repeat = std::atoi(argv[i + 1]);
    else if (flag == "--slow-repeat") slow_repeat = std::atoi(argv[i + 1]);
    else if (flag == "--bytes") bytes = static_cast<std::size_t>(std::atol(argv[i + 1]));
    else if (flag == "--window") window = static_cast<std::size_t>(std::atol(argv[i + 1]));
    else if (flag == "--paced") paced = std::atof(argv[i + 1]);
    else if (flag == "--stall-percent") stall_percent = std::atof(argv[i + 1]);
    else if (flag == "--slow-paced") slow_paced = std::atof(argv[i + 1]);
    else if (flag == "--slow-bytes") slow_bytes = static_cast<std::size_t>(std::atol(argv[i + 1]));
    else if (flag == "--write-timeout-ms") write_timeout_ms = std::atol(argv[i + 1]);
  }
  std::fprintf(stderr, "descriptor limit %lu\n", static_cast<unsigned long>(raise_descriptor_limit()));

  void* mapping = mmap(nullptr, sizeof(shared_area), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) return 1;
  auto* area = new (mapping) shared_area;
  pid_t child = fork();
  if (child == 0) {
    client_process(*area);
    _exit(0);
  }
  std::chrono::milliseconds write_timeout(write_timeout_ms);

  // Memory per idle subscriber, first, in a process that has served nothing yet: the server
  // process's RSS with n idle connections minus without, on the topic route and on a route
  // that joins no topic.
  std::printf("| idle connections | route | server RSS without | with | per connection |\n|---|---|---|---|---|\n");
  for (long n : subscriber_counts) {
    for (bool unsubscribed : {true, false}) {
      fanout_server server(1, write_timeout);
      std::size_t before = trimmed_rss();
      area->port = server.port();
      area->connections = static_cast<int>(n);
      area->small_window = 0;
      area->unsubscribed = unsubscribed;
      ask(*area, op::open);
      if (area->failed) std::fprintf(stderr, "%d connections failed to open\n", area->failed);
      std::this_thread::sleep_for(std::chrono::milliseconds(unsubscribed ? 1000 : 0));
      if (!unsubscribed && !server.await_subscribers(static_cast<std::size_t>(n))) return 2;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      std::size_t after = trimmed_rss();
      std::printf("| %ld | %s | %.1f MiB | %.1f MiB | %.1f KiB |\n", n,
                  unsubscribed ? "WebSocket, no topic" : "subscribed to one topic",
                  static_cast<double>(before) / 1048576, static_cast<double>(after) / 1048576,
                  (static_cast<double>(after) - static_cast<double>(before)) / 1024 / static_cast<double>(n));
      std::fflush(stdout);
      ask(*area, op::close);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      server.await_subscribers(0);
    }
  }

  // Fan-out, interleaved: each repetition visits every (subscribers, threads) once.
  struct variant {
    long subscribers, threads;
    series saturated, steady;
  };
  std::vector<variant> variants;
  for (long n : subscriber_counts)
    for (long t : thread_counts) variants.push_back({n, t, {}, {}});
  for (int r = 0; r < repeat; ++r) {
    for (variant& v : variants) {
      fanout_server server(static_cast<int>(v.threads), write_timeout);
      auto n = static_cast<std::size_t>(v.subscribers);
      if (!open_clients(server, *area, n)) return 2;
      measurement s = measure(server, *area, n, bytes, window, 0, seconds);
      measurement p = measure(server, *area, n, bytes, window, paced / static_cast<double>(n), seconds);
      v.saturated.add(s);
      v.steady.add(p);
      std::fprintf(stderr,
                   "run %d n=%ld threads=%ld: saturated %.0f/s p50 %.0f us p99 %.0f us cpu %.2f+%.2f us;"
                   " paced %.0f/s p50 %.0f us p99 %.0f us cpu %.2f+%.2f us\n",
                   r + 1, v.subscribers, v.threads, s.delivered_per_second, s.p50_us, s.p99_us,
                   s.server_cpu_us, s.publisher_cpu_us, p.delivered_per_second, p.p50_us, p.p99_us,
                   p.server_cpu_us, p.publisher_cpu_us);
      close_clients(server, *area);
    }
  }
  std::printf("\n| subscribers | server threads | load | delivered/s (median, min–max of %d) | p50 latency | p99 latency | server CPU per delivery | publisher CPU per delivery |\n",
              repeat);
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const variant& v : variants) {
    for (int k = 0; k < 2; ++k) {
      const series& s = k == 0 ? v.saturated : v.steady;
      char load[64];
      if (k == 0) std::snprintf(load, sizeof load, "saturated (window %zu)", window);
      else std::snprintf(load, sizeof load, "paced %.0f/s", paced);
      std::printf("| %ld | %ld | %s | %s | %s | %s | %s | %s |\n", v.subscribers, v.threads, load,
                  spread(s.rate, "%.0f (%.0f–%.0f)").c_str(), spread(s.p50, "%.0f µs (%.0f–%.0f)").c_str(),
                  spread(s.p99, "%.0f µs (%.0f–%.0f)").c_str(),
                  spread(s.cpu, "%.2f µs (%.2f–%.2f)").c_str(),
                  spread(s.publisher_cpu, "%.3f µs (%.3f–%.3f)").c_str());
    }
  }
  std::fflush(stdout);

  // The slow consumers: the first subscribers count; paced load; one server thread.
  {
    auto n = static_cast<std::size_t>(subscriber_counts.front());
    auto stalled = static_cast<std::size_t>(std::ceil(static_cast<double>(n) * stall_percent / 100));
    slow_series runs;
    for (int r = 0; r < slow_repeat; ++r) {
      slow_run x = run_slow(*area, n, stalled, slow_paced / static_cast<double>(n), slow_bytes,
                            window, seconds, slow_seconds, write_timeout);
      std::fprintf(stderr,
                   "slow run %d: without %.0f/s p99 %.0f us; with %.0f/s p50 %.0f us p99 %.0f us, "
                   "%llu closes, policy %.2f s, gone %.2f s, RSS %.1f/%.1f/%.1f MiB\n",
                   r + 1, x.baseline.delivered_per_second, x.baseline.p99_us, x.stalled.delivered_per_second,
                   x.stalled.p50_us, x.stalled.p99_us, static_cast<unsigned long long>(x.closes),
                   x.policy_s, x.gone_s, x.rss_before / 1048576, x.rss_peak / 1048576,
                   x.rss_after / 1048576);
      runs.add(x);
    }
    std::printf("\n| subscribers | stalled | load | others' delivered/s | others' p50 | others' p99 | server CPU per delivery | policy closes (1008) | all stalled closed by policy after | their connections gone after | queued bytes peak | server RSS before / peak / after |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::printf("| %zu | 0 | paced %.0f/s, %zu B | %s | %s | %s | %s | | | | | |\n", n, slow_paced,
                slow_bytes, spread(runs.without.rate, "%.0f (%.0f–%.0f)").c_str(),
                spread(runs.without.p50, "%.0f µs (%.0f–%.0f)").c_str(),
                spread(runs.without.p99, "%.0f µs (%.0f–%.0f)").c_str(),
                spread(runs.without.cpu, "%.2f µs (%.2f–%.2f)").c_str());
    std::printf("| %zu | %zu | paced %.0f/s, %zu B | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n", n,
                stalled, slow_paced, slow_bytes, spread(runs.with.rate, "%.0f (%.0f–%.0f)").c_str(),
                spread(runs.with.p50, "%.0f µs (%.0f–%.0f)").c_str(),
                spread(runs.with.p99, "%.0f µs (%.0f–%.0f)").c_str(),
                spread(runs.with.cpu, "%.2f µs (%.2f–%.2f)").c_str(),
                spread(runs.closes, "%.0f (%.0f–%.0f)").c_str(),
                spread(runs.policy_s, "%.1f s (%.1f–%.1f)").c_str(),
                spread(runs.gone_s, "%.1f s (%.1f–%.1f)").c_str(),
                spread(runs.queued_mib, "%.1f MiB (%.1f–%.1f)").c_str(),
                spread(runs.rss_before, "%.1f (%.1f–%.1f)").c_str(),
                spread(runs.rss_peak, "%.1f (%.1f–%.1f)").c_str(),
                spread(runs.rss_after, "%.1f MiB (%.1f–%.1f)").c_str());
    std::printf("(write_timeout %ld ms; -1 s: not within --slow-seconds)\n", write_timeout_ms);
  }
  ask(*area, op::exit);
  waitpid(child, nullptr, 0);
}
