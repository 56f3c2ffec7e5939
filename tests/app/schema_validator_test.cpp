// The compiled JSON Schema validator (src/app/typed/schema_validator.hpp): a row per keyword rule, the
// refusals of compile(), the allocation pin, hostile inputs, and Debian's JSON-Schema-Test-Suite.
#include "app/typed/schema_validator.hpp"

#include <gtest/gtest.h>
#include <alloc_counter.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using json = nlohmann::json;
using validator = waypoint::app::detail::schema_validator<json>;

// --- keyword rows --------------------------------------------------------------------------

struct keyword_row {
  const char* rule;
  const char* schema;
  const char* document;
  bool valid;
  const char* pointer = "";  // of the violation, when not valid
  const char* keyword = "";
};

const keyword_row keyword_rows[] = {
    // type
    {"type string accepts a string", R"({"type":"string"})", R"("x")", true},
    {"type string refuses a number", R"({"type":"string"})", "1", false, "", "type"},
    {"type integer accepts 1.0", R"({"type":"integer"})", "1.0", true},
    {"type integer refuses 1.5", R"({"type":"integer"})", "1.5", false, "", "type"},
    {"type number accepts an integer", R"({"type":"number"})", "7", true},
    {"type array of names accepts null", R"({"type":["string","null"]})", "null", true},
    {"type array of names refuses a boolean", R"({"type":["string","null"]})", "true", false, "", "type"},
    // enum, const
    {"enum accepts a listed value", R"({"enum":["a",1,null]})", R"("a")", true},
    {"enum compares numbers by value", R"({"enum":[1]})", "1.0", true},
    {"enum refuses an unlisted value", R"({"enum":["a","b"]})", R"("c")", false, "", "enum"},
    {"enum does not equate true and 1", R"({"enum":[1]})", "true", false, "", "enum"},
    {"const compares objects by members", R"({"const":{"a":1,"b":[1,2]}})", R"({"b":[1.0,2],"a":1})", true},
    {"const refuses another value", R"({"const":2})", "3", false, "", "const"},
    {"const tells 2^53 from 2^53+1 exactly", R"({"const":9007199254740993})", "9007199254740992.0", false, "", "const"},
    // numeric bounds
    {"maximum accepts the bound", R"({"maximum":100})", "100", true},
    {"maximum refuses above", R"({"maximum":100})", "120", false, "", "maximum"},
    {"minimum refuses below", R"({"minimum":-5})", "-5.5", false, "", "minimum"},
    {"exclusiveMaximum refuses the bound", R"({"exclusiveMaximum":10})", "10.0", false, "", "exclusiveMaximum"},
    {"exclusiveMinimum accepts just above", R"({"exclusiveMinimum":0})", "1e-300", true},
    {"int64 maximum refuses 2^63 as uint64", R"({"maximum":9223372036854775807})", "9223372036854775808", false, "", "maximum"},
    {"int64 maximum accepts 2^63-1", R"({"maximum":9223372036854775807})", "9223372036854775807", true},
    {"int64 maximum refuses 2^63 as a double", R"({"maximum":9223372036854775807})", "9223372036854775808.0", false, "", "maximum"},
    {"int64 minimum accepts -2^63", R"({"minimum":-9223372036854775808})", "-9223372036854775808", true},
    {"int64 minimum refuses below -2^63", R"({"minimum":-9223372036854775808})", "-9223372036854777856", false, "", "minimum"},
    {"uint64 maximum accepts 2^64-1", R"({"maximum":18446744073709551615})", "18446744073709551615", true},
    {"uint64 maximum refuses 2^64", R"({"maximum":18446744073709551615})", "18446744073709551616", false, "", "maximum"},
    {"double bound compares exactly with uint64", R"({"maximum":1e19})", "10000000000000000001", false, "", "maximum"},
    {"bounds ignore strings", R"({"maximum":1})", R"("200")", true},
    // multipleOf
    {"multipleOf integer accepts a multiple", R"({"multipleOf":3})", "9", true},
    {"multipleOf integer refuses a non-multiple", R"({"multipleOf":3})", "10", false, "", "multipleOf"},
    {"multipleOf integer accepts 6.0", R"({"multipleOf":3})", "6.0", true},
    {"multipleOf 0.25 accepts 19.75", R"({"multipleOf":0.25})", "19.75", true},
    // The quotient is taken in double, as Python's jsonschema does: 19.99 / 0.01 is
    // 1998.9999999999998, so 19.99 is not a multiple of 0.01 for either.
    {"multipleOf 0.01 refuses 19.99 (double quotient)", R"({"multipleOf":0.01})", "19.99", false, "", "multipleOf"},
    {"multipleOf 0.5 accepts 1e308", R"({"multipleOf":0.5})", "1e308", true},
    {"multipleOf on uint64 is exact", R"({"multipleOf":2})", "18446744073709551615", false, "", "multipleOf"},
    // lengths in code points
    {"maxLength counts code points, not bytes", R"({"maxLength":2})", R"("é😀")", true},
    {"maxLength refuses a third code point", R"({"maxLength":2})", R"("é😀x")", false, "", "maxLength"},
    {"minLength counts an astral character once", R"({"minLength":2})", R"("😀")", false, "", "minLength"},
    // pattern
    {"pattern searches unanchored", R"({"pattern":"b+"})", R"("abbbc")", true},
    {"pattern anchored refuses a suffix", R"({"pattern":"^[a-z]{2,4}$"})", R"("abcde")", false, "", "pattern"},
    {"pattern classes and escapes", R"({"pattern":"^\\d{3}-\\w+\\s?$"})", R"("123-ab_c ")", true},
    {"pattern \\d is ASCII only", R"({"pattern":"^\\d$"})", R"("٣")", false, "", "pattern"},
    {"pattern alternation in a group", R"({"pattern":"^(?:cat|dog)s?$"})", R"("dogs")", true},
    {"pattern dot is one code point", R"({"pattern":"^.$"})", R"("😀")", true},
    {"pattern negated class", R"({"pattern":"^[^0-9]+$"})", R"("abc1")", false, "", "pattern"},
    {"pattern word boundary", R"({"pattern":"\\bcat\\b"})", R"("a cat!")", true},
    {"pattern ignores non-strings", R"({"pattern":"^a$"})", "12", true},
    // formats
    {"format date-time accepts RFC 3339", R"({"format":"date-time"})", R"("2024-02-29T23:59:60.5+01:00")", true},
    {"format date-time refuses a missing offset", R"({"format":"date-time"})", R"("2024-02-29T10:00:00")", false, "", "format"},
    {"format date refuses February 29 of 2023", R"({"format":"date"})", R"("2023-02-29")", false, "", "format"},
    {"format email accepts a dot-atom", R"({"format":"email"})", R"("a.b+c@example.org")", true},
    {"format email refuses two dots", R"({"format":"email"})", R"("a..b@example.org")", false, "", "format"},
    {"format uuid accepts 8-4-4-4-12", R"({"format":"uuid"})", R"("123e4567-e89b-12d3-a456-426614174000")", true},
    {"format uuid refuses no dashes", R"({"format":"uuid"})", R"("123e4567e89b12d3a456426614174000")", false, "", "format"},
    {"format uri accepts an authority and query", R"({"format":"uri"})", R"("https://u@host:8080/p?q=1#f")", true},
    {"format uri refuses a relative reference", R"({"format":"uri"})", R"("/relative")", false, "", "format"},
    {"format uri refuses a bad percent-encoding", R"({"format":"uri"})", R"("http://h/%zz")", false, "", "format"},
    {"format unknown is an annotation", R"({"format":"hostname"})", R"("not a host!")", true},
    // arrays
    {"items applies to every item", R"({"items":{"type":"integer"}})", "[1,2,\"x\"]", false, "/2", "type"},
    {"prefixItems then items", R"({"prefixItems":[{"type":"string"}],"items":{"type":"integer"}})", R"(["a",1,2])", true},
    {"prefixItems position is checked", R"({"prefixItems":[{"type":"string"}]})", "[1]", false, "/0", "type"},
    {"items false refuses extra items", R"({"prefixItems":[{}],"items":false})", "[1,2]", false, "/1", "items"},
    {"minItems refuses fewer", R"({"minItems":2})", "[1]", false, "", "minItems"},
    {"maxItems refuses more", R"({"maxItems":1})", "[1,2]", false, "", "maxItems"},
    {"uniqueItems refuses 1 and 1.0", R"({"uniqueItems":true})", "[1,2,1.0]", false, "/2", "uniqueItems"},
    {"uniqueItems compares objects by members", R"({"uniqueItems":true})", R"([{"a":1,"b":2},{"b":2,"a":1}])", false, "/1", "uniqueItems"},
    {"uniqueItems accepts distinct", R"({"uniqueItems":true})", R"([1,"1",[1],{"1":1},true])", true},
    {"uniqueItems on a long array finds a late repeat",
     R"({"uniqueItems":true})", "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,3.0]",
     false, "/36", "uniqueItems"},
    // objects
    {"required names the missing member", R"({"required":["name"]})", R"({"other":1})", false, "/name", "required"},
    {"properties point at the member", R"({"properties":{"a":{"properties":{"b/c":{"type":"string"}}}}})",
     R"({"a":{"b/c":5}})", false, "/a/b~1c", "type"},
    {"additionalProperties false names the member", R"({"properties":{"a":{}},"additionalProperties":false})",
     R"({"a":1,"z~":2})", false, "/z~0", "additionalProperties"},
    {"additionalProperties schema applies to the rest", R"({"properties":{"a":{}},"additionalProperties":{"type":"integer"}})",
     R"({"a":"x","b":2})", true},
    {"object keywords ignore arrays", R"({"required":["a"]})", "[]", true},
    // combinators
    {"allOf reports the inner violation", R"({"allOf":[{"type":"integer"},{"maximum":3}]})", "4", false, "", "maximum"},
    {"anyOf accepts one match", R"({"anyOf":[{"type":"string"},{"minimum":3}]})", "4", true},
    {"anyOf refuses no match", R"({"anyOf":[{"type":"string"},{"minimum":3}]})", "2", false, "", "anyOf"},
    {"oneOf refuses two matches", R"({"oneOf":[{"type":"integer"},{"minimum":3}]})", "4", false, "", "oneOf"},
    {"oneOf accepts exactly one", R"({"oneOf":[{"type":"integer"},{"minimum":3}]})", "4.5", true},
    {"not refuses a match", R"({"not":{"type":"string"}})", R"("x")", false, "", "not"},
    // $ref and boolean schemas
    {"ref resolves into $defs", R"({"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}})",
     R"({"a":"x"})", false, "/a", "type"},
    {"ref decodes ~0", R"({"$defs":{"a~b":{"maximum":1}},"$ref":"#/$defs/a~0b"})", "2", false, "", "maximum"},
    {"ref decodes ~1 and percent-encoding", R"({"$defs":{"a/b c":{"maximum":1}},"$ref":"#/$defs/a~1b%20c"})", "2", false, "", "maximum"},
    {"ref siblings apply too (2020-12)", R"({"$defs":{"n":{"type":"integer"}},"$ref":"#/$defs/n","minimum":5})", "3", false, "", "minimum"},
    {"recursive ref descends the document",
     R"({"$defs":{"t":{"type":"object","properties":{"next":{"$ref":"#/$defs/t"},"v":{"type":"integer"}}}},"$ref":"#/$defs/t"})",
     R"({"next":{"next":{"v":"x"}}})", false, "/next/next/v", "type"},
    {"true schema accepts anything", "true", R"({"a":[1]})", true},
    {"false schema refuses everything", "false", "null", false, "", "false"},
    {"false property schema refuses the member", R"({"properties":{"a":false}})", R"({"a":1})", false, "/a", "false"},
    {"annotations are accepted and ignored",
     R"({"title":"t","description":"d","default":1,"examples":[1],"readOnly":true,"writeOnly":false,"deprecated":true,"$comment":"c","$schema":"https://json-schema.org/draft/2020-12/schema"})",
     "5", true},
};

TEST(SchemaValidator, KeywordRows) {
  for (const auto& row : keyword_rows) {
    SCOPED_TRACE(row.rule);
    auto v = validator::compile(json::parse(row.schema));
    json document = json::parse(row.document);
    EXPECT_EQ(v.valid(document), row.valid);
    auto violation = v.check(document);
    EXPECT_EQ(violation.has_value(), !row.valid);
    if (!violation || row.valid) continue;
    EXPECT_EQ(violation->pointer, row.pointer);
    EXPECT_EQ(violation->keyword, row.keyword);
    EXPECT_FALSE(violation->message.empty());
  }
}

TEST(SchemaValidator, MessageStatesValueAndBound) {
  auto v = validator::compile(json::parse(R"({"properties":{"age":{"maximum":100}}})"));
  auto violation = v.check(json::parse(R"({"age":120})"));
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->pointer, "/age");
  EXPECT_EQ(violation->message, "is 120; the maximum is 100");
}

TEST(SchemaValidator, RefResolvesInTheGivenRootDocument) {
  json openapi = json::parse(R"({"components":{"schemas":{
      "order":{"type":"object","required":["sku"],"properties":{"sku":{"type":"string"},"line":{"$ref":"#/components/schemas/line"}}},
      "line":{"type":"object","properties":{"quantity":{"type":"integer","minimum":1}}}}}})");
  json schema = {{"$ref", "#/components/schemas/order"}};
  auto v = validator::compile(schema, &openapi);
  EXPECT_TRUE(v.valid(json::parse(R"({"sku":"a","line":{"quantity":2}})")));
  auto violation = v.check(json::parse(R"({"sku":"a","line":{"quantity":0}})"));
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->pointer, "/line/quantity");
  EXPECT_EQ(violation->keyword, "minimum");
}

// --- compile() refusals --------------------------------------------------------------------

struct refusal_row {
  const char* rule;
  const char* schema;
  const char* message_part;  // what the std::invalid_argument must say
};

const refusal_row refusal_rows[] = {
    {"unknown keyword names keyword and pointer", R"({"properties":{"a":{"minProperties":1}}})",
     "#/properties/a/minProperties: the keyword \"minProperties\" is not supported"},
    {"patternProperties is refused, not ignored", R"({"patternProperties":{"^a":{}}})", "patternProperties"},
    {"items array form is refused", R"({"items":[{}]})", "#/items: must be a schema"},
    {"remote ref is refused", R"({"$ref":"other.json#/a"})", "only local references"},
    {"anchor ref is refused", R"({"$ref":"#node"})", "anchors"},
    {"dangling ref is refused", R"({"$ref":"#/$defs/missing"})", "names nothing"},
    {"ref loop without descent is refused", R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"})",
     "a $ref cycle that never descends"},
    {"self ref at the root is refused", R"({"$ref":"#"})", "a $ref cycle"},
    {"unknown type name", R"({"type":"int"})", "#/type: an unknown type"},
    {"negative minLength", R"({"minLength":-1})", "#/minLength: must be a non-negative integer"},
    {"zero multipleOf", R"({"multipleOf":0})", "must be greater than 0"},
    {"backreference pattern names the pattern", R"({"pattern":"(a)\\1"})", "the pattern \"(a)\\\\1\" is not supported: backreferences"},
    {"lookahead pattern", R"x({"pattern":"a(?=b)"})x", "lookahead"},
    {"property escape pattern", R"({"pattern":"\\p{L}"})", "property escapes"},
    {"lone brace pattern", R"({"pattern":"a{"})", "a lone '{'"},
    {"unknown escape pattern", R"({"pattern":"\\q"})", "unknown escape"},
    {"nothing to repeat", R"({"pattern":"*a"})", "nothing to repeat"},
    {"huge repetition", R"({"pattern":"a{100000}"})", "repetition count"},
    {"program too large", R"({"pattern":"[a-z]{1000}[a-z]{1000}[a-z]{1000}"})", "NFA states"},
    {"schema not an object", R"({"not":3})", "#/not: a schema must be an object or a boolean"},
};

TEST(SchemaValidator, CompileRefusals) {
  for (const auto& row : refusal_rows) {
    SCOPED_TRACE(row.rule);
    try {
      (void)validator::compile(json::parse(row.schema));
      ADD_FAILURE() << "compiled";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(row.message_part), std::string::npos) << e.what();
    }
  }
}

TEST(SchemaValidator, CompilesUnderTheDiagnosticsAbiToo) {
  // The other nlohmann ABI is another type (json_codec.ipp); the template takes either, and
  // ordered_json (the response documents) as well.
  using ordered = waypoint::app::detail::schema_validator<nlohmann::ordered_json>;
  auto v = ordered::compile(nlohmann::ordered_json::parse(R"({"required":["b"],"properties":{"b":{"const":{"x":1,"y":2}}}})"));
  EXPECT_TRUE(v.valid(nlohmann::ordered_json::parse(R"({"b":{"y":2,"x":1}})")));
}

// --- the allocation pin --------------------------------------------------------------------

TEST(SchemaValidator, ValidAndCheckAllocateNothingOnAValidDocument) {
  json openapi = json::parse(R"({"components":{"schemas":{"order":{
    "type":"object","additionalProperties":false,"required":["id","sku","lines","placed"],
    "properties":{
      "id":{"type":"string","format":"uuid"},
      "sku":{"type":"string","pattern":"^[A-Z]{3}-\\d{4}$","minLength":8,"maxLength":8},
      "placed":{"type":"string","format":"date-time"},
      "email":{"type":"string","format":"email"},
      "site":{"type":"string","format":"uri"},
      "state":{"enum":["new","paid","sent"]},
      "quantity":{"type":"integer","minimum":1,"maximum":9223372036854775807,"multipleOf":1},
      "price":{"type":"number","exclusiveMinimum":0,"multipleOf":0.25},
      "tags":{"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":8},
      "lines":{"type":"array","minItems":1,"items":{"$ref":"#/components/schemas/line"}},
      "pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false},
      "note":{"anyOf":[{"type":"string"},{"type":"null"}]},
      "kind":{"oneOf":[{"const":"a"},{"const":"b"}]},
      "extra":{"not":{"type":"null"}, "allOf":[{"type":"object"}], "additionalProperties":{"type":"integer"}}
    }},
    "line":{"type":"object","required":["n"],"properties":{"n":{"type":"integer"},"sub":{"$ref":"#/components/schemas/line"}}}
  }}})");
  json schema = {{"$ref", "#/components/schemas/order"}};
  auto v = validator::compile(schema, &openapi);
  json document = json::parse(R"({
    "id":"123e4567-e89b-12d3-a456-426614174000","sku":"ABC-1234","placed":"2024-05-01T10:00:00Z",
    "email":"a@example.org","site":"https://example.org/x?y=1","state":"paid","quantity":3,"price":19.75,
    "tags":["a","b","c"],"lines":[{"n":1,"sub":{"n":2}}],"pair":["x",1],"note":null,"kind":"b",
    "extra":{"a":1,"b":2}})");
  ASSERT_FALSE(v.check(document)) << v.check(document)->message;
  waypoint::testing::allocation_scope scope;
  bool valid = v.valid(document);
  bool clean = !v.check(document).has_value();
  EXPECT_EQ(scope.count(), 0u);
  EXPECT_TRUE(valid);
  EXPECT_TRUE(clean);
}

// --- hostile inputs --------------------------------------------------------------------------

json nested_arrays(std::size_t depth) {
  return json::parse(std::string(depth, '[') + std::string(depth, ']'));
}

TEST(SchemaValidator, DeepDocumentIsAViolationNotACrash) {
  json deep = nested_arrays(100000);
  auto descending = validator::compile(json::parse(R"({"type":"array","items":{"$ref":"#"}})"));
  EXPECT_FALSE(descending.valid(deep));
  auto violation = descending.check(deep);
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->keyword, "depth");
  // A schema that does not descend never walks the depth.
  EXPECT_TRUE(validator::compile(json::parse(R"({"type":"array"})")).valid(deep));
  // uniqueItems and not do not hide depth either.
  // Parsed, not copied: copying a nlohmann document recurses once per level.
  std::string text = std::string(100000, '[') + std::string(100000, ']');
  json pair = json::parse("[" + text + "," + text + "]");
  EXPECT_FALSE(validator::compile(json::parse(R"({"uniqueItems":true})")).valid(pair));
  EXPECT_FALSE(validator::compile(json::parse(R"({"not":{"items":{"$ref":"#/not"}}})")).valid(deep));
  // The same schema accepts a modest depth.
  EXPECT_TRUE(descending.valid(nested_arrays(200)));
}

TEST(SchemaValidator, SelfRecursiveSchemaFollowsTheDocument) {
  auto v = validator::compile(json::parse(
      R"({"$defs":{"node":{"type":"object","required":["v"],"properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/node"}}}},"$ref":"#/$defs/node"})"));
  json list = {{"v", 0}};
  for (int k = 1; k < 100; ++k) list = {{"v", k}, {"next", std::move(list)}};
  EXPECT_TRUE(v.valid(list));
  json* tail = &list;
  while (tail->contains("next")) tail = &(*tail)["next"];
  (*tail)["v"] = "x";
  auto violation = v.check(list);
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->keyword, "type");
  EXPECT_EQ(violation->pointer.size(), 99 * std::string("/next").size() + 2);
}

TEST(SchemaValidator, HostilePatternsRunInLinearTime) {
  std::string as(30000, 'a');
  auto v = validator::compile(json::parse(R"({"pattern":"(a*)*b"})"));
  EXPECT_FALSE(v.valid(json(as)));
  EXPECT_TRUE(v.valid(json(as + "b")));
  auto nested = validator::compile(json::parse(R"({"pattern":"^(a|a?)+$"})"));
  EXPECT_TRUE(nested.valid(json(as)));
  EXPECT_FALSE(nested.valid(json(as + "!")));
  auto counted = validator::compile(json::parse(R"({"pattern":"^(a{1,30}){1,30}c"})"));
  EXPECT_FALSE(counted.valid(json(as)));
}

TEST(SchemaValidator, LongUniqueArrayIsNotQuadratic) {
  json items = json::array();
  for (int k = 0; k < 200000; ++k) items.push_back(k);
  auto v = validator::compile(json::parse(R"({"uniqueItems":true})"));
  EXPECT_TRUE(v.valid(items));
  items.push_back(199999.0);
  auto violation = v.check(items);
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->pointer, "/200000");
}

// --- JSON-Schema-Test-Suite ------------------------------------------------------------------
//
// Debian 12's json-schema-test-suite (2.0.0) ships draft3, draft4, draft6 and draft7; draft 7
// is the closest to 2020-12, and its cases run here after a translation of draft 7 spellings to
// their 2020-12 equivalents (same meaning, so the expected verdicts stand):
//   "definitions" -> "$defs" (also inside "$ref" pointers);
//   "items": [schemas] -> "prefixItems", and then "additionalItems" -> "items";
//   "additionalItems" next to a schema or absent "items" is dropped (draft 7 ignores it then).
// Every file is either run or skipped with a reason below, and a file the lists do not know
// fails the test, so nothing is skipped silently.

struct skipped {
  const char* what;  // a file, or "file|group description[|test description]"
  const char* why;
};

const char* const suite_files[] = {
    "additionalItems.json", "additionalProperties.json", "allOf.json", "anyOf.json",
    "boolean_schema.json", "const.json", "default.json", "enum.json", "exclusiveMaximum.json",
    "exclusiveMinimum.json", "items.json", "maxItems.json", "maxLength.json", "maximum.json",
    "minItems.json", "minLength.json", "minimum.json", "multipleOf.json", "not.json", "oneOf.json",
    "pattern.json", "properties.json", "ref.json", "required.json", "type.json", "uniqueItems.json",
    "optional/bignum.json", "optional/ecmascript-regex.json", "optional/zeroTerminatedFloats.json",
    "optional/format/date-time.json", "optional/format/date.json", "optional/format/email.json",
    "optional/format/uri.json",
};

const skipped suite_skips[] = {
    // Keywords not implemented (compile() refuses them, so they could not pass silently).
    {"contains.json", "contains: not implemented (waypoint emits no such keyword)"},
    {"dependencies.json", "dependencies: draft 7 only (2020-12 splits it into dependentRequired/dependentSchemas, not implemented)"},
    {"if-then-else.json", "if/then/else: not implemented"},
    {"maxProperties.json", "maxProperties: not implemented"},
    {"minProperties.json", "minProperties: not implemented"},
    {"patternProperties.json", "patternProperties: not implemented"},
    {"propertyNames.json", "propertyNames: not implemented"},
    {"definitions.json", "validates schemas against the draft 7 metaschema, a remote $ref"},
    {"refRemote.json", "remote references (http://localhost:1234/...): only local $ref is supported"},
    {"optional/content.json", "contentMediaType/contentEncoding: not implemented"},
    // Formats that are annotations here (not asserted).
    {"optional/format/hostname.json", "format hostname: an annotation here"},
    {"optional/format/idn-email.json", "format idn-email: an annotation here"},
    {"optional/format/idn-hostname.json", "format idn-hostname: an annotation here"},
    {"optional/format/ipv4.json", "format ipv4: an annotation here"},
    {"optional/format/ipv6.json", "format ipv6: an annotation here"},
    {"optional/format/iri-reference.json", "format iri-reference: an annotation here"},
    {"optional/format/iri.json", "format iri: an annotation here"},
    {"optional/format/json-pointer.json", "format json-pointer: an annotation here"},
    {"optional/format/regex.json", "format regex: an annotation here"},
    {"optional/format/relative-json-pointer.json", "format relative-json-pointer: an annotation here"},
    {"optional/format/time.json", "format time: an annotation here"},
    {"optional/format/uri-reference.json", "format uri-reference: an annotation here"},
    {"optional/format/uri-template.json", "format uri-template: an annotation here"},
};

const std::vector<skipped> suite_case_skips = {
    {"additionalProperties.json|additionalProperties being false does not allow other properties",
     "uses patternProperties, not implemented"},
    {"additionalProperties.json|non-ASCII pattern with additionalProperties", "uses patternProperties, not implemented"},
    {"properties.json|properties, patternProperties, additionalProperties interaction",
     "uses patternProperties, not implemented"},
    {"ref.json|ref overrides any sibling keywords|ref valid, maxItems ignored",
     "draft 7 ignores a $ref's siblings; 2020-12 applies them (the other cases of the group agree)"},
    {"ref.json|escaped pointer ref",
     "its targets sit under unknown keywords (\"tilda~field\", ...), which compile() refuses; the keyword rows "
     "cover ~0, ~1 and percent-encoding under $defs"},
    {"ref.json|relative pointer ref to array",
     "a $ref into draft 7's array form of items (\"#/items/0\"), which the translation renames prefixItems"},
    {"ref.json|remote ref, containing refs itself", "a remote $ref (the draft 7 metaschema)"},
    {"ref.json|Recursive references between schemas", "uses $id, not implemented"},
    {"optional/ecmascript-regex.json|ECMA 262 regex non-compliance",
     "format \"regex\" (is the string a regex?): an annotation here"},
};

const char* skip_reason(const std::string& file, const std::string& group, const std::string& test) {
  for (const auto& s : suite_case_skips) {
    std::string what = s.what;
    if (what == file + "|" + group || what == file + "|" + group + "|" + test) return s.why;
  }
  return nullptr;
}

// Draft 7 spellings to 2020-12's, at schema positions only (a property named "items" stays).
void translate_draft7(json& schema) {
  if (!schema.is_object()) return;
  if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
    std::string text = *ref;
    if (text.rfind("#/definitions", 0) == 0) *ref = "#/$defs" + text.substr(13);
  }
  if (auto defs = schema.find("definitions"); defs != schema.end()) {
    schema["$defs"] = std::move(*defs);
    schema.erase("definitions");
  }
  auto items = schema.find("items");
  if (items != schema.end() && items->is_array()) {
    schema["prefixItems"] = std::move(*items);
    schema.erase("items");
    if (auto more = schema.find("additionalItems"); more != schema.end()) {
      schema["items"] = std::move(*more);
      schema.erase("additionalItems");
    }
  }
  schema.erase("additionalItems");
  for (const char* single : {"items", "additionalProperties", "not"})
    if (schema.contains(single)) translate_draft7(schema[single]);
  for (const char* list : {"prefixItems", "allOf", "anyOf", "oneOf"})
    if (schema.contains(list) && schema[list].is_array())
      for (auto& s : schema[list]) translate_draft7(s);
  for (const char* map : {"properties", "$defs"})
    if (schema.contains(map) && schema[map].is_object())
      for (auto& [name, s] : schema[map].items()) translate_draft7(s);
}

TEST(SchemaValidator, JsonSchemaTestSuite) {
  namespace fs = std::filesystem;
  const fs::path root = WAYPOINT_SCHEMA_TEST_SUITE;
  ASSERT_TRUE(fs::is_directory(root)) << root << " is missing: apt-get install json-schema-test-suite "
                                      << "(scripts/install-deps installs it)";
  std::set<std::string> known;
  for (const char* f : suite_files) known.insert(f);
  for (const auto& s : suite_skips) known.insert(s.what);
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::string relative = fs::relative(entry.path(), root).generic_string();
    EXPECT_TRUE(known.count(relative)) << relative << ": a suite file neither run nor listed as skipped";
  }
  std::size_t ran = 0, skipped_cases = 0;
  std::set<std::string> skips_used;
  for (const char* file : suite_files) {
    std::ifstream in(root / file);
    ASSERT_TRUE(in) << file;
    json groups = json::parse(in);
    for (const auto& group : groups) {
      std::string description = group["description"];
      json schema = group["schema"];
      translate_draft7(schema);
      std::optional<validator> v;
      std::string refused;
      try {
        v = validator::compile(schema);
      } catch (const std::invalid_argument& e) {
        refused = e.what();
      }
      for (const auto& test : group["tests"]) {
        std::string name = test["description"];
        if (const char* why = skip_reason(file, description, name)) {
          ++skipped_cases;
          skips_used.insert(why);
          continue;
        }
        SCOPED_TRACE(std::string(file) + " | " + description + " | " + name);
        if (!v) {
          ADD_FAILURE() << "refused: " << refused;
          continue;
        }
        bool expected = test["valid"];
        EXPECT_EQ(v->valid(test["data"]), expected) << schema.dump() << " on " << test["data"].dump();
        EXPECT_EQ(!v->check(test["data"]).has_value(), expected);
        ++ran;
      }
    }
  }
  std::printf("JSON-Schema-Test-Suite draft7: %zu cases run, %zu skipped by case, %zu files skipped\n",
              ran, skipped_cases, std::size(suite_skips));
  EXPECT_GT(ran, 300u);
}

}  // namespace
