// The connection's read, answer, write and linger steps.
#include "connection.hpp"

#include "worker.hpp"

#include <boost/asio/write.hpp>

#include <algorithm>

namespace waypoint::beast::detail {
namespace {

// After a response that closes the connection, its unread input is drained this long at
// most, so closing does not reset the connection (an RST can destroy the response in the
// client's receive buffer before it is read).
constexpr std::chrono::milliseconds linger_timeout{1000};

}  // namespace

connection::connection(worker& owner, socket_type socket)
    : owner_(owner), socket_(std::move(socket)), session_(owner.environment()) {}

void connection::start(std::list<connection>::iterator self) {
  self_ = self;
  do_read();
}

void connection::refuse(std::list<connection>::iterator self) {
  self_ = self;
  session_.refuse(http::status::service_unavailable,
                  "the server is at its connection limit; try again later");
  answer();
}

void connection::close() noexcept {
  error_code ignored;
  socket_.close(ignored);
}

// A request being read gets its 408: the read is cancelled and its completion answers.
// Anything else past its deadline (idle, a stalled write, a linger) is closed.
void connection::on_deadline(clock::time_point now) noexcept {
  if (now < deadline_) return;
  if (phase_ == phase::reading && !expired_) {
    expired_ = true;
    error_code ignored;
    socket_.cancel(ignored);
    return;
  }
  close();
}

void connection::close_if_idle() noexcept {
  if (phase_ == phase::idle) close();
}

// The completion of the pending operation, after the socket closed, lands here.
void connection::destroy() noexcept {
  close();
  owner_.remove(self_);  // deletes *this: nothing may follow
}

void connection::do_read() {
  if (!session_.in_request() && owner_.stopping()) return destroy();
  phase_ = session_.in_request() ? phase::reading : phase::idle;
  deadline_ = session_.in_request() ? session_.deadline()
                                    : clock::now() + owner_.options().idle_timeout;
  socket_.async_read_some(session_.prepare(),
                          [this](error_code ec, std::size_t n) { on_read(ec, n); });
}

void connection::on_read(error_code ec, std::size_t n) {
  if (ec && !expired_) return destroy();  // end of stream, reset, or closed by the sweep
  if (!ec) session_.commit(n);
  try {
    if (expired_) {
      session_.process();  // what did arrive in time is still answered
      session_.expire();
    }
    answer();
  } catch (const std::exception&) {
    destroy();
  }
}

// Answers every complete request in the input, writes the answers, then reads more (or,
// when the connection is to close, lingers).
void connection::answer() {
  for (;;) {
    session_.process();
    if (session_.output().empty()) break;
    if (!write_now()) return;  // an asynchronous write continues, or the connection is gone
  }
  if (session_.closing()) return do_linger();
  do_read();
}

// Writes the batch at once when the socket takes it all, the usual case for responses
// that fit in the send buffer: no completion to post and no trip through the reactor.
// Returns true when the output is written; false when an asynchronous write of the rest was
// started or the connection was destroyed (then `this` is gone).
bool connection::write_now() {
  std::string& output = session_.output();
  error_code ec;
  std::size_t n = socket_.write_some(asio::buffer(output), ec);
  if (!ec && n == output.size()) {
    output.clear();
    return true;
  }
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
    destroy();
    return false;
  }
  output.erase(0, n);
  do_write();
  return false;
}

void connection::do_write() {
  phase_ = phase::writing;
  deadline_ = clock::now() + owner_.options().write_timeout;
  asio::async_write(socket_, asio::buffer(session_.output()),
                    [this](error_code ec, std::size_t) { on_write(ec); });
}

void connection::on_write(error_code ec) {
  if (ec) return destroy();
  session_.output().clear();
  try {
    answer();
  } catch (const std::exception&) {
    destroy();
  }
}

// Half-closes, then reads and drops what the client still sends until it closes too.
void connection::do_linger() {
  if (phase_ != phase::lingering) {
    phase_ = phase::lingering;
    deadline_ = clock::now() + linger_timeout;
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
  }
  socket_.async_read_some(session_.discard_and_prepare(),
                          [this](error_code ec, std::size_t) { on_linger(ec); });
}

void connection::on_linger(error_code ec) {
  if (ec) return destroy();
  do_linger();
}

}  // namespace waypoint::beast::detail
