// The exchange a dispatch sees, and the handle that sends a deferred response.
#include "waypoint/beast/adapter.hpp"
#include "waypoint/beast/server.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/error.hpp>

#include <unistd.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace waypoint::beast {

boost::asio::any_io_executor exchange::executor() const { return host_->executor(); }

boost::asio::cancellation_slot exchange::cancellation_slot() const {
  return host_->cancellation_slot();
}

namespace {
class exchange_category_impl final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "waypoint.exchange"; }
  std::string message(int value) const override {
    switch (static_cast<exchange_error>(value)) {
      case exchange_error::body_not_allowed:
        return "the response carries no body (HEAD, 1xx, 204 or 304)";
      case exchange_error::server_stopping:
        return "the server is stopping: the streamed response is to end";
    }
    return "unknown exchange error";
  }
};
}  // namespace

const boost::system::error_category& exchange_category() noexcept {
  static const exchange_category_impl category;
  return category;
}

void exchange_host::read_body(boost::asio::mutable_buffer, body_read_handler done) {
  done(boost::asio::error::operation_not_supported, 0);
}

void exchange_host::write_chunk(std::string_view, chunk_write_handler done) {
  done(boost::asio::error::operation_not_supported);
}

deferred_send exchange::defer() {
  if (deferred_) throw std::logic_error("waypoint: exchange deferred twice");
  deferred_ = true;
  return deferred_send(host_, response_);
}

file_payload& file_payload::operator=(file_payload&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    offset_ = other.offset_;
    length_ = other.length_;
    permit_ = std::move(other.permit_);
  }
  return *this;
}

void file_payload::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  offset_ = 0;
  length_ = 0;
  permit_.reset();
}

deferred_send& deferred_send::operator=(deferred_send&& other) noexcept {
  if (this != &other) {
    deferred_send dropped(std::move(*this));
    host_ = std::exchange(other.host_, nullptr);
    res_ = other.res_;
  }
  return *this;
}

deferred_send::~deferred_send() {
  if (!host_) return;
  try {
    res_->base() = response::header_type();
    write_plain_error(http::status::internal_server_error,
                      "the handler dropped its deferred response", *res_);
  } catch (...) {
    res_->base() = response::header_type();
    res_->result(http::status::internal_server_error);
    res_->body().clear();
  }
  send();
}

void deferred_send::send() noexcept {
  if (exchange_host* host = std::exchange(host_, nullptr)) host->deferred_done();
}

}  // namespace waypoint::beast
