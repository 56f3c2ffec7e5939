// docs/framework.md's "Forms and uploads" examples, compiled by tests/docs/check.
#include <waypoint/app/all.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace app = waypoint::app;
namespace from = waypoint::app::from;

struct signup {
  std::string email;
  std::int32_t age = 0;
  std::vector<std::string> topic;  // checkboxes: every checked one
  std::optional<std::string> referrer;
  static constexpr auto inputs = app::inputs(
      from::form("email", &signup::email).constraints(R"({"format":"email","maxLength":254})"),
      from::form("age", &signup::age).constraints(R"({"minimum":13})"),
      from::form("topic", &signup::topic),
      from::form("referrer", &signup::referrer));
};

struct welcome {
  std::string email;
  std::size_t topics = 0;
};
WAYPOINT_JSON_OBJECT(welcome, email, topics)

void add_routes(app::application& a, waypoint::beast::resource_budget upload_disk) {
  a.post("/v1/profile", [upload_disk](app::context& ctx) -> app::awaitable<void> {
     app::form_options options{.limits = {.max_parts = 16}, .disk = upload_disk};
     app::form f = co_await app::read_form(ctx, options);
     std::string name(f.field("name").value_or("anonymous"));
     const app::form_file* photo = f.file("photo");
     // photo->content.descriptor() is an unnamed file; photo->part.safe_filename its name.
     ctx.response().json({{"name", name}, {"photo_bytes", photo ? photo->size : 0}});
   })
      .body({.max_bytes = std::uint64_t{64} << 20, .streamed = true});  // 64 MiB: 413 past it

  a.post("/v1/checksums", [](app::context& ctx) -> app::awaitable<void> {
     app::multipart_reader reader(ctx);
     std::vector<char> buffer(64 * 1024);
     nlohmann::json sizes = nlohmann::json::object();
     while (co_await reader.next_part()) {
       std::uint64_t size = 0;
       while (std::size_t n = co_await reader.read_some(buffer)) size += n;
       sizes[reader.part().name] = size;
     }
     ctx.response().json(sizes);
   })
      .body({.streamed = true});

  a.post<signup, welcome>("/v1/signup", [](signup in) {
    return welcome{in.email, in.topic.size()};
  });
}

int main() {
  app::application a;
  add_routes(a, waypoint::beast::resource_budget(std::uint64_t{2} << 30));
  a.freeze();
}
