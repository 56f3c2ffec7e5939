// Tests of waypoint/detail/http_grammar.hpp: the small rules of RFC 9110 §5.6 that the
// pattern parser, the server and the framework share, one table per rule.
#include <waypoint/detail/http_grammar.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using namespace waypoint::detail;

TEST(HttpGrammar, TokenBytesAreTcharOnly) {
  for (char c : std::string_view("azAZ09!#$%&'*+-.^_`|~")) EXPECT_TRUE(is_token_byte(c)) << c;
  for (char c : std::string_view(" \t\r\n\"(),/:;<=>?@[\\]{}\x7f\x80"))
    EXPECT_FALSE(is_token_byte(c)) << int(c);
  EXPECT_FALSE(is_token_byte('\0'));
}

struct trim_row {
  std::string_view in, out;
};

TEST(HttpGrammar, TrimRemovesOnlySpaceAndTabAtTheEnds) {
  for (auto [in, out] : std::vector<trim_row>{{"", ""},
                                              {" \t ", ""},
                                              {"gzip", "gzip"},
                                              {" \tgzip\t ", "gzip"},
                                              {"a b", "a b"},
                                              {"\r\ngzip\r\n", "\r\ngzip\r\n"}})
    EXPECT_EQ(trim(in), out) << "[" << in << "]";
}

struct equals_row {
  std::string_view a, b;
  bool equal;
};

TEST(HttpGrammar, IequalsIgnoresAsciiCaseOnly) {
  for (auto [a, b, equal] : std::vector<equals_row>{{"close", "CLOSE", true},
                                                    {"Keep-Alive", "keep-alive", true},
                                                    {"", "", true},
                                                    {"close", "closed", false},
                                                    {"@", "`", false},  // 0x40 | 0x20 == 0x60
                                                    {"[", "{", false},
                                                    {"\xc4", "\xe4", false}})
    EXPECT_EQ(iequals(a, b), equal) << a << " vs " << b;
  EXPECT_TRUE(istarts_with("Proxy-Authorization", "proxy-"));
  EXPECT_FALSE(istarts_with("prox", "proxy-"));
}

TEST(HttpGrammar, AsciiLowercaseLowersAToZOnly) {
  for (auto [in, out] : std::vector<std::pair<std::string_view, std::string_view>>{
           {"", ""},
           {"GET", "get"},
           {"Text/HTML; Charset=UTF-8", "text/html; charset=utf-8"},
           {"@AZ[`az{", "@az[`az{"},          // the bytes on either side of A-Z and a-z
           {"\xc4\xd6\xdc", "\xc4\xd6\xdc"},  // Latin-1 capitals are not ASCII: kept
           {std::string_view("N\0X", 3), std::string_view("n\0x", 3)}})
    EXPECT_EQ(ascii_lowercase(in), out) << "[" << in << "]";
  for (int c = 0; c < 256; ++c) {
    auto byte = static_cast<char>(c);
    char lowered = ascii_lowercase(std::string_view(&byte, 1))[0];
    EXPECT_EQ(lowered, c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : byte) << c;
  }
}

struct list_row {
  std::string_view list;
  std::vector<std::string_view> elements;
};

TEST(HttpGrammar, ListElementsAreTrimmedAndEmptyOnesSkipped) {
  for (const auto& row : std::vector<list_row>{{"", {}},
                                               {" , ,, ", {}},
                                               {"close", {"close"}},
                                               {"keep-alive, Upgrade", {"keep-alive", "Upgrade"}},
                                               {",gzip ,\tbr;q=0 ,", {"gzip", "br;q=0"}},
                                               {"a b, c", {"a b", "c"}}}) {
    std::vector<std::string_view> seen;
    for_each_list_element(row.list, [&](std::string_view e) { seen.push_back(e); });
    EXPECT_EQ(seen, row.elements) << "[" << row.list << "]";
  }
}

struct token_row {
  std::string_view list, token;
  bool found;
};

TEST(HttpGrammar, ListHasTokenMatchesWholeElementsWithoutCase) {
  for (auto [list, token, found] : std::vector<token_row>{{"keep-alive, Upgrade", "upgrade", true},
                                                          {"CLOSE", "close", true},
                                                          {"upgrade-insecure", "upgrade", false},
                                                          {"", "close", false},
                                                          {" , close ,", "close", true},
                                                          {"chunked;x=1", "chunked", false}})
    EXPECT_EQ(list_has_token(list, token), found) << "[" << list << "] " << token;
}

TEST(HttpGrammar, AppendDecimalWritesEveryWidth) {
  for (auto [n, text] : std::vector<std::pair<std::uint64_t, std::string>>{
           {0, "0"}, {7, "7"}, {404, "404"}, {18446744073709551615u, "18446744073709551615"}}) {
    std::string out = "x";
    append_decimal(out, n);
    EXPECT_EQ(out, "x" + text);
  }
}

struct qvalue_row {
  const char* rule;
  std::string_view text;
  int thousandths;  // -1: refused
};

TEST(HttpGrammar, QvaluesAreZeroToOneWithThreeDecimalsAtMost) {
  for (const qvalue_row& r : std::vector<qvalue_row>{
           {"zero", "0", 0},
           {"one", "1", 1000},
           {"a half", "0.5", 500},
           {"three decimals", "0.125", 125},
           {"one with zeros", "1.000", 1000},
           {"a dot alone", "0.", 0},
           {"above one", "1.5", -1},
           {"four decimals", "0.1234", -1},
           {"negative", "-1", -1},
           {"two", "2", -1},
           {"not a number", "nan", -1},
           {"empty", "", -1},
           {"a comma", "0,5", -1}})
    EXPECT_EQ(parse_qvalue(r.text), r.thousandths) << r.rule;
}

struct weighted_row {
  const char* rule;
  std::string_view element;
  std::string_view value;
  int q;
};

TEST(HttpGrammar, AWeightedElementIsItsValueAndItsQ) {
  for (const weighted_row& r : std::vector<weighted_row>{
           {"no parameter: 1", "gzip", "gzip", 1000},
           {"q", "br;q=0.8", "br", 800},
           {"Q in either case", "application/json;Q=0.2", "application/json", 200},
           {"other parameters pass", "text/html;level=1;q=0.4", "text/html", 400},
           {"whitespace around ';' and '='", " gzip ; q = 0.3 ", "gzip", 300},
           {"a malformed q", "zstd;q=2", "zstd", -1},
           {"the last q counts", "br;q=0.1;q=0.9", "br", 900}}) {
    weighted_element e = parse_weighted_element(r.element);
    EXPECT_EQ(e.value, r.value) << r.rule;
    EXPECT_EQ(e.q, r.q) << r.rule;
  }
}

struct etag_row {
  const char* rule;
  std::string_view field;
  bool weakly, strongly;
};

TEST(HttpGrammar, EntityTagListsMatchWeaklyForNoneMatchAndStronglyForMatch) {
  for (const etag_row& r : std::vector<etag_row>{
           {"the tag", "\"a\"", true, true},
           {"in a list", "\"x\", \"a\"", true, true},
           {"any", "*", true, true},
           {"weak form: If-None-Match only", "W/\"a\"", true, false},
           {"another tag", "\"b\"", false, false}}) {
    EXPECT_EQ(etag_listed(r.field, "\"a\""), r.weakly) << r.rule;
    EXPECT_EQ(etag_listed_strongly(r.field, "\"a\""), r.strongly) << r.rule;
  }
}

}  // namespace
