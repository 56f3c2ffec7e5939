// Unix listeners and inherited (socket-activated) ones, over real sockets: curl with
// --unix-socket and --abstract-unix-socket, a second server refused a live socket, a stale
// file left by a killed process reclaimed, the file's mode and group, its removal at stop,
// paths that do not fit, SO_PEERCRED as handlers see it, and listening sockets handed over
// by descriptor (LISTEN_FDS) checked for what they are.
#include "server_fixture.hpp"

#include <waypoint/beast/router_dispatch.hpp>
#include <waypoint/beast/server.hpp>

#include "../support/command.hpp"
#include "../support/missing_tool.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace {

namespace wb = waypoint::beast;
namespace fs = std::filesystem;
using waypoint::testing::make_router;
using waypoint::testing::test_options;

using waypoint::testing::command_result;

command_result run(const std::string& command) { return waypoint::testing::run_command(command); }

// A directory of the test's own for socket files, removed with what is left in it.
struct scratch_dir {
  fs::path dir;
  scratch_dir() {
    char pattern[] = "/tmp/waypoint-unix-XXXXXX";
    if (!::mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
  }
  ~scratch_dir() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

// A name no other test run shares: abstract names are machine-wide (per network namespace).
std::string unique_abstract_name(const std::string& what) {
  return "waypoint-test-" + what + "-" + std::to_string(::getpid());
}

wb::server_options unix_options(wb::listen_address a) {
  wb::server_options o = test_options();
  o.listen = {std::move(a)};
  return o;
}

struct unix_server {
  explicit unix_server(wb::server_options o)
      : router(make_router()), server(std::move(o), wb::dispatch_to(*router)) {
    server.start();
  }
  std::unique_ptr<wb::router> router;
  wb::server server;
};

// A connected unix stream socket to `address` ("/path" or "@name"), or -1.
int connect_unix(const std::string& address) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  bool abstract = address.starts_with('@');
  std::string name = abstract ? address.substr(1) : address;
  std::memcpy(a.sun_path + (abstract ? 1 : 0), name.data(), name.size());
  auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), size) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// One request over a fresh connection; the whole reply (the server closes after it).
std::string ask(const std::string& address, const std::string& target) {
  int fd = connect_unix(address);
  if (fd < 0) return "connect failed: " + std::string(std::strerror(errno));
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    ::close(fd);
    return "send failed";
  }
  std::string out;
  char chunk[4096];
  while (true) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    out.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string body_of(const std::string& reply) {
  std::size_t end = reply.find("\r\n\r\n");
  return end == std::string::npos ? "" : reply.substr(end + 4);
}

bool have_curl() { return run("command -v curl >/dev/null").status == 0; }

// --- serving --------------------------------------------------------------------------

TEST(UnixListener, CurlGetsTheRoutedAnswerOverAPathAndAnAbstractName) {
  if (!have_curl()) WAYPOINT_SKIP_MISSING("curl");
  scratch_dir d;
  struct row {
    std::string address;  // after "unix:"
    std::string curl_option;
    std::string name;  // what curl is given
  } rows[] = {
      {d.path("http.sock"), "--unix-socket", d.path("http.sock")},
      {"@" + unique_abstract_name("curl"), "--abstract-unix-socket", unique_abstract_name("curl")},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.address);
    unix_server s(unix_options(wb::listen_address::unix_socket(r.address)));
    ASSERT_EQ(s.server.endpoints().size(), 1u);
    EXPECT_EQ(s.server.endpoints()[0].address, "unix:" + r.address);
    EXPECT_EQ(s.server.endpoints()[0].port, 0);
    std::string curl = "curl -sS --max-time 10 " + r.curl_option + " '" + r.name + "' ";
    command_result get = run(curl + "-w ' %{http_code}' http://localhost/users/42");
    EXPECT_EQ(get.status, 0) << get.output;
    EXPECT_EQ(get.output, "GET /users/{id} 42 200");
    // HEAD: the length of the GET's body, and no body.
    command_result head = run(curl + "-I http://localhost/users/42");
    EXPECT_EQ(head.status, 0) << head.output;
    EXPECT_NE(head.output.find("HTTP/1.1 200"), std::string::npos) << head.output;
    EXPECT_NE(head.output.find("Content-Length: 18"), std::string::npos) << head.output;
  }
}

TEST(UnixListener, ServesTcpAndUnixListenersSideBySide) {
  scratch_dir d;
  wb::server_options o = test_options();
  o.listen = {{"127.0.0.1", 0}, wb::listen_address::unix_socket(d.path("side.sock"))};
  unix_server s(std::move(o));
  auto ends = s.server.endpoints();
  ASSERT_EQ(ends.size(), 2u);
  waypoint::testing::test_client tcp(ends[0].port);
  ASSERT_TRUE(tcp.send(waypoint::testing::request_text("GET", "/users/7")));
  auto reply = tcp.read();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->body(), "GET /users/{id} 7");
  EXPECT_EQ(body_of(ask(d.path("side.sock"), "/users/8")), "GET /users/{id} 8");
}

// --- the socket file ------------------------------------------------------------------

TEST(UnixListener, SecondServerIsRefusedALiveSocketNamingThePath) {
  scratch_dir d;
  std::string path = d.path("live.sock");
  std::string abstract = "@" + unique_abstract_name("live");
  for (const std::string& address : {path, abstract}) {
    SCOPED_TRACE(address);
    unix_server first(unix_options(wb::listen_address::unix_socket(address)));
    wb::server second(unix_options(wb::listen_address::unix_socket(address)),
                      [](const wb::request&, wb::response&) {});
    try {
      second.start();
      ADD_FAILURE() << "the second server took a live socket";
    } catch (const std::system_error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("unix:" + address), std::string::npos) << what;
      EXPECT_NE(what.find("a server is listening on it"), std::string::npos) << what;
    }
    // The first still serves, on its own file.
    EXPECT_EQ(body_of(ask(address, "/users/1")), "GET /users/{id} 1");
  }
}

// A process that binds and listens on `path`, then dies by SIGKILL: its file stays, with
// nothing listening behind it.
void leave_a_killed_servers_file(const std::string& path) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only async-signal-safe calls in the child of a threaded process.
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path.c_str(), path.size());
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd, 8) != 0)
      ::_exit(1);
    ::raise(SIGSTOP);  // tells the parent it is listening
    ::pause();
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
  ASSERT_TRUE(WIFSTOPPED(status)) << "the child could not listen";
  int probe = connect_unix(path);
  EXPECT_GE(probe, 0) << "the child's socket should be live before the kill";
  if (probe >= 0) ::close(probe);
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
}

TEST(UnixListener, RestartAfterKill9ReclaimsTheStaleFile) {
  scratch_dir d;
  std::string path = d.path("stale.sock");
  leave_a_killed_servers_file(path);
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  ASSERT_TRUE(S_ISSOCK(st.st_mode));
  unix_server s(unix_options(wb::listen_address::unix_socket(path)));
  EXPECT_EQ(body_of(ask(path, "/users/3")), "GET /users/{id} 3");
}

TEST(UnixListener, PathHeldByAnythingButASocketIsNeverTaken) {
  scratch_dir d;
  std::string path = d.path("not-a-socket");
  std::ofstream(path) << "precious";
  wb::server s(unix_options(wb::listen_address::unix_socket(path)),
               [](const wb::request&, wb::response&) {});
  try {
    s.start();
    ADD_FAILURE() << "a regular file was replaced";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a socket"), std::string::npos) << e.what();
  }
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

TEST(UnixListener, FileIsRemovedAtStop) {
  scratch_dir d;
  std::string path = d.path("gone.sock");
  {
    unix_server s(unix_options(wb::listen_address::unix_socket(path)));
    EXPECT_TRUE(fs::exists(fs::symlink_status(path)));
    s.server.stop();
    EXPECT_FALSE(fs::exists(fs::symlink_status(path))) << "stop() left the file";
    s.server.wait();
  }
  // And a server destroyed without a stop of its own.
  { unix_server s(unix_options(wb::listen_address::unix_socket(path))); }
  EXPECT_FALSE(fs::exists(fs::symlink_status(path)));
}

TEST(UnixListener, FileGetsItsModeAndGroupBeforeAnyoneConnects) {
  scratch_dir d;
  group* own = ::getgrgid(::getgid());
  ASSERT_NE(own, nullptr);
  std::string group_name = own->gr_name;
  struct row {
    wb::unix_socket_options file;
    mode_t mode;  // expected permission bits
  } rows[] = {
      {{.mode = 0660, .group = group_name}, 0660},
      {{.mode = 0600}, 0600},
      {{.mode = 0666}, 0666},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.mode);
    std::string path = d.path("mode.sock");
    unix_server s(unix_options(wb::listen_address::unix_socket(path, r.file)));
    struct stat st {};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, r.mode);
    EXPECT_EQ(st.st_gid, ::getgid());
  }
}

TEST(UnixListener, BadAddressesAreRefusedAtConstructionNamingWhy) {
  struct row {
    wb::listen_address address;
    std::string says;
  } rows[] = {
      // sun_path is 108 bytes: a path keeps one for its NUL.
      {wb::listen_address::unix_socket("/tmp/" + std::string(103, 'p')),
       "is 108 bytes long; a unix socket path holds at most 107"},
      {wb::listen_address::unix_socket("@" + std::string(200, 'n')),
       "is 200 bytes long; a unix socket name holds at most 107"},
      {wb::listen_address::unix_socket(""), "has an empty path"},
      {wb::listen_address::unix_socket("@"), "has an empty abstract name"},
      {wb::listen_address::unix_socket("@x", {.mode = 0600}), "has no file to give a mode"},
      {wb::listen_address::unix_socket("/tmp/x.sock", {.mode = 010000}), "has a mode past 07777"},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.address.address);
    try {
      wb::server s(unix_options(r.address), [](const wb::request&, wb::response&) {});
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.says), std::string::npos) << e.what();
    }
  }
  // The longest path that fits is served.
  scratch_dir d;
  std::string longest = d.path("");
  longest += std::string(107 - longest.size(), 'l');
  unix_server s(unix_options(wb::listen_address::unix_socket(longest)));
  EXPECT_EQ(body_of(ask(longest, "/users/9")), "GET /users/{id} 9");
}

TEST(UnixListener, UnknownGroupIsAnErrorNamingIt) {
  scratch_dir d;
  wb::server s(unix_options(wb::listen_address::unix_socket(d.path("g.sock"),
                                                            {.group = "no-such-group-waypoint"})),
               [](const wb::request&, wb::response&) {});
  try {
    s.start();
    ADD_FAILURE() << "started";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-group-waypoint"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(d.path("g.sock"))))
      << "the failed start left its file";
}

// --- the peer -------------------------------------------------------------------------

TEST(UnixListener, HandlersReadThePeersCredentialsAndPid) {
  scratch_dir d;
  std::string path = d.path("cred.sock");
  wb::server_options o = unix_options(wb::listen_address::unix_socket(path));
  wb::server s(std::move(o), [](wb::exchange& x) {
    const wb::connection_endpoints& ends = x.endpoints();
    std::string& body = x.response().body();
    body = ends.remote.address + " " + ends.local.address;
    if (ends.peer)
      body += " " + std::to_string(ends.peer->pid) + " " + std::to_string(ends.peer->uid) + " " +
              std::to_string(ends.peer->gid);
  });
  s.start();
  std::string pid = std::to_string(::getpid());
  EXPECT_EQ(body_of(ask(path, "/")), "unix:" + pid + " unix:" + path + " " + pid + " " +
                                         std::to_string(::getuid()) + " " +
                                         std::to_string(::getgid()));
}

TEST(UnixListener, TcpPeersCarryNoCredentials) {
  wb::server s(test_options(),
               [](wb::exchange& x) { x.response().body() = x.endpoints().peer ? "peer" : "none"; });
  s.start();
  waypoint::testing::test_client c(s.endpoints().front().port);
  ASSERT_TRUE(c.send(waypoint::testing::request_text("GET", "/")));
  auto reply = c.read();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->body(), "none");
}

// --- the server's other rules, unchanged over a unix listener --------------------------

// Sends a request on `fd` without waiting for the reply.
bool send_request(int fd, const std::string& target) {
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
  return ::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
}

// Everything until the server closes (bounded by the socket's receive timeout).
std::string read_all(int fd) {
  std::string out;
  char chunk[4096];
  for (ssize_t n; (n = ::recv(fd, chunk, sizeof chunk, 0)) > 0;)
    out.append(chunk, static_cast<std::size_t>(n));
  return out;
}

TEST(UnixListener, DrainFinishesTheRequestInFlightAndRefusesNewConnections) {
  scratch_dir d;
  std::string path = d.path("drain.sock");
  waypoint::testing::gate g;
  auto router = make_router(&g);
  wb::server s(unix_options(wb::listen_address::unix_socket(path)), wb::dispatch_to(*router));
  s.start();
  int fd = connect_unix(path);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_request(fd, "/slow"));
  g.entered.get_future().wait();
  s.stop();  // returns once the listener is closed and its file gone
  EXPECT_FALSE(fs::exists(fs::symlink_status(path)));
  EXPECT_LT(connect_unix(path), 0) << "a new connection during the drain";
  g.release.set_value();
  std::string reply = read_all(fd);
  ::close(fd);
  EXPECT_NE(reply.find("HTTP/1.1 200"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Connection: close"), std::string::npos) << reply;
  EXPECT_EQ(body_of(reply), "finished");
  s.wait();
}

TEST(UnixListener, ConnectionsPastTheLimitGet503) {
  scratch_dir d;
  std::string path = d.path("limit.sock");
  wb::server_options o = unix_options(wb::listen_address::unix_socket(path));
  o.max_connections = 2;
  unix_server s(std::move(o));
  std::vector<int> served;
  for (int i = 0; i < 2; ++i) {
    served.push_back(connect_unix(path));
    ASSERT_TRUE(send_request(served.back(), "/users/me"));
    char buffer[512];
    ASSERT_GT(::recv(served.back(), buffer, sizeof buffer, 0), 0);  // accepted and counted
  }
  int over = connect_unix(path);
  ASSERT_GE(over, 0);
  std::string refused = read_all(over);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_EQ(s.server.stats().refused, 1u);
  for (int fd : served) ::close(fd);
  ::close(over);
}

// --- inherited listeners --------------------------------------------------------------

int listening_unix_socket(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 8) != 0)
    throw std::runtime_error("cannot listen on " + path);
  return fd;
}

TEST(InheritedListener, ServesOnTheDescriptorItIsGivenAndLeavesTheFile) {
  scratch_dir d;
  std::string path = d.path("inherited.sock");
  wb::listen_address a;
  a.inherited_fd = listening_unix_socket(path);
  a.name = "web";
  {
    unix_server s(unix_options(a));
    auto ends = s.server.endpoints();
    ASSERT_EQ(ends.size(), 1u);
    EXPECT_EQ(ends[0].address, "unix:" + path);
    EXPECT_EQ(ends[0].inherited_fd, a.inherited_fd);
    EXPECT_EQ(ends[0].name, "web");
    EXPECT_EQ(body_of(ask(path, "/users/5")), "GET /users/{id} 5");
  }
  // Its file belongs to whoever made the socket (systemd): left in place.
  EXPECT_TRUE(fs::exists(fs::symlink_status(path)));
}

TEST(InheritedListener, RefusesDescriptorsThatAreNoListeningStreamSocket) {
  scratch_dir d;
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  int datagram = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int unlistened = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::string file = d.path("plain");
  std::ofstream(file) << "x";
  int regular = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  struct row {
    int fd;
    std::string says;
  } rows[] = {
      {pair[0], "is not listening"},  // a connection, as Accept=yes passes
      {datagram, "is not a stream socket"},
      {unlistened, "is not listening"},
      {regular, "is not a socket"},
  };
  for (const row& r : rows) {
    SCOPED_TRACE(r.says);
    wb::listen_address a;
    a.inherited_fd = r.fd;
    wb::server s(unix_options(a), [](const wb::request&, wb::response&) {});
    try {
      s.start();
      ADD_FAILURE() << "started";
    } catch (const std::runtime_error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("descriptor " + std::to_string(r.fd) + " " + r.says), std::string::npos)
          << what;
    }
  }
  for (int fd : {pair[0], pair[1], datagram, unlistened, regular}) ::close(fd);
}

TEST(InheritedListener, VariablesForAnotherProcessGiveNothingAndAreCleared) {
  struct row {
    const char* pid;
    const char* fds;
  } rows[] = {
      {"1", "2"},  // another process's
      {"", "1"},   // no pid
      {"self", "not-a-number"},
      {"self", "-1"},
  };
  for (const row& r : rows) {
    std::string pid = std::string(r.pid) == "self" ? std::to_string(::getpid()) : r.pid;
    SCOPED_TRACE(pid + " " + r.fds);
    ::setenv("LISTEN_PID", pid.c_str(), 1);
    ::setenv("LISTEN_FDS", r.fds, 1);
    ::setenv("LISTEN_FDNAMES", "a:b", 1);
    EXPECT_TRUE(wb::inherited_listeners().empty());
    EXPECT_EQ(::getenv("LISTEN_PID"), nullptr);
    EXPECT_EQ(::getenv("LISTEN_FDS"), nullptr);
    EXPECT_EQ(::getenv("LISTEN_FDNAMES"), nullptr);
  }
}

// The descriptors systemd passes start at 3, which this process already uses: the check
// runs in a child (a death test) that moves two listening sockets there first.
TEST(InheritedListenerDeathTest, ReadsListenFdsAndTheirNames) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  scratch_dir d;
  std::string first = d.path("a.sock");
  std::string second = d.path("b.sock");
  EXPECT_EXIT(
      {
        int a = listening_unix_socket(first);
        int b = listening_unix_socket(second);
        if (::dup2(a, 3) != 3 || ::dup2(b, 4) != 4) ::_exit(2);
        ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
        ::setenv("LISTEN_FDS", "2", 1);
        ::setenv("LISTEN_FDNAMES", "http:admin", 1);
        std::vector<wb::listen_address> got = wb::inherited_listeners();
        bool ok = got.size() == 2 && got[0].inherited_fd == 3 && got[0].name == "http" &&
                  got[0].address == "unix:" + first && got[1].inherited_fd == 4 &&
                  got[1].name == "admin" && got[1].address == "unix:" + second &&
                  ::getenv("LISTEN_FDS") == nullptr;
        if (!ok) {
          for (const auto& l : got)
            std::fprintf(stderr, "%d %s %s\n", l.inherited_fd, l.name.c_str(), l.address.c_str());
          ::_exit(1);
        }
        int code = 0;
        {
          unix_server s(unix_options(got[1]));
          code = body_of(ask(second, "/users/4")) == "GET /users/{id} 4" ? 0 : 3;
        }
        std::error_code ignored;
        fs::remove_all(d.dir, ignored);
        ::_exit(code);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
