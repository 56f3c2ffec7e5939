// Bearer tokens, as docs/framework.md shows them: an API group behind bearer_auth(), keys
// read from the identity provider's JWK Set at start and again every five minutes, and
// handlers that read the verified claims. Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/security/jwt.hpp>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

namespace app = waypoint::app;

std::string read_file(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int main() {
  // The provider publishes its keys at https://login.example.com/.well-known/jwks.json; a
  // sidecar (or cron) keeps /etc/api/jwks.json up to date.
  auto keys = std::make_shared<app::jwt_key_store>(
      app::jwt_keys::from_jwks(read_file("/etc/api/jwks.json")));

  app::application a;
  auto api = a.group("/v1", app::bearer_auth({
      .keys = keys,
      .verify = {.issuer = "https://login.example.com", .audiences = {"orders-api"}},
      .realm = "orders",
      .required_scopes = {"orders:read"},
  }));

  api.get("/me", [](app::context& ctx) {
    const app::jwt_claims& who = ctx.get<app::jwt_claims>();
    ctx.response().json({{"sub", who.subject()},
                         {"email", who.string_claim("email").value_or("")},
                         {"can_write", who.has_scope("orders:write")}});
  });

  // Rotation: the new set is read first, so a broken file leaves the current keys in place.
  std::jthread refresher([keys](std::stop_token stop) {
    std::mutex m;
    std::condition_variable_any wake;
    std::unique_lock lock(m);
    for (;;) {
      wake.wait_for(lock, stop, std::chrono::minutes(5), [] { return false; });
      if (stop.stop_requested()) return;
      try {
        keys->reload(app::jwt_keys::from_jwks(read_file("/etc/api/jwks.json")));
      } catch (const std::invalid_argument& e) {
        std::cerr << "jwks.json not reloaded: " << e.what() << "\n";
      }
    }
  });

  app::serve(a, {});
}
