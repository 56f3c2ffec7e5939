// test_client: POSIX sockets and poll(), with Beast's response parser to read replies.
#include "test_client.hpp"

#include <boost/beast/http/parser.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

namespace waypoint::testing {
namespace {

namespace http = boost::beast::http;

int connect_loopback(std::uint16_t port, loopback family, int& error) {
  bool v6 = family == loopback::v6;
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = errno;
    return -1;
  }
  sockaddr_in addr{};
  sockaddr_in6 addr6{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr6.sin6_family = AF_INET6;
  addr6.sin6_port = htons(port);
  addr6.sin6_addr = in6addr_loopback;
  int connected = v6 ? ::connect(fd, reinterpret_cast<sockaddr*>(&addr6), sizeof addr6)
                     : ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (connected != 0) {
    error = errno;
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  error = 0;
  return fd;
}

}  // namespace

test_client::test_client(std::uint16_t port, loopback family) {
  int error = 0;
  fd_ = connect_loopback(port, family, error);
  if (fd_ < 0)
    throw std::runtime_error(std::string("test_client: connect: ") + std::strerror(error));
}

test_client test_client::over_unix(const std::string& address) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  bool abstract = address.starts_with('@');
  std::string name = abstract ? address.substr(1) : address;
  if (name.size() + 1 > sizeof a.sun_path) throw std::runtime_error("test_client: path too long");
  std::memcpy(a.sun_path + (abstract ? 1 : 0), name.data(), name.size());
  auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&a), size) != 0) {
    int error = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("test_client: connect to unix:" + address + ": " + std::strerror(error));
  }
  return test_client(fd);
}

test_client::~test_client() { close(); }

void test_client::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

test_client::test_client(test_client&& other) noexcept
    : fd_(other.fd_), buffered_(std::move(other.buffered_)) {
  other.fd_ = -1;
}

int test_client::try_connect(std::uint16_t port) {
  int error = 0;
  int fd = connect_loopback(port, loopback::v4, error);
  if (fd >= 0) ::close(fd);
  return error;
}

bool test_client::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool test_client::send_in_pieces(std::string_view bytes, const std::vector<std::size_t>& sizes,
                                 std::chrono::microseconds gap) {
  for (std::size_t size : sizes) {
    if (bytes.empty()) break;
    std::size_t n = std::min(size, bytes.size());
    if (!send(bytes.substr(0, n))) return false;
    bytes.remove_prefix(n);
    if (!bytes.empty()) std::this_thread::sleep_for(gap);
  }
  return send(bytes);
}

std::optional<std::string> test_client::read_until_closed(std::chrono::milliseconds wait) {
  auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    long n = left.count() > 0 ? receive(left) : -1;
    if (n < 0) return std::nullopt;
    if (n == 0) return std::exchange(buffered_, {});
  }
}

long test_client::receive(std::chrono::milliseconds wait) {
  pollfd p{fd_, POLLIN, 0};
  int ready = ::poll(&p, 1, static_cast<int>(wait.count()));
  if (ready == 0) return -1;
  char chunk[16384];
  ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
  if (n <= 0) return 0;
  buffered_.append(chunk, static_cast<std::size_t>(n));
  return n;
}

std::optional<reply> test_client::read(bool head) {
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  parser.skip(head);
  parser.body_limit(64 * 1024 * 1024);
  for (;;) {
    if (!buffered_.empty()) {
      boost::system::error_code ec;
      std::size_t used = parser.put(boost::asio::buffer(buffered_), ec);
      buffered_.erase(0, used);
      if (parser.is_done()) {
        // A 1xx interim response is returned like any other; the caller reads again.
        return parser.release();
      }
      if (ec && ec != http::error::need_more) return std::nullopt;
    }
    if (receive(patience) <= 0) return std::nullopt;
  }
}

bool test_client::closed_by_server(std::chrono::milliseconds wait) {
  auto deadline = std::chrono::steady_clock::now() + wait;
  std::size_t start = buffered_.size();
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    long n = receive(left);
    if (n == 0) return buffered_.size() == start;
    if (n < 0) return false;
  }
}

std::string request_text(std::string_view method, std::string_view target,
                         std::string_view extra_fields, std::string_view body) {
  std::string text;
  text.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: test\r\n");
  text.append(extra_fields);
  if (!body.empty()) text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  text += "\r\n";
  text.append(body);
  return text;
}

}  // namespace waypoint::testing
