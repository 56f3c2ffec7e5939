// One accepted socket and its http_session: reads, writes, deadlines and the linger after
// a close. What the bytes mean is the session's business; this moves them.
#pragma once

#include "asio_types.hpp"

#include <list>

namespace waypoint::beast::detail {

class worker;

// One accepted socket and its session. Exactly one asynchronous operation is pending at
// any time (a read, a write or a lingering read), so whoever closes the socket knows that
// the operation's completion will destroy the connection.
class connection {
 public:
  connection(worker& owner, socket_type socket);
  void start(std::list<connection>::iterator self);
  // Answers 503 without reading a request, then closes.
  void refuse(std::list<connection>::iterator self);

  // For the worker's sweep and shutdown, on the connection's thread.
  void on_deadline(clock::time_point now) noexcept;
  void close_if_idle() noexcept;
  void close() noexcept;

 private:
  enum class phase : std::uint8_t { idle, reading, writing, lingering };

  void do_read();
  void on_read(error_code ec, std::size_t n);
  void answer();
  bool write_now();
  void do_write();
  void on_write(error_code ec);
  void do_linger();
  void on_linger(error_code ec);
  void destroy() noexcept;

  worker& owner_;
  socket_type socket_;
  std::list<connection>::iterator self_;
  http_session session_;
  clock::time_point deadline_;
  phase phase_ = phase::idle;
  bool expired_ = false;  // the read was cancelled because the request ran out of time
};

}  // namespace waypoint::beast::detail
