// What the Redis stores' tests share (redis_sessions_test.cpp, redis_rate_limit_test.cpp):
// a redis-server of their own on a free loopback port, started and stopped by its pid, and
// redis-cli to look at what the stores wrote. The tests exit 77 (skipped) without
// redis-server: run_with_redis_server() is their main.
#pragma once

#include "../support/missing_tool.hpp"

#include <waypoint/app/security/redis_session_store.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace waypoint::app::testing {

// Exits 77, ctest's skip, when redis-server is not installed; 1 under WAYPOINT_REQUIRE_ALL
// (tests/support/missing_tool.hpp).
inline void skip_without_redis_server() {
  if (std::system("command -v redis-server >/dev/null 2>&1") != 0) {
    const bool required = ::waypoint::testing::every_tool_required();
    std::printf("redis-server not installed (scripts/install-deps redis): %s\n",
                required ? "failed, WAYPOINT_REQUIRE_ALL is set" : "skipped");
    std::exit(required ? 1 : 77);
  }
}

// A loopback port nothing listens on now (the kernel's choice for port 0).
inline std::uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("no free loopback port");
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A redis-server of its own, no persistence, for as long as this lives. Given a port, it
// listens there (a server started again where a stopped one was).
class redis_server {
 public:
  explicit redis_server(std::uint16_t port = free_port()) : port_(port) {
    using namespace std::chrono_literals;
    std::string port_text = std::to_string(port_);
    std::vector<std::string> args = {"redis-server", "--port", port_text, "--bind", "127.0.0.1",
                                     "--save", "", "--appendonly", "no", "--logfile", "/dev/null"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::posix_spawnp(&pid_, "redis-server", nullptr, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("cannot start redis-server");
    for (int i = 0; i < 100; ++i) {  // up to 5 s for it to listen
      try {
        redis_session_store probe({.connection = {.port = port_}});
        return;
      } catch (const std::runtime_error&) {
        std::this_thread::sleep_for(50ms);
      }
    }
    stop();
    throw std::runtime_error("redis-server did not start listening on port " + port_text);
  }
  ~redis_server() { stop(); }
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);  // a paused one would not act on SIGTERM
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  // SIGSTOP: it keeps its socket and answers nothing (a Redis that stopped answering);
  // resume() lets it go on.
  void pause() const { ::kill(pid_, SIGSTOP); }
  void resume() const { ::kill(pid_, SIGCONT); }
  std::uint16_t port() const { return port_; }

  // redis-cli's answer to `command` (words separated by spaces), trailing newline removed:
  // an independent client's view of what a store wrote.
  std::string cli(const std::string& command) const {
    std::string line = "redis-cli -p " + std::to_string(port_) + " " + command;
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(line.c_str(), "r"), ::pclose);
    if (!pipe) throw std::runtime_error("cannot run redis-cli");
    std::string out;
    std::array<char, 256> chunk;
    while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe.get())) out.append(chunk.data(), n);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
  }

 private:
  std::uint16_t port_;
  pid_t pid_ = 0;
};

// The one redis-server of a test program, for all its tests: started before the first,
// stopped after the last.
inline redis_server* server = nullptr;

class redis_environment : public ::testing::Environment {
 public:
  void SetUp() override { server = new redis_server(); }
  void TearDown() override {
    delete server;
    server = nullptr;
  }
};

// The test program's main: skipped (77) without redis-server, else every test with one
// redis-server shared.
inline int run_with_redis_server(int argc, char** argv) {
  skip_without_redis_server();
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new redis_environment);
  return RUN_ALL_TESTS();
}

}  // namespace waypoint::app::testing
