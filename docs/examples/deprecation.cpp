// A feature built only on the kernel's public seam (docs/framework.md, "Building a
// feature"): routes marked deprecated answer with RFC 9745's Deprecation field and, when
// the application has a sunset date, RFC 8594's Sunset; and an application that deprecates
// a route without a name (which a client would look up its successor by) refuses to freeze.
// It uses a per-route value, a per-application value, a freeze hook, the read-only route
// list and the matched route. Compiled by tests/docs/check, and run as the test
// docs_deprecation_example (tests/app/CMakeLists.txt): it exits non-zero when the feature
// misbehaves.
#include <waypoint/app/application.hpp>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace app = waypoint::app;

namespace deprecation {

// The application's settings: a value of the application (app.extension<settings>()).
struct settings {
  std::string sunset;  // an IMF-fixdate; empty: no Sunset field
};

// What the feature attaches to a deprecated route (route_entry::features()).
struct mark {
  std::int64_t since = 0;  // seconds since the epoch
};

// Marks the route `scope` registered last; `scope`, for the next registration.
app::route_scope& deprecate(app::route_scope& scope, std::int64_t since) {
  scope.last_route().features().set(mark{since});
  return scope;
}

// The layer: after the handler, a deprecated route's answer carries the fields. Routes
// without the mark pay one scan of their (empty) feature list.
app::middleware fields() {
  return app::layer_hooks{.after = [](app::context& ctx, std::exception_ptr&) {
    const app::route_entry* route = ctx.matched_route();
    const mark* m = route ? route->features().find<mark>() : nullptr;
    if (!m) return;
    ctx.response().header("Deprecation", "@" + std::to_string(m->since));
    const settings* s = ctx.app().find_extension<settings>();
    if (s && !s->sunset.empty()) ctx.response().header("Sunset", s->sunset);
  }};
}

// Installs the feature: its layer around every request, and a check when the application
// freezes (after every registration, so routes marked after this call count too).
void install(app::application& a, settings s) {
  a.extension<settings>() = std::move(s);
  a.use(fields());
  a.on_freeze(app::application::freeze_stage::complete, [](app::application& frozen) {
    for (const app::route_entry& route : frozen.routes())
      if (route.features().find<mark>() && route.doc().name.empty())
        throw std::logic_error("route \"" + std::string(route.route_pattern().text()) +
                               "\" registered at " + route.site().to_string() +
                               " is deprecated without a name to find its successor by");
  });
}

}  // namespace deprecation

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "deprecation example: %s\n", what);
  ++failures;
}

app::request get(const char* target) {
  app::request req{app::http::verb::get, target, 11};
  req.set(app::http::field::host, "example.com");
  return req;
}

}  // namespace

int main() {
  app::application a;
  deprecation::install(a, {.sunset = "Sat, 01 May 2027 00:00:00 GMT"});
  a.get("/v1/users", [](app::context& ctx) { ctx.response().body("old"); });
  deprecation::deprecate(a, 1767225600).describe({.name = "listUsersV1"});
  a.get("/v2/users", [](app::context& ctx) { ctx.response().body("new"); });

  app::response old_answer = a.respond(get("/v1/users"));
  expect(old_answer["Deprecation"] == "@1767225600", "the deprecated route names its date");
  expect(old_answer["Sunset"] == "Sat, 01 May 2027 00:00:00 GMT", "and the sunset");
  app::response new_answer = a.respond(get("/v2/users"));
  expect(new_answer.find("Deprecation") == new_answer.end(), "another route has no field");

  app::application unnamed;
  deprecation::install(unnamed, {});
  unnamed.get("/v1/orders", [](app::context&) {});
  deprecation::deprecate(unnamed, 0);
  bool refused = false;
  try {
    unnamed.freeze();
  } catch (const std::logic_error&) {
    refused = true;
  }
  expect(refused, "an unnamed deprecated route fails freeze()");
  expect(!unnamed.frozen(), "and leaves the application unfrozen");
  return failures == 0 ? 0 : 1;
}
