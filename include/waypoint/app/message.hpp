// The message types of waypoint::app, and what a coroutine returns: the few names every
// other header of the framework builds on.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

// Declared, not included: only code that writes coroutines needs Asio, and it includes
// waypoint/app/async.hpp (or Asio itself).
namespace boost::asio {
template <typename T, typename Executor>
class awaitable;
class any_io_executor;
}  // namespace boost::asio

namespace waypoint::app {

namespace http = boost::beast::http;

using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

// What a coroutine handler or layer returns: boost::asio::awaitable<T> on Asio's default
// executor, the type `-> boost::asio::awaitable<void>` names.
template <class T = void>
using awaitable = boost::asio::awaitable<T, boost::asio::any_io_executor>;

class application;
class context;

}  // namespace waypoint::app
