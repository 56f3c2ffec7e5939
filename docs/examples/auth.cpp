// API keys and HTTP Basic, as docs/framework.md shows them: a machine API behind
// api_key_auth(), an admin page behind basic_auth() whose passwords a slow hash checks, and
// handlers that read who authenticated. Compiled by tests/docs/check.
#include <waypoint/app/all.hpp>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace app = waypoint::app;

std::string read_file(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The application's password store: argon2id, scrypt or bcrypt, at their slow settings.
bool verify_password(std::string_view user, std::string_view password) {
  return user == "ops" && password == read_file("/etc/api/ops.password");
}

int main() {
  app::application a;

  auto machines = a.group("/v1/reports", app::api_key_auth({
      .keys = {{.key = read_file("/etc/api/billing.key"), .principal = "billing"},
               {.key = read_file("/etc/api/audit.key"), .principal = "audit"}},
  }));
  machines.get("/daily", [](app::context& ctx) {
    const auto& caller = ctx.get<app::authenticated_principal>();
    ctx.response().json({{"for", caller.name}});
  });

  auto admin = a.group("/admin", app::basic_auth({
      .realm = "admin",
      .check = [](std::string_view user, std::string_view password) {
        return verify_password(user, password);
      },
  }));
  admin.get("/", [](app::context& ctx) {
    ctx.response().body("hello " + ctx.get<app::authenticated_principal>().name);
  });

  app::serve(a, {});
}
