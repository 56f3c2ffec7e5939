// The form parsers (waypoint/app/content/form_parser.hpp) as tables, one row per rule: urlencoded
// decoding, boundaries, filenames, and multipart bodies, each of which is also fed cut at
// every byte and in single bytes, with the same outcome.
#include "waypoint/app/content/form_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using waypoint::app::form_error;
using waypoint::app::form_limits;
using waypoint::app::multipart_event;
using waypoint::app::multipart_parser;

// What a parser made of a body: a line per part ("name|filename|content type=content"),
// then "done" or the error's status and detail.
struct outcome {
  std::vector<std::string> parts;
  int status = 0;
  std::string detail;
  bool operator==(const outcome&) const = default;
};

std::ostream& operator<<(std::ostream& out, const outcome& o) {
  for (const std::string& p : o.parts) out << "[" << p << "] ";
  return out << o.status << " " << o.detail;
}

outcome parse_pieces(const std::vector<std::string_view>& pieces, const form_limits& limits = {},
                     std::string_view boundary = "XyZ") {
  multipart_parser parser(boundary, limits);
  outcome o;
  auto take = [&](multipart_event e) {
    if (e == multipart_event::part_begin)
      o.parts.push_back(parser.part().name + "|" + parser.part().filename + "|" +
                        parser.part().content_type + "=");
    if (e == multipart_event::data) o.parts.back().append(parser.data());
    if (e == multipart_event::error) o.status = parser.error().status, o.detail = parser.error().detail;
    return e != multipart_event::need_more && e != multipart_event::error;
  };
  for (std::string_view piece : pieces) {
    while (take(parser.next(piece))) {
    }
    if (o.status) return o;
  }
  take(parser.finish());
  return o;
}

outcome parse_whole(std::string_view body, const form_limits& limits = {}) {
  return parse_pieces({body}, limits);
}

outcome ok(std::vector<std::string> parts) { return {std::move(parts), 0, {}}; }

struct multipart_row {
  const char* rule;
  std::string body;
  outcome expected;  // status and the start of the detail, for an error
};

const std::vector<multipart_row>& multipart_rows() {
  static const std::vector<multipart_row> rows = {
      {"a field and a file",
       "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
       "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.txt\"\r\n"
       "Content-Type: text/plain\r\n\r\nline\r\nline2\r\n--XyZ--\r\n",
       ok({"a||=1", "f|x.txt|text/plain=line\r\nline2"})},
      {"preamble and epilogue are ignored",
       "preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ--"
       "\r\nepilogue --XyZ\r\nnot a part",
       ok({"a||=v"})},
      {"transport padding after a boundary",
       "--XyZ \t\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ--", ok({"a||=v"})},
      {"content that resembles the boundary",
       "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\n\r\n--Xy\r\r\n-\r\n--XyQ\r\n--XyZ--",
       ok({"a||=\r\n--Xy\r\r\n-\r\n--XyQ"})},
      {"an empty part and an empty body of a file",
       "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\n\r\n--XyZ\r\n"
       "Content-Disposition: form-data; name=f; filename=\"e\"\r\n\r\n\r\n--XyZ--",
       ok({"a||=", "f|e|="})},
      {"header names and form-data in any case, other fields skipped",
       "--XyZ\r\ncontent-disposition: Form-Data; NAME=\"a\"\r\nX-Other: 1\r\n"
       "Content-Transfer-Encoding: 8bit\r\n\r\nv\r\n--XyZ--",
       ok({"a||=v"})},
      {"quoted-pair in a quoted name",
       "--XyZ\r\nContent-Disposition: form-data; name=\"a\\\"b\"\r\n\r\nv\r\n--XyZ--",
       ok({"a\"b||=v"})},
      {"filename* (RFC 5987) preferred to filename",
       "--XyZ\r\nContent-Disposition: form-data; name=f; filename=\"e.txt\"; "
       "filename*=UTF-8''%e2%82%ac.txt\r\n\r\nv\r\n--XyZ--",
       ok({"f|\xE2\x82\xAC.txt|=v"})},
      {"an empty filename is a field",
       "--XyZ\r\nContent-Disposition: form-data; name=f; filename=\"\"\r\n\r\n\r\n--XyZ--",
       ok({"f||="})},
      {"RefusesMissingFinalBoundary",
       "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ\r\n", {{"a||=v"}, 400, "the body ends before"}},
      {"RefusesBodyCutInContent",
       "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv", {{"a||=v"}, 400, "the body ends before"}},
      {"RefusesBodyWithoutBoundary", "just text", {{}, 400, "the body ends before"}},
      {"RefusesPartWithoutName",
       "--XyZ\r\nContent-Disposition: form-data; filename=x\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "part 1 has no name"}},
      {"RefusesPartWithoutDisposition",
       "--XyZ\r\nContent-Type: text/plain\r\n\r\nv\r\n--XyZ--", {{}, 400, "part 1 has no Content-Disposition"}},
      {"RefusesDispositionOtherThanFormData",
       "--XyZ\r\nContent-Disposition: attachment; name=a\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "a Content-Disposition other than form-data"}},
      {"RefusesFoldedHeader",
       "--XyZ\r\nContent-Disposition: form-data;\r\n name=a\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "a folded header line in the header of part 1"}},
      {"RefusesBareLfInHeader",
       "--XyZ\r\nContent-Disposition: form-data; name=a\n\r\nv\r\n--XyZ--",
       {{}, 400, "a bare LF in the header of part 1"}},
      {"RefusesBareLfAfterBoundary",
       "--XyZ\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "a multipart boundary is followed by something other than CRLF"}},
      {"RefusesCrWithoutLfInHeader",
       "--XyZ\r\nContent-Disposition: form-data; name=a\rX\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "a CR without LF in the header"}},
      {"RefusesHeaderLineWithoutName",
       "--XyZ\r\nContent-Disposition: form-data; name=a\r\nno colon\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "a header line without a field name"}},
      {"RefusesBoundaryFollowedByText",
       "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZW\r\n--XyZ--",
       {{"a||=v"}, 400, "a multipart boundary is followed by something"}},
      {"RefusesSingleDashAfterBoundary",
       "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ-\r\n",
       {{"a||=v"}, 400, "a multipart boundary is followed by a single '-'"}},
      {"RefusesDispositionNamingAParameterTwice",
       "--XyZ\r\nContent-Disposition: form-data; name=a; NAME=b\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "a Content-Disposition that names the parameter \"NAME\" twice in the header of part 1"}},
      {"RefusesDispositionWithAParameterWithoutValue",
       "--XyZ\r\nContent-Disposition: form-data; name\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "a Content-Disposition that has the parameter \"name\" without '=' and a value"}},
      {"RefusesTwoDispositions",
       "--XyZ\r\nContent-Disposition: form-data; name=a\r\nContent-Disposition: form-data; "
       "name=b\r\n\r\nv\r\n--XyZ--",
       {{}, 400, "two Content-Disposition fields"}},
  };
  return rows;
}

TEST(MultipartParser, ReadsEachRuleAsTheTableSays) {
  for (const multipart_row& row : multipart_rows()) {
    outcome got = parse_whole(row.body);
    EXPECT_EQ(got.parts, row.expected.parts) << row.rule;
    EXPECT_EQ(got.status, row.expected.status) << row.rule << ": " << got.detail;
    EXPECT_EQ(got.detail.rfind(row.expected.detail, 0), 0u) << row.rule << ": " << got.detail;
  }
}

// The same outcome whatever the split: in two pieces at every offset, and byte by byte.
TEST(MultipartParser, GivesTheSameOutcomeCutAtEveryByte) {
  for (const multipart_row& row : multipart_rows()) {
    std::string_view body = row.body;
    outcome whole = parse_whole(body);
    for (std::size_t cut = 0; cut <= body.size(); ++cut)
      ASSERT_EQ(parse_pieces({body.substr(0, cut), body.substr(cut)}), whole)
          << row.rule << " cut at " << cut;
    std::vector<std::string_view> bytes;
    for (std::size_t i = 0; i < body.size(); ++i) bytes.push_back(body.substr(i, 1));
    ASSERT_EQ(parse_pieces(bytes), whole) << row.rule << " byte by byte";
  }
}

// A body with a boundary of the longest length, every split in three pieces of a file whose
// content is full of near-boundaries.
TEST(MultipartParser, FindsALongBoundaryAcrossThreePieces) {
  std::string boundary(70, 'b');
  std::string near = "\r\n--" + boundary.substr(0, 69) + "\r\r\n-";
  std::string body = "--" + boundary + "\r\nContent-Disposition: form-data; name=f; filename=a\r\n\r\n" +
                     near + near + "\r\n--" + boundary + "--";
  outcome expected = ok({"f|a|=" + near + near});
  std::string_view b = body;
  ASSERT_EQ(parse_pieces({b}, {}, boundary), expected);
  for (std::size_t i = 0; i < b.size(); i += 3)
    for (std::size_t j = i; j <= b.size(); j += 5)
      ASSERT_EQ(parse_pieces({b.substr(0, i), b.substr(i, j - i), b.substr(j)}, {}, boundary),
                expected)
          << i << " " << j;
}

std::string field_part(std::string_view name, std::string_view value) {
  return "--XyZ\r\nContent-Disposition: form-data; name=\"" + std::string(name) + "\"\r\n\r\n" +
         std::string(value) + "\r\n";
}

TEST(MultipartParser, RefusesEachLimitWith413NamingIt) {
  struct row {
    const char* limit;
    form_limits limits;
    std::string body;
    std::string detail;
  };
  std::string file = "--XyZ\r\nContent-Disposition: form-data; name=f; filename=big\r\n\r\n" +
                     std::string(11, 'x') + "\r\n";
  const row rows[] = {
      {"parts", {.max_parts = 2}, field_part("a", "") + field_part("b", "") + field_part("c", "") + "--XyZ--",
       "the form has more than 2 parts"},
      {"header bytes", {.max_part_header_bytes = 40}, field_part("a-rather-long-name", "") + "--XyZ--",
       "the header of part 1 is longer than 40 bytes"},
      {"field bytes", {.max_field_bytes = 10}, field_part("a", std::string(11, 'v')) + "--XyZ--",
       "the field \"a\" is longer than 10 bytes"},
      {"file bytes", {.max_file_bytes = 10}, file + "--XyZ--", "the file \"big\" is longer than 10 bytes"},
      {"total bytes", {.max_total_bytes = 50}, field_part("a", std::string(40, 'v')) + "--XyZ--",
       "the form is longer than 50 bytes"},
  };
  for (const row& r : rows) {
    outcome got = parse_whole(r.body, r.limits);
    EXPECT_EQ(got.status, 413) << r.limit;
    EXPECT_EQ(got.detail, r.detail) << r.limit;
    std::vector<std::string_view> bytes;
    for (std::size_t i = 0; i < r.body.size(); ++i) bytes.push_back(std::string_view(r.body).substr(i, 1));
    EXPECT_EQ(parse_pieces(bytes, r.limits).detail, r.detail) << r.limit << " byte by byte";
  }
  // At the limits exactly, all is well.
  EXPECT_EQ(parse_whole(field_part("a", std::string(10, 'v')) + "--XyZ--", {.max_field_bytes = 10}).status, 0);
  EXPECT_EQ(parse_whole(field_part("a", "") + field_part("b", "") + "--XyZ--", {.max_parts = 2}).status, 0);
}

TEST(MultipartBoundary, AcceptsRfc2046BoundariesQuotedOrNot) {
  struct row {
    std::string content_type;
    std::optional<std::string> boundary;  // nullopt: a 400
  };
  const row rows[] = {
      {"multipart/form-data; boundary=abc", "abc"},
      {"multipart/form-data; boundary=\"a b:c\"", "a b:c"},
      {"multipart/form-data;charset=utf-8;BOUNDARY=----WebKitFormBoundaryX", "----WebKitFormBoundaryX"},
      {"multipart/form-data; boundary=" + std::string(70, 'z'), std::string(70, 'z')},
      {"multipart/form-data; boundary=" + std::string(71, 'z'), std::nullopt},
      {"multipart/form-data", std::nullopt},
      {"multipart/form-data; boundary=", std::nullopt},
      {"multipart/form-data; boundary=\"ends in space \"", std::nullopt},
      {"multipart/form-data; boundary=\"cr\r\"", std::nullopt},
      {"multipart/form-data; boundary=\"unclosed", std::nullopt},
      // As Go's mime.ParseMediaType: parameters that do not parse, or one given twice, leave
      // no boundary to take (two readers could take different ones).
      {"multipart/form-data; boundary=a;b", std::nullopt},
      {"multipart/form-data; boundary=a; boundary=b", std::nullopt},
      {"multipart/form-data; boundary=a; Boundary=a", std::nullopt},
      {"multipart/form-data; boundary=a:b", std::nullopt},  // ':' needs a quoted-string
  };
  for (const row& r : rows) {
    form_error error;
    std::optional<std::string> got = waypoint::app::multipart_boundary(r.content_type, error);
    EXPECT_EQ(got, r.boundary) << r.content_type;
    EXPECT_EQ(error.status, r.boundary ? 0 : 400) << r.content_type;
  }
  form_error error;
  waypoint::app::multipart_boundary("multipart/form-data; boundary=a; boundary=b", error);
  EXPECT_EQ(error.detail, "the Content-Type \"multipart/form-data; boundary=a; boundary=b\" names "
                          "the parameter \"boundary\" twice");
}

TEST(Urlencoded, ParsesAsTheWhatwgUrlStandardSays) {
  struct row {
    const char* rule;
    std::string_view body;
    std::vector<std::pair<std::string, std::string>> fields;
  };
  const row rows[] = {
      {"pairs in order, repeated names kept", "a=1&b=2&a=3", {{"a", "1"}, {"b", "2"}, {"a", "3"}}},
      {"plus is a space, escapes decoded", "q=a+b%20c%2B&%3D=%26", {{"q", "a b c+"}, {"=", "&"}}},
      {"empty pieces skipped", "&&a=1&&", {{"a", "1"}}},
      {"no '=' is an empty value", "flag&x=", {{"flag", ""}, {"x", ""}}},
      {"split at the first '='", "a=b=c", {{"a", "b=c"}}},
      {"invalid escapes kept as they are", "a=%zz%4&b=%", {{"a", "%zz%4"}, {"b", "%"}}},
      {"UTF-8 escapes decoded", "e=%E2%82%AC", {{"e", "\xE2\x82\xAC"}}},
      {"an ill-formed sequence is one U+FFFD", "e=%E2%82x", {{"e", "\xEF\xBF\xBDx"}}},
      {"each stray byte is a U+FFFD", "e=%FF%80", {{"e", "\xEF\xBF\xBD\xEF\xBF\xBD"}}},
      {"a surrogate is not UTF-8", "e=%ED%A0%80", {{"e", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}}},
      {"empty body", "", {}},
  };
  for (const row& r : rows) {
    form_error error;
    auto got = waypoint::app::parse_urlencoded(r.body, {}, error);
    std::vector<std::pair<std::string, std::string>> pairs;
    for (auto& f : got) pairs.emplace_back(f.name, f.value);
    EXPECT_EQ(pairs, r.fields) << r.rule;
    EXPECT_EQ(error.status, 0) << r.rule;
  }
}

TEST(Urlencoded, RefusesTooManyOrTooLongFieldsWith413) {
  form_error error;
  EXPECT_TRUE(waypoint::app::parse_urlencoded("a=1&b=2&c=3", {.max_parts = 2}, error).empty());
  EXPECT_EQ(error.status, 413);
  EXPECT_EQ(error.detail, "the form has more than 2 fields");
  error = {};
  waypoint::app::parse_urlencoded("a=12345", {.max_field_bytes = 6}, error);
  EXPECT_EQ(error.status, 413);
  EXPECT_EQ(error.detail, "a field of the form is longer than 6 bytes");
  error = {};
  EXPECT_EQ(waypoint::app::parse_urlencoded("a=1&b=2", {.max_parts = 2}, error).size(), 2u);
  EXPECT_EQ(error.status, 0);
}

TEST(SafeFilename, KeepsOnlyAHarmlessLastComponent) {
  const std::pair<std::string_view, std::string> rows[] = {
      {"report.pdf", "report.pdf"},
      {"../../etc/passwd", "passwd"},
      {"C:\\Users\\me\\photo.jpg", "photo.jpg"},
      {"..", "file"},
      {".", "file"},
      {"", "file"},
      {".bashrc", "bashrc"},
      {std::string_view("a\0b\x01\x7f.txt", 9), "ab.txt"},
      {"name. . ", "name"},
      {"dir/", "file"},
      {"\xE2\x82\xAC.txt", "\xE2\x82\xAC.txt"},
  };
  for (const auto& [given, safe] : rows) EXPECT_EQ(waypoint::app::safe_filename(given), safe) << given;
  std::string euros;
  for (int i = 0; i < 100; ++i) euros += "\xE2\x82\xAC";  // 300 bytes
  std::string cut = waypoint::app::safe_filename(euros);
  EXPECT_EQ(cut.size(), 255u);  // 85 whole characters
  EXPECT_EQ(cut, euros.substr(0, 255));
}

}  // namespace
