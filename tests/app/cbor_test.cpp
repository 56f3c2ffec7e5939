// The typed routes' CBOR (src/app/typed/cbor.hpp, cbor_json.ipp, private headers): the
// deterministic encoding against RFC 8949 Appendix A byte for byte, every refusal of the strict
// reader with its rule and byte offset, map keys sorted at every depth, and the same rules
// through an application's typed routes. cbor_differential.py checks both directions against
// python3-cbor2 on generated documents.
#include "app_test_support.hpp"
#include "app/typed/cbor_json.ipp"

#include <waypoint/app/typed/json.hpp>

#include "hex_text.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using waypoint::app::testing::from_hex;
using waypoint::app::testing::to_hex;

using namespace waypoint::app;
using namespace waypoint::app::testing;
namespace cbor = waypoint::app::detail::cbor;
namespace cbor_json = waypoint::app::detail::cbor_json;
using ordered = nlohmann::ordered_json;
using json = nlohmann::json;

// Spaced hex as it is compared: without the spaces.
std::string compact(std::string_view hex) { return to_hex(from_hex(hex)); }

std::string deterministic(const ordered& value) {
  std::string out;
  cbor_json::write_deterministic(value, out);
  return to_hex(out);
}

json strict(std::string_view hex) {
  json out;
  cbor_json::read_strict(from_hex(hex), out);
  return out;
}

// The same value and the same kind of number: 1 is not 1.0, and -0.0 is not 0.0.
bool same_document(const json& a, const json& b) {
  if (a.is_number_float() || b.is_number_float())
    return a.is_number_float() && b.is_number_float() &&
           std::bit_cast<std::uint64_t>(a.get<double>()) ==
               std::bit_cast<std::uint64_t>(b.get<double>());
  if (a.is_number() && b.is_number()) return a == b;
  if (a.type() != b.type()) return false;
  if (a.is_array() || a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
      if ((a.is_object() && i.key() != j.key()) || !same_document(*i, *j)) return false;
    return true;
  }
  return a == b;
}

// --- RFC 8949 Appendix A: the examples whose encoding is the deterministic one ------------

struct appendix_row {
  const char* rule;
  ordered value;
  const char* hex;
};

class AppendixA : public ::testing::TestWithParam<appendix_row> {};

TEST_P(AppendixA, WrittenByteExact) {
  EXPECT_EQ(deterministic(GetParam().value), compact(GetParam().hex)) << GetParam().rule;
}

TEST_P(AppendixA, ReadBackToTheSameDocument) {
  json expected = json::parse(GetParam().value.dump());
  if (GetParam().value.is_number_float()) expected = GetParam().value.get<double>();
  json read = strict(GetParam().hex);
  EXPECT_TRUE(same_document(read, expected)) << GetParam().rule << ": " << read.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, AppendixA,
    ::testing::Values(
        appendix_row{"0", 0, "00"}, appendix_row{"1", 1, "01"}, appendix_row{"10", 10, "0a"},
        appendix_row{"23, the largest in the initial byte", 23, "17"},
        appendix_row{"24, the smallest in a one-byte argument", 24, "1818"},
        appendix_row{"25", 25, "1819"}, appendix_row{"100", 100, "1864"},
        appendix_row{"1000", 1000, "1903e8"}, appendix_row{"1000000", 1000000, "1a000f4240"},
        appendix_row{"1000000000000", std::int64_t{1000000000000}, "1b000000e8d4a51000"},
        appendix_row{"2^64-1", std::numeric_limits<std::uint64_t>::max(), "1bffffffffffffffff"},
        appendix_row{"-1", -1, "20"}, appendix_row{"-10", -10, "29"},
        appendix_row{"-100", -100, "3863"}, appendix_row{"-1000", -1000, "3903e7"},
        appendix_row{"-2^63, the smallest integer a document holds",
                     std::numeric_limits<std::int64_t>::min(), "3b7fffffffffffffff"},
        appendix_row{"0.0 as a half", 0.0, "f90000"},
        appendix_row{"-0.0 keeps its sign", -0.0, "f98000"},
        appendix_row{"1.0 stays a float", 1.0, "f93c00"},
        appendix_row{"1.1 needs a double", 1.1, "fb3ff199999999999a"},
        appendix_row{"1.5", 1.5, "f93e00"},
        appendix_row{"65504.0, the largest half", 65504.0, "f97bff"},
        appendix_row{"100000.0 needs a single", 100000.0, "fa47c35000"},
        appendix_row{"the largest single", 3.4028234663852886e+38, "fa7f7fffff"},
        appendix_row{"1.0e+300 beyond any single", 1.0e+300, "fb7e37e43c8800759c"},
        appendix_row{"the smallest subnormal half", 5.960464477539063e-8, "f90001"},
        appendix_row{"the smallest normal half", 0.00006103515625, "f90400"},
        appendix_row{"-4.0", -4.0, "f9c400"}, appendix_row{"-4.1", -4.1, "fbc010666666666666"},
        appendix_row{"false", false, "f4"}, appendix_row{"true", true, "f5"},
        appendix_row{"null", nullptr, "f6"}, appendix_row{"empty text", "", "60"},
        appendix_row{"a", "a", "6161"}, appendix_row{"IETF", "IETF", "6449455446"},
        appendix_row{"quote and backslash", "\"\\", "62225c"},
        appendix_row{"U+00FC", "\u00fc", "62c3bc"}, appendix_row{"U+6C34", "\u6c34", "63e6b0b4"},
        appendix_row{"U+10151, four bytes", "\U00010151", "64f0908591"},
        appendix_row{"empty array", ordered::array(), "80"},
        appendix_row{"[1, 2, 3]", ordered::parse("[1,2,3]"), "83010203"},
        appendix_row{"nested arrays", ordered::parse("[1,[2,3],[4,5]]"), "8301820203820405"},
        appendix_row{"25 elements: a one-byte count",
                     ordered::parse("[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,"
                                    "23,24,25]"),
                     "98190102030405060708090a0b0c0d0e0f101112131415161718181819"},
        appendix_row{"empty map", ordered::object(), "a0"},
        appendix_row{"map with an array", ordered::parse(R"({"a":1,"b":[2,3]})"),
                     "a26161016162820203"},
        appendix_row{"array with a map", ordered::parse(R"(["a",{"b":"c"}])"), "826161a161626163"},
        appendix_row{"five pairs", ordered::parse(R"({"a":"A","b":"B","c":"C","d":"D","e":"E"})"),
                     "a56161614161626142616361436164614461656145"}));

// Values a document can hold that no request body may carry, written all the same.
struct written_only_row {
  const char* rule;
  ordered value;
  const char* hex;
};

class WrittenOnly : public ::testing::TestWithParam<written_only_row> {};

TEST_P(WrittenOnly, HasItsDeterministicForm) {
  EXPECT_EQ(deterministic(GetParam().value), compact(GetParam().hex)) << GetParam().rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, WrittenOnly,
    ::testing::Values(
        written_only_row{"NaN is the canonical half 7e00", std::nan(""), "f97e00"},
        written_only_row{"infinity is a half", std::numeric_limits<double>::infinity(), "f97c00"},
        written_only_row{"-infinity is a half", -std::numeric_limits<double>::infinity(), "f9fc00"},
        written_only_row{"binary is a byte string", ordered::binary({0x01, 0x02, 0x03, 0x04}),
                         "4401020304"},
        written_only_row{"a double just past float's range is not cast to float",
                         3.4028235677973366e+38, "fb47effffff0000000"}));

// --- the strict reader's refusals ---------------------------------------------------------

struct refusal_row {
  const char* rule;
  std::string hex;
  std::size_t byte;
  std::string message;  // a part of the rule's text
};

class Refusal : public ::testing::TestWithParam<refusal_row> {};

TEST_P(Refusal, NamesTheRuleAndTheByte) {
  const refusal_row& row = GetParam();
  json out;
  try {
    cbor_json::read_strict(from_hex(row.hex), out);
    ADD_FAILURE() << row.rule << ": accepted as " << out.dump();
  } catch (const cbor::malformed& e) {
    EXPECT_EQ(e.byte(), row.byte) << row.rule << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(row.message), std::string::npos)
        << row.rule << ": " << e.what();
  }
}

std::string repeated(std::string_view hex, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i) out += hex;
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Refusal,
    ::testing::Values(
        // Definite lengths only (§4.2.1).
        refusal_row{"indefinite array", "9f01ff", 0, "indefinite length"},
        refusal_row{"indefinite map", "bf616101ff", 0, "indefinite length"},
        refusal_row{"indefinite text", "7f6161ff", 0, "indefinite length"},
        refusal_row{"indefinite bytes", "5f4101ff", 0, "indefinite length"},
        refusal_row{"a break outside an indefinite item", "ff", 0, "unexpected break"},
        refusal_row{"indefinite inside an array", "819f01ff", 1, "indefinite length"},
        // Reserved additional information.
        refusal_row{"reserved 28", "1c", 0, "reserved additional information 28"},
        refusal_row{"reserved 29 in a text head", "7d", 0, "reserved additional information 29"},
        refusal_row{"reserved 30 in a simple value", "fe", 0, "reserved additional information 30"},
        // Shortest heads (§4.2.1).
        refusal_row{"23 in a one-byte argument", "1817", 0, "integer not in its shortest form"},
        refusal_row{"23 in a two-byte argument", "190017", 0, "integer not in its shortest form"},
        refusal_row{"255 in a two-byte argument", "1900ff", 0, "integer not in its shortest form"},
        refusal_row{"65535 in a four-byte argument", "1a0000ffff", 0,
                    "integer not in its shortest form"},
        refusal_row{"2^32-1 in an eight-byte argument", "1b00000000ffffffff", 0,
                    "integer not in its shortest form"},
        refusal_row{"a negative integer too", "3817", 0, "integer not in its shortest form"},
        refusal_row{"a string length", "580161", 0, "string length not in its shortest form"},
        refusal_row{"an array count", "980101", 0, "count not in its shortest form"},
        refusal_row{"a map count", "b90001616101", 0, "count not in its shortest form"},
        refusal_row{"a tag number", "d80101", 0, "tag number not in its shortest form"},
        // Truncation, checked before anything is allocated.
        refusal_row{"no item at all", "", 0, "truncated: an item expected"},
        refusal_row{"a head cut short", "1900", 0, "truncated head"},
        refusal_row{"a float cut short", "fb3ff1", 0, "truncated head"},
        refusal_row{"a string cut short", "626a", 0, "string of 2 bytes where 1 are left"},
        refusal_row{"a length of 2^63 with no bytes", "7b8000000000000000", 0,
                    "string of 9223372036854775808 bytes where 0"},
        refusal_row{"a byte string of 2^64-1", "5bffffffffffffffff", 0,
                    "string of 18446744073709551615 bytes"},
        refusal_row{"an array claiming more items than bytes", "830102", 0,
                    "array of 3 items where 2 bytes are left"},
        refusal_row{"an array of 2^63-1 items", "9b7fffffffffffffff", 0, "array of"},
        refusal_row{"a map claiming more pairs than bytes", "a2616101", 0,
                    "map of 2 items where 3 bytes are left"},
        refusal_row{"a map with no bytes for its pair", "81a1", 1,
                    "map of 1 items where 0 bytes are left"},
        refusal_row{"an element missing", "828101", 3, "truncated: an item expected"},
        // UTF-8 (RFC 3629).
        refusal_row{"an overlong NUL", "62c080", 0, "text string not valid UTF-8"},
        refusal_row{"an overlong slash", "63e080af", 0, "text string not valid UTF-8"},
        refusal_row{"a surrogate", "63eda080", 0, "text string not valid UTF-8"},
        refusal_row{"past U+10FFFF", "64f4908080", 0, "text string not valid UTF-8"},
        refusal_row{"a lone continuation byte", "6180", 0, "text string not valid UTF-8"},
        refusal_row{"a sequence cut short", "62e6b0", 0, "text string not valid UTF-8"},
        refusal_row{"invalid UTF-8 in a key", "a162c0806161", 1, "text string not valid UTF-8"},
        // One meaning per body: no duplicate keys; only what a JSON document holds.
        refusal_row{"duplicate keys", "a2616101616102", 4, "duplicate map key \"a\""},
        refusal_row{"duplicate keys in a nested map", "81a3616101616202616103", 8,
                    "duplicate map key \"a\""},
        refusal_row{"duplicate keys far apart", "a3 6161 01 6162 a1616101 6161 02", 10,
                    "duplicate map key \"a\""},
        refusal_row{"a duplicate key is quoted as JSON", "a2 62220a 01 62220a 02", 5,
                    "duplicate map key \"\\\"\\n\""},
        refusal_row{"a long duplicate key is cut",
                    "a2 7841" + repeated("61", 65) + "01" + "7841" + repeated("61", 65) + "02", 69,
                    "\"" + std::string(64, 'a') + "...\""},
        refusal_row{"an integer key", "a10102", 1, "map key not a text string"},
        refusal_row{"a byte string key", "a1416101", 1, "map key not a text string"},
        refusal_row{"an array key", "a18001", 1, "map key not a text string"},
        refusal_row{"a tag", "c11a514b67b0", 0, "tag 1 (no JSON value is tagged)"},
        refusal_row{"a tag inside a map", "a16161c074323031332d30332d32315432303a30343a30305a", 3,
                    "tag 0"},
        refusal_row{"a byte string", "4401020304", 0, "byte string (no JSON value is one)"},
        refusal_row{"an empty byte string", "8140", 1, "byte string"},
        refusal_row{"undefined", "f7", 0, "undefined (no JSON value is one)"},
        refusal_row{"a simple value", "f0", 0, "simple value 16"},
        refusal_row{"a one-byte simple value", "f8ff", 0, "simple value"},
        refusal_row{"NaN as a half", "f97e00", 0, "NaN or infinity"},
        refusal_row{"NaN as a double", "fb7ff8000000000000", 0, "NaN or infinity"},
        refusal_row{"infinity as a half", "f97c00", 0, "NaN or infinity"},
        refusal_row{"-infinity as a single", "faff800000", 0, "NaN or infinity"},
        refusal_row{"infinity as a double", "fb7ff0000000000000", 0, "NaN or infinity"},
        refusal_row{"-2^63-1", "3b8000000000000000", 0, "integer below -2^63"},
        refusal_row{"-2^64", "3bffffffffffffffff", 0, "integer below -2^63"},
        // Bounded depth and one item.
        refusal_row{"257 nested arrays", repeated("81", 257) + "01", 256,
                    "nested deeper than 256 levels"},
        refusal_row{"257 nested maps", repeated("a16161", 257) + "01", 256 * 3,
                    "nested deeper than 256 levels"},
        refusal_row{"trailing bytes", "0102", 1, "1 bytes after the item"},
        refusal_row{"a second document", "a0a0", 1, "bytes after the item"}));

TEST(Cbor, AcceptsNestingUpToTheLimit) {
  json read = strict(repeated("81", 256) + "01");
  for (int level = 0; level < 256; ++level) {
    ASSERT_TRUE(read.is_array() && read.size() == 1) << level;
    json inner = read[0];
    read = inner;
  }
  EXPECT_EQ(read, 1);
}

TEST(Cbor, RefusesAHundredThousandNestedArraysQuicklyWithoutRecursion) {
  std::string bytes(100'000, '\x81');
  bytes += '\x01';
  auto start = std::chrono::steady_clock::now();
  json out;
  try {
    cbor_json::read_strict(bytes, out);
    ADD_FAILURE() << "accepted";
  } catch (const cbor::malformed& e) {
    EXPECT_EQ(e.byte(), 256u);
  }
  // Stops at level 257: the rest of the input is never read.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// --- what the reader takes leniently, and how it types numbers ---------------------------

struct lenient_row {
  const char* rule;
  std::string hex;
  const char* document;  // JSON text
};

class Lenient : public ::testing::TestWithParam<lenient_row> {};

TEST_P(Lenient, ReadsTheOneMeaning) {
  json read = strict(GetParam().hex);
  json expected = json::parse(GetParam().document);
  EXPECT_TRUE(same_document(read, expected)) << GetParam().rule << ": " << read.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, Lenient,
    ::testing::Values(lenient_row{"unsorted keys", "a3616202616101626161 03",
                                  R"({"a":1,"b":2,"aa":3})"},
                      lenient_row{"1.5 as a single", "fa3fc00000", "1.5"},
                      lenient_row{"1.5 as a double", "fb3ff8000000000000", "1.5"},
                      lenient_row{"0.0 as a double", "fb0000000000000000", "0.0"},
                      lenient_row{"a subnormal half", "f90001", "5.960464477539063e-8"},
                      lenient_row{"an empty key", "a16001", R"({"":1})"}));

// A document read from CBOR has the number types one parsed from JSON text has, so that
// conversions (json_field's range checks, from_json) behave the same in both formats.
TEST(Cbor, NumbersAreTypedAsNlohmannParsesJsonText) {
  struct row {
    const char* hex;
    const char* text;
  };
  for (const row& r :
       {row{"00", "0"}, row{"17", "23"}, row{"1bffffffffffffffff", "18446744073709551615"},
        row{"1b7fffffffffffffff", "9223372036854775807"}, row{"20", "-1"},
        row{"3b7fffffffffffffff", "-9223372036854775808"}, row{"f93c00", "1.0"}}) {
    json read = strict(r.hex);
    json parsed = json::parse(r.text);
    EXPECT_EQ(read.type(), parsed.type()) << r.hex;
    EXPECT_EQ(read, parsed) << r.hex;
  }
}

// --- map keys sorted (§4.2.1) --------------------------------------------------------------

struct sorting_row {
  const char* rule;
  const char* document;  // JSON text, in the order a handler built it
  std::string hex;
};

class KeySorting : public ::testing::TestWithParam<sorting_row> {};

TEST_P(KeySorting, ShorterFirstThenBytewise) {
  EXPECT_EQ(deterministic(ordered::parse(GetParam().document)), compact(GetParam().hex))
      << GetParam().rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, KeySorting,
    ::testing::Values(
        sorting_row{"b, a, aa become a, b, aa", R"({"b":1,"a":2,"aa":3})",
                    "a3 616102 616201 62616103"},
        sorting_row{"shorter first however the bytes compare", R"({"zz":1,"zzz":2,"b":3})",
                    "a3 616203 627a7a01 637a7a7a02"},
        sorting_row{"bytewise, not by code point collation", R"({"\u00e9":1,"z":2,"Z":3})",
                    "a3 615a03 617a02 62c3a901"},
        sorting_row{"a 24-byte key after a 23-byte one (its head is longer)",
                    R"({"aaaaaaaaaaaaaaaaaaaaaaaa":1,"bbbbbbbbbbbbbbbbbbbbbbb":2})",
                    "a2 77" + repeated("62", 23) + "02 7818" + repeated("61", 24) + "01"},
        sorting_row{
            "nested maps sorted at every depth",
            R"({"z":{"b":1,"a":{"d":[{"y":1,"x":2}],"c":0}},"a":[{"n":1,"m":2}]})",
            "a2 6161 81 a2 616d02 616e01 617a a2 6161 a2 616300 6164 81 a2 617802 617901 616201"},
        sorting_row{"already sorted stays", R"({"a":1,"b":2})", "a2616101616202"}));

TEST(Cbor, DeterministicBytesReadBackToTheDocument) {
  ordered document = ordered::parse(
      R"({"zeta":[1,-1,1.5,1.1,"t",null,true,{"k":{}}],"alpha":{"y":18446744073709551615,)"
      R"("x":-9223372036854775808},"":[]})");
  std::string bytes;
  cbor_json::write_deterministic(document, bytes);
  json read;
  cbor_json::read_strict(bytes, read);
  EXPECT_EQ(read, json::parse(document.dump()));
  // And written again, the same bytes.
  std::string again;
  cbor_json::write_deterministic(ordered::parse(read.dump()), again);
  EXPECT_EQ(to_hex(again), to_hex(bytes));
}

// --- through an application's typed routes -------------------------------------------------

struct reply {
  std::string name;  // declared first, sorted second: "id" is shorter
  std::int64_t id = 0;
  double ratio = 0;
};
WAYPOINT_JSON_OBJECT(reply, name, id, ratio)

request cbor_request(std::string_view method, std::string body, std::string_view accept) {
  request req = json_request(method, "/r", std::move(body), "application/cbor");
  req.set(http::field::accept, accept);
  return req;
}

class TypedRoute : public ::testing::Test {
 protected:
  TypedRoute() {
    app.get<reply>("/r", [] { return reply{"n", -2, 1.5}; });
    app.post<reply>("/r", [](reply r) { return r; });
  }
  application app{{.logger = [](std::string_view) {}}};
};

TEST_F(TypedRoute, AnswersInTheDeterministicEncoding) {
  response res = app.respond(cbor_request("GET", "", "application/cbor"));
  ASSERT_EQ(res.result_int(), 200u);
  EXPECT_EQ(field(res, "Content-Type"), "application/cbor");
  // {"id":-2,"name":"n","ratio":1.5}: keys sorted, -2 in the initial byte, 1.5 as a half.
  EXPECT_EQ(to_hex(res.body()), compact("a3 626964 21 646e616d65 616e 65726174696f f93e00"));
  // The same as writing the JSON answer's document deterministically.
  response as_json = app.respond(make_request("GET", "/r"));
  EXPECT_EQ(to_hex(res.body()), deterministic(ordered::parse(as_json.body())));
}

TEST_F(TypedRoute, EchoesARequestInTheDeterministicEncoding) {
  // Unsorted keys and a double-width float are taken; the answer is deterministic.
  std::string body = from_hex("a3 646e616d65 616e 626964 01 65726174696f fb3ff8000000000000");
  response res = app.respond(cbor_request("POST", body, "application/cbor"));
  ASSERT_EQ(res.result_int(), 201u) << res.body();
  EXPECT_EQ(to_hex(res.body()), compact("a3 626964 01 646e616d65 616e 65726174696f f93e00"));
}

struct bad_body_row {
  const char* rule;
  std::string hex;
  const char* detail;  // the whole detail
};

class TypedRouteRefusal : public TypedRoute, public ::testing::WithParamInterface<bad_body_row> {};

TEST_P(TypedRouteRefusal, IsA400ProblemNamingTheByteAndRule) {
  response res = app.respond(cbor_request("POST", from_hex(GetParam().hex), "application/cbor"));
  EXPECT_EQ(res.result_int(), 400u) << GetParam().rule;
  EXPECT_EQ(field(res, "Content-Type"), "application/problem+json");
  EXPECT_EQ(body_json(res).value("detail", ""), GetParam().detail) << GetParam().rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, TypedRouteRefusal,
    ::testing::Values(
        bad_body_row{"duplicate keys", "a3 626964 01 626964 02 616e 616e",
                     "malformed CBOR at byte 5: duplicate map key \"id\""},
        bad_body_row{"the first byte is byte 0", "9f",
                     "malformed CBOR at byte 0: indefinite length (only definite lengths are "
                     "accepted)"},
        bad_body_row{"an empty body", "", "malformed CBOR at byte 0: truncated: an item expected"},
        bad_body_row{"a tag", "c0a0", "malformed CBOR at byte 0: tag 0 (no JSON value is tagged)"},
        bad_body_row{"trailing bytes", "a0ff",
                     "malformed CBOR at byte 1: 1 bytes after the item"}));

}  // namespace
