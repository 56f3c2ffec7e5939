// WebSocket echo messages per second on ONE server thread: waypoint::app's websocket()
// route on waypoint::beast::server, against a server written like Beast's async WebSocket
// echo example (shared-pointer session, async_read/async_write callbacks) on one thread,
// so the framework's share (middleware-free route, coroutine handler, virtual channel)
// shows. The client is Beast's websocket::stream over N connections on its own thread, each
// connection in ping-pong (send one message, wait for its echo). Variants run interleaved,
// `--repeat` times each, and the medians are printed with the server thread's CPU time per
// message (CLOCK_THREAD_CPUTIME of the server thread, read from the client's side).
//
//   waypoint_bench_ws [--seconds S] [--repeat R] [--connections 1,32] [--bytes 32,4096]
#include "ws_bench.hpp"

#include <waypoint/app/serve.hpp>
#include <waypoint/app/realtime/websocket.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace waypoint_bench;

// --- the servers -------------------------------------------------------------------

// A server on one thread of its own: its port, and its thread's CPU clock.
class bench_server {
 public:
  virtual ~bench_server() = default;
  virtual std::uint16_t port() const = 0;
  virtual clockid_t cpu_clock() const = 0;
};

class waypoint_server final : public bench_server {
 public:
  waypoint_server() {
    serve_websocket(app_, "/echo",
                    [](waypoint::app::websocket& w) -> waypoint::app::awaitable<void> {
                      waypoint::app::websocket_message message;  // one buffer for every message
                      while (co_await w.read(message)) co_await w.write(message);
                    });
    app_.freeze();
    waypoint::beast::server_options options;
    options.listen = {{"127.0.0.1", 0}};
    options.handle_signals = false;
    options.drain_timeout = std::chrono::milliseconds(200);
    server_ = std::make_unique<waypoint::beast::server>(
        std::vector<asio::io_context*>{&context_}, options, waypoint::app::dispatch_to(app_));
    server_->start();
    thread_ = std::thread([this] { context_.run(); });
  }
  ~waypoint_server() override {
    server_->stop();
    server_->wait();
    thread_.join();
  }
  std::uint16_t port() const override { return server_->endpoints().front().port; }
  clockid_t cpu_clock() const override { return clock_of(thread_); }

 private:
  waypoint::app::application app_;
  asio::io_context context_{1};
  std::unique_ptr<waypoint::beast::server> server_;
  std::thread thread_;
};

// Beast's example shape (websocket_server_async.cpp): a session per connection owned by
// shared pointers, a read, then a write of what was read.
class beast_session : public std::enable_shared_from_this<beast_session> {
 public:
  explicit beast_session(tcp::socket socket) : ws_(std::move(socket)) {}
  void run() {
    ws_.set_option(ws::stream_base::timeout::suggested(boost::beast::role_type::server));
    ws_.async_accept([self = shared_from_this()](error_code ec) {
      if (!ec) self->do_read();
    });
  }

 private:
  void do_read() {
    ws_.async_read(buffer_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (ec) return;
      self->ws_.text(self->ws_.got_text());
      self->ws_.async_write(self->buffer_.data(),
                            [self](error_code ec2, std::size_t) {
                              if (ec2) return;
                              self->buffer_.consume(self->buffer_.size());
                              self->do_read();
                            });
    });
  }

  ws::stream<tcp::socket> ws_;
  boost::beast::flat_buffer buffer_;
};

class beast_example_server final : public bench_server {
 public:
  beast_example_server() : acceptor_(context_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    do_accept();
    thread_ = std::thread([this] { context_.run(); });
  }
  ~beast_example_server() override {
    context_.stop();
    thread_.join();
  }
  std::uint16_t port() const override { return acceptor_.local_endpoint().port(); }
  clockid_t cpu_clock() const override { return clock_of(thread_); }

 private:
  void do_accept() {
    acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
      if (!ec) {
        socket.set_option(tcp::no_delay(true));
        std::make_shared<beast_session>(std::move(socket))->run();
      }
      do_accept();
    });
  }

  asio::io_context context_{1};
  tcp::acceptor acceptor_;
  std::thread thread_;
};

// --- the client --------------------------------------------------------------------

class echo_connection {
 public:
  echo_connection(asio::io_context& io, std::string payload, std::uint64_t& count)
      : ws_(io), payload_(std::move(payload)), count_(count) {}

  void open(std::uint16_t port) {
    connect_websocket(ws_, port, "/echo");
    ws_.binary(true);
  }
  void start(const std::atomic<bool>& stop) {
    stop_ = &stop;
    send();
  }
  void close() {
    error_code ignored;
    ws_.close(ws::close_code::normal, ignored);
  }

 private:
  void send() {
    ws_.async_write(asio::buffer(payload_), [this](error_code ec, std::size_t) {
      if (ec) return;
      ws_.async_read(buffer_, [this](error_code ec2, std::size_t) {
        if (ec2) return;
        buffer_.consume(buffer_.size());
        ++count_;
        if (!stop_->load(std::memory_order_relaxed)) send();
      });
    });
  }

  ws::stream<tcp::socket> ws_;
  std::string payload_;
  boost::beast::flat_buffer buffer_;
  std::uint64_t& count_;
  const std::atomic<bool>* stop_ = nullptr;
};

struct result {
  double messages_per_second;
  double server_cpu_us_per_message;
};

// One run: connects, warms up for 0.3 s, then counts echoes for `seconds`.
result run_once(bench_server& server, int connections, std::size_t bytes, double seconds) {
  asio::io_context io{1};
  std::uint64_t count = 0;
  std::vector<std::unique_ptr<echo_connection>> conns;
  for (int i = 0; i < connections; ++i) {
    conns.push_back(std::make_unique<echo_connection>(io, std::string(bytes, 'x'), count));
    conns.back()->open(server.port());
  }
  std::atomic<bool> stop{false};
  for (auto& c : conns) c->start(stop);
  auto run_for = [&](double s) {
    io.run_for(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(s)));
  };
  run_for(0.3);
  std::uint64_t first = count;
  double cpu_first = cpu_seconds(server.cpu_clock());
  auto wall_first = std::chrono::steady_clock::now();
  run_for(seconds);
  std::uint64_t messages = count - first;
  double cpu = cpu_seconds(server.cpu_clock()) - cpu_first;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_first).count();
  stop = true;
  io.run_for(std::chrono::milliseconds(100));  // the last round trips end
  io.restart();
  for (auto& c : conns) c->close();
  return {static_cast<double>(messages) / wall,
          messages ? cpu * 1e6 / static_cast<double>(messages) : 0.0};
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  int repeat = 5;
  std::vector<long> connections{1, 32};
  std::vector<long> sizes{32, 4096};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--seconds") seconds = std::atof(argv[i + 1]);
    else if (flag == "--repeat") repeat = std::atoi(argv[i + 1]);
    else if (flag == "--connections") connections = list_of(argv[i + 1]);
    else if (flag == "--bytes") sizes = list_of(argv[i + 1]);
  }
  struct variant {
    const char* server;
    long connections;
    long bytes;
    std::vector<double> rate;
    std::vector<double> cpu;
  };
  std::vector<variant> variants;
  for (long c : connections)
    for (long b : sizes)
      for (const char* s : {"waypoint", "beast-example"}) variants.push_back({s, c, b, {}, {}});
  waypoint_server ours;
  beast_example_server theirs;
  for (int r = 0; r < repeat; ++r) {
    for (variant& v : variants) {
      bench_server& s = std::string(v.server) == "waypoint" ? static_cast<bench_server&>(ours)
                                                            : static_cast<bench_server&>(theirs);
      result x = run_once(s, static_cast<int>(v.connections), static_cast<std::size_t>(v.bytes), seconds);
      v.rate.push_back(x.messages_per_second);
      v.cpu.push_back(x.server_cpu_us_per_message);
      std::fprintf(stderr, "run %d %s c=%ld b=%ld: %.0f msg/s, %.2f us server CPU/msg\n", r + 1,
                   v.server, v.connections, v.bytes, x.messages_per_second,
                   x.server_cpu_us_per_message);
    }
  }
  std::printf("| server | connections | message bytes | echoes/s (median of %d) | range | server CPU per echo (median) |\n",
              repeat);
  std::printf("|---|---|---|---|---|---|\n");
  for (const variant& v : variants) {
    auto [lo, hi] = std::minmax_element(v.rate.begin(), v.rate.end());
    std::printf("| %s | %ld | %ld | %.0f | %.0f–%.0f | %.2f µs |\n", v.server, v.connections,
                v.bytes, median(v.rate), *lo, *hi, median(v.cpu));
  }
}
