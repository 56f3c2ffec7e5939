// request_parser: one request's parser, from its request line to its last chunk's trailers.
// Beast's basic_parser frames everything (request line, fields, Content-Length or chunked
// body with its size lines, extensions, trailers, and the body limit); this class only
// says where the bytes go, as Beast's http::parser<true, string_body> would: fields into a
// `request`, body bytes into its string, except that a body the dispatch streams
// (stream_body()) goes into the reader's buffer (body_sink()) as Beast's buffer_body would.
// So a streamed body is read by the parser that read its header: nothing is re-framed, and
// no second parser needs to be told the framing by a made-up header.
#pragma once

#include "waypoint/beast/server.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace waypoint::beast::detail {

class request_parser final : public http::basic_parser<true> {
 public:
  request& get() noexcept { return request_; }
  request release() noexcept { return std::move(request_); }

  // From now on body bytes go to body_sink(), not the request's string. Before any body byte.
  void stream_body() noexcept { streamed_ = true; }
  // Where streamed body bytes go: advanced past each byte written. When it is full (or
  // empty), put() stops with error::need_buffer, consuming nothing more.
  boost::asio::mutable_buffer& body_sink() noexcept { return sink_; }

  // Chunked: data bytes of the current chunk not parsed yet, and whether a chunk-size line
  // has been (after one, a chunk's data ends with a CRLF before the next line).
  std::uint64_t chunk_left() const noexcept { return chunk_left_; }
  bool chunk_seen() const noexcept { return chunk_seen_; }
  // The trailer section held a Host field, which the parse refused.
  bool trailer_host() const noexcept { return trailer_host_; }

 private:
  using error_code = boost::system::error_code;

  void on_request_impl(http::verb method, boost::beast::string_view method_string,
                       boost::beast::string_view target, int version, error_code&) override {
    request_.target(target);
    if (method != http::verb::unknown)
      request_.method(method);
    else
      request_.method_string(method_string);
    request_.version(static_cast<unsigned>(version));
  }

  void on_response_impl(int, boost::beast::string_view, int, error_code&) override {}

  void on_field_impl(http::field name, boost::beast::string_view name_string,
                     boost::beast::string_view value, error_code& ec) override {
    // A trailer field joins the header's, as Beast merges them; Host may not (RFC 9110
    // §6.5.1): the request was routed by the header's, at its end.
    if (this->is_header_done() && name == http::field::host) {
      trailer_host_ = true;
      ec = http::error::bad_field;
      return;
    }
    request_.insert(name, name_string, value);
  }

  void on_header_impl(error_code& ec) override { ec = {}; }

  // As string_body's reader: room for the announced length (basic_parser has checked it
  // against the body limit).
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code& ec) override {
    ec = {};
    if (!streamed_ && length) request_.body().reserve(static_cast<std::size_t>(*length));
  }

  std::size_t on_body_impl(boost::beast::string_view body, error_code& ec) override {
    return take(body, ec);
  }

  void on_chunk_header_impl(std::uint64_t size, boost::beast::string_view,
                            error_code& ec) override {
    ec = {};
    chunk_left_ = size;
    chunk_seen_ = true;
  }

  std::size_t on_chunk_body_impl(std::uint64_t remain, boost::beast::string_view body,
                                 error_code& ec) override {
    std::size_t taken = take(body, ec);
    chunk_left_ = remain - taken;
    return taken;
  }

  void on_finish_impl(error_code& ec) override { ec = {}; }

  // Body bytes: appended to the request's string, or copied into the sink as far as it has
  // room (need_buffer for the rest, as buffer_body's reader).
  std::size_t take(boost::beast::string_view body, error_code& ec) {
    ec = {};
    if (!streamed_) {
      request_.body().append(body.data(), body.size());
      return body.size();
    }
    std::size_t n = std::min(sink_.size(), body.size());
    if (n > 0) std::memcpy(sink_.data(), body.data(), n);
    sink_ += n;
    if (n < body.size()) ec = http::error::need_buffer;
    return n;
  }

  request request_;
  boost::asio::mutable_buffer sink_;  // the streamed body's destination; empty: none
  std::uint64_t chunk_left_ = 0;
  bool chunk_seen_ = false;
  bool streamed_ = false;
  bool trailer_host_ = false;
};

}  // namespace waypoint::beast::detail
