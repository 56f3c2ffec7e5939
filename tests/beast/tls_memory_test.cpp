// The memory a TLS connection costs before its handshake: many connections to a TLS
// listener that send nothing, or only the first bytes of a ClientHello, as a slow or hostile
// client does, and the resident set of this process (the server runs in it) read from
// /proc/self/status before and after. Its own process, so that memory other tests freed
// cannot hide the growth.
#include "server_fixture.hpp"
#include "../support/missing_tool.hpp"

#include <waypoint/beast/router_dispatch.hpp>
#include <waypoint/beast/server.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace wb = waypoint::beast;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using waypoint::testing::make_router;
using waypoint::testing::test_options;

// Connections per kind: enough that the growth dwarfs the allocator's noise (before the
// change, 200 cost some 15 MB), and few enough that both kinds, with their server ends, fit
// the common soft limit of 1,024 descriptors, from which the server derives its own.
constexpr int connections = 200;

// Resident bytes a pending handshake may cost. Before the TLS state was made late, a
// connection that sent nothing cost about 50 KB and one with a partial hello about 92 KB
// (Asio's OpenSSL stream: the SSL object, a BIO pair of two 17 KB buffers, two 17 KB
// record buffers, and OpenSSL's read buffer once it reads). Now it is the connection
// object alone, a few KB; the bound leaves room for the allocator's rounding.
constexpr long bound_bytes_per_connection = 16 * 1024;

long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

int connect_to(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The first 44 bytes of a ClientHello whose record announces 512: the record header, the
// handshake header, the version and the random. The rest never comes.
const std::string partial_hello = std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) +
                                  std::string(32, '\x5a') + std::string(1, '\x00');

struct self_signed {
  fs::path dir = fs::temp_directory_path() / ("waypoint-tls-memory-" + std::to_string(::getpid()));
  bool made = false;
  self_signed() {
    fs::create_directories(dir);
    std::string command = "cd '" + dir.string() +
                          "' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
                          "-nodes -subj /CN=localhost -days 1 -keyout server.key -out server.pem "
                          ">/dev/null 2>&1";
    made = std::system(command.c_str()) == 0;
  }
  ~self_signed() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

class open_connections {
 public:
  ~open_connections() {
    for (int fd : fds_) ::close(fd);
  }
  // Opens `n` connections, each sending `first_bytes` (maybe none); false if one fails.
  bool open(std::uint16_t port, int n, const std::string& first_bytes) {
    for (int i = 0; i < n; ++i) {
      int fd = connect_to(port);
      if (fd < 0) return false;
      fds_.push_back(fd);
      if (!first_bytes.empty() &&
          ::send(fd, first_bytes.data(), first_bytes.size(), MSG_NOSIGNAL) !=
              static_cast<ssize_t>(first_bytes.size()))
        return false;
    }
    return true;
  }

 private:
  std::vector<int> fds_;
};

// Waits until the server counts `n` open connections, then a little longer for it to have
// read what they sent.
void settle(const wb::server& s, std::uint64_t n) {
  for (int i = 0; i < 1000 && s.stats().open < n; ++i) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(300ms);
}

TEST(TlsMemory, PendingHandshakesCostLittleMemory) {
  self_signed cert;
  if (!cert.made) WAYPOINT_SKIP_MISSING("openssl (it made no certificate)");
  wb::server_options o = test_options();
  o.listen = {{"127.0.0.1", 0, true}};
  o.threads = 1;
  o.tls.certificate_chain_file = (cert.dir / "server.pem").string();
  o.tls.private_key_file = (cert.dir / "server.key").string();
  o.tls_handshake_timeout = 60s;  // none times out while measured
  auto router = make_router();
  wb::server s(o, wb::dispatch_to(*router));
  s.start();
  std::uint16_t port = s.endpoints().front().port;
  {
    // Warm-up: the first connections of each kind, so that one-time costs (the worker's
    // malloc arena, the reactor's tables, OpenSSL's first SSL object) are not counted.
    open_connections warm;
    ASSERT_TRUE(warm.open(port, 20, ""));
    ASSERT_TRUE(warm.open(port, 20, partial_hello));
    settle(s, 40);
  }
  for (int i = 0; i < 1000 && s.stats().open > 0; ++i) std::this_thread::sleep_for(5ms);

  open_connections silent;
  long start = resident_kib();
  ASSERT_TRUE(silent.open(port, connections, ""));
  settle(s, connections);
  long after_silent = resident_kib();
  open_connections partial;
  ASSERT_TRUE(partial.open(port, connections, partial_hello));
  settle(s, 2 * connections);
  long after_partial = resident_kib();

  long silent_bytes = (after_silent - start) * 1024 / connections;
  long partial_bytes = (after_partial - after_silent) * 1024 / connections;
  std::printf("resident bytes per pending handshake: %ld silent, %ld with a partial hello\n",
              silent_bytes, partial_bytes);
  RecordProperty("silent_bytes_per_connection", std::to_string(silent_bytes));
  RecordProperty("partial_hello_bytes_per_connection", std::to_string(partial_bytes));
  EXPECT_EQ(s.stats().open, 2u * connections);
  EXPECT_LT(silent_bytes, bound_bytes_per_connection);
  EXPECT_LT(partial_bytes, bound_bytes_per_connection);
}

}  // namespace
