// compression(): the Accept-Encoding negotiation as a table, every rule on what is and is
// not compressed (HEAD included), request bodies decoded under their limit (a 1 GiB brotli
// bomb among them), streamed bodies decoded event by event over a real server, and curl,
// Debian's brotli and zstd tools and Python's gzip as independent decoders.
#include "loopback_client.hpp"
#include "../support/missing_tool.hpp"

#include <waypoint/app/async.hpp>
#include <waypoint/app/content/compression.hpp>
#include <waypoint/app/content/event_stream.hpp>
#include <waypoint/app/serve.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <brotli/decode.h>
#include <brotli/encode.h>
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

namespace {

namespace wa = waypoint::app;
namespace wb = waypoint::beast;
namespace asio = boost::asio;
using namespace std::chrono_literals;
using wa::content_coding;
using wa::testing::field;
using wa::testing::make_request;

// --- independent codecs: the libraries driven directly, not through the layer --------------

// Decodes a stream fed in pieces, returning what each piece made decodable: the client's
// view of a streamed body.
class incremental_decoder {
 public:
  explicit incremental_decoder(content_coding coding) : coding_(coding) {
    if (coding == content_coding::gzip) inflateInit2(&z_, 15 + 16);
    if (coding == content_coding::br) br_ = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
    if (coding == content_coding::zstd) zstd_ = ZSTD_createDStream();
  }
  ~incremental_decoder() {
    if (coding_ == content_coding::gzip) inflateEnd(&z_);
    if (br_) BrotliDecoderDestroyInstance(br_);
    if (zstd_) ZSTD_freeDStream(zstd_);
  }
  std::string feed(std::string_view in) {
    std::string out;
    char buffer[16384];
    if (coding_ == content_coding::identity) return std::string(in);
    if (coding_ == content_coding::gzip) {
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      z_.avail_in = static_cast<uInt>(in.size());
      do {
        z_.next_out = reinterpret_cast<Bytef*>(buffer);
        z_.avail_out = sizeof buffer;
        int rc = inflate(&z_, Z_SYNC_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) throw std::runtime_error("gzip");
        out.append(buffer, sizeof buffer - z_.avail_out);
      } while (z_.avail_out == 0);
    } else if (coding_ == content_coding::br) {
      std::size_t avail_in = in.size();
      const auto* next_in = reinterpret_cast<const uint8_t*>(in.data());
      for (;;) {
        std::size_t avail_out = sizeof buffer;
        auto* next_out = reinterpret_cast<uint8_t*>(buffer);
        auto rc = BrotliDecoderDecompressStream(br_, &avail_in, &next_in, &avail_out, &next_out,
                                                nullptr);
        out.append(buffer, sizeof buffer - avail_out);
        if (rc == BROTLI_DECODER_RESULT_ERROR) throw std::runtime_error("br");
        if (rc != BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) break;
      }
    } else {
      ZSTD_inBuffer input{in.data(), in.size(), 0};
      for (;;) {
        ZSTD_outBuffer output{buffer, sizeof buffer, 0};
        std::size_t rc = ZSTD_decompressStream(zstd_, &output, &input);
        if (ZSTD_isError(rc)) throw std::runtime_error("zstd");
        out.append(buffer, output.pos);
        if (input.pos == input.size && output.pos < output.size) break;
      }
    }
    return out;
  }

 private:
  content_coding coding_;
  z_stream z_{};
  BrotliDecoderState* br_ = nullptr;
  ZSTD_DStream* zstd_ = nullptr;
};

std::string decoded(content_coding coding, std::string_view bytes) {
  return incremental_decoder(coding).feed(bytes);
}

std::string encoded(content_coding coding, std::string_view text) {
  std::string out(text.size() + 1024, '\0');
  if (coding == content_coding::gzip) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
  } else if (coding == content_coding::br) {
    std::size_t size = out.size();
    BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, text.size(),
                          reinterpret_cast<const uint8_t*>(text.data()), &size,
                          reinterpret_cast<uint8_t*>(out.data()));
    out.resize(size);
  } else {
    out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
  }
  return out;
}

std::string json_text(std::size_t bytes) {
  std::string out = "[";
  for (int i = 0; out.size() < bytes; ++i)
    out += (i ? "," : "") + std::string(R"({"id":)") + std::to_string(i) + R"(,"name":"item )" +
           std::to_string(i * 7919 % 1000) + R"(","tags":["a","b"]})";
  return out + "]";
}

// --- negotiation ---------------------------------------------------------------------------

struct negotiation_row {
  const char* rule;
  const char* field;  // nullptr: no Accept-Encoding at all
  content_coding expected;
};

TEST(Compression, NegotiatesAcceptEncodingPerRfc9110) {
  const content_coding preference[] = {content_coding::br, content_coding::zstd,
                                       content_coding::gzip};
  const negotiation_row rows[] = {
      {"no field: identity, as every server answers", nullptr, content_coding::identity},
      {"an empty field: identity only", "", content_coding::identity},
      {"one coding", "gzip", content_coding::gzip},
      {"x-gzip is gzip", "x-gzip", content_coding::gzip},
      {"case does not matter", "GZIP", content_coding::gzip},
      {"equal q: the server's order", "gzip, deflate, br, zstd", content_coding::br},
      {"equal q, without br: zstd before gzip", "gzip, zstd", content_coding::zstd},
      {"a higher q wins over the server's order", "br;q=0.5, gzip", content_coding::gzip},
      {"q=0 refuses", "br;q=0, gzip;q=0.1", content_coding::gzip},
      {"q=0.000 refuses", "br;q=0.000, zstd", content_coding::zstd},
      {"* covers what is not named", "*", content_coding::br},
      {"* with a named refusal", "br;q=0, *", content_coding::zstd},
      {"*;q=0 with a named coding", "gzip, *;q=0", content_coding::gzip},
      {"nothing acceptable, identity;q=0: identity anyway (as nginx, Go)",
       "identity;q=0, deflate", content_coding::identity},
      {"identity named higher than every coding wins", "gzip;q=0.5, identity;q=1",
       content_coding::identity},
      {"identity named equal: the coding", "gzip, identity", content_coding::gzip},
      {"a malformed q ignores the element", "br;q=2, gzip;q=0.9", content_coding::gzip},
      {"a malformed q (letters)", "br;q=x", content_coding::identity},
      {"spaces and empty elements", " , gzip ; q=0.8 ,, br ; q=0.9 ", content_coding::br},
      {"parameter name case-insensitive", "br;Q=0, gzip", content_coding::gzip},
      {"unknown codings only", "compress, deflate", content_coding::identity},
  };
  for (const negotiation_row& row : rows) {
    content_coding got = wa::detail::negotiate_coding(row.field ? row.field : "",
                                                      row.field != nullptr, preference);
    EXPECT_EQ(wa::coding_name(got), wa::coding_name(row.expected)) << row.rule;
  }
  const content_coding gzip_only[] = {content_coding::gzip};
  EXPECT_EQ(wa::detail::negotiate_coding("br, zstd", true, gzip_only), content_coding::identity)
      << "a coding not offered is never chosen";
}

TEST(Compression, CompressibleTypesAreWholeTypesPrefixesAndSuffixes) {
  std::vector<std::string> types = wa::compression_options{}.content_types;
  struct row {
    const char* type;
    bool compressible;
  };
  for (row r : {row{"text/html; charset=utf-8", true}, row{"TEXT/CSS", true},
                row{"application/json", true}, row{"application/problem+json", true},
                row{"application/ld+json", true}, row{"image/svg+xml", true},
                row{"application/atom+xml", true}, row{"application/javascript", true},
                row{"image/png", false}, row{"application/octet-stream", false},
                row{"application/zip", false}, row{"font/woff2", false}, row{"", false},
                row{"+json", false}, row{"application/jsonx", false}})
    EXPECT_EQ(wa::detail::compressible_type(r.type, types), r.compressible) << r.type;
}

// --- what is compressed, and what never is ----------------------------------------------------

struct rules_app {
  wa::application app;
  std::string big = json_text(4000);
  rules_app() {
    app.use(wa::compression());
    app.get("/json", [this](wa::context& ctx) { ctx.response().body(big, "application/json"); });
    app.get("/small", [](wa::context& ctx) { ctx.response().body("{}", "application/json"); });
    app.get("/png", [this](wa::context& ctx) { ctx.response().body(big, "image/png"); });
    app.get("/etag", [this](wa::context& ctx) {
      ctx.response().header("ETag", R"("v1")").body(big, "application/json");
    });
    app.get("/weak", [this](wa::context& ctx) {
      ctx.response().header("ETag", R"(W/"v1")").body(big, "application/json");
    });
    app.get("/partial", [this](wa::context& ctx) {
      ctx.response().status(206).header("Content-Range", "bytes 0-99/4000").body(big.substr(0, 100), "text/plain");
    });
    app.get("/encoded", [this](wa::context& ctx) {
      ctx.response().header("Content-Encoding", "gzip").body(encoded(content_coding::gzip, big),
                                                             "application/json");
    });
    app.get("/no-transform", [this](wa::context& ctx) {
      ctx.response().header("Cache-Control", "public, no-transform").body(big, "application/json");
    });
    app.get("/no-content", [](wa::context& ctx) { ctx.response().status(204); });
    app.get("/not-modified", [](wa::context& ctx) {
      ctx.response().status(304).header("ETag", R"("v1")");
    });
    app.get("/vary", [this](wa::context& ctx) {
      ctx.response().header("Vary", "accept-encoding").body(big, "text/html");
    });
    app.get("/fail", [](wa::context&) { throw waypoint::http_error(422, "no"); });
  }
  wa::response get(std::string_view target, std::string_view accept = "gzip, br, zstd",
                   std::string_view method = "GET") {
    return app.respond(make_request(method, target, {{"Accept-Encoding", accept}}));
  }
};

struct rule_row {
  const char* rule;
  const char* target;
  const char* accept;
  const char* encoding;  // the Content-Encoding expected, "" none
  bool vary;
};

TEST(Compression, CompressesWhatIsWorthItAndNeverTheRest) {
  rules_app s;
  const rule_row rows[] = {
      {"JSON over min_size: br first", "/json", "gzip, br, zstd", "br", true},
      {"gzip alone", "/json", "gzip", "gzip", true},
      {"zstd alone", "/json", "zstd", "zstd", true},
      {"not accepted: identity, still Vary", "/json", "deflate", "", true},
      {"no Accept-Encoding: identity, still Vary", "/json", nullptr, "", true},
      {"under min_size: never, no Vary", "/small", "gzip", "", false},
      {"a type not worth it", "/png", "gzip", "", false},
      {"a range (206) never", "/partial", "gzip", "", false},
      {"a body already encoded is left alone", "/encoded", "br", "gzip", false},
      {"Cache-Control: no-transform", "/no-transform", "gzip", "", false},
      {"204 never", "/no-content", "gzip", "", false},
      {"304 never, but with the 200's Vary", "/not-modified", "gzip", "", true},
      {"a problem document (short)", "/fail", "gzip", "", false},
  };
  for (const rule_row& row : rows) {
    wa::request req = make_request("GET", row.target);
    if (row.accept) req.set(wa::http::field::accept_encoding, row.accept);
    wa::response res = s.app.respond(req);
    EXPECT_EQ(field(res, "Content-Encoding"), row.encoding) << row.rule;
    EXPECT_EQ(field(res, "Vary") == "Accept-Encoding", row.vary) << row.rule << ": " << field(res, "Vary");
    if (std::string_view(row.encoding) == "br" || std::string_view(row.encoding) == "zstd" ||
        (std::string_view(row.encoding) == "gzip" && std::string_view(row.target) == "/json")) {
      content_coding c = std::string_view(row.encoding) == "br"     ? content_coding::br
                         : std::string_view(row.encoding) == "zstd" ? content_coding::zstd
                                                                    : content_coding::gzip;
      EXPECT_EQ(decoded(c, res.body()), s.big) << row.rule;
      EXPECT_LT(res.body().size(), s.big.size() / 3) << row.rule;
    }
  }
}

TEST(Compression, HeadSendsTheHeadersGetWould) {
  rules_app s;
  for (const char* accept : {"gzip", "br", "zstd", "deflate"}) {
    wa::response get = s.get("/json", accept);
    wa::response head = s.get("/json", accept, "HEAD");
    EXPECT_TRUE(head.body().empty()) << accept;
    for (const char* name : {"Content-Encoding", "Vary", "Content-Type"})
      EXPECT_EQ(field(head, name), field(get, name)) << accept << " " << name;
    EXPECT_EQ(field(head, "Content-Length"), std::to_string(get.body().size()))
        << accept << ": HEAD's length is the compressed body's";
  }
}

TEST(Compression, StrongETagBecomesWeakAndWeakStays) {
  rules_app s;
  EXPECT_EQ(field(s.get("/etag", "gzip"), "ETag"), R"(W/"v1")");
  EXPECT_EQ(field(s.get("/etag", "deflate"), "ETag"), R"("v1")") << "identity keeps it strong";
  EXPECT_EQ(field(s.get("/weak", "br"), "ETag"), R"(W/"v1")");
  // A 304 carries what the 200 would have: the weak tag for a client that takes a coding.
  EXPECT_EQ(field(s.get("/not-modified", "gzip"), "ETag"), R"(W/"v1")");
  EXPECT_EQ(field(s.get("/not-modified", "deflate"), "ETag"), R"("v1")");
}

TEST(Compression, CompressedAnswersDoNotOfferRanges) {
  wa::application app;
  std::string big = json_text(5000);
  app.use(wa::compression());
  app.get("/ranged", [&](wa::context& ctx) {
    ctx.response().header("Accept-Ranges", "bytes").body(big, "application/json");
  });
  auto ask = [&](const char* accept) {
    return app.respond(make_request("GET", "/ranged", {{"Accept-Encoding", accept}}));
  };
  EXPECT_EQ(field(ask("gzip"), "Accept-Ranges"), "") << "a range would count identity bytes";
  EXPECT_EQ(field(ask("deflate"), "Accept-Ranges"), "bytes") << "identity keeps it";
}

TEST(Compression, VaryIsNotRepeated) {
  rules_app s;
  wa::response res = s.get("/vary", "gzip");
  EXPECT_EQ(field(res, "Content-Encoding"), "gzip");
  EXPECT_EQ(std::distance(res.equal_range(wa::http::field::vary).first,
                          res.equal_range(wa::http::field::vary).second),
            1);
}

TEST(Compression, OptionsChooseCodingsSizesAndTypes) {
  wa::application app;
  app.use(wa::compression({.codings = {content_coding::gzip},
                           .min_size = 10,
                           .content_types = {"application/x-custom"},
                           .gzip_level = 1}));
  app.get("/custom", [](wa::context& ctx) {
    ctx.response().body(std::string(100, 'a'), "application/x-custom");
  });
  app.get("/json", [](wa::context& ctx) { ctx.response().body(std::string(5000, 'a'), "application/json"); });
  auto res = app.respond(make_request("GET", "/custom", {{"Accept-Encoding", "br, gzip;q=0.1"}}));
  EXPECT_EQ(field(res, "Content-Encoding"), "gzip");
  EXPECT_EQ(decoded(content_coding::gzip, res.body()), std::string(100, 'a'));
  res = app.respond(make_request("GET", "/json", {{"Accept-Encoding", "gzip"}}));
  EXPECT_EQ(field(res, "Content-Encoding"), "") << "not a listed type";
  EXPECT_THROW(wa::compression({.gzip_level = 10}), std::invalid_argument);
  EXPECT_THROW(wa::compression({.codings = {content_coding::identity}}), std::invalid_argument);
  EXPECT_THROW(wa::compression({.codings = {content_coding::br, content_coding::br}}),
               std::invalid_argument);
}

// --- request bodies --------------------------------------------------------------------------

struct decode_app {
  wa::application app;
  decode_app() {
    app.use(wa::compression());
    app.post("/echo", [](wa::context& ctx) {
      ctx.response().body(std::to_string(ctx.body().size()) + ":" + ctx.body().substr(0, 40));
    });
    app.post("/small", [](wa::context& ctx) { ctx.response().body("ok"); }).body({.max_bytes = 1000});
  }
  wa::response post(std::string_view target, std::string_view coding, std::string body) {
    return app.respond(
        make_request("POST", target, {{"Content-Encoding", coding}}, std::move(body)));
  }
};

TEST(Compression, RequestBodiesAreDecodedBeforeTheHandler) {
  decode_app s;
  std::string text = json_text(5000);
  std::string expected = std::to_string(text.size()) + ":" + text.substr(0, 40);
  for (auto [name, coding] : {std::pair{"gzip", content_coding::gzip},
                              std::pair{"br", content_coding::br},
                              std::pair{"zstd", content_coding::zstd}}) {
    wa::response res = s.post("/echo", name, encoded(coding, text));
    EXPECT_EQ(res.result_int(), 200u) << name << res.body();
    EXPECT_EQ(res.body(), expected) << name;
  }
  std::string two_members = encoded(content_coding::gzip, "ab") + encoded(content_coding::gzip, "cd");
  EXPECT_EQ(s.post("/echo", "gzip", two_members).body(), "4:abcd") << "concatenated gzip members";
  EXPECT_EQ(s.post("/echo", "identity", "plain").body(), "5:plain");
}

struct refusal_row {
  const char* rule;
  const char* target;
  const char* coding;
  std::string body;
  unsigned status;
  const char* detail_has;
};

TEST(Compression, RefusesBodiesItCannotDecode) {
  decode_app s;
  std::string text = json_text(5000);
  std::string gz = encoded(content_coding::gzip, text);
  const refusal_row rows[] = {
      {"an unknown coding is 415", "/echo", "compress", "x", 415, "br, zstd, gzip"},
      {"two codings are 415", "/echo", "gzip, br", encoded(content_coding::br, gz), 415,
       "more than one"},
      {"truncated gzip is 400", "/echo", "gzip", gz.substr(0, gz.size() / 2), 400, "gzip"},
      {"garbage as br is 400", "/echo", "br", "not brotli at all", 400, "br"},
      {"garbage as zstd is 400", "/echo", "zstd", "not zstd at all", 400, "zstd"},
      {"bytes after the gzip stream are 400", "/echo", "gzip", gz + "junk", 400, "gzip"},
      {"an empty gzip body is 400", "/echo", "gzip", "", 400, "gzip"},
      {"over the route's body_limit decoded is 413", "/small", "gzip",
       encoded(content_coding::gzip, std::string(1001, 'a')), 413, "1000 bytes"},
  };
  // Two Content-Encoding lines are two codings, as one line listing both would be.
  wa::request two_lines = make_request("POST", "/echo", {}, encoded(content_coding::br, gz));
  two_lines.insert(wa::http::field::content_encoding, "gzip");
  two_lines.insert(wa::http::field::content_encoding, "br");
  EXPECT_EQ(s.app.respond(two_lines).result_int(), 415u);
  for (const refusal_row& row : rows) {
    wa::response res = s.post(row.target, row.coding, row.body);
    EXPECT_EQ(res.result_int(), row.status) << row.rule;
    EXPECT_EQ(field(res, "Content-Type"), "application/problem+json") << row.rule;
    EXPECT_NE(res.body().find(row.detail_has), std::string::npos) << row.rule << ": " << res.body();
    if (row.status == 415) {
      EXPECT_EQ(field(res, "Accept-Encoding"), "br, zstd, gzip") << row.rule;
    }
  }
  EXPECT_EQ(s.post("/small", "gzip", encoded(content_coding::gzip, std::string(1000, 'a'))).body(),
            "ok")
      << "exactly the limit is accepted";
}

long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// tests/app/data/zeros-1gib.br: `head -c 1G /dev/zero | brotli -q 5 -w 24`, 809 bytes.
TEST(Compression, ABrotliBombOf1GiBIsRefusedWithinItsLimitAndBoundedMemory) {
  std::ifstream file(WAYPOINT_COMPRESSION_DATA "/zeros-1gib.br", std::ios::binary);
  std::string bomb((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  ASSERT_LT(bomb.size(), 1024u);
  wa::application app;
  app.use(wa::compression({.max_decoded_bytes = 1 << 20}));
  std::atomic<int> handled{0};
  app.post("/upload", [&](wa::context&) { ++handled; });
  { std::ofstream("/proc/self/clear_refs") << "5"; }  // resets VmHWM to the current RSS
  long before = peak_rss_kib();
  auto started = std::chrono::steady_clock::now();
  wa::response res = app.respond(make_request("POST", "/upload", {{"Content-Encoding", "br"}}, bomb));
  auto took = std::chrono::steady_clock::now() - started;
  long growth = peak_rss_kib() - before;
  EXPECT_EQ(res.result_int(), 413u);
  EXPECT_NE(res.body().find("1048576 bytes"), std::string::npos) << res.body();
  EXPECT_EQ(handled, 0);
  // The limit (1 MiB, up to twice that as the string grows) plus brotli's 16 MiB window.
  EXPECT_LT(growth, 40 * 1024) << "peak RSS grew by " << growth << " KiB";
  EXPECT_LT(took, 2s);
  std::printf("the 1 GiB bomb: 413 after %lld ms, peak RSS +%ld KiB\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
              growth);
}

// --- streamed bodies over a real server --------------------------------------------------------

struct streaming_server {
  wa::application app;
  std::atomic<int> acknowledged{0};  // events the client has decoded
  std::unique_ptr<wa::testing::loopback_server> server;
  std::string page = json_text(20000);
  explicit streaming_server() {
    app.use(wa::compression());
    // Event i+1 waits until the client says it decoded event i: a flush that did not happen
    // leaves the client waiting, and the test fails on its timeout.
    app.get("/events", [this](wa::context& ctx) -> wa::awaitable<void> {
      auto events = co_await wa::event_stream::open(ctx, {.heartbeat = 10s});
      asio::steady_timer pause(co_await asio::this_coro::executor);
      for (int i = 1; i <= 5; ++i) {
        if (!co_await events.send({.data = "event number " + std::to_string(i), .id = std::to_string(i)}))
          co_return;
        for (int waited = 0; acknowledged < i && waited < 500; ++waited) {
          pause.expires_after(10ms);
          co_await pause.async_wait(asio::use_awaitable);
        }
      }
    });
    app.get("/chunks", [](wa::context& ctx) -> wa::awaitable<void> {
      ctx.response().header("Content-Type", "text/plain");
      for (int i = 0; i < 50; ++i) co_await ctx.write_chunk("line " + std::to_string(i) + "\n");
    });
    app.get("/page", [this](wa::context& ctx) { ctx.response().body(page, "text/html"); });
    server = std::make_unique<wa::testing::loopback_server>(app);
  }
  std::uint16_t port() const { return server->port(); }
  std::string url(std::string_view path) const { return server->url(path); }
};

// The chunked body of a response read from a socket as it arrives, chunk by chunk.
class chunked_reader {
 public:
  explicit chunked_reader(std::uint16_t port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), port});
  }
  void send(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes)); }
  std::string head() {
    while (buffer_.find("\r\n\r\n") == std::string::npos) read_more();
    std::size_t end = buffer_.find("\r\n\r\n") + 4;
    std::string out = buffer_.substr(0, end);
    buffer_.erase(0, end);
    return out;
  }
  // The next chunk's data; empty at the last chunk.
  std::string chunk() {
    while (buffer_.find("\r\n") == std::string::npos) read_more();
    std::size_t size = std::stoul(buffer_.substr(0, buffer_.find("\r\n")), nullptr, 16);
    std::size_t start = buffer_.find("\r\n") + 2;
    while (buffer_.size() < start + size + 2) read_more();
    std::string data = buffer_.substr(start, size);
    buffer_.erase(0, start + size + 2);
    return data;
  }

 private:
  void read_more() {
    char bytes[4096];
    std::size_t n = socket_.read_some(asio::buffer(bytes));
    buffer_.append(bytes, n);
  }
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  std::string buffer_;
};

TEST(Compression, EventsArriveOneAtATimeDecodedAsTheyCome) {
  for (auto [name, coding] : {std::pair{"gzip", content_coding::gzip},
                              std::pair{"br", content_coding::br},
                              std::pair{"zstd", content_coding::zstd}}) {
    streaming_server s;
    chunked_reader client(s.port());
    client.send("GET /events HTTP/1.1\r\nHost: t\r\nAccept-Encoding: " + std::string(name) +
                "\r\n\r\n");
    std::string head = client.head();
    EXPECT_NE(head.find("Content-Encoding: " + std::string(name) + "\r\n"), std::string::npos) << head;
    EXPECT_NE(head.find("Vary: Accept-Encoding\r\n"), std::string::npos) << head;
    incremental_decoder decoder(coding);
    std::string text = decoder.feed(client.chunk());
    EXPECT_EQ(text, ": stream open\n\n") << name;
    for (int i = 1; i <= 5; ++i) {
      // Each event is whole in the chunk that carries it, before the next is written.
      text = decoder.feed(client.chunk());
      EXPECT_EQ(text, "id: " + std::to_string(i) + "\ndata: event number " + std::to_string(i) +
                          "\n\n")
          << name;
      s.acknowledged = i;
    }
    std::string tail = client.chunk();  // the end of the compressed stream
    EXPECT_FALSE(tail.empty()) << name << ": the stream is finished in a chunk of its own";
    EXPECT_EQ(decoder.feed(tail), "") << name;
    EXPECT_EQ(client.chunk(), "") << name << ": then the last chunk";
  }
}

std::string run(const std::string& command) { return wa::testing::command_output(command); }

bool have(const char* tool) { return run(std::string("command -v ") + tool).size() > 0; }

std::string expected_lines() {
  std::string out;
  for (int i = 0; i < 50; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

TEST(Compression, CurlAndDebianToolsDecodeWhatTheLayerSends) {
  if (!have("curl") || !have("brotli") || !have("zstd")) WAYPOINT_SKIP_MISSING("curl, brotli or zstd");
  streaming_server s;
  for (const char* path : {"/page", "/chunks"}) {
    std::string identity = run("curl -sS " + s.url(path));
    ASSERT_FALSE(identity.empty());
    EXPECT_EQ(run("curl -sS --compressed " + s.url(path)), identity) << path;
    std::string br = run("curl -sS -H 'Accept-Encoding: br' " + s.url(path) + " | brotli -dc");
    std::string zstd = run("curl -sS -H 'Accept-Encoding: zstd' " + s.url(path) + " | zstd -dc");
    std::string gzip = run("curl -sS -H 'Accept-Encoding: gzip' " + s.url(path) +
                           " | /usr/bin/python3 -c 'import gzip,sys; "
                           "sys.stdout.buffer.write(gzip.decompress(sys.stdin.buffer.read()))'");
    EXPECT_EQ(br, identity) << path;
    EXPECT_EQ(zstd, identity) << path;
    EXPECT_EQ(gzip, identity) << path;
    std::string headers = run("curl -sS -o /dev/null -D - -H 'Accept-Encoding: zstd' " + s.url(path));
    EXPECT_NE(headers.find("Content-Encoding: zstd"), std::string::npos) << headers;
  }
  EXPECT_EQ(run("curl -sS " + s.url("/chunks")), expected_lines());
}

TEST(Compression, ChunksOutsideTheServerAreGatheredEncoded) {
  streaming_server s;  // its app, answered by respond(): the pieces become the body
  wa::response res = s.app.respond(make_request("GET", "/chunks", {{"Accept-Encoding", "gzip"}}));
  EXPECT_EQ(field(res, "Content-Encoding"), "gzip");
  EXPECT_EQ(decoded(content_coding::gzip, res.body()), expected_lines());
}

}  // namespace
