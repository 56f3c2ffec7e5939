// The memory bound of a file body: a 1 GiB file (sparse, so no disk is used) downloaded by
// curl through the server in this process, while a sampler reads this process's resident
// set. sendfile moves the bytes kernel-side, so the growth is bounded by the server's
// buffers, not by the file. Labelled `heavy` (a gigabyte over loopback).
#include "waypoint/app/serve.hpp"
#include "waypoint/app/static_files.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

// The bound the issue states: the server's growth while it sends the file.
constexpr long bound_kib = 32 * 1024;

TEST(StaticFilesMemory, GigabyteFileIsSentWithinTheBound) {
  constexpr std::uintmax_t size = 1024ull * 1024 * 1024;
  char pattern[] = "/tmp/waypoint-static-memory-XXXXXX";
  fs::path root = ::mkdtemp(pattern);
  std::ofstream(root / "big.bin").close();
  fs::resize_file(root / "big.bin", size);

  wa::application app({.logger = [](std::string_view) {}});
  app.static_files("/files/", root.string());
  waypoint::beast::server_options options;
  options.listen = {{"127.0.0.1", 0}};
  options.threads = 1;
  options.handle_signals = false;
  waypoint::beast::server server(options, wa::dispatch_to(app));
  server.start();
  std::string url = "http://127.0.0.1:" + std::to_string(server.endpoints().front().port) +
                    "/files/big.bin";

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
  std::string command = "curl -sS --max-time 60 -o /dev/null -w '%{http_code} %{size_download}' " + url;
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
    ::pclose(pipe);
  }
  done = true;
  sampler.join();
  server.stop();
  server.wait();
  fs::remove_all(root);

  EXPECT_EQ(out, "200 " + std::to_string(size));
  long growth = peak - before;
  std::printf("resident set: %ld KiB before, %ld KiB at the peak, growth %ld KiB (bound %ld)\n",
              before, peak.load(), growth, bound_kib);
  EXPECT_LT(growth, bound_kib);
}

}  // namespace
