// Request streams and ways to split them, shared by the session test (no socket), the
// server test (loopback) and the session fuzzer's seeds. The invariant they check: the
// bytes a server answers do not depend on how a request stream was cut into reads.
//
// Every stream ends the connection (an error, or a last request with `Connection: close`),
// so a reader can take everything up to the close and compare.
#pragma once

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::testing {

struct request_stream {
  std::string rule;                 // what the stream shows
  std::string bytes;                // what the client sends
  std::vector<unsigned> statuses;   // the statuses answered, in order (100 included)
};

inline std::string closing_request(std::string_view target = "/users/last") {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
}

// For the server test's router and the session test's echo dispatch alike: GET /users/{id},
// POST /upload (echoes the body size), HEAD; anything else 404.
inline std::vector<request_stream> request_streams() {
  const std::string get = "GET /users/42 HTTP/1.1\r\nHost: t\r\nUser-Agent: split-test\r\n\r\n";
  const std::string post =
      "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world";
  const std::string chunked =
      "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value;other=\"quoted\"\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: 1\r\n\r\n";
  const std::string cookie = "GET /users/7 HTTP/1.1\r\nHost: t\r\nCookie: " +
                             std::string(9 * 1024, 'c') + "\r\n\r\n";
  return {
      {"a request with a header", get + closing_request(), {200, 200}},
      {"pipelined requests of every framing", get + post + chunked + get + closing_request(),
       {200, 200, 200, 200, 200}},
      {"a chunked body with extensions and trailers", chunked + closing_request(), {200, 200}},
      {"empty lines before and between requests",
       "\r\n\r\n" + get + "\r\n" + post + "\r\n" + closing_request(), {200, 200, 200}},
      {"100-continue with the body right behind the header",
       "POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
       "hello" + closing_request(),
       {100, 200, 200}},
      {"HEAD then GET", "HEAD /users/1 HTTP/1.1\r\nHost: t\r\n\r\n" + closing_request(),
       {200, 200}},
      {"HTTP/1.0 keep-alive", "GET /users/1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" +
                                  closing_request(),
       {200, 200}},
      {"a 9 KiB cookie is within the header limit", cookie + closing_request(), {200, 200}},
      {"no route is 404 and keeps the connection", "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n" +
                                                       closing_request(),
       {404, 200}},
      {"a target over the limit is 414",
       get + "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n", {200, 414}},
      {"a header field over the limit is 431, not 414",
       get + "GET /users/1 HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(17 * 1024, 'b') +
           "\r\n\r\n",
       {200, 431}},
      {"many small fields over the limit are 431",
       [] {
         std::string r = "GET /users/1 HTTP/1.1\r\nHost: t\r\n";
         for (int i = 0; i < 1000; ++i) r += "X-Field-" + std::to_string(i) + ": value\r\n";
         return r + "\r\n";
       }(),
       {431}},
      {"a TLS hello is not HTTP", std::string("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11),
       {400}},
      {"a header line without a colon is 400",
       get + "GET /a HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n", {200, 400}},
      {"gzip before chunked is 501",
       "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
       {501}},
      {"identity before chunked is 501",
       "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n",
       {501}},
      {"a coding not ending in chunked is 501",
       "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n" + get, {501}},
      {"HTTP/1.0 with Transfer-Encoding is 400",
       "POST /upload HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + get, {400}},
      {"an unknown expectation is 417 with its body already sent",
       "POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 200-ok\r\nContent-Length: 5\r\n\r\nhello",
       {417}},
      {"a declared body over the limit is 413",
       "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999\r\n\r\n", {413}},
      {"a chunk extension over 4 KiB is 400",
       "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=" +
           std::string(5000, 'e') + "\r\nhello\r\n0\r\n\r\n",
       {400}},
      {"a trailer section over the limit is 431",
       "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: " +
           std::string(17 * 1024, 't') + "\r\n\r\n",
       {431}},
      {"a bad field is 400 once its header ends, however the header arrived",
       std::string("GET /users/1 HTTP/1.1\r\nHost: \xf4\r\n\0\r\n\r\n", 37), {400}},
      {"bare line feeds are 400", "GET /users/1 HTTP/1.1\nHost: t\n\n", {400}},
      {"a bad chunk size is 400",
       "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", {400}},
  };
}

// A long pipeline for random splits: `count` requests of the stream table's shapes, then a
// closing request.
inline request_stream long_pipeline(std::size_t count) {
  const std::string shapes[] = {
      "GET /users/1 HTTP/1.1\r\nHost: t\r\n\r\n",
      "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc",
      "POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\n\r\n",
      "GET /nothing HTTP/1.1\r\nHost: t\r\n\r\n",
  };
  request_stream s{"a long pipeline", {}, {}};
  for (std::size_t i = 0; i < count; ++i) {
    s.bytes += shapes[i % 4];
    s.statuses.push_back(i % 4 == 3 ? 404 : 200);
  }
  s.bytes += closing_request();
  s.statuses.push_back(200);
  return s;
}

using split_plan = std::vector<std::size_t>;  // piece sizes; the last takes the rest

inline split_plan one_write() { return {}; }
inline split_plan bytes_one_at_a_time(std::size_t total) { return split_plan(total, 1); }
inline split_plan cut_at(std::size_t boundary) { return {boundary}; }
// Pieces of 1 to `largest` bytes; the seed is part of the failure message.
inline split_plan random_pieces(std::size_t total, std::uint32_t seed, std::size_t largest) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<std::size_t> size(1, largest);
  split_plan plan;
  for (std::size_t sent = 0; sent < total;) sent += plan.emplace_back(size(random));
  return plan;
}

// The responses with every Date value blanked, so two runs compare byte for byte.
inline std::string without_dates(std::string bytes) {
  for (std::size_t at = bytes.find("\r\nDate: "); at != std::string::npos;
       at = bytes.find("\r\nDate: ", at + 2)) {
    std::size_t end = bytes.find("\r\n", at + 2);
    if (end == std::string::npos) break;
    bytes.replace(at + 8, end - at - 8, "-");
  }
  return bytes;
}

// The statuses of a sequence of responses (HEAD responses: none of them carries a body here
// unless its Content-Length is 0, so HEAD streams put HEAD first and pass head_first).
inline std::vector<unsigned> statuses_of(std::string_view bytes, bool head_first = false) {
  namespace http = boost::beast::http;
  std::vector<unsigned> statuses;
  bool head = head_first;
  while (!bytes.empty()) {
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    parser.skip(head);
    boost::system::error_code ec;
    std::size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec || !parser.is_done()) break;
    statuses.push_back(parser.get().result_int());
    if (parser.get().result_int() != 100) head = false;
    bytes.remove_prefix(used);
  }
  return statuses;
}

}  // namespace waypoint::testing
