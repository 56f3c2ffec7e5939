// A body read as it arrives and a response written in pieces: the context's side of
// exchange_host::read_body and write_chunk, as awaitables.
#include "waypoint/app/application.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <system_error>
#include <utility>

namespace waypoint::app {

namespace asio = boost::asio;
using error_code = boost::system::error_code;

namespace {

// The server's reason a streamed body cannot be read on, as the client's answer; a client
// that is gone gets none, so that is a plain system_error.
[[noreturn]] void throw_body_error(error_code ec) {
  using herr = boost::beast::http::error;
  if (ec == herr::body_limit) throw http_error(413, "the body is longer than this route accepts");
  if (ec == herr::header_limit) throw http_error(431, "the body's trailer section is too large");
  if (ec == asio::error::timed_out)
    throw http_error(408, "the body stalled: no bytes arrived within the server's body timeout");
  if (ec.category() == error_code(herr::body_limit).category())
    throw http_error(400, "the body is not valid HTTP/1.1 chunked framing");
  throw std::system_error(ec, "waypoint::app: the body could not be read");
}

// std::function needs a copyable callable; a coroutine's completion handler is move-only.
template <class Handler>
auto shared_handler(Handler&& handler) {
  return std::make_shared<std::decay_t<Handler>>(std::forward<Handler>(handler));
}

}  // namespace

awaitable<std::size_t> request_view::read_some(std::span<char> into) {
  if (into.empty()) co_return 0;
  if (!body_source_->body_streamed()) {
    const std::string& whole = body();
    std::size_t n = std::min(into.size(), whole.size() - body_read_);
    std::memcpy(into.data(), whole.data() + body_read_, n);
    body_read_ += n;
    co_return n;
  }
  beast::exchange_host* host = body_source_;
  auto token = asio::as_tuple(asio::use_awaitable);
  auto [ec, n] = co_await asio::async_initiate<decltype(token), void(error_code, std::size_t)>(
      [host, into](auto handler) {
        auto shared = shared_handler(std::move(handler));
        host->read_body(asio::buffer(into.data(), into.size()),
                        [shared](error_code ec, std::size_t n) { (*shared)(ec, n); });
      },
      token);
  if (ec) throw_body_error(ec);
  co_return n;
}

// Not a coroutine itself: the encoded piece is awaited at once, so a view of the encoder's
// buffer is enough, and a request without an encoder pays one pointer test.
awaitable<void> context::write_chunk(std::string_view data) {
  if (chunk_encoding_) chunk_encoder_ = std::exchange(chunk_encoding_, nullptr)->open(*this);
  if (chunk_encoder_) data = chunk_encoder_->encode(data, false);
  return send_chunk(data);
}

awaitable<void> context::finish_chunks() {
  std::string_view tail = chunk_encoder_->encode({}, true);
  if (!tail.empty()) co_await send_chunk(tail);
}

awaitable<void> context::send_chunk(std::string_view data) {
  app::response& res = response_.message();
  beast::exchange_host* host = host_;
  auto token = asio::as_tuple(asio::use_awaitable);
  auto [ec] = co_await asio::async_initiate<decltype(token), void(error_code)>(
      [host, data](auto handler) {
        auto shared = shared_handler(std::move(handler));
        host->write_chunk(data, [shared](error_code ec) { (*shared)(ec); });
      },
      token);
  if (ec == asio::error::operation_not_supported) {
    res.body() += data;  // async_handle(): the caller writes the body whole
  } else {
    streamed_ = true;  // the head is out (or on its way): a later error cuts the body
    if (ec) throw std::system_error(ec, "waypoint::app: the response could not be written");
  }
  chunked_bytes_ += data.size();
}

void context::set_trailer(std::string_view name, std::string_view value) {
  if (!trailers_) trailers_ = std::make_unique<http::fields>();
  trailers_->set(name, value);
  host_->set_trailers(*trailers_);
}

}  // namespace waypoint::app
