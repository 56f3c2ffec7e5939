// Forms read from requests (waypoint/app/content/forms.hpp): read_form's fields and temporary files,
// multipart_reader part by part, what each refusal answers, in process and through a real
// server with the body cut into pieces as the network delivers it.
#include "loopback_client.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/content/forms.hpp>
#include <waypoint/app/typed/json.hpp>
#include <waypoint/app/documents/openapi.hpp>
#include <waypoint/app/serve.hpp>

#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>

namespace {

namespace wa = waypoint::app;
namespace wb = waypoint::beast;
using wa::testing::body_json;
using wa::testing::field;
using wa::testing::make_request;
using namespace std::chrono_literals;

constexpr std::string_view multipart_type = "multipart/form-data; boundary=\"--b0undary\"";

std::string part(std::string_view name, std::string_view value, std::string_view filename = {},
                 std::string_view type = {}) {
  std::string out = "----b0undary\r\nContent-Disposition: form-data; name=\"" + std::string(name) + "\"";
  if (!filename.empty()) out += "; filename=\"" + std::string(filename) + "\"";
  out += "\r\n";
  if (!type.empty()) out += "Content-Type: " + std::string(type) + "\r\n";
  return out + "\r\n" + std::string(value) + "\r\n";
}

constexpr std::string_view closing = "----b0undary--\r\n";

std::string binary_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

// The form as JSON: fields, and each file's name, filename, safe filename, type, size and
// content (so a lost byte shows).
nlohmann::json describe(const wa::form& f) {
  nlohmann::json out = {{"fields", nlohmann::json::array()}, {"files", nlohmann::json::array()}};
  for (const wa::form_field& x : f.fields) out["fields"].push_back({x.name, x.value});
  for (const wa::form_file& x : f.files)
    out["files"].push_back({{"name", x.part.name},
                            {"filename", x.part.filename},
                            {"safe", x.part.safe_filename},
                            {"type", x.part.content_type},
                            {"size", x.size},
                            {"same", x.content.read_all().size() == x.size}});
  return out;
}

struct forms_app {
  wa::application app;
  wb::resource_budget disk{100};
  std::string last_file;  // content of the last file read_form stored

  forms_app() {
    app.post("/form", [this](wa::context& ctx) -> wa::awaitable<void> {
      wa::form_options options{.limits = {.max_parts = 8, .max_field_bytes = 64}, .max_files = 3};
      wa::form f = co_await wa::read_form(ctx, options);
      if (!f.files.empty()) last_file = f.files.back().content.read_all();
      ctx.response().json(describe(f));
    });
    app.post("/small-disk", [this](wa::context& ctx) -> wa::awaitable<void> {
      wa::form_options options{.disk = disk};
      wa::form f = co_await wa::read_form(ctx, options);
      ctx.response().json(describe(f));
    });
    // Each part's name, size and FNV-1a of its content, read in 7-byte pieces.
    app.post("/parts", [](wa::context& ctx) -> wa::awaitable<void> {
      wa::multipart_reader reader(ctx);
      std::string answer;
      char buffer[7];
      while (co_await reader.next_part()) {
        std::uint64_t size = 0, h = 1469598103934665603ull;
        while (std::size_t n = co_await reader.read_some(buffer)) {
          size += n;
          for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
        }
        answer += reader.part().name + " " + std::to_string(size) + " " + std::to_string(h) + "\n";
      }
      ctx.response().body(answer);
    }).body({.streamed = true});
    // Reads only the first part's header, then skips to the end.
    app.post("/first-name", [](wa::context& ctx) -> wa::awaitable<void> {
      wa::multipart_reader reader(ctx);
      std::string names;
      while (co_await reader.next_part()) names += reader.part().name + ",";
      ctx.response().body(names);
    });
  }
};

std::uint64_t fnv(std::string_view bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

wa::response post(wa::application& app, std::string_view target, std::string_view type, std::string body) {
  return app.respond(make_request("POST", target, {{"Content-Type", type}}, std::move(body)));
}

TEST(ReadForm, ReadsFieldsInMemoryAndFilesToTemporaryFiles) {
  forms_app s;
  std::string file = binary_bytes(5000, 1);
  std::string body = "preamble\r\n" + part("title", "Hello") + part("doc", file, "../../etc/a.bin", "application/octet-stream") +
                     part("title", "again") + part("empty", "", "") + std::string(closing) + "epilogue";
  wa::response res = post(s.app, "/form", multipart_type, body);
  ASSERT_EQ(res.result_int(), 200) << res.body();
  nlohmann::json expected = {
      {"fields", nlohmann::json::array({nlohmann::json::array({"title", "Hello"}),
                                        nlohmann::json::array({"title", "again"}),
                                        nlohmann::json::array({"empty", ""})})},
      {"files", {{{"name", "doc"}, {"filename", "../../etc/a.bin"}, {"safe", "a.bin"},
                  {"type", "application/octet-stream"}, {"size", 5000}, {"same", true}}}}};
  EXPECT_EQ(body_json(res), expected);
  EXPECT_EQ(s.last_file, file);
}

TEST(ReadForm, ReadsUrlencodedBodies) {
  forms_app s;
  wa::response res = post(s.app, "/form", "application/x-www-form-urlencoded; charset=UTF-8", "a=1+2&b=%E2%82%AC&a=3");
  ASSERT_EQ(res.result_int(), 200) << res.body();
  EXPECT_EQ(body_json(res)["fields"], nlohmann::json::parse(R"([["a","1 2"],["b","€"],["a","3"]])"));
}

// Each refusal is a problem document naming what was wrong.
TEST(ReadForm, AnswersEachRefusalWithItsStatusAndDetail) {
  struct row {
    const char* rule;
    std::string target, type, body;
    int status;
    std::string detail;
  };
  forms_app s;
  std::string m(multipart_type);
  const row rows[] = {
      {"RefusesOtherMediaTypes", "/form", "application/json", "{}", 415,
       "the body must be application/x-www-form-urlencoded or multipart/form-data"},
      {"RefusesMultipartWithoutBoundary", "/form", "multipart/form-data", "", 400,
       "multipart/form-data without a boundary parameter"},
      {"RefusesBoundaryGivenTwice", "/form", m + "; boundary=other", part("a", "1") + std::string(closing),
       400, "the Content-Type \"" + m + "; boundary=other\" names the parameter \"boundary\" twice"},
      {"RefusesBoundaryGivenTwiceToTheReader", "/parts", m + "; Boundary=other",
       part("a", "1") + std::string(closing), 400,
       "the Content-Type \"" + m + "; Boundary=other\" names the parameter \"Boundary\" twice"},
      {"RefusesCharsetGivenTwice", "/form", "application/x-www-form-urlencoded; charset=utf-8; charset=latin1",
       "a=1", 400,
       "the Content-Type \"application/x-www-form-urlencoded; charset=utf-8; charset=latin1\" names "
       "the parameter \"charset\" twice"},
      {"RefusesParameterWithoutValue", "/form", "multipart/form-data; boundary", "", 400,
       "the Content-Type \"multipart/form-data; boundary\" has the parameter \"boundary\" without '=' "
       "and a value"},
      {"RefusesMissingFinalBoundary", "/form", m, part("a", "1"), 400,
       "the body ends before the multipart body's final boundary"},
      {"RefusesPartWithoutName", "/form", m,
       "----b0undary\r\nContent-Disposition: form-data\r\n\r\nx\r\n" + std::string(closing), 400,
       "part 1 has no name"},
      {"RefusesLongField", "/form", m, part("a", std::string(65, 'x')) + std::string(closing), 413,
       "the field \"a\" is longer than 64 bytes"},
      {"RefusesTooManyParts", "/form", m, [] {
         std::string b;
         for (int i = 0; i < 9; ++i) b += part("p", "");
         return b + std::string(closing);
       }(),
       413, "the form has more than 8 parts"},
      {"RefusesMoreFilesThanMaxFiles", "/form", m, [] {
         std::string b;
         for (int i = 0; i < 4; ++i) b += part("f", "x", "f.txt");
         return b + std::string(closing);
       }(),
       413, "the form has more than 3 files (form_options::max_files)"},
      {"RefusesTooManyUrlencodedFields", "/form", "application/x-www-form-urlencoded",
       "a&b&c&d&e&f&g&h&i", 413, "the form has more than 8 fields"},
      {"RefusesUrlencodedBodyPastItsBound", "/form", "application/x-www-form-urlencoded",
       std::string(8 * 65 + 1, 'a'), 413, "the form is longer than 520 bytes (8 fields of 64)"},
      {"RefusesFilesPastTheDiskBudget", "/small-disk", m,
       part("f", std::string(101, 'x'), "f.txt") + std::string(closing), 507,
       "the server has no room for temporary disk for forms now; retry after 1 s"},
  };
  for (const row& r : rows) {
    wa::response res = post(s.app, r.target, r.type, r.body);
    EXPECT_EQ(res.result_int(), r.status) << r.rule << ": " << res.body();
    EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << r.rule;
    EXPECT_EQ(body_json(res)["detail"], r.detail) << r.rule;
    EXPECT_EQ(field(res, "Retry-After"), r.status == 507 ? "1" : "") << r.rule;
  }
  EXPECT_EQ(s.disk.in_use(), 0u);  // the refused form's share came back
}

TEST(MultipartReader, StreamsEachPartAndSkipsWhatIsNotRead) {
  forms_app s;
  std::string file = binary_bytes(100'000, 2);
  std::string body = part("a", "x") + part("f", file, "f.bin") + part("b", "") + std::string(closing);
  wa::response res = post(s.app, "/parts", multipart_type, body);
  EXPECT_EQ(res.body(), "a 1 " + std::to_string(fnv("x")) + "\nf 100000 " + std::to_string(fnv(file)) +
                            "\nb 0 " + std::to_string(fnv("")) + "\n");
  res = post(s.app, "/first-name", multipart_type, body);
  EXPECT_EQ(res.body(), "a,f,b,");
}

// Through a real server: the body written in random pieces down to single bytes, some
// slowly, so the parser meets every kind of cut the network makes, Content-Length or chunked.
TEST(MultipartReader, ReadsBodiesSplitAcrossReadsThroughTheServer) {
  forms_app s;
  wa::testing::loopback_server server(s.app);
  std::uint16_t port = server.port();
  std::string file = binary_bytes(200'000, 3);
  std::string body = part("title", "t") + part("f", file, "f.bin") + std::string(closing);
  std::string expected = "title 1 " + std::to_string(fnv("t")) + "\nf 200000 " + std::to_string(fnv(file)) + "\n";
  struct row {
    const char* rule;
    std::size_t largest_piece;
    bool chunked;
  };
  const row rows[] = {{"pieces of up to 3 bytes, chunked", 3, true},
                      {"pieces of up to 100 bytes", 100, false},
                      {"pieces of up to 70 KiB", 70'000, false}};
  std::uint32_t seed = 7;
  for (const row& r : rows) {
    std::string head = "POST /parts HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: " +
                       std::string(multipart_type) + "\r\n";
    std::string bytes = head;
    if (r.chunked) {
      bytes += "Transfer-Encoding: chunked\r\n\r\n";
      for (std::size_t at = 0; at < body.size(); at += 999) {
        std::string_view piece = std::string_view(body).substr(at, 999);
        char size[20];
        std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
        bytes += size + std::string(piece) + "\r\n";
      }
      bytes += "0\r\n\r\n";
    } else {
      bytes += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    }
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    std::mt19937 random(seed++);
    std::size_t writes = 0;
    for (std::size_t at = 0; at < bytes.size(); ++writes) {
      std::size_t n = std::min<std::size_t>(1 + random() % r.largest_piece, bytes.size() - at);
      boost::asio::write(socket, boost::asio::buffer(bytes.data() + at, n));
      at += n;
      if (writes % 4096 == 0) std::this_thread::sleep_for(1ms);  // reads that find little
    }
    std::string answer;
    char buffer[4096];
    boost::system::error_code ec;
    while (std::size_t n = socket.read_some(boost::asio::buffer(buffer), ec)) answer.append(buffer, n);
    EXPECT_NE(answer.find("HTTP/1.1 200 OK"), std::string::npos) << r.rule << "\n" << answer;
    EXPECT_NE(answer.find(expected), std::string::npos) << r.rule << "\n" << answer;
  }
}

struct signup {
  std::string email;
  std::int32_t age = 0;
  std::vector<std::string> topic;
  std::optional<std::string> referrer;
  static constexpr auto inputs = wa::inputs(
      wa::from::form("email", &signup::email).describe("where to write"),
      wa::from::form("age", &signup::age).constraints(R"({"minimum":13})"),
      wa::from::form("topic", &signup::topic),
      wa::from::form("referrer", &signup::referrer));
};

struct welcome {
  std::string email;
  std::int32_t age = 0;
  std::vector<std::string> topic;
  std::string referrer;
};
WAYPOINT_JSON_OBJECT(welcome, email, age, topic, referrer)

struct signup_app {
  wa::application app;
  signup_app() {
    app.post<signup, welcome>("/signup", [](signup in) {
      return welcome{in.email, in.age, in.topic, in.referrer.value_or("-")};
    });
    wa::serve_openapi(app, {.title = "t", .version = "1"});
  }
};

// from::form binds urlencoded and multipart fields alike, with the query's conversions.
TEST(FormInputs, BindsUrlencodedAndMultipartFieldsAlike) {
  signup_app s;
  nlohmann::json expected = {{"email", "a@b.c"}, {"age", 30}, {"topic", {"x", "y z"}}, {"referrer", "-"}};
  wa::response res = post(s.app, "/signup", "application/x-www-form-urlencoded",
                          "email=a%40b.c&topic=x&age=30&topic=y+z");
  EXPECT_EQ(res.result_int(), 201) << res.body();
  EXPECT_EQ(body_json(res), expected);
  res = post(s.app, "/signup", multipart_type,
             part("email", "a@b.c") + part("topic", "x") + part("upload", "skipped", "f.txt") +
                 part("age", "30") + part("topic", "y z") + std::string(closing));
  EXPECT_EQ(res.result_int(), 201) << res.body();
  EXPECT_EQ(body_json(res), expected);
}

TEST(FormInputs, AnswersMissingWrongAndConstrainedFieldsAsQueryParameters) {
  signup_app s;
  struct row {
    const char* rule;
    std::string type, body;
    int status;
    std::string detail;
  };
  const row rows[] = {
      {"RefusesMissingField", "application/x-www-form-urlencoded", "age=30", 400,
       "missing form field \"email\""},
      {"RefusesWrongType", "application/x-www-form-urlencoded", "email=a&age=ten", 400,
       "form field \"age\" must be an integer in range, not \"ten\""},
      {"RefusesBrokenConstraint", "application/x-www-form-urlencoded", "email=a&age=12", 422,
       "form field \"age\" is 12; the minimum is 13"},
      {"RefusesJsonBody", "application/json", "{\"email\":\"a\"}", 415,
       "the body must be application/x-www-form-urlencoded or multipart/form-data"},
      {"RefusesMalformedMultipart", std::string(multipart_type), part("email", "a"), 400,
       "the body ends before the multipart body's final boundary"},
  };
  for (const row& r : rows) {
    wa::response res = post(s.app, "/signup", r.type, r.body);
    EXPECT_EQ(res.result_int(), r.status) << r.rule << ": " << res.body();
    EXPECT_EQ(body_json(res)["detail"], r.detail) << r.rule;
  }
}

TEST(FormInputs, DocumentsFieldsAsTheRequestBodyOfBothMediaTypes) {
  signup_app s;
  nlohmann::json doc = body_json(wa::testing::answer(s.app, "GET", "/openapi.json"));
  const nlohmann::json& op = doc["paths"]["/signup"]["post"];
  EXPECT_FALSE(op.contains("parameters")) << op.dump();
  nlohmann::json schema = {
      {"type", "object"},
      {"properties",
       {{"email", {{"type", "string"}, {"description", "where to write"}}},
        {"age", {{"type", "integer"}, {"format", "int32"}, {"minimum", 13}, {"maximum", 2147483647}}},
        {"topic", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"referrer", {{"type", "string"}}}}},
      {"required", {"email", "age"}}};
  EXPECT_EQ(op["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"], schema)
      << op["requestBody"].dump();
  EXPECT_EQ(op["requestBody"]["content"]["multipart/form-data"]["schema"], schema);
  for (const char* status : {"400", "413", "415", "422"})
    EXPECT_TRUE(op["responses"].contains(status)) << status;
}

}  // namespace
