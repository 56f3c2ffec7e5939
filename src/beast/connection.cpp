// The connection's handshake, read, answer, write and linger steps.
#include "connection.hpp"

#include "socket_address.hpp"
#include "tls_context.hpp"
#include "worker.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace waypoint::beast::detail {
namespace {

// A file body is sent in turns of at most this many bytes, each turn going back through the
// reactor, so that one fast reader of a large file cannot keep the thread from its other
// connections. 1 MiB is a few milliseconds of loopback bandwidth.
constexpr std::uint64_t file_turn_bytes = 1024 * 1024;

// Over TLS a file body goes through memory (no kernel TLS here): read this much, encrypt,
// write, repeat. Four TLS records: the write rarely returns before all of them are taken,
// and a connection's memory grows by this much only while it sends a file.
constexpr std::size_t tls_file_chunk_bytes = 64 * 1024;

// The first bytes of every HTTP/2 connection (RFC 9113 §3.4): on a plaintext listener that
// serves HTTP/2, a client opening with them speaks h2c by prior knowledge.
constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

// The first byte of every TLS connection: a handshake record's content type.
constexpr unsigned char tls_handshake_record = 0x16;

// A TLS record's header: content type, version (2 bytes), length (2 bytes).
constexpr std::size_t tls_record_header_bytes = 5;

// The longest record a client may send (RFC 8446 §5.2: 2^14 plus expansion). A header that
// announces more is handed to OpenSSL at once, which refuses it.
constexpr std::size_t max_tls_record_bytes = 16384 + 2048;

// Whether the peer has closed its side: no more bytes will come, and no edge will wake a
// wait for them.
bool peer_finished_sending(int fd) noexcept {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

// sendfile has no MSG_NOSIGNAL: writing to a connection its client has closed raises
// SIGPIPE, whose default action kills the process. So before the first file is sent the
// signal is ignored, unless the program has its own disposition for it (then it is kept,
// and the program is trusted to survive it). Thread-safe: a static's initialisation.
void ignore_sigpipe_once() noexcept {
  static const bool done = [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      ::sigemptyset(&ignore.sa_mask);
      ::sigaction(SIGPIPE, &ignore, nullptr);
    }
    return true;
  }();
  (void)done;
}

}  // namespace

connection::connection(worker& owner, socket_type socket, std::shared_ptr<asio::ssl::context> tls,
                       bool http2)
    : owner_(owner),
      transport_(std::make_unique<transport>(
          std::move(socket), std::move(tls),
          linger_limits{owner.options().linger_timeout, owner.options().max_linger_bytes})),
      session_(owner.environment(), *this),
      http2_(http2) {}

void connection::start(std::list<connection>::iterator self) {
  self_ = self;
  if (transport_->is_tls()) return do_handshake();
  do_read();
}

void connection::refuse(std::list<connection>::iterator self) {
  self_ = self;
  // A 503 over TLS would cost the handshake the server is too loaded to afford.
  if (transport_->is_tls()) return destroy();
  session_.refuse(http::status::service_unavailable,
                  "the server is at its connection limit; try again later");
  answer();
}

// Invariant, between completions: an open connection has an operation pending or a
// deferred response in flight, so something is left to settle() it. Hence close() never
// destroys at once (the worker calls it while walking its list).
void connection::close() noexcept {
  assert(reading_ != read_op::none || writing_ != write_op::none || session_.awaiting_response());
  shut();
}

// A request being read gets its 408: the read is cancelled and its completion answers.
// Anything else past its deadline (idle, a stalled write, a linger) is closed.
void connection::on_deadline(clock::time_point now) noexcept {
  if (now < deadline_) return;
  if (phase_ == phase::waiting && session_.body_read_pending()) {
    deadline_ = clock::time_point::max();
    return deliver_body(session_.fail_body_read(asio::error::timed_out));
  }
  if (phase_ == phase::reading) {
    phase_ = phase::expired;  // counted by the session's expire(), which knows header from body
    error_code ignored;
    transport_->cancel(ignored);
    return;
  }
  if (phase_ == phase::handshaking) owner_.counters().timeout(timeout_kind::tls_handshake);
  if (phase_ == phase::idle) owner_.counters().timeout(timeout_kind::idle);
  if (phase_ == phase::writing) owner_.counters().timeout(timeout_kind::write);
  close();
}

void connection::drain() noexcept {
  if (phase_ == phase::idle || phase_ == phase::handshaking) return close();
  end_stream();
}

// A response being streamed would hold the drain until drain_timeout and then be cut
// without its last chunk, which a client cannot tell from an error. So its writer is told
// to end: the cancellation stops a wait between writes (or the next co_await), later writes
// fail with server_stopping, and its deferred send writes the last chunk (a writer that
// ended by the error has its body cut instead: abort_response). Once per response; for one
// whose head goes out during the drain, at that write's completion.
void connection::end_stream() noexcept {
  if (stream_ended_ || life_ == life::closed || !session_.awaiting_response() ||
      !session_.response_streaming())
    return;
  stream_ended_ = true;
  cancel_.emit(asio::cancellation_type::terminal);
}

// Over TLS the connection first waits for the client's first byte, which tells a TLS hello
// from a plaintext request, then for the hello's whole first record, then makes its TLS
// state and handshakes; all under tls_handshake_timeout. Until the record is there the
// bytes wait in the kernel's buffer, so a client that sends nothing, or part of a hello,
// costs the connection object alone (tls_memory_test).
void connection::do_handshake() {
  phase_ = phase::handshaking;
  deadline_ = clock::now() + owner_.options().tls_handshake_timeout;
  wait_for_hello();
}

void connection::on_hello(error_code ec) {
  reading_ = read_op::none;
  if (ec || life_ == life::closed) return destroy();
  int fd = transport_->socket().native_handle();
  unsigned char header[tls_record_header_bytes] = {};
  ssize_t n = ::recv(fd, header, sizeof header, MSG_PEEK);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return wait_for_hello();
  if (n <= 0) return destroy();
  if (header[0] != tls_handshake_record) return refuse_plaintext();
  // A short header with more to come waits; one the client closed after goes to OpenSSL,
  // which fails it at once (the edge-triggered wait would not wake again).
  if (static_cast<std::size_t>(n) < sizeof header && !peer_finished_sending(fd))
    return wait_for_hello();
  std::size_t record = tls_record_header_bytes + (std::size_t{header[3]} << 8 | header[4]);
  int queued = 0;
  if (record <= max_tls_record_bytes && ::ioctl(fd, FIONREAD, &queued) == 0 &&
      static_cast<std::size_t>(queued) < record && !peer_finished_sending(fd))
    return wait_for_hello();
  // The record is here (or is all there will be: OpenSSL fails the handshake, counted).
  transport_->start_tls(http2_);
  reading_ = read_op::handshake;
  transport_->async_handshake([this](error_code e) { on_handshake(e); });
}

// More of the hello is to come. Asio's reactor is edge-triggered: the wait completes when
// new bytes arrive, not for those already queued.
void connection::wait_for_hello() {
  reading_ = read_op::hello;
  transport_->socket().async_wait(socket_type::wait_read, [this](error_code e) { on_hello(e); });
}

void connection::on_handshake(error_code ec) {
  reading_ = read_op::none;
  if (life_ == life::closed) return settle();
  if (ec) {
    // Closed during the sweep's cut: counted as a timeout there.
    if (ec != asio::error::operation_aborted && ec != asio::error::bad_descriptor) {
      owner_.counters().count(tls_event::handshake_failure);
      if (owner_.tls().first_notice(tls_notice::handshake_failed))
        tls_state::print_notice("a TLS handshake failed: " + ec.message());
    }
    return destroy();
  }
  owner_.counters().count(tls_event::handshake);
  if (transport_->negotiated_h2()) return hand_over_h2();
  do_read();
}

// Plaintext on a TLS port: told so in plaintext, as Go's server does, then closed.
void connection::refuse_plaintext() {
  transport_->drop_tls();
  owner_.counters().count(tls_event::plaintext_on_tls);
  if (owner_.tls().first_notice(tls_notice::plaintext_on_tls_port)) {
    const connection_endpoints& ends = endpoints();
    tls_state::print_notice("a plaintext request on the TLS port " + ends.local.address + ":" +
                            std::to_string(ends.local.port) + " was answered 400");
  }
  session_.refuse(http::status::bad_request,
                  "this port speaks HTTPS: the request was sent as plaintext HTTP");
  answer();
}

// A plaintext connection whose first byte opens a TLS record: the session answers 400, as
// for any bytes that are not HTTP; the mismatch is counted (and told once) here.
// What the first bytes say: a TLS hello on a plaintext port is counted (and answered 400 by
// the session); HTTP/2's preface hands the connection over. Returns false when the
// connection is gone, or waits for more bytes of what may be the preface.
bool connection::note_first_bytes() {
  std::string_view input = session_.input();
  if (http2_ && !transport_->is_tls() && !input.empty() &&
      h2_preface.starts_with(input.substr(0, h2_preface.size()))) {
    if (input.size() >= h2_preface.size()) {
      hand_over_h2();
      return false;
    }
    do_read();  // a prefix of the preface: nothing an HTTP/1.1 request could start with
    return false;
  }
  first_read_ = false;
  if (transport_->is_tls() || input.empty()) return true;
  if (static_cast<unsigned char>(input.front()) != tls_handshake_record) return true;
  owner_.counters().count(tls_event::tls_on_plaintext);
  if (owner_.tls().first_notice(tls_notice::tls_on_plaintext_port)) {
    const connection_endpoints& ends = endpoints();
    tls_state::print_notice("a TLS hello on the plaintext port " + ends.local.address + ":" +
                            std::to_string(ends.local.port) + " was answered 400");
  }
  return true;
}

// The connection speaks HTTP/2: its socket (and TLS), with what was read of it, goes on as
// an h2_connection of the worker's, and this connection is gone.
void connection::hand_over_h2() {
  std::string preread(session_.input());
  connection_endpoints ends = endpoints();
  owner_.adopt_h2(self_, std::move(transport_), std::move(preread),
                  std::move(ends));  // deletes *this
}

// Ends the connection: shut(), then settle().
void connection::destroy() noexcept {
  shut();
  settle();
}

// Closes the socket, once. A deferred response in flight (the client left, or the drain
// ran out) is told: its exchange's cancellation fires, and a pending body read or chunk
// write not on the socket fails; the response still ends through deferred_done(), since
// its request and response live here.
void connection::shut() noexcept {
  if (life_ == life::closed) return;
  life_ = life::closed;
  error_code ignored;
  transport_->close(ignored);
  if (!session_.awaiting_response()) return;
  fail_streams();
  cancel_.emit(asio::cancellation_type::terminal);
}

// The one place that decides whether the connection lives: once its socket is closed,
// the last to finish of its pending read, its pending write and its deferred response
// destroys it. Every completion that finds the connection closed comes here.
void connection::settle() noexcept {
  if (life_ == life::open || reading_ != read_op::none || writing_ != write_op::none ||
      session_.awaiting_response())
    return;
  owner_.remove(self_);  // deletes *this: nothing may follow
}

void connection::do_read() {
  if (!session_.in_request() && owner_.stopping()) return destroy();
  phase_ = session_.in_request() ? phase::reading : phase::idle;
  deadline_ = session_.in_request() ? session_.deadline()
                                    : clock::now() + owner_.options().idle_timeout;
  reading_ = read_op::request;
  transport_->async_read_some(session_.prepare(),
                             [this](error_code ec, std::size_t n) { on_read(ec, n); });
}

void connection::on_read(error_code ec, std::size_t n) {
  reading_ = read_op::none;
  bool expired = phase_ == phase::expired;
  // End of stream, reset, or closed by the sweep.
  if ((ec && !expired) || life_ == life::closed) return destroy();
  if (!ec) session_.commit(n);
  server_counters::add(owner_.counters().bytes_received, n);
  if (first_read_ && !note_first_bytes()) return;
  answer_or_close(expired);
}

// The one place a connection ends on an exception (no memory for a response, a dispatch
// that breaks the session's invariants): whatever answer() throws closes it. `expired`:
// the read deadline passed; what did arrive in time is still answered first.
void connection::answer_or_close(bool expired) {
  try {
    if (expired) {
      session_.process();
      session_.expire();
    }
    answer();
  } catch (const std::exception&) {
    destroy();
  }
}

// Answers every complete request in the input, writes the answers, then reads more (or,
// when the connection is to close, lingers; when a response is deferred, watches).
void connection::answer() {
  for (;;) {
    session_.process();
    bool file = session_.file_pending();
    if (session_.output().empty() && !file) break;
    // An asynchronous write or file send continues, or the connection is gone.
    if (!session_.output().empty() && !write_now()) return;
    if (file && !send_file_now()) return;
  }
  release_held_calls();
  if (session_.upgraded()) return hand_over();
  if (session_.closing()) return do_linger();
  if (session_.awaiting_response()) return watch();
  do_read();
}

// The output is written: a body read or chunk write that waited for it is made now, or,
// when the deferred response has ended meanwhile, refused.
void connection::release_held_calls() {
  if (held_read_done_) {
    body_read_handler done = std::move(held_read_done_);
    held_read_done_ = nullptr;
    read_body(held_read_, std::move(done));
  }
  if (held_chunk_done_) {
    chunk_write_handler done = std::move(held_chunk_done_);
    held_chunk_done_ = nullptr;
    write_chunk(held_chunk_, std::move(done));
  }
}

// Earlier responses of the connection are still being written, from the session's output:
// a 100 Continue or a chunk appended now would be cleared with them (and could move the
// bytes under the write), so a streaming call waits for that write (answer() makes it).
bool connection::output_busy() const noexcept {
  return life_ == life::open && (writing_ == write_op::batch || writing_ == write_op::file);
}

// The request upgraded and every earlier response is written: the socket becomes a
// WebSocket of the worker's, and this connection is gone.
void connection::hand_over() {
  websocket_handoff handoff = session_.take_upgrade();
  handoff.endpoints = endpoints();
  owner_.adopt_websocket(self_, std::move(transport_), std::move(handoff));  // deletes *this
}

// Writes the batch at once when the socket takes it all, the usual case for responses
// that fit in the send buffer: no completion to post and no trip through the reactor.
// Returns true when the output is written; false when an asynchronous write of the rest was
// started or the connection was destroyed (then `this` is gone).
bool connection::write_now() {
  std::string& output = session_.output();
  if (transport_->is_tls()) {  // a TLS record cannot be half sent and taken back
    do_write();
    return false;
  }
  error_code ec;
  // A head whose file follows waits for the file's first bytes to fill its packet.
  asio::socket_base::message_flags flags = session_.file_pending() ? MSG_MORE : 0;
  std::size_t n = transport_->socket().send(asio::buffer(output), flags, ec);
  server_counters::add(owner_.counters().bytes_sent, n);
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
  writing_ = write_op::batch;
  asio::async_write(*transport_, asio::buffer(session_.output()),
                    [this](error_code ec, std::size_t n) {
                      server_counters::add(owner_.counters().bytes_sent, n);
                      on_write(ec);
                    });
}

void connection::on_write(error_code ec) {
  writing_ = write_op::none;
  if (ec || life_ == life::closed) return destroy();
  session_.output().clear();
  answer_or_close();
}

// Sends the pending file body from the page cache until the socket's buffer is full or a
// turn is used up, then waits for the socket to take more. Returns true once the whole
// file is sent; false when a wait was started or the connection was destroyed. Each wait
// may last write_timeout, so a reader that stops is cut, one that keeps reading is not.
bool connection::send_file_now() {
  if (transport_->is_tls()) return send_file_over_tls();
  ignore_sigpipe_once();
  file_payload& file = session_.pending_file();
  std::uint64_t turn = file_turn_bytes;
  while (file.length() > 0 && turn > 0) {
    auto offset = static_cast<off_t>(file.offset());
    std::size_t count = static_cast<std::size_t>(std::min(file.length(), turn));
    ssize_t n = ::sendfile(transport_->socket().native_handle(), file.fd(), &offset, count);
    if (n > 0) {
      server_counters::add(owner_.counters().bytes_sent, static_cast<std::size_t>(n));
      file.advance(static_cast<std::uint64_t>(n));
      turn -= static_cast<std::uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // An error, or the file shrank under us: the response cannot be completed as framed.
    destroy();
    return false;
  }
  if (file.length() == 0) {
    session_.file_sent();
    return true;
  }
  phase_ = phase::writing;
  deadline_ = clock::now() + owner_.options().write_timeout;
  writing_ = write_op::file;
  transport_->socket().async_wait(socket_type::wait_write,
                                 [this](error_code ec) { on_file_writable(ec); });
  return false;
}

// The file body over TLS: one chunk read into memory and written through the cipher per
// call, each write under its own write_timeout like each of sendfile's waits. Returns true
// once the whole file is sent; false when a write was started or the connection destroyed.
bool connection::send_file_over_tls() {
  file_payload& file = session_.pending_file();
  if (file.length() == 0) {
    session_.file_sent();
    file_chunk_.reset();
    return true;
  }
  if (!file_chunk_) file_chunk_ = std::make_unique<char[]>(tls_file_chunk_bytes);
  std::size_t count = static_cast<std::size_t>(
      std::min<std::uint64_t>(file.length(), tls_file_chunk_bytes));
  ssize_t n;
  do {
    n = ::pread(file.fd(), file_chunk_.get(), count, static_cast<off_t>(file.offset()));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {  // an error, or the file shrank under us: the framing cannot be kept
    destroy();
    return false;
  }
  phase_ = phase::writing;
  deadline_ = clock::now() + owner_.options().write_timeout;
  writing_ = write_op::file;
  asio::async_write(*transport_, asio::buffer(file_chunk_.get(), static_cast<std::size_t>(n)),
                    [this](error_code ec, std::size_t written) {
                      server_counters::add(owner_.counters().bytes_sent, written);
                      if (!ec) session_.pending_file().advance(written);
                      on_file_writable(ec);
                    });
  return false;
}

void connection::on_file_writable(error_code ec) {
  writing_ = write_op::none;
  if (ec || life_ == life::closed) return destroy();
  answer_or_close();
}

// While a response is deferred: no deadline (the handler's time is its own), and a read
// that notices the client going away and keeps what it pipelines meanwhile, up to one
// read's worth, so the input stays within its bound.
void connection::watch() {
  if (writing_ == write_op::none) {
    phase_ = phase::waiting;
    // A body read waits for the client, whose time is limited (the body's stall and rate
    // rules); the handler's is not.
    deadline_ = session_.body_read_pending() ? session_.body_read_deadline()
                                             : clock::time_point::max();
  }
  if (reading_ != read_op::none || session_.input_size() >= read_chunk) return;
  reading_ = read_op::watch;
  if (session_.body_streamed()) {
    if (!watch_buffer_) watch_buffer_ = std::make_unique<char[]>(read_chunk);
    transport_->async_read_some(asio::buffer(watch_buffer_.get(), read_chunk),
                            [this](error_code ec, std::size_t n) { on_watch(ec, n, true); });
    return;
  }
  transport_->async_read_some(session_.prepare(),
                          [this](error_code ec, std::size_t n) { on_watch(ec, n, false); });
}

void connection::on_watch(error_code ec, std::size_t n, bool aside) {
  reading_ = read_op::none;
  if (!ec && aside) {
    asio::mutable_buffer room = session_.prepare();
    std::memcpy(room.data(), watch_buffer_.get(), n);
  }
  if (!ec) session_.commit(n);
  server_counters::add(owner_.counters().bytes_received, n);
  if (life_ == life::closed) return settle();
  if (session_.awaiting_response()) {
    if (ec) return destroy();  // end of stream or reset: nobody will read the answer
    if (session_.body_read_pending()) deliver_body(session_.poll_body());
    return watch();
  }
  // The response is done (on_deferred_done cancelled this read, or data came first).
  if (ec && ec != asio::error::operation_aborted) return destroy();
  if (writing_ != write_op::none) return;  // on_stream_write goes on
  answer_or_close();
}

// The dispatch's pending read (and a write not yet in flight) learn the client is gone.
void connection::fail_streams() noexcept {
  try {
    if (body_done_) deliver_body(session_.fail_body_read(asio::error::connection_aborted));
    if (chunk_done_ && writing_ != write_op::stream) {
      asio::post(transport_->get_executor(),
                 [done = std::move(chunk_done_)] { done(asio::error::connection_aborted); });
      chunk_done_ = nullptr;
    }
    if (held_read_done_) {
      asio::post(transport_->get_executor(),
                 [done = std::move(held_read_done_)] { done(asio::error::connection_aborted, 0); });
      held_read_done_ = nullptr;
    }
    if (held_chunk_done_) {
      asio::post(transport_->get_executor(),
                 [done = std::move(held_chunk_done_)] { done(asio::error::connection_aborted); });
      held_chunk_done_ = nullptr;
    }
  } catch (...) {
  }
}

// --- streaming, while a response is deferred ---------------------------------------------

// A coroutine dispatch runs inline until it first waits, so these can be called during the
// dispatch, before the session knows the exchange is deferred and while answer() owns the
// output: they are retried once the dispatch has returned.
void connection::read_body(asio::mutable_buffer into, body_read_handler done) {
  if (session_.dispatching()) {
    asio::post(transport_->get_executor(),
               [this, into, done = std::move(done)]() mutable { read_body(into, std::move(done)); });
    return;
  }
  if (output_busy() && !body_done_ && !held_read_done_) {
    held_read_ = into;
    held_read_done_ = std::move(done);
    return;
  }
  if (life_ == life::closed || body_done_ || held_read_done_) {
    auto why = life_ == life::closed ? asio::error::connection_aborted : asio::error::in_progress;
    asio::post(transport_->get_executor(), [done = std::move(done), why] { done(why, 0); });
    return;
  }
  body_done_ = std::move(done);
  deliver_body(session_.read_body(into));
  if (life_ == life::closed) return;
  flush_while_waiting();  // a 100 Continue the first read sent
  watch();
}

// A body read that is ready completes, always through the executor: its handler may start
// the next read at once, which must not run inside this one.
void connection::deliver_body(http_session::body_read outcome) {
  if (!outcome.ready || !body_done_) return;
  asio::post(transport_->get_executor(),
             [done = std::move(body_done_), outcome] { done(outcome.ec, outcome.bytes); });
  body_done_ = nullptr;
  if (life_ == life::open && reading_ == read_op::none && session_.awaiting_response()) watch();
}

void connection::write_chunk(std::string_view data, chunk_write_handler done) {
  if (session_.dispatching()) {  // as read_body; `data` stays valid until `done`
    asio::post(transport_->get_executor(), [this, data, done = std::move(done)]() mutable {
      write_chunk(data, std::move(done));
    });
    return;
  }
  if (output_busy() && !chunk_done_ && !held_chunk_done_) {
    held_chunk_ = data;
    held_chunk_done_ = std::move(done);
    return;
  }
  error_code why = life_ == life::closed ? error_code(asio::error::connection_aborted)
                  : chunk_done_ || held_chunk_done_ ? error_code(asio::error::in_progress)
                  : stream_ended_ ? error_code(exchange_error::server_stopping)
                                  : session_.write_chunk(data);
  if (why) {
    if (why == exchange_error::body_not_allowed) flush_while_waiting();  // the head
    asio::post(transport_->get_executor(), [done = std::move(done), why] { done(why); });
    return;
  }
  chunk_done_ = std::move(done);
  flush_while_waiting();
  if (writing_ != write_op::stream) {  // nothing to write (an empty chunk): done at once
    asio::post(transport_->get_executor(), [done = std::move(chunk_done_)] { done({}); });
    chunk_done_ = nullptr;
  }
}

void connection::flush_while_waiting() {
  if (writing_ != write_op::none || session_.output().empty()) return;
  writing_ = write_op::stream;
  phase_ = phase::writing;
  deadline_ = clock::now() + owner_.options().write_timeout;
  asio::async_write(*transport_, asio::buffer(session_.output()),
                    [this](error_code ec, std::size_t n) { on_stream_write(ec, n); });
}

void connection::on_stream_write(error_code ec, std::size_t n) {
  writing_ = write_op::none;
  server_counters::add(owner_.counters().bytes_sent, n);
  if (!ec) session_.output().clear();
  if (!ec && owner_.stopping()) end_stream();  // a head that went out during the drain
  if (chunk_done_) {
    asio::post(transport_->get_executor(), [done = std::move(chunk_done_), ec] { done(ec); });
    chunk_done_ = nullptr;
  }
  if (ec) return destroy();
  if (life_ == life::closed) return settle();
  if (session_.awaiting_response()) {
    if (!session_.output().empty()) return flush_while_waiting();
    return watch();
  }
  // The response was done during the write: the watch read's completion goes on.
  if (reading_ == read_op::watch) {
    error_code ignored;
    transport_->cancel(ignored);
    return;
  }
  answer_or_close();
}

void connection::deferred_done() noexcept {
  if (owner_.context().get_executor().running_in_this_thread()) return on_deferred_done();
  asio::post(owner_.context(), [this] { on_deferred_done(); });
}

void connection::on_deferred_done() noexcept {
  session_.deferred_done();
  stream_ended_ = false;
  if (session_.dispatching()) return;  // the session sends it once the dispatch returns
  if (life_ == life::closed) return settle();
  if (writing_ != write_op::none) return;  // on_write, on_file_writable or on_stream_write goes on
  if (reading_ == read_op::watch) {
    error_code ignored;
    transport_->cancel(ignored);  // on_watch goes on with answer()
    return;
  }
  answer_or_close();
}

asio::any_io_executor connection::executor() { return transport_->get_executor(); }

// From the budget the connections share (connection_count::descriptors): any thread.
resource_permit connection::acquire_descriptor() noexcept { return owner_.descriptors().try_acquire(1); }

// A unix peer has no address: it is named by its pid ("unix:4242", as the access log shows
// it), and its credentials are read once, here, so that a TCP connection pays nothing.
const connection_endpoints& connection::endpoints() {
  if (!endpoints_) {
    connection_endpoints ends;
    error_code ec;
    stream_protocol::endpoint local = transport_->socket().local_endpoint(ec);
    if (!ec) ends.local = describe(local);
    ends.local.tls = transport_->is_tls();
    if (!ec && local.protocol().family() == AF_UNIX) {
      ends.peer = credentials_of(transport_->socket().native_handle());
      ends.remote = {"unix:" + (ends.peer ? std::to_string(ends.peer->pid) : std::string()), 0};
    } else {
      stream_protocol::endpoint remote = transport_->socket().remote_endpoint(ec);
      if (!ec) ends.remote = describe(remote);
    }
    endpoints_ = std::move(ends);
  }
  return *endpoints_;
}

// The lingering close (transport::async_linger), so that the answer that closes reaches a
// client still sending instead of a reset; it bounds itself, so no deadline here.
void connection::do_linger() {
  phase_ = phase::lingering;
  deadline_ = clock::time_point::max();
  reading_ = read_op::linger;
  transport_->async_linger([this](error_code) {
    reading_ = read_op::none;
    destroy();
  });
}

}  // namespace waypoint::beast::detail
