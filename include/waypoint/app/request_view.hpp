// The request as a handler reads it: method, path, host, headers, body, the route that
// matched and its path values, and the query (parsed on first use, percent-decoded). A
// base of context; nothing here allocates except the query's cold spill path.
//
//   auto id = ctx.path_value<std::int64_t>("id");   // 400 problem when not a number
//   auto verbose = ctx.query("verbose");              // std::optional<std::string_view>
#pragma once

#include "waypoint/app/http_error.hpp"
#include "waypoint/app/message.hpp"
#include "waypoint/beast/adapter.hpp"
#include "waypoint/router.hpp"

#include <boost/beast/http/field.hpp>

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace waypoint::beast {
class exchange_host;
}

namespace waypoint::app {

class route_entry;  // a registered route (application.hpp)

// One decoded query parameter: "a+b=c%26d" gives name "a b", value "c&d".
struct query_param {
  std::string_view name;
  std::string_view value;
};

namespace detail {

// The query split into decoded parameters on first use. Decoded text is never longer than
// the raw query, so one buffer of the query's size holds all of it.
class query_index {
 public:
  // Sixteen parameters and 512 bytes cover API queries (filters, paging, sort); longer
  // queries spill to the heap once per request.
  static constexpr std::size_t inline_params = 16;
  static constexpr std::size_t inline_bytes = 512;

  std::span<const query_param> params(std::string_view raw);

 private:
  void parse(std::string_view raw);
  void push(query_param p);

  // Left unconstructed until parse() fills it: a context is built per request and most
  // requests never read their query.
  union inline_storage {
    inline_storage() noexcept {}
    query_param items[inline_params];
  };

  bool parsed_ = false;
  std::size_t count_ = 0;
  inline_storage params_;
  std::vector<query_param> spilled_params_;  // every parameter, once there are too many
  char bytes_[inline_bytes];
  std::unique_ptr<char[]> spilled_bytes_;
};

// Parses `text` as a T (integers and floating-point numbers in full, "true"/"false",
// strings as they are); false when it is not one.
template <class T>
bool parse_text(std::string_view text, T& out) noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    if (text == "true") return out = true, true;
    if (text == "false") return out = false, true;
    return false;
  } else if constexpr (std::is_arithmetic_v<T>) {
    if (text.empty()) return false;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc() && ptr == end;
  } else if constexpr (std::is_constructible_v<T, std::string_view>) {
    out = T(text);
    return true;
  } else {
    static_assert(std::is_arithmetic_v<T>,
                  "path and query values convert to numbers, "
                  "bool, std::string or std::string_view");
    return false;
  }
}

// Throws the 400 http_error for a path, query, header or cookie value that is not a `T`
// ("query parameter \"limit\" must be an integer in range, not \"ten\""; the text clipped).
[[noreturn]] void throw_bad_value(std::string_view where, std::string_view name,
                                  std::string_view text, std::string_view expected);

template <class T>
constexpr std::string_view expected_name() noexcept {
  if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_integral_v<T>)
    return "an integer in range";
  else if constexpr (std::is_floating_point_v<T>)
    return "a number";
  else
    return "text";
}

}  // namespace detail

class request_view {
 public:
  request_view(const request_view&) = delete;
  request_view& operator=(const request_view&) = delete;

  const app::request& request() const noexcept { return *request_; }
  std::string_view method() const noexcept { return request_->method_string(); }
  // The escaped path as on the request line, without the query.
  std::string_view path() const noexcept { return outcome_.path; }
  // The host routed on (from the target or the Host field); may carry a port.
  std::string_view host() const noexcept { return outcome_.host; }
  // The first value of a request header field, empty when absent.
  std::string_view header(std::string_view name) const noexcept;
  std::string_view header(http::field name) const noexcept;
  // The whole body; empty for a route that streams it (route_body::streamed). After
  // replace_body(), the replacement.
  const std::string& body() const noexcept {
    return replaced_body_ ? *replaced_body_ : request_->body();
  }
  // For a layer that decodes the whole body before the handler reads it (compression(),
  // which undoes a Content-Encoding): body() and read_some() give `decoded` from now on.
  // The request's header fields are left as they came.
  void replace_body(std::string decoded);

  // --- the body as it arrives (coroutine handlers; docs/files.md) ------------------------
  // The next body bytes, up to into.size(); 0 once the body is complete. A route that
  // streams its body (route_body::streamed, served by waypoint::app::serve or
  // options_for()) gets them as they arrive; any other, the same over body(). Throws
  // http_error when the body cannot be read on: 413 (longer than the route accepts), 431
  // (trailers too large), 408 (it stalled for the server's body_timeout), 400 (bad chunked
  // framing) — the connection closes after the answer — or std::system_error when the
  // client has gone. An `Expect: 100-continue` is answered by the first call, so a handler
  // that refuses without reading spares the client the upload.
  awaitable<std::size_t> read_some(std::span<char> into);

  // --- routing -----------------------------------------------------------------------
  // How the request was routed (waypoint/beast/adapter.hpp): `kind` is matched when a
  // route's handler runs; otherwise what the app answers from: `allow` for a 405 (GET
  // implies HEAD), `reason` for a 400, the redirect's target. Also the path, raw query
  // (after '?', empty when none) and host routed on.
  const beast::route_outcome& outcome() const noexcept { return outcome_; }
  // The matched route's pattern as registered (group prefix included): its text(), e.g.
  // "GET api.example.com/v1/users/{id}", and its wildcard_names() in order. An empty
  // pattern (text() "") when no route matched.
  const waypoint::pattern& route_pattern() const noexcept;
  // The route that matched, with what features attached to it (route_entry,
  // application.hpp); null when none did.
  const route_entry* matched_route() const noexcept {
    return outcome_.matched() && match_.route() ? match_.handler() : nullptr;
  }

  // --- path values -------------------------------------------------------------------
  // The percent-decoded value of wildcard `name`; throws std::logic_error (a 500: a
  // programming error) when the matched route has no such wildcard (a handler shared by
  // routes finds which it has in route_pattern().wildcard_names()).
  std::string_view path_value(std::string_view name) const;
  // The value converted to T; throws a 400 http_error naming the value when it does not
  // convert ("/users/abc" for path_value<std::int64_t>("id")).
  template <class T>
  T path_value(std::string_view name) const {
    std::string_view text = path_value(name);
    T value{};
    if (!detail::parse_text(text, value))
      detail::throw_bad_value("path value", name, text, detail::expected_name<T>());
    return value;
  }

  // --- query -------------------------------------------------------------------------
  // (The raw query is outcome().query.) Every parameter in order, names and values
  // percent-decoded ('+' is a space).
  std::span<const query_param> query() { return query_index_.params(outcome_.query); }
  // The first value of `name`; nullopt when absent ("?flag" gives an empty value).
  std::optional<std::string_view> query(std::string_view name);
  // The first value of `name` converted to T; nullopt when absent, a 400 http_error when
  // present but not a T.
  template <class T>
  std::optional<T> query(std::string_view name) {
    std::optional<std::string_view> text = query(name);
    if (!text) return std::nullopt;
    T value{};
    if (!detail::parse_text(*text, value))
      detail::throw_bad_value("query parameter", name, *text, detail::expected_name<T>());
    return value;
  }

 protected:
  // `body_source` null: set before the body is read (a context planned at the header).
  request_view(const app::request& req, beast::exchange_host* body_source) noexcept
      : request_(&req), body_source_(body_source) {}
  ~request_view() = default;

  // Lends the match the storage this request's path needs (match_storage_bytes): the
  // view's own for a path of up to 511 bytes, else a block of the heap for this request
  // alone. So a pooled context keeps about 1 KiB rather than the 16 KiB the longest path
  // would need. Without memory for the block the router refuses the long path (400).
  void fit_match_storage() noexcept;

  const app::request* request_;
  beast::exchange_host* body_source_;  // where a streamed body is read from
  // Set by application::route() before any layer runs; for a target that did not
  // resolve, its path is the target up to any '?' (a query may carry secrets), for logs.
  beast::route_outcome outcome_;
  basic_match_result<const route_entry*, 0> match_;
  std::array<char, match_storage_bytes(511)> match_storage_;
  std::unique_ptr<char[]> long_match_storage_;
  std::size_t long_match_storage_size_ = 0;
  detail::query_index query_index_;
  std::size_t body_read_ = 0;  // read_some() over a whole body: where it is
  std::unique_ptr<std::string> replaced_body_;  // replace_body(); null for nearly every request
};

}  // namespace waypoint::app
