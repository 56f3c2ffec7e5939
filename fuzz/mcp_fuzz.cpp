// libFuzzer target for POST /mcp (src/app/documents/mcp.cpp): a JSON-RPC message, plain or gzipped,
// through the application in process (application::respond), with the compression layer in
// front and typed routes as tools (a path, a header, a query list, a cookie, a conditional
// read, a flattened body and a nested one).
//
// Input: byte 0 bit 0 sends the message gzipped (Content-Encoding: gzip, compressed here, so
// that mutation works on the text); byte 1 is the repetition: every stretch between two
// \x01 bytes in the rest is written 2^(byte 1 mod 16) times, so that a short input can be a
// value nested 32,768 deep or a string of megabytes. The rest is the message.
//
// Properties, besides no crash, stack overflow or sanitizer report:
//   - the status is 200, 202, 400 or 413, never a 5xx;
//   - a 202 has no body; any other answer is a JSON-RPC 2.0 response (or, for the decoded
//     body's 413 of the compression layer, a problem document), with exactly one of result
//     and error, an id that is a string, an integer or null, and an error code the
//     specification defines;
//   - a 400 or 413 is an error; a tools/call result has its content array.
#include "check.hpp"

#include <waypoint/app/content/compression.hpp>
#include <waypoint/app/typed/inputs.hpp>
#include <waypoint/app/typed/json.hpp>
#include <waypoint/app/documents/mcp.hpp>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz_tools {

struct item {
  std::string sku;
  std::int32_t quantity = 0;
};
WAYPOINT_JSON_OBJECT(item, sku, quantity)

struct place {
  std::string org;
  std::optional<std::string> tag;
  item body;
  static constexpr auto inputs =
      waypoint::app::inputs(waypoint::app::from::path("org", &place::org),
                            waypoint::app::from::header("X-Tag", &place::tag),
                            waypoint::app::from::body(&place::body));
};

struct listing {
  std::string org;
  std::vector<std::string> tag;
  std::optional<std::string> session;
  std::optional<std::string> if_none_match;
  static constexpr auto inputs = waypoint::app::inputs(
      waypoint::app::from::path("org", &listing::org),
      waypoint::app::from::query("tag", &listing::tag),
      waypoint::app::from::cookie("session", &listing::session),
      waypoint::app::from::header("If-None-Match", &listing::if_none_match));
};

struct page {
  std::string org;
  std::vector<std::string> tags;
};
WAYPOINT_JSON_OBJECT(page, org, tags)

// A body member named as an input: the body stays nested under "body".
struct clash {
  std::string sku;
  item body;
  static constexpr auto inputs = waypoint::app::inputs(
      waypoint::app::from::query("sku", &clash::sku), waypoint::app::from::body(&clash::body));
};

}  // namespace fuzz_tools

namespace {

namespace wa = waypoint::app;
using waypoint::fuzzing::quoted;
using waypoint::fuzzing::require;

// The longest message sent: past max_body_bytes (1 MiB), so that the 413 is reached too.
constexpr std::size_t most_bytes = 1536 * 1024;

wa::application& app() {
  static wa::application* served = [] {
    auto* a = new wa::application();
    a->use(wa::compression());
    a->post<fuzz_tools::place, fuzz_tools::item>("/orgs/{org}/items",
                                                 [](fuzz_tools::place in) { return in.body; })
        .describe({.name = "placeItem"});
    a->get<fuzz_tools::page>("/orgs/{org}/items", [](wa::context& ctx, fuzz_tools::listing in) {
       ctx.response().header("ETag", "\"v1\"");
       return fuzz_tools::page{in.org, in.tag};
     }).describe({.name = "listItems"});
    a->put<fuzz_tools::clash, fuzz_tools::item>("/clash",
                                                [](fuzz_tools::clash in) { return in.body; })
        .describe({.name = "clash"});
    wa::serve_mcp(*a);
    a->freeze();
    return a;
  }();
  return *served;
}

// The message: every stretch between two \x01 bytes written `times` times, up to most_bytes.
std::string expanded(std::string_view text, std::size_t times) {
  std::string out;
  bool repeating = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\x01') continue;
    std::string_view stretch = text.substr(start, i - start);
    for (std::size_t n = repeating ? times : 1; n > 0 && out.size() < most_bytes; --n)
      out.append(stretch.substr(0, most_bytes - std::min(most_bytes, out.size())));
    repeating = !repeating;
    start = i + 1;
  }
  return out;
}

std::string gzipped(std::string_view text) {
  std::string out(compressBound(static_cast<uLong>(text.size())) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

bool is_rpc_error_code(const nlohmann::json& code) {
  static constexpr std::array<int, 5> codes = {-32700, -32600, -32601, -32602, -32603};
  return code.is_number_integer() &&
         std::find(codes.begin(), codes.end(), code.get<int>()) != codes.end();
}

void check_rpc_answer(const wa::response& res, const std::string& context) {
  unsigned status = res.result_int();
  nlohmann::json answer = nlohmann::json::parse(res.body(), nullptr, false);
  require(answer.is_object(), "an answer is a JSON object", context);
  std::string_view type(res[wa::http::field::content_type].data(),
                        res[wa::http::field::content_type].size());
  if (type == "application/problem+json") {
    require(status == 413, "only the decoded body's limit answers a problem document", context);
    return;
  }
  require(answer.value("jsonrpc", "") == "2.0", "an answer is JSON-RPC 2.0", context);
  bool result = answer.contains("result"), error = answer.contains("error");
  require(result != error, "an answer has exactly one of result and error", context);
  const nlohmann::json& id = answer["id"];
  require(id.is_null() || id.is_string() || id.is_number_integer(),
          "an answer's id is a string, an integer or null", context);
  if (status != 200) require(error, "a 400 or 413 is an error", context);
  if (error) require(is_rpc_error_code(answer["error"]["code"]), "an error code is defined", context);
  if (result && answer["result"].contains("isError"))
    require(answer["result"]["content"].is_array(), "a tool's result has content", context);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  bool gzip = data[0] & 1;
  std::size_t times = std::size_t{1} << (data[1] % 16);
  std::string message =
      expanded(std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2), times);
  wa::request req;
  req.method(wa::http::verb::post);
  req.target("/mcp");
  req.version(11);
  req.set(wa::http::field::host, "localhost");
  req.set(wa::http::field::content_type, "application/json");
  req.set(wa::http::field::accept, "application/json, text/event-stream");
  if (gzip) req.set(wa::http::field::content_encoding, "gzip");
  req.body() = gzip ? gzipped(message) : message;
  req.prepare_payload();
  wa::response res = app().respond(req);
  std::string context = (gzip ? "gzip " : "") + quoted(message.substr(0, 2000)) + " gave " +
                        std::to_string(res.result_int()) + " " + quoted(res.body().substr(0, 500));
  unsigned status = res.result_int();
  require(status == 200 || status == 202 || status == 400 || status == 413,
          "the status is 200, 202, 400 or 413", context);
  if (status == 202) {
    require(res.body().empty(), "a 202 has no body", context);
    return 0;
  }
  check_rpc_answer(res, context);
  return 0;
}
