// libFuzzer target for the Beast adapter: arbitrary bytes become a request two ways, and
// every response the adapter builds must be safe to send.
//   1. Programmatically: up to the first NUL is the target, up to the second the Host value, set on
//   a
//      Beast request without Beast's parser, so the adapter's own checks (control bytes,
//      target forms, Host) are all that stands between the bytes and a response header.
//   2. Through Beast's request parser, as a server would receive them.
// Properties: no crash or sanitizer report; no response field holds CR, LF or NUL; a
// Location is a path ("/..." but never "//", which a browser would read as another host).
#include <waypoint/beast/adapter.hpp>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace {

namespace http = boost::beast::http;
using fuzz_router = waypoint::basic_router<int>;

const fuzz_router& routes() {
  static const fuzz_router r = [] {
    fuzz_router r;
    r.add("GET /users/{id}", 1);
    r.add("GET /users/me", 2);
    r.add("POST /users/", 3);
    r.add("GET /files/{path...}", 4);
    r.add("api.example.com/v1/{x}/{$}", 5);
    r.add("DELETE /users/{id}", 6);
    r.freeze();
    return r;
  }();
  return r;
}

void require(bool property) {
  if (!property) std::abort();
}

bool holds_line_break(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

template <class Body>
void route_and_check(const http::request<Body>& req) {
  static auto result = std::make_unique<fuzz_router::match_result>();
  waypoint::beast::route_outcome o = waypoint::beast::route(routes(), req, *result);
  if (o.matched()) {
    require(result->handler() >= 1 && result->handler() <= 6);
    return;
  }
  http::response<http::string_body> res;
  waypoint::beast::prepare_response(o, res);
  for (const auto& f : res) require(!holds_line_break(f.value()));
  std::string_view location = res[http::field::location];
  if (!location.empty()) require(location.front() == '/' && !location.starts_with("//"));
  if (o.head) require(res.body().empty());
}

// Fields are NUL-separated so that CR and LF can reach the target and the Host value.
std::string_view next_field(std::string_view& input) {
  std::size_t end = input.find('\0');
  std::string_view line = input.substr(0, end);
  input.remove_prefix(end == std::string_view::npos ? input.size() : end + 1);
  return line;
}

void fuzz_built_request(std::string_view input) {
  http::request<http::empty_body> req;
  std::string_view target = next_field(input);
  std::string_view host = next_field(input);
  req.method(input.size() % 2 ? http::verb::head : http::verb::get);
  req.target(target);
  if (!host.empty()) req.set(http::field::host, host);
  route_and_check(req);
}

void fuzz_parsed_request(std::string_view input) {
  http::request_parser<http::string_body> parser;
  parser.eager(true);
  boost::system::error_code ec;
  parser.put(boost::asio::buffer(input.data(), input.size()), ec);
  if (parser.is_header_done()) route_and_check(parser.get());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  fuzz_built_request(input);
  fuzz_parsed_request(input);
  return 0;
}
