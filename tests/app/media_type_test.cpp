// The media-type reader shared by forms, JSON bodies, compression and security_headers
// (src/app/detail/media_type.hpp, a private header): what it accepts and how it reads it, and each
// refusal with the words that name it, parameters given twice first (Go's
// mime.ParseMediaType refuses them too).
#include "app/detail/media_type.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using waypoint::app::detail::max_media_parameters;
using waypoint::app::detail::media_type;
using waypoint::app::detail::parse_media_type;
using waypoint::app::detail::parse_parameterized;

using parameters = std::vector<std::pair<std::string, std::string>>;

parameters all_parameters(const waypoint::app::detail::parameterized& p) {
  parameters out;
  p.for_each_parameter([&](std::string_view name, std::string value) { out.emplace_back(name, std::move(value)); });
  return out;
}

TEST(MediaType, ReadsTypeSubtypeSuffixAndParameters) {
  struct row {
    const char* rule;
    std::string_view text;
    std::string essence;
    std::string_view suffix;
    parameters params;
  };
  const std::vector<row> rows = {
      {"a bare type", "application/json", "application/json", "", {}},
      {"the essence in lower case", "Application/JSON", "application/json", "", {}},
      {"a structured syntax suffix (RFC 6838 §4.2.8)", "application/vnd.api+json", "application/vnd.api+json",
       "json", {}},
      {"the last '+' starts the suffix", "application/a+b+cbor", "application/a+b+cbor", "cbor", {}},
      {"whitespace around the type", "  text/html  ", "text/html", "", {}},
      {"a token value", "text/html; charset=utf-8", "text/html", "", {{"charset", "utf-8"}}},
      {"a quoted value with a quoted-pair", R"(multipart/form-data; boundary="a \"b\"; c")",
       "multipart/form-data", "", {{"boundary", R"(a "b"; c)"}}},
      {"parameters in order, no space after ';'", "a/b;x=1;y=2", "a/b", "", {{"x", "1"}, {"y", "2"}}},
      {"empty parameters (RFC 9110 §5.6.6)", "a/b;; x=1 ;", "a/b", "", {{"x", "1"}}},
      {"spaces around '=', as Go reads them", "a/b; x = 1", "a/b", "", {{"x", "1"}}},
      {"obs-text in a quoted value", "a/b; x=\"\xC3\xA9\"", "a/b", "", {{"x", "\xC3\xA9"}}},
  };
  for (const row& r : rows) {
    std::string why;
    std::optional<media_type> type = parse_media_type(r.text, &why);
    ASSERT_TRUE(type) << r.rule << ": " << why;
    EXPECT_EQ(type->essence(), r.essence) << r.rule;
    EXPECT_TRUE(type->is(r.essence)) << r.rule;
    EXPECT_EQ(type->suffix(), r.suffix) << r.rule;
    EXPECT_EQ(all_parameters(*type), r.params) << r.rule;
  }
}

TEST(MediaType, FindsAParameterWithoutRegardToCase) {
  std::optional<media_type> type = parse_media_type("multipart/form-data; BOUNDARY=\"x y\"");
  ASSERT_TRUE(type);
  EXPECT_EQ(type->parameter("boundary"), "x y");
  EXPECT_EQ(type->parameter("charset"), std::nullopt);
  EXPECT_FALSE(type->is("multipart/mixed"));
  EXPECT_FALSE(type->is("multipart"));
}

TEST(MediaType, RefusesWhatDoesNotParseNamingWhy) {
  std::string many = "a/b";
  for (std::size_t i = 0; i <= max_media_parameters; ++i) many += "; p" + std::to_string(i) + "=v";
  struct row {
    const char* rule;
    std::string text;
    std::string why;
  };
  const std::vector<row> rows = {
      {"RefusesAParameterNamedTwice", "multipart/form-data; boundary=a; boundary=b",
       "names the parameter \"boundary\" twice"},
      {"RefusesAParameterNamedTwiceInAnotherCase", "text/plain; charset=utf-8; CHARSET=utf-8",
       "names the parameter \"CHARSET\" twice"},
      {"RefusesAParameterWithoutValue", "a/b; boundary", "has the parameter \"boundary\" without '=' and a value"},
      {"RefusesAnEmptyValue", "a/b; x=", "has the parameter \"x\" without a value that is a token or a closed quoted-string"},
      {"RefusesAnUnclosedQuotedString", "a/b; x=\"abc",
       "has the parameter \"x\" without a value that is a token or a closed quoted-string"},
      {"RefusesAControlByteInAQuotedString", "a/b; x=\"a\x01\"",
       "has the parameter \"x\" without a value that is a token or a closed quoted-string"},
      {"RefusesTextAfterAValue", "a/b; x=1 2", "has \"2\" where a ';' should be"},
      {"RefusesAParameterWithoutName", "a/b; =1", "has a parameter that does not start with a name"},
      {"RefusesNoSubtype", "text", "is not a type and a subtype, each a token, joined by '/'"},
      {"RefusesAnEmptySubtype", "text/", "is not a type and a subtype, each a token, joined by '/'"},
      {"RefusesTwoSlashes", "a/b/c", "is not a type and a subtype, each a token, joined by '/'"},
      {"RefusesNothingBeforeParameters", "; x=1", "is empty before its parameters"},
      {"RefusesMoreParametersThanItReads", many, "has more than 32 parameters"},
  };
  for (const row& r : rows) {
    std::string why;
    EXPECT_FALSE(parse_media_type(r.text, &why)) << r.rule;
    EXPECT_EQ(why, r.why) << r.rule;
  }
}

TEST(MediaType, ReadsAContentDispositionAsATokenWithParameters) {
  std::string why;
  auto disposition = parse_parameterized(R"(form-data; name="a"; filename="x.txt")", &why);
  ASSERT_TRUE(disposition) << why;
  EXPECT_EQ(disposition->value, "form-data");
  EXPECT_EQ(all_parameters(*disposition), (parameters{{"name", "a"}, {"filename", "x.txt"}}));
  EXPECT_FALSE(parse_parameterized("form-data; name=a; name=b", &why));
  EXPECT_EQ(why, "names the parameter \"name\" twice");
  EXPECT_FALSE(parse_parameterized("form data; name=a", &why));
  EXPECT_EQ(why, "does not start with a token");
}

}  // namespace
