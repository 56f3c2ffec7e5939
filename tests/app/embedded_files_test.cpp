// waypoint_embed_directory() and static_files over an embedded_directory: the generated table
// against the directory it came from (every file, byte for byte, sorted for the lookup), then
// the same directory served twice in one application, from disk and compiled in, and every
// answer compared: what static_files.hpp promises is the same rules from either source.
#include "waypoint/app/content/static_files.hpp"

#include <waypoint/embedded/fixture.hpp>  // generated: tests/app/CMakeLists.txt

#include "app_test_support.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace wa = waypoint::app;
using wa::testing::field;
using wa::testing::make_request;

const fs::path source = EMBEDDED_WWW_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

// --- the table ------------------------------------------------------------------------

TEST(EmbedDirectory, HoldsEveryFileByteForByteWithItsHashAsEtag) {
  std::vector<std::string> on_disk;
  for (const auto& entry : fs::recursive_directory_iterator(source))
    if (entry.is_regular_file()) on_disk.push_back(entry.path().lexically_relative(source).string());
  std::sort(on_disk.begin(), on_disk.end());
  waypoint::embedded_directory files = waypoint::embedded::fixture();
  ASSERT_EQ(files.files().size(), on_disk.size());
  for (const std::string& path : on_disk) {
    const waypoint::embedded_file* file = files.find(path);
    ASSERT_NE(file, nullptr) << path;
    std::string bytes = read_file(source / path);
    EXPECT_EQ(file->content, bytes) << path;
    EXPECT_EQ(file->etag, "\"" + sha256_hex(bytes).substr(0, 32) + "\"") << path;
  }
}

TEST(EmbedDirectory, TableIsSortedForTheBinarySearch) {
  auto files = waypoint::embedded::fixture().files();
  EXPECT_TRUE(std::is_sorted(files.begin(), files.end(),
                             [](const auto& a, const auto& b) { return a.path < b.path; }));
}

TEST(EmbedDirectory, FindsFilesAndDirectoriesByExactPath) {
  waypoint::embedded_directory files = waypoint::embedded::fixture();
  struct row {
    const char* rule;
    std::string_view path;
    bool file;
    bool directory;
  };
  const row rows[] = {
      {"a file at the top", "index.html", true, false},
      {"a file below a directory", "css/site.css", true, false},
      {"a directory is not a file", "css", false, true},
      {"a file whose name extends a directory's is no directory", "css-x", true, false},
      {"a prefix of a directory's name is nothing", "cs", false, false},
      {"a prefix of a file's name is nothing", "index.htm", false, false},
      {"the top is a directory", "", false, true},
      {"a path with a trailing slash is not a file", "docs/", false, false},
      {"a name with a space, parentheses and UTF-8", "na me \xc3\xa9 (1).txt", true, false},
  };
  for (const row& r : rows) {
    EXPECT_EQ(files.find(r.path) != nullptr, r.file) << r.rule;
    EXPECT_EQ(files.has_directory(r.path), r.directory) << r.rule;
  }
  EXPECT_EQ(waypoint::embedded_directory().find("index.html"), nullptr);
  EXPECT_FALSE(waypoint::embedded_directory().has_directory(""));
}

// --- disk and memory, answer for answer -------------------------------------------------

wa::application& two_sources() {
  static wa::application app;
  static bool built = [] {
    wa::static_file_options options;
    options.cache_control = "public, max-age=60";
    serve_static(app, "/disk/", source.string(), options);
    serve_static(app, "/mem/", waypoint::embedded::fixture(), options);
    return true;
  }();
  (void)built;
  return app;
}

struct exchange_row {
  const char* rule;
  const char* method;
  std::string path;  // below the prefix
  std::vector<std::pair<std::string, std::string>> headers;  // "{etag}": the file's own
};

wa::response ask(const std::string& prefix, const exchange_row& row, const std::string& etag) {
  wa::request req = make_request(row.method, prefix + row.path);
  for (auto [name, value] : row.headers) {
    if (auto at = value.find("{etag}"); at != std::string::npos) value.replace(at, 6, etag);
    req.set(name, value);
  }
  return wa::testing::answer(two_sources(), req);
}

TEST(EmbeddedFiles, AnswerAsTheSameFilesOnDiskDo) {
  const std::vector<exchange_row> rows = {
      {"a directory's index", "GET", "", {}},
      {"a file", "GET", "index.html", {}},
      {"the identity body without Accept-Encoding", "GET", "style.css", {}},
      {"the .gz sibling for gzip", "GET", "style.css", {{"Accept-Encoding", "gzip, deflate"}}},
      {"no sibling for gzip;q=0", "GET", "style.css", {{"Accept-Encoding", "gzip;q=0"}}},
      {"the .br sibling for br", "GET", "style.css", {{"Accept-Encoding", "br"}}},
      {"br before gzip at equal q", "GET", "style.css", {{"Accept-Encoding", "gzip, br"}}},
      {"a higher q for gzip wins", "GET", "style.css", {{"Accept-Encoding", "gzip, br;q=0.5"}}},
      {"no sibling for a coding without one", "GET", "docs/guide.txt", {{"Accept-Encoding", "br"}}},
      {"HEAD: the same fields, no body", "HEAD", "style.css", {{"Accept-Encoding", "gzip"}}},
      {"HEAD of a range", "HEAD", "data.qqq", {{"Range", "bytes=0-9"}}},
      {"a directory without its slash is redirected", "GET", "docs", {}},
      {"a nested directory's index", "GET", "docs/", {}},
      {"a directory without an index is 404", "GET", "css/", {}},
      {"a file named like a directory plus a suffix", "GET", "css-x", {}},
      {"a hidden file is 404", "GET", ".hidden", {}},
      {"an escaped name", "GET", "na%20me%20%C3%A9%20(1).txt", {}},
      {"an empty file", "GET", "empty.txt", {}},
      {"an unknown extension", "GET", "data.qqq", {}},
      {"a missing file", "GET", "missing.txt", {}},
      {"a missing directory", "GET", "nowhere/", {}},
      {"an empty segment", "GET", "docs//guide.txt", {}},
      {"a file named as a directory", "GET", "index.html/", {}},
      {"a byte range", "GET", "data.qqq", {{"Range", "bytes=10-19"}}},
      {"a suffix range", "GET", "data.qqq", {{"Range", "bytes=-16"}}},
      {"a range past the end", "GET", "data.qqq", {{"Range", "bytes=300-"}}},
      {"several ranges are sent whole", "GET", "data.qqq", {{"Range", "bytes=0-1,4-5"}}},
      {"If-None-Match with the current tag", "GET", "data.qqq", {{"If-None-Match", "{etag}"}}},
      {"If-None-Match with another tag", "GET", "data.qqq", {{"If-None-Match", "\"x\""}}},
      {"If-Match with the current tag", "GET", "data.qqq", {{"If-Match", "{etag}"}}},
      {"If-Match with another tag", "GET", "data.qqq", {{"If-Match", "\"x\""}}},
      {"If-Range with the current tag", "GET", "data.qqq",
       {{"Range", "bytes=0-3"}, {"If-Range", "{etag}"}}},
      {"If-Range with another tag", "GET", "data.qqq",
       {{"Range", "bytes=0-3"}, {"If-Range", "\"x\""}}},
      {"a precompressed sibling's own tag", "GET", "style.css",
       {{"Accept-Encoding", "gzip"}, {"If-None-Match", "{etag}"}}},
  };
  // Only the validators' values differ: "<mtime>-<size>" against the content's hash. (The
  // length is the server's to write; under respond() the bodies are compared instead.)
  const char* compared[] = {"Content-Type", "Content-Encoding", "Content-Range",
                            "Accept-Ranges", "Vary", "Cache-Control"};
  for (const exchange_row& row : rows) {
    exchange_row plain{row.rule, "GET", row.path, {}};
    for (const auto& [name, value] : row.headers)
      if (name == "Accept-Encoding") plain.headers.push_back({name, value});
    std::string disk_tag = field(ask("/disk/", plain, ""), "ETag");
    std::string mem_tag = field(ask("/mem/", plain, ""), "ETag");
    wa::response disk = ask("/disk/", row, disk_tag);
    wa::response mem = ask("/mem/", row, mem_tag);
    EXPECT_EQ(mem.result_int(), disk.result_int()) << row.rule;
    EXPECT_EQ(mem.body(), disk.body()) << row.rule;
    for (const char* name : compared)
      EXPECT_EQ(field(mem, name), field(disk, name)) << row.rule << ": " << name;
    std::string location = field(mem, "Location");  // the router's, for a path to clean
    if (location.starts_with("/mem/")) location.replace(0, 5, "/disk/");
    EXPECT_EQ(location, field(disk, "Location")) << row.rule;
    EXPECT_EQ(field(mem, "ETag").empty(), field(disk, "ETag").empty()) << row.rule;
    EXPECT_TRUE(field(mem, "Last-Modified").empty()) << row.rule;
  }
}

TEST(EmbeddedFiles, DatePreconditionsAreIgnoredWithoutAModificationDate) {
  struct row {
    const char* rule;
    std::pair<std::string, std::string> header;
    int disk_status;  // the same request, from the file on disk
  };
  const char* future = "Fri, 01 Jan 2100 00:00:00 GMT";
  const char* past = "Thu, 01 Jan 1970 00:00:01 GMT";
  const row rows[] = {
      {"If-Modified-Since answers no 304", {"If-Modified-Since", future}, 304},
      {"If-Unmodified-Since answers no 412", {"If-Unmodified-Since", past}, 412},
  };
  for (const row& r : rows) {
    exchange_row ex{r.rule, "GET", "data.qqq", {r.header}};
    EXPECT_EQ(ask("/disk/", ex, "").result_int(), r.disk_status) << r.rule;
    EXPECT_EQ(ask("/mem/", ex, "").result_int(), 200) << r.rule;
  }
  // If-Range with a date names no version of a file without one: the whole file.
  exchange_row dated{"If-Range with a date", "GET", "data.qqq",
                     {{"Range", "bytes=0-3"}, {"If-Range", future}}};
  wa::response whole = ask("/mem/", dated, "");
  EXPECT_EQ(whole.result_int(), 200);
  EXPECT_EQ(whole.body().size(), 256u);
}

TEST(EmbeddedFiles, HiddenFilesAreServedWhenAllowed) {
  wa::application app;
  wa::static_file_options options;
  options.hidden_files = true;
  serve_static(app, "/", waypoint::embedded::fixture(), options);
  wa::response res = wa::testing::answer(app, "GET", "/.hidden");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), read_file(source / ".hidden"));
}

TEST(EmbeddedFiles, PrefixMustEndInSlash) {
  wa::application app;
  EXPECT_THROW(serve_static(app, "/assets", waypoint::embedded::fixture()), std::invalid_argument);
}

}  // namespace
