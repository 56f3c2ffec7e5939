// Tests of waypoint/detail/escape.hpp's percent-encoder: the one writer of %XX escapes for
// built URLs (url_for), pattern text and form bodies (the MCP bridge), checked against the
// decoder it must invert.
#include <waypoint/detail/escape.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace waypoint::detail;

struct encode_row {
  std::string_view text, encoded;
};

TEST(PercentEncoding, UnreservedBytesAloneAreKeptAndTheRestAreUppercaseEscapes) {
  for (auto [text, encoded] : std::vector<encode_row>{
           {"", ""},
           {"AZaz09-._~", "AZaz09-._~"},
           {"a b", "a%20b"},
           {"a+b&c=d", "a%2Bb%26c%3Dd"},  // form delimiters survive a form decoder
           {"%", "%25"},
           {"/?#[]@", "%2F%3F%23%5B%5D%40"},
           {"caf\xc3\xa9", "caf%C3%A9"},  // UTF-8 bytes one escape each, digits uppercase
           {std::string_view("\0\x7f\xff", 3), "%00%7F%FF"}}) {
    std::string out = "q=";
    append_percent_encoded(out, text, is_unreserved);
    EXPECT_EQ(out, "q=" + std::string(encoded)) << text;
  }
}

TEST(PercentEncoding, UnreservedIsRfc3986SectionTwoThree) {
  for (int c = 0; c < 256; ++c) {
    bool expected = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~';
    EXPECT_EQ(is_unreserved(static_cast<char>(c)), expected) << c;
  }
}

std::string decoded(std::string_view encoded, bool plus_is_space) {
  std::string out(encoded.size(), '\0');
  out.resize(percent_decode(encoded, out.data(), plus_is_space));
  return out;
}

TEST(PercentEncoding, EveryByteReadsBackThroughPercentDecode) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (bool (*keep)(char) noexcept : {is_unreserved, is_path_byte}) {
    std::string encoded;
    append_percent_encoded(encoded, all, keep);
    EXPECT_EQ(find_invalid_escape(encoded), std::string_view::npos);
    EXPECT_EQ(decoded(encoded, false), all);
  }
  // A query or form body is read with '+' as a space: an escaped '+' still reads as '+'.
  std::string query;
  append_percent_encoded(query, all, is_unreserved);
  EXPECT_EQ(decoded(query, true), all);
}

}  // namespace
