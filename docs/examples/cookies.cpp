// Cookies and security headers, as docs/framework.md shows them: a login that sets an
// encrypted session cookie and a signed preference, pages that read them back, and the
// security headers layer around everything. Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>
#include <waypoint/app/security/cookies.hpp>
#include <waypoint/app/security/security_headers.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

namespace app = waypoint::app;
using namespace std::chrono_literals;

// The keys come from the deployment's secret store; 32 random bytes each, the newest first.
app::cookie_keys load_keys() {
  const char* current = std::getenv("COOKIE_KEY_2");
  const char* previous = std::getenv("COOKIE_KEY_1");
  if (!current || !previous) return app::cookie_keys({app::cookie_key::generate(2)});
  return app::cookie_keys({{2, current}, {1, previous}});  // key 2 seals, both open
}

int main() {
  static const app::cookie_keys keys = load_keys();
  app::application a;
  a.use(app::security_headers());   // first: every answer gets them, short-circuits included

  a.post("/login", [](app::context& ctx) {
    std::string user_id = "u-42";   // after checking the credentials
    app::add_cookie(ctx.response(), {.name = "__Host-session",
                                     .value = keys.seal_encrypted("__Host-session", user_id),
                                     .max_age = 8h});
    app::add_cookie(ctx.response(), {.name = "theme",
                                     .value = keys.seal_signed("theme", "dark"),
                                     .max_age = 24h * 365, .http_only = false});
    ctx.response().status(204);
  });

  a.get("/me", [](app::context& ctx) {
    app::cookie_list sent = app::cookies(ctx.request());
    std::optional<std::string> user;
    if (auto session = sent.find("__Host-session"))
      user = keys.open_encrypted("__Host-session", *session, 8h);  // nullopt: treat as absent
    if (!user) throw waypoint::http_error(401, "log in first");
    std::string theme = keys.open_signed("theme", sent.find("theme").value_or("")).value_or("light");
    ctx.response().body("<p>" + *user + ", " + theme + "</p>", "text/html; charset=utf-8");
  });

  a.post("/logout", [](app::context& ctx) {
    app::add_cookie(ctx.response(), {.name = "__Host-session", .value = "", .max_age = 0s});
    ctx.response().status(204);
  });

  app::serve(a, {});
}
