// The upgraded connection: Beast's handshake on the request the http_session parsed, the
// handler's coroutine, and the close (the handler's, the drain's, or the one after the
// handler returns or throws).
#include "websocket_session.hpp"

#include "transport.hpp"
#include "worker.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <sstream>

namespace waypoint::beast::detail {

namespace websocket = boost::beast::websocket;

// The one place that names the stream's layers: the connection's transport, plain or TLS
// (an AsyncStream with teardown, transport.hpp), by reference: it stays where the
// connection made it, owned by the session.
using websocket_stream_type = websocket::stream<transport&>;

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
      : owner_(owner), transport_(std::move(stream)), ws_(*transport_), handoff_(std::move(handoff)) {}

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
    handoff_.unread.clear();
    ws_.async_accept(boost::asio::buffer(raw_), on_accept);
  }

  void going_away() noexcept {
    if (!accepted_) return close();
    begin_close(close_code::going_away);
  }

  void close() noexcept {
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
      note_closed(code_of_failure(ec, ws_));
      open_ = false;
      co_return false;
    }
    message.binary = ws_.got_binary();
    co_return true;
  }

  // A failed write ends the connection as a failed read does, then throws.
  awaitable<void> write(std::string_view payload, bool binary) override {
    ws_.binary(binary);
    error_code ec;
    co_await ws_.async_write(boost::asio::buffer(payload.data(), payload.size()),
                             boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    if (!ec) co_return;
    note_closed(code_of_failure(ec, ws_));
    open_ = false;
    throw boost::system::system_error(ec);
  }

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
  void configure() {
    websocket::stream_base::timeout t;
    t.handshake_timeout = handoff_.upgrade.options.handshake_timeout;
    t.idle_timeout = handoff_.upgrade.options.idle_timeout;
    t.keep_alive_pings = handoff_.upgrade.options.keep_alive_pings;
    ws_.set_option(t);
    ws_.read_message_max(handoff_.upgrade.options.max_message_bytes);
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
    error_code ignored;
    boost::beast::get_lowest_layer(ws_).close(ignored);
    boost::asio::post(ws_.get_executor(), [this] {
      owner_.remove_websocket(self_);  // deletes *this: nothing may follow
    });
  }

  worker& owner_;
  std::unique_ptr<transport> transport_;
  websocket_stream_type ws_;
  websocket_handoff handoff_;
  std::string raw_;  // the request re-serialised, with the bytes the client sent early
  std::list<websocket_session>::iterator self_;
  boost::asio::cancellation_signal handler_cancel_;  // bound to the handler's coroutine
  boost::asio::cancellation_signal host_cancel_;     // host().cancellation_slot()
  int pending_ = 0;  // the handler's coroutine and the drain's close, while they run
  bool accepted_ = false;
  bool handler_done_ = false;
  bool open_ = false;
  bool closing_ = false;
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
