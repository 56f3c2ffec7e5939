// static_files.hpp: the field parsers as tables, then a real server answering Debian's curl
// (ranges, --compressed, conditional requests, HEAD, index files), and a table of
// traversal attempts that must all end without a byte of a file outside the root, checked
// by an inotify watch that would see the file opened.
#include "waypoint/app/content/static_files.hpp"
#include "waypoint/app/serve.hpp"
#include "waypoint/beast/http_date.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace wa = waypoint::app;
namespace wd = waypoint::app::detail;

// --- the parsers ----------------------------------------------------------------------

struct range_row {
  const char* rule;
  std::string field;
  std::uint64_t size;
  std::optional<wd::range_request> expected;
};

TEST(StaticFields, RangeIsOneByteRangeOrWholeOrUnsatisfiable) {
  using rr = wd::range_request;
  const std::vector<range_row> rows = {
      {"first and last", "bytes=0-9", 100, rr{false, {0, 10}}},
      {"open end", "bytes=90-", 100, rr{false, {90, 10}}},
      {"a suffix", "bytes=-5", 100, rr{false, {95, 5}}},
      {"a suffix longer than the file is the file", "bytes=-500", 100, rr{false, {0, 100}}},
      {"a last past the end is cut to it", "bytes=50-1000", 100, rr{false, {50, 50}}},
      {"the unit is case-insensitive", "Bytes=1-1", 100, rr{false, {1, 1}}},
      {"a first past the end cannot be satisfied", "bytes=100-", 100, rr{true, {}}},
      {"an empty suffix cannot be satisfied", "bytes=-0", 100, rr{true, {}}},
      {"any range of an empty file cannot be satisfied", "bytes=0-0", 0, rr{true, {}}},
      {"several ranges are sent whole", "bytes=0-1,5-6", 100, std::nullopt},
      {"another unit is ignored", "items=0-1", 100, std::nullopt},
      {"last before first is ignored", "bytes=9-1", 100, std::nullopt},
      {"a sign is not a number", "bytes=+1-2", 100, std::nullopt},
      {"no dash is ignored", "bytes=12", 100, std::nullopt},
      {"a number past 64 bits is ignored", "bytes=99999999999999999999-", 100, std::nullopt},
  };
  for (const range_row& r : rows) {
    auto got = wd::parse_range(r.field, r.size);
    ASSERT_EQ(got.has_value(), r.expected.has_value()) << r.rule;
    if (!got) continue;
    EXPECT_EQ(got->unsatisfiable, r.expected->unsatisfiable) << r.rule;
    EXPECT_EQ(got->range.first, r.expected->range.first) << r.rule;
    EXPECT_EQ(got->range.length, r.expected->range.length) << r.rule;
  }
}

TEST(StaticFields, IfNoneMatchComparesWeakly) {
  struct row {
    const char* rule;
    const char* field;
    bool listed;
  };
  const std::vector<row> rows = {
      {"the same tag", "\"a-1\"", true},
      {"one of a list", "\"x\", \"a-1\"", true},
      {"a weak tag matches a strong one", "W/\"a-1\"", true},
      {"a star matches anything", "*", true},
      {"another tag", "\"a-2\"", false},
      {"an unquoted tag is another tag", "a-1", false},
  };
  for (const row& r : rows) EXPECT_EQ(waypoint::detail::etag_listed(r.field, "\"a-1\""), r.listed) << r.rule;
}

TEST(StaticFields, HttpDateReadsBackWhatTheServerWrites) {
  for (std::int64_t second : {0LL, 784111777LL, 1796144286LL, 4102444800LL}) {
    std::string text = waypoint::beast::http_date(second);
    EXPECT_EQ(wd::parse_http_date(text), std::optional<std::time_t>(second)) << text;
  }
  EXPECT_EQ(wd::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), std::time_t{784111777});
  for (const char* bad : {"Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                          "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
                          "Sun, 06 Nov 1994 08:49:37 UTC", ""})
    EXPECT_FALSE(wd::parse_http_date(bad)) << bad;
}

TEST(StaticFields, SafeSegmentsRefuseWhatCouldLeaveTheRoot) {
  struct row {
    const char* rule;
    std::string path;
    bool hidden;
    std::optional<std::vector<std::string_view>> expected;
  };
  using segs = std::vector<std::string_view>;
  const std::vector<row> rows = {
      {"a file", "a.css", false, segs{"a.css"}},
      {"nested", "a/b/c.js", false, segs{"a", "b", "c.js"}},
      {"the root is a directory", "", false, segs{""}},
      {"a trailing slash names a directory", "a/", false, segs{"a", ""}},
      {"a dot-dot segment", "a/../b", false, std::nullopt},
      {"a dot-dot at the start", "../b", false, std::nullopt},
      {"a dot segment", "./b", false, std::nullopt},
      {"an empty segment", "a//b", false, std::nullopt},
      {"a NUL", std::string("a\0b", 3), false, std::nullopt},
      {"a backslash", "..\\b", false, std::nullopt},
      {"a hidden file", ".env", false, std::nullopt},
      {"a hidden directory", "a/.git/config", false, std::nullopt},
      {"a hidden file when allowed", ".well-known/x", true, segs{".well-known", "x"}},
      {"dot-dot even when hidden files are allowed", "..", true, std::nullopt},
      {"a name longer than NAME_MAX", std::string(256, 'a'), false, std::nullopt},
      {"a path longer than PATH_MAX", [] {
         std::string p;
         while (p.size() <= 4096) p += "abcdefg/";
         return p + "x";
       }(),
       false, std::nullopt},
  };
  for (const row& r : rows) EXPECT_EQ(wd::safe_segments(r.path, r.hidden), r.expected) << r.rule;
}

TEST(StaticFields, ContentTypeByExtension) {
  EXPECT_EQ(wd::builtin_content_type("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(wd::builtin_content_type("APP.JS"), "text/javascript; charset=utf-8");
  EXPECT_EQ(wd::builtin_content_type("a.b.wasm"), "application/wasm");
  EXPECT_EQ(wd::builtin_content_type("README"), "");
  EXPECT_EQ(wd::builtin_content_type("x.unknown"), "");
}

// --- a server and curl ----------------------------------------------------------------

void write_file(const fs::path& p, std::string_view text) {
  std::ofstream(p, std::ios::binary) << text;
}

const std::string secret = "TOP-SECRET-OUTSIDE-THE-ROOT";
const std::string css = "body { color: #222; margin: 0 auto; max-width: 40em; }\n";

// A temporary tree: outside/secret.txt next to root/, whose links point in and out.
class file_tree {
 public:
  file_tree() {
    char pattern[] = "/tmp/waypoint-static-XXXXXX";
    base_ = ::mkdtemp(pattern);
    root_ = base_ / "root";
    fs::create_directories(root_ / "sub");
    fs::create_directories(base_ / "outside");
    write_file(base_ / "outside" / "secret.txt", secret);
    write_file(root_ / "index.html", "<h1>root index</h1>\n");
    write_file(root_ / "sub" / "index.html", "<h1>sub index</h1>\n");
    write_file(root_ / "app.css", css);
    write_file(root_ / "both.css", css);
    write_file(root_ / "both.css.br", "fake brotli bytes");
    write_file(root_ / ".env", "PASSWORD=" + secret);
    write_file(root_ / "notes.MD", "# notes\n");
    write_file(root_ / "plain", "no extension\n");
    std::string gzip = "gzip -kn " + (root_ / "app.css").string() + " && gzip -kn " +
                       (root_ / "both.css").string();
    EXPECT_EQ(std::system(gzip.c_str()), 0);
    fs::create_symlink("app.css", root_ / "link-inside");
    fs::create_symlink("../outside/secret.txt", root_ / "link-outside");
    fs::create_symlink(base_ / "outside" / "secret.txt", root_ / "absolute-link");
    fs::create_symlink("../outside", root_ / "dir-link-outside");
    fs::create_symlink("sub", root_ / "dir-link-inside");
    ::mkfifo((root_ / "fifo").c_str(), 0600);
  }
  ~file_tree() {
    std::error_code ignored;
    fs::remove_all(base_, ignored);
  }
  const fs::path& root() const { return root_; }
  fs::path secret_file() const { return base_ / "outside" / "secret.txt"; }

 private:
  fs::path base_;
  fs::path root_;
};

// Runs curl with `args` against the server and returns what it printed (-i: the head too).
std::string curl(std::uint16_t port, const std::string& args) {
  std::string command = "curl -sS -i --max-time 10 " + args;
  std::size_t at;
  while ((at = command.find("URL")) != std::string::npos)
    command.replace(at, 3, "http://127.0.0.1:" + std::to_string(port));
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  ::pclose(pipe);
  return out;
}

// The status of the last response in curl -i output (after redirects and 100s).
unsigned last_status(const std::string& out) {
  std::size_t at = out.rfind("HTTP/1.1 ");
  return at == std::string::npos ? 0 : static_cast<unsigned>(std::stoul(out.substr(at + 9, 3)));
}

std::string header_value(const std::string& out, const std::string& name) {
  std::size_t at = out.find("\r\n" + name + ": ");
  if (at == std::string::npos) return {};
  at += name.size() + 4;
  return out.substr(at, out.find("\r\n", at) - at);
}

std::string body_of(const std::string& out) {
  std::size_t at = out.rfind("\r\n\r\n");
  return at == std::string::npos ? std::string() : out.substr(at + 4);
}

class StaticFiles : public ::testing::Test {
 protected:
  virtual void adjust(waypoint::beast::server_options&) {}
  void SetUp() override {
    serve_static(app_, "/assets/", tree_.root().string());
    wa::static_file_options strict;
    strict.symlinks = wa::symlink_policy::refuse;
    strict.cache_control = "public, max-age=60";
    strict.content_types = {{"md", "text/x-markdown"}};
    serve_static(app_, "/strict/", tree_.root().string(), strict);
    waypoint::beast::server_options options;
    options.listen = {{"127.0.0.1", 0}};
    options.threads = 1;
    options.handle_signals = false;
    adjust(options);
    server_.emplace(options, wa::dispatch_to(app_));
    server_->start();
    port_ = server_->endpoints().front().port;
  }
  void TearDown() override {
    server_->stop();
    server_->wait();
  }
  std::string run(const std::string& args) { return curl(port_, args); }

  file_tree tree_;
  wa::application app_{{.logger = [](std::string_view) {}}};
  std::optional<waypoint::beast::server> server_;
  std::uint16_t port_ = 0;
};

TEST_F(StaticFiles, ServesAFileWithTypeValidatorsAndLength) {
  std::string out = run("URL/assets/app.css");
  EXPECT_EQ(last_status(out), 200u) << out;
  EXPECT_EQ(body_of(out), css);
  EXPECT_EQ(header_value(out, "Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(header_value(out, "Content-Length"), std::to_string(css.size()));
  EXPECT_EQ(header_value(out, "Accept-Ranges"), "bytes");
  EXPECT_EQ(header_value(out, "Cache-Control"), "no-cache");
  EXPECT_EQ(header_value(out, "Vary"), "Accept-Encoding");
  EXPECT_EQ(header_value(out, "ETag").front(), '"');
  EXPECT_TRUE(wd::parse_http_date(header_value(out, "Last-Modified"))) << out;
}

TEST_F(StaticFiles, HeadStatesTheLengthAndSendsNoBody) {
  std::string out = run("-I URL/assets/app.css");
  EXPECT_EQ(last_status(out), 200u) << out;
  EXPECT_EQ(header_value(out, "Content-Length"), std::to_string(css.size()));
  EXPECT_EQ(body_of(out), "");
}

TEST_F(StaticFiles, RangesAreAnswered206Or416) {
  struct row {
    const char* rule;
    const char* range;
    unsigned status;
    std::string content_range;
    std::string body;
  };
  std::string size = std::to_string(css.size());
  const std::vector<row> rows = {
      {"the first ten bytes", "0-9", 206, "bytes 0-9/" + size, css.substr(0, 10)},
      {"from an offset to the end", "50-", 206, "bytes 50-" + std::to_string(css.size() - 1) + "/" + size,
       css.substr(50)},
      {"the last three bytes", "-3", 206,
       "bytes " + std::to_string(css.size() - 3) + "-" + std::to_string(css.size() - 1) + "/" + size,
       css.substr(css.size() - 3)},
      {"past the end", "1000-", 416, "bytes */" + size, ""},
      {"several ranges: the whole file", "0-1,4-5", 200, "", css},
  };
  for (const row& r : rows) {
    std::string out = run(std::string("-r ") + r.range + " URL/assets/app.css");
    EXPECT_EQ(last_status(out), r.status) << r.rule << "\n" << out;
    EXPECT_EQ(header_value(out, "Content-Range"), r.content_range) << r.rule;
    if (r.status != 416) {
      EXPECT_EQ(body_of(out), r.body) << r.rule;
    }
  }
}

TEST_F(StaticFiles, IfRangeWithAnotherVersionSendsTheWholeFile) {
  std::string etag = header_value(run("-I URL/assets/app.css"), "ETag");
  std::string same = run("-r 0-3 -H 'If-Range: " + etag + "' URL/assets/app.css");
  EXPECT_EQ(last_status(same), 206u) << same;
  std::string other = run("-r 0-3 -H 'If-Range: \"other\"' URL/assets/app.css");
  EXPECT_EQ(last_status(other), 200u) << other;
  EXPECT_EQ(body_of(other), css);
}

// RFC 9110 §13, in the order of §13.2.2: a failed If-Match or If-Unmodified-Since is 412,
// as nginx and Go answer it (before, both fields were ignored: 200, 206 or 304), then
// If-None-Match or If-Modified-Since is 304.
TEST_F(StaticFiles, ConditionalRequestsAnswer304Or412) {
  std::string first = run("URL/assets/app.css");
  std::string etag = header_value(first, "ETag");
  std::string modified = header_value(first, "Last-Modified");
  const std::string old_date = "Sun, 06 Nov 1994 08:49:37 GMT";
  struct row {
    const char* rule;
    std::string args;
    unsigned status;
  };
  const std::vector<row> rows = {
      {"the same ETag", "-H 'If-None-Match: " + etag + "'", 304},
      {"a weak form of it among others", "-H 'If-None-Match: \"x\", W/" + etag + "'", 304},
      {"another ETag", "-H 'If-None-Match: \"x\"'", 200},
      {"not modified since its date", "-H 'If-Modified-Since: " + modified + "'", 304},
      {"modified since an older date", "-H 'If-Modified-Since: " + old_date + "'", 200},
      {"If-None-Match decides over If-Modified-Since",
       "-H 'If-None-Match: \"x\"' -H 'If-Modified-Since: " + modified + "'", 200},
      {"curl's own -z", "-z '" + modified + "'", 304},
      {"If-Match with the ETag", "-H 'If-Match: " + etag + "'", 200},
      {"If-Match with another", "-H 'If-Match: \"x\"'", 412},
      {"If-Match compares strongly", "-H 'If-Match: W/" + etag + "'", 412},
      {"If-Match: * for a file that exists", "-H 'If-Match: *'", 200},
      {"unmodified since its date", "-H 'If-Unmodified-Since: " + modified + "'", 200},
      {"modified after If-Unmodified-Since", "-H 'If-Unmodified-Since: " + old_date + "'", 412},
      {"a date that does not parse is ignored", "-H 'If-Unmodified-Since: yesterday'", 200},
      {"If-Match decides over If-Unmodified-Since",
       "-H 'If-Match: " + etag + "' -H 'If-Unmodified-Since: " + old_date + "'", 200},
      {"If-Match before If-None-Match", "-H 'If-Match: \"x\"' -H 'If-None-Match: " + etag + "'",
       412},
      {"a range is not served when If-Match fails", "-H 'If-Match: \"x\"' -r 0-9", 412},
  };
  for (const row& r : rows) {
    std::string out = run(r.args + " URL/assets/app.css");
    EXPECT_EQ(last_status(out), r.status) << r.rule << "\n" << out;
    if (r.status == 304) {
      EXPECT_EQ(header_value(out, "ETag"), etag) << r.rule;
      EXPECT_EQ(body_of(out), "") << r.rule;
    }
  }
}

TEST_F(StaticFiles, PrecompressedSiblingsFollowAcceptEncoding) {
  std::string compressed = run("--compressed URL/assets/app.css");
  EXPECT_EQ(last_status(compressed), 200u) << compressed;
  EXPECT_EQ(header_value(compressed, "Content-Encoding"), "gzip");
  EXPECT_EQ(body_of(compressed), css) << "curl decodes the .gz sibling to the file";
  EXPECT_NE(header_value(compressed, "ETag"), header_value(run("URL/assets/app.css"), "ETag"));

  std::string br = run("-H 'Accept-Encoding: gzip, br' URL/assets/both.css");
  EXPECT_EQ(header_value(br, "Content-Encoding"), "br");
  EXPECT_EQ(body_of(br), "fake brotli bytes");
  EXPECT_EQ(header_value(br, "Content-Type"), "text/css; charset=utf-8");
  std::string refused = run("-H 'Accept-Encoding: gzip;q=0, br;q=0' URL/assets/both.css");
  EXPECT_EQ(header_value(refused, "Content-Encoding"), "");
  EXPECT_EQ(body_of(refused), css);
  EXPECT_EQ(header_value(refused, "Vary"), "Accept-Encoding");
}

TEST_F(StaticFiles, DirectoriesServeTheirIndex) {
  EXPECT_EQ(body_of(run("URL/assets/")), "<h1>root index</h1>\n");
  EXPECT_EQ(body_of(run("URL/assets/sub/")), "<h1>sub index</h1>\n");
  std::string bare = run("URL/assets/sub");
  EXPECT_EQ(last_status(bare), 301u) << bare;
  EXPECT_EQ(header_value(bare, "Location"), "./sub/");
  EXPECT_EQ(body_of(run("-L URL/assets/sub")), "<h1>sub index</h1>\n");
  EXPECT_EQ(body_of(run("URL/assets/dir-link-inside/")), "<h1>sub index</h1>\n");
}

TEST_F(StaticFiles, OptionsSetCacheControlTypesAndSymlinks) {
  std::string out = run("URL/strict/notes.MD");
  EXPECT_EQ(header_value(out, "Content-Type"), "text/x-markdown");
  EXPECT_EQ(header_value(out, "Cache-Control"), "public, max-age=60");
  EXPECT_EQ(header_value(run("URL/assets/plain"), "Content-Type"), "application/octet-stream");
  EXPECT_EQ(body_of(run("URL/assets/link-inside")), css) << "a link inside the root is followed";
  EXPECT_EQ(last_status(run("URL/strict/link-inside")), 404u) << "unless links are refused";
}

TEST_F(StaticFiles, OtherMethodsAre405) {
  std::string out = run("-X POST URL/assets/app.css");
  EXPECT_EQ(last_status(out), 405u) << out;
}

// Every attempt ends in a 404 (or the router's 400 for a request path that cannot be
// routed), after any redirect, and the file outside the root is never even opened.
TEST_F(StaticFiles, TraversalAttemptsNeverReachOutsideTheRoot) {
  int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, tree_.secret_file().c_str(), IN_OPEN | IN_ACCESS), 0);
  std::string long_name(300, 'a');
  std::string deep;
  while (deep.size() <= 4200) deep += "a/";
  struct row {
    const char* rule;
    std::string target;
    unsigned status;
  };
  const std::vector<row> rows = {
      {"dot-dot", "/assets/../outside/secret.txt", 404},
      {"dot-dot twice", "/assets/sub/../../outside/secret.txt", 404},
      {"escaped dot-dot", "/assets/%2e%2e/outside/secret.txt", 404},
      {"escaped dot-dot, upper case", "/assets/%2E%2E/outside/secret.txt", 404},
      {"dot-dot with an escaped slash", "/assets/..%2Foutside%2Fsecret.txt", 400},
      {"escaped everything", "/assets/%2e%2e%2foutside%2fsecret.txt", 400},
      {"an escaped slash between names", "/assets/sub%2F..%2F..%2Foutside/secret.txt", 400},
      {"a backslash", "/assets/..%5Coutside%5Csecret.txt", 404},
      {"a link out of the root", "/assets/link-outside", 404},
      {"an absolute link", "/assets/absolute-link", 404},
      {"a directory link out of the root", "/assets/dir-link-outside/secret.txt", 404},
      {"a NUL", "/assets/app.css%00.txt", 404},
      {"a NUL alone", "/assets/%00", 404},
      {"a hidden file", "/assets/.env", 404},
      {"an escaped hidden file", "/assets/%2eenv", 404},
      {"a FIFO", "/assets/fifo", 404},
      {"a name over NAME_MAX", "/assets/" + long_name, 404},
      {"a path over PATH_MAX", "/assets/" + deep + "x", 404},
      {"an absolute path in the value", "/assets//etc/passwd", 404},
  };
  for (const row& r : rows) {
    std::string out = run("--path-as-is -L 'URL" + r.target + "'");
    EXPECT_EQ(last_status(out), r.status) << r.rule << "\n" << out.substr(0, 600);
    EXPECT_EQ(out.find(secret), std::string::npos) << r.rule;
  }
  std::array<char, 4096> events;
  EXPECT_LT(::read(watch, events.data(), events.size()), 0) << "the secret file was opened";
  ::close(watch);
}

// A socket that has sent GET /assets/big.bin and read nothing yet; -1 on failure.
// `receive_buffer`: SO_RCVBUF to ask for (0: the system's).
int request_big_file(std::uint16_t port, int receive_buffer) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string request = "GET /assets/big.bin HTTP/1.1\r\nHost: t\r\n\r\n";
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 ||
      ::send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A file body is cut like any other when its reader stops: each wait for the socket to
// take more lasts write_timeout at most.
class StaticFilesSlowReader : public StaticFiles {
 protected:
  void adjust(waypoint::beast::server_options& options) override {
    options.write_timeout = std::chrono::milliseconds(200);
  }
};

TEST_F(StaticFilesSlowReader, ReaderThatStopsIsCutAtTheWriteTimeout) {
  constexpr std::uint64_t size = 256ull * 1024 * 1024;  // sparse: costs no disk
  write_file(tree_.root() / "big.bin", "");
  fs::resize_file(tree_.root() / "big.bin", size);
  int fd = request_big_file(port_, 4096);
  ASSERT_GE(fd, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // reads nothing meanwhile
  timeval patience{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  std::uint64_t received = 0;
  std::array<char, 65536> buffer;
  ssize_t n;
  while ((n = ::recv(fd, buffer.data(), buffer.size(), 0)) > 0) received += static_cast<std::uint64_t>(n);
  bool closed = n == 0 || (n < 0 && errno == ECONNRESET);
  ::close(fd);
  EXPECT_TRUE(closed) << "the server never closed (errno " << errno << ")";
  EXPECT_GT(received, 0u);
  EXPECT_LT(received, size);
}

// A client that goes away in the middle of a file (wrk does, at the end of every run)
// must not take the server with it: sendfile to a closed socket raises SIGPIPE.
TEST_F(StaticFiles, ClientThatLeavesMidFileLeavesTheServerRunning) {
  write_file(tree_.root() / "big.bin", "");
  fs::resize_file(tree_.root() / "big.bin", 64ull * 1024 * 1024);
  for (int attempt = 0; attempt < 5; ++attempt) {
    int fd = request_big_file(port_, 0);
    ASSERT_GE(fd, 0);
    std::array<char, 65536> buffer;
    ASSERT_GT(::recv(fd, buffer.data(), buffer.size(), 0), 0);
    linger reset{1, 0};  // close with RST while the server is still sending
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    ::close(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(body_of(run("URL/assets/app.css")), css) << "the server still answers";
}

}  // namespace
