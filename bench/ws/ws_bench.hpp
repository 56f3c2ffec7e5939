// What the WebSocket benchmarks (echo_bench.cpp, fanout_bench.cpp) share: a Beast client's
// connection to a waypoint server on loopback, a thread's CPU clock read from another
// thread, the process's RSS, and the small arithmetic of their reports.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/websocket/stream.hpp>

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace waypoint_bench {

namespace asio = boost::asio;
namespace ws = boost::beast::websocket;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// The CPU clock of `t`, which another thread reads with cpu_seconds() (the server's threads'
// time seen from the client's side: the client's own work is not in it).
inline clockid_t clock_of(const std::thread& t) {
  clockid_t id{};
  pthread_getcpuclockid(const_cast<std::thread&>(t).native_handle(), &id);
  return id;
}

inline double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Blocking: TCP to 127.0.0.1:port, Nagle off, then the WebSocket handshake for `target`.
inline void connect_websocket(ws::stream<tcp::socket>& stream, std::uint16_t port,
                              const std::string& target) {
  stream.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  stream.next_layer().set_option(tcp::no_delay(true));
  stream.handshake("127.0.0.1", target);
}

// Resident set of this process, from /proc/self/statm.
inline std::size_t rss_bytes() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// Raises the soft descriptor limit to the hard one; returns the limit now in force.
inline rlim_t raise_descriptor_limit() {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
  getrlimit(RLIMIT_NOFILE, &r);
  return r.rlim_cur;
}

inline std::vector<long> list_of(const char* text) {
  std::vector<long> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    out.push_back(std::strtol(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace waypoint_bench
