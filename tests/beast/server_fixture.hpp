// The server the loopback tests run: the test router (echo routes, an upload that counts
// its body, a handler that throws, one that injects a header, one that closes, one held by
// a gate) on an ephemeral port with short, test-sized settings.
#pragma once

#include "test_client.hpp"

#include <waypoint/beast/router_dispatch.hpp>
#include <waypoint/beast/server.hpp>

#include <future>
#include <memory>
#include <stdexcept>
#include <string>

namespace waypoint::testing {

namespace wb = waypoint::beast;

// Lets a test hold a request inside its handler: the handler signals `entered` and waits
// until the test releases it.
struct gate {
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
};

// "<pattern> <value> <value>...": which route won and what it captured.
// GET /big answers this much: more than loopback's socket buffers hold, so a client that
// does not read keeps the server writing.
inline constexpr std::size_t big_body_bytes = 64 * 1024 * 1024;

inline void echo(const wb::request&, wb::response& res, const wb::route_match& m) {
  res.body() = std::string(m.route()->pattern.text());
  for (std::size_t i = 0; i < m.value_count(); ++i) res.body().append(" ").append(m.value(i));
}

inline std::unique_ptr<wb::router> make_router(gate* g = nullptr) {
  auto r = std::make_unique<wb::router>();
  for (const char* p : {"GET /users/{id}", "GET /users/me", "POST /users", "GET /files/{path...}",
                        "GET /docs/", "DELETE /users/{id}"})
    r->add(p, echo);
  r->add("POST /upload", [](const wb::request& req, wb::response& res, const wb::route_match&) {
    res.body() = "received " + std::to_string(req.body().size()) + " bytes";
  });
  r->add("GET /throw", [](const wb::request&, wb::response&, const wb::route_match&) {
    throw std::runtime_error("handler bug");
  });
  r->add("GET /inject", [](const wb::request&, wb::response& res, const wb::route_match&) {
    res.set("X-Evil", "a\r\nSet-Cookie: b=c");
  });
  r->add("GET /big", [](const wb::request&, wb::response& res, const wb::route_match&) {
    res.body().assign(big_body_bytes, 'b');
  });
  r->add("GET /close", [](const wb::request&, wb::response& res, const wb::route_match&) {
    res.keep_alive(false);
    res.body() = "bye";
  });
  if (g) {
    r->add("GET /slow", [g](const wb::request&, wb::response& res, const wb::route_match&) {
      g->entered.set_value();
      g->released.wait();
      res.body() = "finished";
    });
  }
  r->freeze();
  return r;
}

inline wb::server_options test_options() {
  wb::server_options o;
  o.listen = {{"127.0.0.1", 0}};
  o.threads = 2;
  o.handle_signals = false;
  return o;
}

// A started server on an ephemeral port with the test router.
struct running_server {
  explicit running_server(wb::server_options o = test_options(), gate* g = nullptr)
      : router(make_router(g)), server(std::move(o), wb::dispatch_to(*router)) {
    server.start();
    wb::listen_address first = server.endpoints().front();
    port = first.port;
    if (first.address.starts_with("unix:")) unix_address = first.address.substr(5);
  }
  // To the first listener: its port, or its unix socket.
  test_client connect() const {
    return unix_address.empty() ? test_client(port) : test_client::over_unix(unix_address);
  }

  std::unique_ptr<wb::router> router;
  wb::server server;
  std::uint16_t port = 0;
  std::string unix_address;  // "/path" or "@name" when the first listener is a unix one
};

}  // namespace waypoint::testing
