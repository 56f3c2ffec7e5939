// A consumer with its own Beast code: the adapter routes a Beast request and writes the
// answers ServeMux would send. docs/server.md quotes answer().
#include <waypoint/beast/adapter.hpp>
#include <waypoint/beast/router_dispatch.hpp>

#include <boost/beast/http.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace http = boost::beast::http;
using my_handler = waypoint::beast::handler;  // void(const request&, response&, const route_match&)

void answer(const waypoint::basic_router<my_handler>& router,  // frozen
            const http::request<http::string_body>& req, http::response<http::string_body>& res) {
  using match_result = waypoint::basic_router<my_handler>::match_result;
  auto result = std::make_unique<match_result>();         // ~16 KiB: reuse it
  auto o = waypoint::beast::route(router, req, *result);  // any http::request<Body>
  if (o.matched()) {
    result->handler()(req, res, *result);  // values: result->value("id")
  } else {
    waypoint::beast::prepare_response(o, res);  // res: response<string_body>
    res.version(req.version());
    res.keep_alive(req.keep_alive());
  }
}

// The answer to METHOD TARGET, as "STATUS BODY".
std::string ask(const waypoint::basic_router<my_handler>& router, http::verb method,
                const char* target) {
  http::request<http::string_body> req{method, target, 11};
  req.set(http::field::host, "example.com");
  http::response<http::string_body> res;
  answer(router, req, res);
  return std::to_string(res.result_int()) + " " + res.body();
}

int main() {
  waypoint::basic_router<my_handler> router;
  router.add("GET /users/{id}", [](const auto&, auto& res, const auto& m) {
    res.body() = "user " + std::string(m.value("id"));
  });
  router.freeze();
  int failures = 0;
  auto expect = [&](const std::string& got, const std::string& want) {
    if (got.rfind(want, 0) != 0) {
      std::printf("FAIL: got \"%s\", want it to begin \"%s\"\n", got.c_str(), want.c_str());
      ++failures;
    }
  };
  expect(ask(router, http::verb::get, "/users/42"), "200 user 42");
  expect(ask(router, http::verb::post, "/users/42"), "405");
  expect(ask(router, http::verb::get, "/nowhere"), "404");
  if (failures == 0) std::puts("ok: the Beast adapter routed three requests");
  return failures == 0 ? 0 : 1;
}
