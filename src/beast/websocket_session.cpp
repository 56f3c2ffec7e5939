// The upgraded connection: Beast's handshake on the request the http_session parsed, the
// handler's coroutine, and the close (the handler's, the drain's, or the one after the
// handler returns or throws).
#include "websocket_session.hpp"

#include "transport.hpp"
#include "websocket_wire.hpp"
#include "worker.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <deque>
#include <sstream>

namespace waypoint::beast::detail {

namespace websocket = boost::beast::websocket;

// The one place that names the stream's layers: the wire that counts the client's frames
// and the kernel's progress on writes (websocket_wire.hpp), over the connection's transport,
// plain or TLS (an AsyncStream with teardown, transport.hpp); both by reference: they stay
// where the session made them.
using websocket_stream_type = websocket::stream<websocket_wire&>;

namespace {

template <class T>
using awaitable = boost::asio::awaitable<T, boost::asio::any_io_executor>;

// The response fields that are the handshake's own: Beast writes them, a handler's copy
// would contradict them.
bool handshake_field(http::field name) noexcept {
  switch (name) {
    case http::field::connection:
    case http::field::upgrade:
    case http::field::sec_websocket_accept:
    case http::field::sec_websocket_extensions:
    case http::field::content_length:
    case http::field::transfer_encoding:
      return true;
    default:
      return false;
  }
}

// Why a read ended, as the close code the connection ended with. Beast sends the frame
// itself for the codes it fails a connection with (RFC 6455 §7.1.7).
close_code code_of_failure(const error_code& ec, const websocket_stream_type& ws) noexcept {
  if (ec == websocket::error::closed)
    return ws.reason().code == websocket::close_code::none
               ? close_code::no_status
               : static_cast<close_code>(ws.reason().code);
  if (ec == websocket::error::message_too_big) return close_code::too_big;
  if (ec == websocket::error::bad_frame_payload) return close_code::bad_payload;
  if (ec == websocket::condition::protocol_violation) return close_code::protocol_error;
  return close_code::abnormal;
}

}  // namespace

class websocket_session::impl final : public websocket_channel, public exchange_host {
 public:
  impl(worker& owner, std::unique_ptr<transport> stream, websocket_handoff handoff)
      : owner_(owner),
        transport_(std::move(stream)),
        handoff_(std::move(handoff)),
        wire_(*transport_, handoff_.upgrade.options.max_message_frames),
        ws_(wire_),
        write_timer_(transport_->get_executor()) {}

  void start(std::list<websocket_session>::iterator self) {
    self_ = self;
    configure();
    auto on_accept = [this](error_code ec) { on_accepted(ec); };
    if (handoff_.unread.empty()) {
      ws_.async_accept(handoff_.upgrade_request, on_accept);
      return;
    }
    // A client that sent frames before the 101: Beast takes them with the request's
    // bytes, in its read buffer (which holds about 1.5 KiB: a larger header then fails).
    std::ostringstream raw;
    raw << handoff_.upgrade_request.base();
    raw_ = raw.str() + handoff_.unread;
    wire_.observe(handoff_.unread);  // frames Beast takes from raw_, not through the wire
    handoff_.unread.clear();
    ws_.async_accept(boost::asio::buffer(raw_), on_accept);
  }

  void going_away() noexcept {
    if (!accepted_) return close();
    begin_close(close_code::going_away);
  }

  void close() noexcept {
    write_timer_.cancel();
    // Writes waiting for their turn wake without it, and throw.
    for (write_turn* waiting : write_waiters_) waiting->signal.cancel();
    error_code ignored;
    boost::beast::get_lowest_layer(ws_).close(ignored);
    stop_handler();
  }

  // websocket_channel
  awaitable<std::optional<websocket_message>> read() override {
    websocket_message message;
    if (!co_await read(message)) co_return std::nullopt;
    co_return message;
  }

  awaitable<bool> read(websocket_message& message) override {
    message.payload.clear();
    if (!open_) co_return false;
    error_code ec;
    auto buffer = boost::asio::dynamic_buffer(message.payload);
    co_await ws_.async_read(buffer, boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    if (ec) {
      if (wire_.frame_limit_exceeded()) co_return co_await refuse_fragments();
      note_closed(code_of_failure(ec, ws_));
      open_ = false;
      co_return false;
    }
    message.binary = ws_.got_binary();
    co_return true;
  }

  // Writes queue behind the one being sent, within max_queued_bytes; a failed write ends
  // the connection as a failed read does, then throws.
  awaitable<void> write(std::string_view payload, bool binary) override {
    const websocket_options& options = handoff_.upgrade.options;
    if (writing_ && queued_bytes_ + payload.size() > options.max_queued_bytes) {
      // The peer is not taking what it is sent: dropping this message would hand it a
      // stream with a hole, so the connection goes.
      note_closed(close_code::abnormal);
      open_ = false;
      cut_stalled();
      throw boost::system::system_error(boost::asio::error::no_buffer_space);
    }
    // The session outlives every write under way: finish() waits for the last, as it waits
    // for the handler (a write of another coroutine may resume after the handler returned).
    ++pending_;
    pending_guard still{*this};
    queued_bytes_ += payload.size();
    queued_bytes_guard queued{queued_bytes_, payload.size()};
    if (writing_) co_await wait_for_turn();
    writing_ = true;  // already, when the turn was handed over
    start_write_timer();
    ws_.binary(binary);
    error_code ec;
    co_await ws_.async_write(boost::asio::buffer(payload.data(), payload.size()),
                             boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    write_timer_.cancel();
    hand_over_turn();
    if (!ec) co_return;
    if (write_timed_out_) ec = boost::beast::error::timeout;
    note_closed(code_of_failure(ec, ws_));
    open_ = false;
    throw boost::system::system_error(ec);
  }

  std::size_t queued_bytes() const noexcept override { return queued_bytes_; }

  awaitable<void> close(close_code code, std::string_view reason) override {
    if (!open_ || closing_) co_return;
    closing_ = true;
    note_closed(code);
    error_code ec;
    co_await ws_.async_close(close_reason(code, reason),
                             boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    open_ = false;
  }

  close_code closed_with() const noexcept override { return code_; }
  bool is_open() const noexcept override { return open_; }
  const beast::request& request() const noexcept override { return handoff_.upgrade_request; }
  beast::response& response() noexcept override { return handoff_.upgrade_response; }
  exchange_host& host() noexcept override { return *this; }

  // exchange_host
  boost::asio::any_io_executor executor() override { return ws_.get_executor(); }
  const connection_endpoints& endpoints() override { return handoff_.endpoints; }
  boost::asio::cancellation_slot cancellation_slot() override { return host_cancel_.slot(); }
  void deferred_done() noexcept override {}

 private:
  // A write waiting behind another: woken (`ready`) by hand_over_turn(), which makes it the
  // writer; a wake without `ready` is the handler's cancellation.
  struct write_turn {
    timer_type signal;
    bool ready = false;
  };

  struct pending_guard {
    impl& session;
    ~pending_guard() {
      if (--session.pending_ == 0) session.finish();
    }
  };

  struct queued_bytes_guard {
    std::size_t& total;
    std::size_t bytes;
    ~queued_bytes_guard() { total -= bytes; }
  };

  awaitable<void> wait_for_turn() {
    write_turn turn{timer_type(transport_->get_executor(), timer_type::time_point::max())};
    write_waiters_.push_back(&turn);
    error_code ec;
    co_await turn.signal.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    if (turn.ready) co_return;
    std::erase(write_waiters_, &turn);
    throw boost::system::system_error(boost::asio::error::operation_aborted);
  }

  // The write is done: the next waiting write becomes the writer (writing_ stays true, so
  // that no new write slips in before it resumes), or none is.
  void hand_over_turn() noexcept {
    if (write_waiters_.empty()) {
      writing_ = false;
      return;
    }
    write_turn* next = write_waiters_.front();
    write_waiters_.pop_front();
    next->ready = true;
    next->signal.cancel();
  }

  // The write timeout: a write that hands the kernel nothing for write_timeout (the wire
  // notes each byte taken) cuts the connection.
  void start_write_timer() {
    wire_.note_write_start();
    write_timer_.expires_after(handoff_.upgrade.options.write_timeout);
    write_timer_.async_wait([this](error_code ec) { on_write_timer(ec); });
  }

  void on_write_timer(error_code ec) {
    if (ec) return;  // cancelled: the write ended (the session may be gone: touch nothing)
    if (!writing_) return;
    auto deadline = wire_.last_write_progress() + handoff_.upgrade.options.write_timeout;
    if (websocket_wire::clock::now() < deadline) {
      write_timer_.expires_at(deadline);
      write_timer_.async_wait([this](error_code e) { on_write_timer(e); });
      return;
    }
    write_timed_out_ = true;
    note_closed(close_code::abnormal);
    cut_stalled();
  }

  // Cuts a connection whose peer does not read. A plain close would leave the bytes in the
  // kernel's send buffer to an orphaned socket that keeps trying to deliver them (and its
  // FIN) into a zero window; with SO_LINGER 0 the close is a reset, and the kernel lets go
  // of them at once.
  void cut_stalled() noexcept {
    error_code ignored;
    transport_->socket().set_option(boost::asio::socket_base::linger(true, 0), ignored);
    close();
  }

  // A message of more frames than max_message_frames: Beast's stream failed on the wire's
  // error, so the close frame (1008, unmasked from the server, RFC 6455 §5.5.1) is written
  // here, unless a write of the handler is under way (its frame may be half sent), then the
  // connection is cut.
  awaitable<bool> refuse_fragments() {
    note_closed(close_code::policy_error);
    open_ = false;
    if (!writing_ && !closing_) {
      static constexpr std::string_view frame = "\x88\x14\x03\xf0too many fragments";
      static_assert(frame.size() == 2 + 0x14);
      writing_ = true;
      start_write_timer();
      error_code ec;
      co_await boost::asio::async_write(wire_, boost::asio::buffer(frame),
                                        boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      write_timer_.cancel();
      hand_over_turn();
      // The lingering close, as after Beast's own close frames, so that the peer reads the
      // frame: a close with its unread frames still here would be a reset, which may
      // discard it. It bounds itself (server_options::linger_timeout, max_linger_bytes).
      if (!ec) {
        auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
        co_await boost::asio::async_initiate<decltype(token), void(error_code)>(
            [this](auto handler) { wire_.async_linger(done_handler(std::move(handler))); },
            token);
      }
    }
    close();
    co_return false;
  }

  void configure() {
    websocket::stream_base::timeout t;
    t.handshake_timeout = handoff_.upgrade.options.handshake_timeout;
    t.idle_timeout = handoff_.upgrade.options.idle_timeout;
    t.keep_alive_pings = handoff_.upgrade.options.keep_alive_pings;
    ws_.set_option(t);
    ws_.read_message_max(handoff_.upgrade.options.max_message_bytes);
    if (const websocket_options& o = handoff_.upgrade.options; o.permessage_deflate) {
      websocket::permessage_deflate deflate;
      deflate.server_enable = true;
      deflate.server_max_window_bits = o.deflate_window_bits;
      deflate.client_max_window_bits = o.deflate_window_bits;
      deflate.memLevel = o.deflate_mem_level;
      ws_.set_option(deflate);
    }
    // The fields the dispatch set (a request id, cookies) go out with the 101; Beast's
    // Server field only when the dispatch named none.
    const beast::response* fields = &handoff_.upgrade_response;
    ws_.set_option(websocket::stream_base::decorator([fields](websocket::response_type& res) {
      res.erase(http::field::server);
      for (const auto& field : *fields) {
        if (handshake_field(field.name())) continue;
        res.insert(field.name_string(), field.value());
      }
    }));
  }

  void on_accepted(error_code ec) {
    if (ec) return finish();  // Beast answered the bad handshake (or the client left)
    accepted_ = true;
    open_ = true;
    if (owner_.stopping()) begin_close(close_code::going_away);
    ++pending_;
    boost::asio::co_spawn(ws_.get_executor(), run_handler(),
                          boost::asio::bind_cancellation_slot(
                              handler_cancel_.slot(),
                              [this](std::exception_ptr) { on_handler_done(); }));
  }

  // The handler, then the close it left to us: 1000 when it returned, 1011 when it threw.
  awaitable<void> run_handler() {
    close_code last = close_code::normal;
    try {
      co_await handoff_.upgrade.run(*this);
    } catch (...) {
      last = close_code::internal_error;
    }
    if (open_ && !closing_) co_await close(last, {});
  }

  void on_handler_done() {
    --pending_;
    handler_done_ = true;
    handoff_.upgrade.run = nullptr;  // what it holds (a framework's context) goes now
    if (pending_ == 0) finish();
  }

  // The connection is closed or cut: a handler that awaits something else (a timer, a
  // client of its own) is cancelled rather than left running on a dead connection.
  void stop_handler() noexcept {
    if (!handler_done_) handler_cancel_.emit(boost::asio::cancellation_type::terminal);
    host_cancel_.emit(boost::asio::cancellation_type::terminal);
  }

  // The drain's close, alongside whatever the handler awaits.
  void begin_close(close_code code) noexcept {
    if (!open_ || closing_) return;
    closing_ = true;
    note_closed(code);
    ++pending_;
    try {
      ws_.async_close(close_reason(code, {}), [this](error_code) {
        open_ = false;
        if (--pending_ == 0) return finish();
        stop_handler();
      });
    } catch (...) {
      --pending_;
      close();
    }
  }

  static websocket::close_reason close_reason(close_code code, std::string_view reason) {
    websocket::close_reason r(static_cast<websocket::close_code>(code));
    r.reason.assign(reason.data(), std::min<std::size_t>(reason.size(), 123));
    return r;
  }

  // The first code is the one the connection ended with.
  void note_closed(close_code code) noexcept {
    if (code_ == close_code::none) code_ = code;
  }

  // Posted, so that the stream is not destroyed inside one of its own completions.
  void finish() noexcept {
    open_ = false;
    write_timer_.cancel();
    error_code ignored;
    boost::beast::get_lowest_layer(ws_).close(ignored);
    boost::asio::post(ws_.get_executor(), [this] {
      owner_.remove_websocket(self_);  // deletes *this: nothing may follow
    });
  }

  worker& owner_;
  std::unique_ptr<transport> transport_;
  websocket_handoff handoff_;
  websocket_wire wire_;
  websocket_stream_type ws_;
  timer_type write_timer_;  // the write timeout, while writing_
  std::deque<write_turn*> write_waiters_;  // writes queued behind the one being sent
  std::size_t queued_bytes_ = 0;  // payload bytes of writes accepted and not complete
  std::string raw_;  // the request re-serialised, with the bytes the client sent early
  std::list<websocket_session>::iterator self_;
  boost::asio::cancellation_signal handler_cancel_;  // bound to the handler's coroutine
  boost::asio::cancellation_signal host_cancel_;     // host().cancellation_slot()
  int pending_ = 0;  // the handler's coroutine, the drain's close and writes, while they run
  bool accepted_ = false;
  bool handler_done_ = false;
  bool open_ = false;
  bool closing_ = false;
  bool writing_ = false;  // a write (the handler's, or the refusal's close frame) is sent
  bool write_timed_out_ = false;
  close_code code_ = close_code::none;
};

websocket_session::websocket_session(worker& owner, std::unique_ptr<transport> stream,
                                     websocket_handoff handoff)
    : impl_(std::make_unique<impl>(owner, std::move(stream), std::move(handoff))) {}

websocket_session::~websocket_session() = default;

void websocket_session::start(std::list<websocket_session>::iterator self) { impl_->start(self); }
void websocket_session::going_away() noexcept { impl_->going_away(); }
void websocket_session::close() noexcept { impl_->close(); }

}  // namespace waypoint::beast::detail
