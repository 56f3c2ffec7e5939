// Cookies (waypoint/app/security/cookies.hpp): the Cookie fields read as browsers send them, Set-Cookie
// rendered and refused by rule, signed and encrypted values that open only unchanged, under
// their own name and a held key; then curl's cookie jar and Python's requests.Session
// against a loopback server, which must keep and send back what the server set.
#include "loopback_client.hpp"
#include "../support/missing_tool.hpp"

#include <waypoint/app/security/cookies.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;
using namespace std::chrono_literals;

struct pair_text {
  std::string name, value;
  friend bool operator==(const pair_text&, const pair_text&) = default;
};

std::vector<pair_text> read_all(const cookie_list& list) {
  std::vector<pair_text> out;
  for (const cookie& c : list) out.push_back({std::string(c.name), std::string(c.value)});
  return out;
}

// --- reading ------------------------------------------------------------------------------

struct reader_row {
  const char* rule;
  std::vector<std::string> fields;  // Cookie field values, in order
  std::vector<pair_text> expected;
};

class CookieReader : public ::testing::TestWithParam<reader_row> {};

TEST_P(CookieReader, ReadsPairsAsBrowsersSendThem) {
  const reader_row& row = GetParam();
  request req = make_request("GET", "/");
  for (const std::string& f : row.fields) req.insert(http::field::cookie, f);
  EXPECT_EQ(read_all(cookies(req)), row.expected) << row.rule;
  if (row.fields.size() == 1) {  // one field's value read alone gives the same
    EXPECT_EQ(read_all(cookie_list(std::string_view(row.fields[0]))), row.expected) << row.rule;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Rows, CookieReader,
    ::testing::Values(
        reader_row{"one pair", {"a=1"}, {{"a", "1"}}},
        reader_row{"pairs separated by '; ' as browsers write them", {"a=1; b=2"}, {{"a", "1"}, {"b", "2"}}},
        reader_row{"pairs separated by ';' alone", {"a=1;b=2"}, {{"a", "1"}, {"b", "2"}}},
        reader_row{"spaces and tabs around names and values are dropped",
                   {" a = 1 ;\tb=2\t;  c =  3"}, {{"a", "1"}, {"b", "2"}, {"c", "3"}}},
        reader_row{"a quoted value is given without its quotes", {"a=\"x y\""}, {{"a", "x y"}}},
        reader_row{"an empty quoted value is empty", {"a=\"\""}, {{"a", ""}}},
        reader_row{"a lone quote is kept as sent", {"a=\""}, {{"a", "\""}}},
        reader_row{"an empty value is a cookie", {"a=; b=2"}, {{"a", ""}, {"b", "2"}}},
        reader_row{"a value may hold '='", {"a=b=c"}, {{"a", "b=c"}}},
        reader_row{"duplicates are all given, in the order sent", {"a=1; a=2"}, {{"a", "1"}, {"a", "2"}}},
        reader_row{"a pair without '=' is a nameless cookie and names none", {"abc; a=1; def"}, {{"a", "1"}}},
        reader_row{"empty pairs are skipped", {";; a=1 ;; ;"}, {{"a", "1"}}},
        reader_row{"an empty field holds none", {""}, {}},
        reader_row{"a name that is not a token is skipped", {"a b=1; (c)=2; d=3; =4"}, {{"d", "3"}}},
        reader_row{"a value with a control byte is skipped", {std::string("a=x\x01y; b=2")}, {{"b", "2"}}},
        reader_row{"a value with DEL is skipped", {std::string("a=x\x7Fy; b=2")}, {{"b", "2"}}},
        reader_row{"UTF-8 in a value is given as sent", {"a=caf\xC3\xA9"}, {{"a", "caf\xC3\xA9"}}},
        reader_row{"names are case-sensitive", {"A=1; a=2"}, {{"A", "1"}, {"a", "2"}}},
        reader_row{"every Cookie field, in order (HTTP/2 sends one per cookie)",
                   {"a=1", "b=2; c=3", "d=4"}, {{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}}}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

TEST(CookieReader, ReadsEveryCookieFieldAndNoFieldSentBetweenThem) {
  request req = make_request("GET", "/", {{"Cookie", "a=1"}, {"X-Note", "session=forged"},
                                          {"Accept", "b=2"}, {"Cookie", "c=3"}});
  EXPECT_EQ(read_all(cookies(req)), (std::vector<pair_text>{{"a", "1"}, {"c", "3"}}));
  EXPECT_EQ(cookies(req).find("session"), std::nullopt);
}

TEST(CookieReader, FindGivesTheFirstOfANameSentTwice) {
  request req = make_request("GET", "/", {{"Cookie", "id=path-longer; x=1"}, {"Cookie", "id=second"}});
  EXPECT_EQ(cookies(req).find("id"), "path-longer");
  EXPECT_EQ(cookies(req).find("x"), "1");
  EXPECT_EQ(cookies(req).find("ID"), std::nullopt);
  EXPECT_EQ(cookies(req).find("missing"), std::nullopt);
}

TEST(CookieReader, ValuesAreViewsIntoTheRequest) {
  request req = make_request("GET", "/", {{"Cookie", "a=\"quoted\"; b=plain"}});
  std::string_view field = req[http::field::cookie];
  for (const cookie& c : cookies(req)) {
    EXPECT_GE(c.name.data(), field.data());
    EXPECT_LE(c.value.data() + c.value.size(), field.data() + field.size());
  }
}

TEST(CookieReader, ReadsAtMostMaxRequestCookiesPairs) {
  std::string field;
  for (int i = 0; i < 1000; ++i) field += "c" + std::to_string(i) + "=" + std::to_string(i) + "; ";
  request req = make_request("GET", "/", {{"Cookie", field}});
  EXPECT_EQ(read_all(cookies(req)).size(), max_request_cookies);
  EXPECT_EQ(cookies(req).find("c255"), "255");
  EXPECT_EQ(cookies(req).find("c256"), std::nullopt);
  EXPECT_EQ(cookies(req).find("c999"), std::nullopt);
}

TEST(CookieReader, InvalidPairsCountTowardTheBound) {
  // The bound is on the work done, so 1000 nameless pairs cannot hide a scan of the rest.
  std::string field;
  for (int i = 0; i < 1000; ++i) field += "x; ";
  field += "a=1";
  EXPECT_TRUE(read_all(cookie_list(std::string_view(field))).empty());
}

// --- Set-Cookie -----------------------------------------------------------------------------

struct render_row {
  const char* rule;
  set_cookie cookie;
  std::string expected;
};

class SetCookieRendering : public ::testing::TestWithParam<render_row> {};

TEST_P(SetCookieRendering, WritesEachAttributeAsRfc6265bisSpellsIt) {
  const render_row& row = GetParam();
  EXPECT_EQ(render(row.cookie), row.expected) << row.rule;
}

const auto the_epoch_plus = [](std::int64_t seconds) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
};

INSTANTIATE_TEST_SUITE_P(
    Rows, SetCookieRendering,
    ::testing::Values(
        render_row{"the defaults are Path=/, Secure, HttpOnly, SameSite=Lax", {.name = "id", .value = "v1"},
                   "id=v1; Path=/; Secure; HttpOnly; SameSite=Lax"},
        render_row{"everything off", {.name = "id", .value = "v1", .path = "", .secure = false,
                    .http_only = false, .same_site = same_site_policy::unset},
                   "id=v1"},
        render_row{"a path and a domain", {.name = "id", .value = "v", .path = "/app", .domain = "example.com"},
                   "id=v; Path=/app; Domain=example.com; Secure; HttpOnly; SameSite=Lax"},
        render_row{"Max-Age in seconds", {.name = "id", .value = "v", .max_age = 8h},
                   "id=v; Path=/; Max-Age=28800; Secure; HttpOnly; SameSite=Lax"},
        render_row{"Max-Age=0 deletes", {.name = "id", .value = "", .max_age = 0s},
                   "id=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Lax"},
        render_row{"Expires as an IMF-fixdate", {.name = "id", .value = "v", .expires = the_epoch_plus(784111777)},
                   "id=v; Path=/; Expires=Sun, 06 Nov 1994 08:49:37 GMT; Secure; HttpOnly; SameSite=Lax"},
        render_row{"SameSite=Strict", {.name = "id", .value = "v", .same_site = same_site_policy::strict},
                   "id=v; Path=/; Secure; HttpOnly; SameSite=Strict"},
        render_row{"SameSite=None with Secure", {.name = "id", .value = "v", .same_site = same_site_policy::none},
                   "id=v; Path=/; Secure; HttpOnly; SameSite=None"},
        render_row{"Partitioned with Secure", {.name = "id", .value = "v", .same_site = same_site_policy::none,
                    .partitioned = true},
                   "id=v; Path=/; Secure; HttpOnly; SameSite=None; Partitioned"},
        render_row{"a __Host- cookie with Secure, Path=/ and no Domain", {.name = "__Host-id", .value = "v"},
                   "__Host-id=v; Path=/; Secure; HttpOnly; SameSite=Lax"},
        render_row{"a __Secure- cookie with a Domain", {.name = "__Secure-id", .value = "v", .domain = "example.com"},
                   "__Secure-id=v; Path=/; Domain=example.com; Secure; HttpOnly; SameSite=Lax"},
        render_row{"every cookie-octet is written as it is",
                   {.name = "t", .value = "!#$%&'()*+-./09:<=>?@AZ[]^_`az{|}~"},
                   "t=!#$%&'()*+-./09:<=>?@AZ[]^_`az{|}~; Path=/; Secure; HttpOnly; SameSite=Lax"}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

struct refusal_row {
  const char* rule;
  set_cookie cookie;
  std::string message;  // a part of std::invalid_argument's text
};

class SetCookieRefusal : public ::testing::TestWithParam<refusal_row> {};

TEST_P(SetCookieRefusal, RefusesWhatABrowserWouldDropOrMisread) {
  const refusal_row& row = GetParam();
  try {
    (void)render(row.cookie);
    ADD_FAILURE() << row.rule << ": rendered";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(row.message), std::string::npos) << row.rule << ": " << e.what();
  }
  response res;
  response_builder builder(res);
  EXPECT_THROW(add_cookie(builder, row.cookie), std::invalid_argument) << row.rule;
  EXPECT_EQ(res.count(http::field::set_cookie), 0u) << row.rule;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, SetCookieRefusal,
    ::testing::Values(
        refusal_row{"an empty name", {.name = "", .value = "v"}, "the name is empty"},
        refusal_row{"a name with a space", {.name = "a b", .value = "v"}, "the name holds ' ' (0x20) at byte 1"},
        refusal_row{"a name with '='", {.name = "a=b", .value = "v"}, "'=' (0x3D) at byte 1, not a token"},
        refusal_row{"a name with a control byte", {.name = std::string("a\nb"), .value = "v"}, "0x0A at byte 1"},
        refusal_row{"a value with a space", {.name = "a", .value = "x y"}, "the value holds ' ' (0x20) at byte 1"},
        refusal_row{"a value with ';'", {.name = "a", .value = "x;Domain=evil"}, "';' (0x3B) at byte 1"},
        refusal_row{"a value with ','", {.name = "a", .value = "x,y"}, "',' (0x2C)"},
        refusal_row{"a value with '\"'", {.name = "a", .value = "\"x\""}, "'\"' (0x22) at byte 0"},
        refusal_row{"a value with '\\'", {.name = "a", .value = "x\\y"}, "'\\' (0x5C)"},
        refusal_row{"a value with UTF-8", {.name = "a", .value = "caf\xC3\xA9"}, "0xC3 at byte 3"},
        refusal_row{"a name and value over 4096 bytes", {.name = "a", .value = std::string(4096, 'x')},
                    "4097 bytes"},
        refusal_row{"a Path with ';'", {.name = "a", .value = "v", .path = "/a;Secure"}, "Path holds ';'"},
        refusal_row{"a Domain with a control byte", {.name = "a", .value = "v", .domain = std::string("ex\r\nample")},
                    "Domain holds 0x0D"},
        refusal_row{"a Path over 1024 bytes", {.name = "a", .value = "v", .path = "/" + std::string(1024, 'p')},
                    "Path is 1025 bytes"},
        refusal_row{"a negative Max-Age", {.name = "a", .value = "v", .max_age = -1s}, "Max-Age is negative"},
        refusal_row{"SameSite=None without Secure",
                    {.name = "a", .value = "v", .secure = false, .same_site = same_site_policy::none},
                    "SameSite=None needs Secure"},
        refusal_row{"Partitioned without Secure",
                    {.name = "a", .value = "v", .secure = false, .same_site = same_site_policy::unset,
                     .partitioned = true},
                    "Partitioned needs Secure"},
        refusal_row{"__Secure- without Secure", {.name = "__Secure-a", .value = "v", .secure = false},
                    "a __Secure- cookie needs Secure"},
        refusal_row{"__Host- without Secure", {.name = "__Host-a", .value = "v", .secure = false},
                    "a __Host- cookie needs Secure"},
        refusal_row{"__Host- with another Path", {.name = "__Host-a", .value = "v", .path = "/app"},
                    "needs Path=/"},
        refusal_row{"__Host- without a Path", {.name = "__Host-a", .value = "v", .path = ""}, "needs Path=/"},
        refusal_row{"__Host- with a Domain", {.name = "__Host-a", .value = "v", .domain = "example.com"},
                    "has no Domain"},
        refusal_row{"prefixes are matched ignoring case, as browsers do",
                    {.name = "__host-a", .value = "v", .domain = "example.com"}, "has no Domain"}),
    [](const auto& info) { return "row" + std::to_string(info.index); });

TEST(SetCookie, AddCookieKeepsTheOtherSetCookieFields) {
  response res;
  response_builder builder(res);
  add_cookie(builder, {.name = "a", .value = "1"});
  add_cookie(builder, {.name = "b", .value = "2", .http_only = false});
  std::vector<std::string> set;
  for (auto [it, end] = res.equal_range(http::field::set_cookie); it != end; ++it)
    set.emplace_back(it->value());
  EXPECT_EQ(set, (std::vector<std::string>{"a=1; Path=/; Secure; HttpOnly; SameSite=Lax",
                                           "b=2; Path=/; Secure; SameSite=Lax"}));
}

// --- signed and encrypted values ------------------------------------------------------------

cookie_key key_of(std::uint8_t id, char fill) { return {id, std::string(32, fill)}; }

enum class sealing { signed_value, encrypted };

std::string seal(const cookie_keys& keys, sealing how, std::string_view name, std::string_view value,
                 std::chrono::system_clock::time_point at = std::chrono::system_clock::now()) {
  return how == sealing::signed_value ? keys.seal_signed(name, value, at)
                                      : keys.seal_encrypted(name, value, at);
}

std::optional<std::string> open(const cookie_keys& keys, sealing how, std::string_view name,
                                std::string_view sealed,
                                std::optional<std::chrono::seconds> max_age = std::nullopt,
                                std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) {
  return how == sealing::signed_value ? keys.open_signed(name, sealed, max_age, now)
                                      : keys.open_encrypted(name, sealed, max_age, now);
}

class SealedCookie : public ::testing::TestWithParam<sealing> {};

TEST_P(SealedCookie, OpensToTheValueSealedAndIsAValidCookieValue) {
  cookie_keys keys({key_of(1, 'k')});
  for (const std::string& value : std::vector<std::string>{"", "u-42", "a.b.c", "x=y", std::string(2000, 'z')}) {
    std::string sealed = seal(keys, GetParam(), "session", value);
    EXPECT_TRUE(is_cookie_value(sealed)) << sealed;
    EXPECT_NO_THROW((void)render({.name = "session", .value = sealed}));
    EXPECT_EQ(open(keys, GetParam(), "session", sealed), value);
  }
}

TEST_P(SealedCookie, AnOldKeyStillOpensAndTheNewOneSeals) {
  cookie_keys before({key_of(1, 'a')});
  std::string old_value = seal(before, GetParam(), "session", "u-1");
  cookie_keys rotated({key_of(2, 'b'), key_of(1, 'a')});
  EXPECT_EQ(open(rotated, GetParam(), "session", old_value), "u-1");
  std::string new_value = seal(rotated, GetParam(), "session", "u-2");
  EXPECT_EQ(open(rotated, GetParam(), "session", new_value), "u-2");
  // Sealed with key 2: the old set, which lacks it, cannot open it; once key 1 is dropped,
  // neither can the new set open what key 1 sealed.
  EXPECT_EQ(open(before, GetParam(), "session", new_value), std::nullopt);
  cookie_keys retired({key_of(2, 'b')});
  EXPECT_EQ(open(retired, GetParam(), "session", old_value), std::nullopt);
  // The same id with another secret is another key.
  cookie_keys impostor({key_of(2, 'c')});
  EXPECT_EQ(open(impostor, GetParam(), "session", new_value), std::nullopt);
}

TEST_P(SealedCookie, EveryChangedOrDroppedByteIsRefused) {
  cookie_keys keys({key_of(7, 'k')});
  std::string sealed = seal(keys, GetParam(), "session", "user-42.admin=0");
  ASSERT_TRUE(open(keys, GetParam(), "session", sealed));
  for (std::size_t at = 0; at < sealed.size(); ++at) {
    for (char other : {'A', 'B', 'Q', 'g', 'w', '0', '-', '_', '.', '~'}) {
      if (other == sealed[at]) continue;
      std::string tampered = sealed;
      tampered[at] = other;
      EXPECT_EQ(open(keys, GetParam(), "session", tampered), std::nullopt)
          << "byte " << at << " changed to " << other << ": " << tampered;
    }
    std::string dropped = sealed;
    dropped.erase(at, 1);
    EXPECT_EQ(open(keys, GetParam(), "session", dropped), std::nullopt) << "byte " << at << " dropped";
  }
  EXPECT_EQ(open(keys, GetParam(), "session", sealed + "A"), std::nullopt) << "a byte appended";
}

TEST_P(SealedCookie, AValueMovedToAnotherCookieIsRefused) {
  cookie_keys keys({key_of(1, 'k')});
  std::string sealed = seal(keys, GetParam(), "session", "u-1");
  EXPECT_EQ(open(keys, GetParam(), "remember", sealed), std::nullopt);
  EXPECT_EQ(open(keys, GetParam(), "Session", sealed), std::nullopt);
  EXPECT_EQ(open(keys, GetParam(), "sessio", sealed), std::nullopt);
}

TEST_P(SealedCookie, GarbageIsRefused) {
  cookie_keys keys({key_of(1, 'k')});
  for (std::string_view garbage :
       {"", ".", "..", "abc", "abc.", ".abc", "a.b", "%%%%", "AAAA", "AQ==", "A", "u-1.====",
        "u-1.AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+/",
        "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="})
    EXPECT_EQ(open(keys, GetParam(), "session", garbage), std::nullopt) << garbage;
}

TEST_P(SealedCookie, MaxAgeRefusesValuesSealedTooLongAgoOrInTheFuture) {
  cookie_keys keys({key_of(1, 'k')});
  auto now = std::chrono::system_clock::now();
  struct age_row { std::chrono::seconds sealed_before_now; bool opens; };
  for (age_row row : {age_row{0s, true}, age_row{30min, true}, age_row{1h, true},
                      age_row{1h + 1s, false}, age_row{-30s, true}, age_row{-2min, false}}) {
    std::string sealed = seal(keys, GetParam(), "session", "u-1", now - row.sealed_before_now);
    EXPECT_EQ(open(keys, GetParam(), "session", sealed, 1h, now).has_value(), row.opens)
        << "sealed " << row.sealed_before_now.count() << " s before now";
    // Without max_age, the server leaves expiry to the browser.
    EXPECT_EQ(open(keys, GetParam(), "session", sealed, std::nullopt, now), "u-1");
  }
}

INSTANTIATE_TEST_SUITE_P(Both, SealedCookie,
                         ::testing::Values(sealing::signed_value, sealing::encrypted),
                         [](const auto& info) {
                           return info.param == sealing::signed_value ? "Signed" : "Encrypted";
                         });

TEST(SignedCookie, TheValueIsReadableAndCarriesAFixedLengthTag) {
  cookie_keys keys({key_of(1, 'k')});
  std::string sealed = keys.seal_signed("theme", "dark");
  EXPECT_EQ(sealed.substr(0, 5), "dark.");
  EXPECT_EQ(sealed.size(), 5u + 55u);
  EXPECT_THROW((void)keys.seal_signed("theme", "a b"), std::invalid_argument);
  EXPECT_THROW((void)keys.seal_signed("a b", "dark"), std::invalid_argument);
}

TEST(EncryptedCookie, HidesTheValueAndNeverRepeatsANonce) {
  cookie_keys keys({key_of(1, 'k')});
  std::string a = keys.seal_encrypted("session", "secret-user-id");
  std::string b = keys.seal_encrypted("session", "secret-user-id");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find("secret"), std::string::npos);
  // Any bytes may be sealed, including those a cookie cannot carry.
  std::string binary("a b;\"\0\xff", 7);
  EXPECT_EQ(keys.open_encrypted("session", keys.seal_encrypted("session", binary)), binary);
  // Sealed, a value grows by a third and 50 characters: 3,000 bytes still fit in a cookie
  // browsers keep (4,096 with the name), 3,100 do not.
  EXPECT_EQ(keys.open_encrypted("session", keys.seal_encrypted("session", std::string(3000, 'x'))),
            std::string(3000, 'x'));
  EXPECT_THROW((void)keys.seal_encrypted("session", std::string(3100, 'x')), std::invalid_argument);
}

TEST(CookieKeys, RefusesKeysThatCannotBeUsedSafely) {
  EXPECT_THROW(cookie_keys({}), std::invalid_argument);
  EXPECT_THROW(cookie_keys({{1, std::string(31, 'k')}}), std::invalid_argument);
  EXPECT_THROW(cookie_keys({key_of(1, 'a'), key_of(1, 'b')}), std::invalid_argument);
  cookie_key generated = cookie_key::generate(9);
  EXPECT_EQ(generated.secret.size(), 32u);
  EXPECT_NE(generated.secret, cookie_key::generate(9).secret);
  cookie_keys keys({generated});
  EXPECT_EQ(keys.open_signed("a", keys.seal_signed("a", "v")), "v");
}

// --- real clients ---------------------------------------------------------------------------

// A login that sets a signed and an encrypted cookie, and a page that reads them back. Not
// Secure: Python's cookiejar sends Secure cookies over https alone, localhost included.
struct cookie_service {
  cookie_keys keys{{key_of(3, 's')}};
  application app;
  cookie_service() {
    app.get("/login", [this](context& ctx) {
      add_cookie(ctx.response(), {.name = "user", .value = keys.seal_signed("user", "ada"),
                                  .max_age = 1h, .secure = false});
      add_cookie(ctx.response(), {.name = "session", .value = keys.seal_encrypted("session", "s 1;\"x\""),
                                  .secure = false});
      ctx.response().body("logged in\n");
    });
    app.get("/whoami", [this](context& ctx) {
      cookie_list sent = cookies(ctx.request());
      auto user = keys.open_signed("user", sent.find("user").value_or(""), 1h);
      auto session = keys.open_encrypted("session", sent.find("session").value_or(""));
      ctx.response().body(user.value_or("-") + "|" + session.value_or("-") + "\n");
    });
  }
};

TEST(CookieInterop, CurlsCookieJarKeepsAndSendsBackTheSealedCookies) {
  if (std::system("command -v curl >/dev/null 2>&1") != 0) WAYPOINT_SKIP_MISSING("curl");
  cookie_service service;
  loopback_server server(service.app);
  std::filesystem::path jar = std::filesystem::temp_directory_path() /
                              ("waypoint-cookies-" + std::to_string(::getpid()) + ".jar");
  std::string curl = "curl -s -c " + jar.string() + " -b " + jar.string() + " ";
  EXPECT_EQ(command_output(curl + server.url("/whoami")), "-|-\n");
  EXPECT_EQ(command_output(curl + server.url("/login")), "logged in\n");
  EXPECT_EQ(command_output(curl + server.url("/whoami")), "ada|s 1;\"x\"\n");
  // A jar edited by hand (the value changed in place) is treated as holding no cookie.
  std::string text = command_output("sed -e 's/\tada\\./\tbob./' " + jar.string());
  ASSERT_NE(text.find("\tbob."), std::string::npos) << text;
  command_output("sed -i -e 's/\tada\\./\tbob./' " + jar.string());
  EXPECT_EQ(command_output(curl + server.url("/whoami")), "-|s 1;\"x\"\n");
  std::filesystem::remove(jar);
}

TEST(CookieInterop, PythonRequestsSessionKeepsAndSendsBackTheSealedCookies) {
  if (std::system("/usr/bin/python3 -c 'import requests' >/dev/null 2>&1") != 0)
    WAYPOINT_SKIP_MISSING("python3-requests");
  cookie_service service;
  loopback_server server(service.app);
  std::string script =
      "import requests, sys\n"
      "s = requests.Session()\n"
      "base = sys.argv[1]\n"
      "print(s.get(base + '/whoami').text, end='')\n"
      "print(s.get(base + '/login').text, end='')\n"
      "print(sorted(c.name for c in s.cookies))\n"
      "print(s.get(base + '/whoami').text, end='')\n";
  std::filesystem::path file = std::filesystem::temp_directory_path() /
                               ("waypoint-cookies-" + std::to_string(::getpid()) + ".py");
  {
    std::FILE* out = std::fopen(file.c_str(), "w");
    ASSERT_NE(out, nullptr);
    std::fwrite(script.data(), 1, script.size(), out);
    std::fclose(out);
  }
  EXPECT_EQ(command_output("/usr/bin/python3 " + file.string() + " http://127.0.0.1:" +
                           std::to_string(server.port())),
            "-|-\nlogged in\n['session', 'user']\nada|s 1;\"x\"\n");
  std::filesystem::remove(file);
}

}  // namespace
