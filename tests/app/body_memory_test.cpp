// The memory bound of large bodies, both ways, through the server in this process while a
// sampler reads this process's resident set: a 1 GiB file downloaded by curl (sparse, so
// no disk is used; sendfile moves the bytes kernel-side) and a 200 MiB upload streamed by
// curl into the gateway's upload route (examples/streams.hpp: a temporary file and a
// SHA-256). The growth is bounded by the server's buffers, not by the bodies. Labelled
// `heavy` (over a gigabyte over loopback).
#include "streams.hpp"

#include "waypoint/app/serve.hpp"
#include "waypoint/app/content/static_files.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;
namespace wa = waypoint::app;

// This process's resident set, in KiB (VmRSS of /proc/self/status).
long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// The bound the issue states: the server's growth while a body goes through.
constexpr long bound_kib = 32 * 1024;

std::string run(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    ::pclose(pipe);
  }
  return out;
}

// Runs `command` (a curl) against `app` served on loopback, sampling the resident set every
// 5 ms; returns curl's output and checks the growth against the bound.
std::string run_within_bound(wa::application& app, const std::function<std::string(const std::string&)>& command,
                             const char* what) {
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 0}};
  options.threads = 1;
  options.handle_signals = false;
  waypoint::beast::server server(wa::options_for(app, options), wa::dispatch_to(app));
  server.start();
  std::string base = "http://127.0.0.1:" + std::to_string(server.endpoints().front().port);
  long before = resident_kib();
  std::atomic<bool> done{false};
  std::atomic<long> peak{before};
  std::thread sampler([&] {
    while (!done) {
      long now = resident_kib();
      if (now > peak) peak = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::string out = run(command(base));
  done = true;
  sampler.join();
  server.stop();
  server.wait();
  long growth = peak - before;
  std::printf("%s: resident set %ld KiB before, %ld KiB at the peak, growth %ld KiB (bound %ld)\n",
              what, before, peak.load(), growth, bound_kib);
  EXPECT_LT(growth, bound_kib) << what;
  return out;
}

struct sparse_file {
  fs::path root;
  fs::path file;
  sparse_file(std::uintmax_t size) {
    char pattern[] = "/tmp/waypoint-body-memory-XXXXXX";
    root = ::mkdtemp(pattern);
    file = root / "big.bin";
    std::ofstream(file).close();
    fs::resize_file(file, size);
  }
  ~sparse_file() { fs::remove_all(root); }
};

TEST(BodyMemory, GigabyteFileIsSentWithinTheBound) {
  constexpr std::uintmax_t size = 1024ull * 1024 * 1024;
  sparse_file big(size);
  wa::application app({.logger = [](std::string_view) {}});
  serve_static(app, "/files/", big.root.string());
  std::string out = run_within_bound(app, [](const std::string& base) {
    return "curl -sS --max-time 60 -o /dev/null -w '%{http_code} %{size_download}' " + base +
           "/files/big.bin";
  }, "1 GiB download");
  EXPECT_EQ(out, "200 " + std::to_string(size));
}

TEST(BodyMemory, TwoHundredMebibyteUploadIsStreamedWithinTheBound) {
  constexpr std::uintmax_t size = 200ull * 1024 * 1024;
  sparse_file upload(size);  // zeros: the digest is sha256sum's of the same file
  wa::application app({.logger = [](std::string_view) {}});
  waypoint::examples::add_stream_routes(app);
  std::string out = run_within_bound(app, [&](const std::string& base) {
    return "curl -sS --max-time 60 -X POST -T " + upload.file.string() + " " + base + "/v1/upload";
  }, "200 MiB upload");
  std::string digest = run("sha256sum " + upload.file.string()).substr(0, 64);
  EXPECT_EQ(out, "{\"bytes\":" + std::to_string(size) + ",\"sha256\":\"" + digest + "\"}");
}

}  // namespace
