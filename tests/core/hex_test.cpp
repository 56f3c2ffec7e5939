// Tests of waypoint/detail/hex.hpp: the one hex writer and reader that JSON escapes,
// percent-encoding, trace and request ids, digests and quoted bytes all use.
#include <waypoint/detail/hex.hpp>

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace waypoint::detail;

// The digits of `byte` as a person writes them, worked out without the writer.
std::string expected_digits(int byte, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  return {digits[byte / 16], digits[byte % 16]};
}

TEST(Hex, EveryByteIsTwoDigitsHighNibbleFirstInEitherCase) {
  for (int byte = 0; byte < 256; ++byte) {
    char lower[3] = {}, upper[3] = {};
    EXPECT_EQ(write_hex(static_cast<unsigned char>(byte), lower), lower + 2);
    write_hex(static_cast<unsigned char>(byte), upper, hex_case::upper);
    EXPECT_EQ(std::string(lower), expected_digits(byte, false)) << byte;
    EXPECT_EQ(std::string(upper), expected_digits(byte, true)) << byte;
    std::string appended = "x";
    append_hex(appended, static_cast<unsigned char>(byte));
    EXPECT_EQ(appended, "x" + expected_digits(byte, false)) << byte;
  }
}

struct bytes_row {
  std::vector<unsigned char> bytes;
  std::string_view lower, upper;
};

TEST(Hex, ByteSequencesAreWrittenInOrderAndAppended) {
  for (const auto& [bytes, lower, upper] : std::vector<bytes_row>{
           {{}, "", ""},
           {{0x00}, "00", "00"},
           {{0x0f, 0xf0}, "0ff0", "0FF0"},
           {{0xde, 0xad, 0xbe, 0xef}, "deadbeef", "DEADBEEF"},
           {{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6},  // a W3C example trace id's start
            "4bf92f3577b34da6",
            "4BF92F3577B34DA6"}}) {
    std::string out = "#";
    append_hex(out, bytes);
    EXPECT_EQ(out, "#" + std::string(lower));
    out = "#";
    append_hex(out, bytes, hex_case::upper);
    EXPECT_EQ(out, "#" + std::string(upper));
    std::string written(2 * bytes.size(), '?');
    EXPECT_EQ(write_hex(bytes, written.data()), written.data() + written.size());
    EXPECT_EQ(written, lower);
  }
  std::array<unsigned char, 2> fixed{0xab, 0x01};  // arrays convert, as digests and ids do
  std::string out;
  append_hex(out, fixed);
  EXPECT_EQ(out, "ab01");
}

TEST(Hex, ValueReadsDigitsInEitherCaseAndRefusesEverythingElse) {
  for (int c = 0; c < 256; ++c) {
    int expected = c >= '0' && c <= '9'   ? c - '0'
                   : c >= 'a' && c <= 'f' ? c - 'a' + 10
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : -1;
    EXPECT_EQ(hex_value(static_cast<char>(c)), expected) << c;
  }
}

TEST(Hex, ValueReadsBackWhatTheWriterWrote) {
  for (int byte = 0; byte < 256; ++byte)
    for (hex_case letters : {hex_case::lower, hex_case::upper}) {
      char digits[2];
      write_hex(static_cast<unsigned char>(byte), digits, letters);
      EXPECT_EQ(hex_value(digits[0]) * 16 + hex_value(digits[1]), byte);
    }
}

}  // namespace
