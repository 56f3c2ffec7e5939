// forwarded.hpp: trusted proxy ranges, and the client address behind them from RFC 7239
// `Forwarded` and `X-Forwarded-For`, including chains a client has tried to forge.
#include <waypoint/app/application.hpp>
#include <waypoint/app/operations/forwarded.hpp>
#include <waypoint/app/serve.hpp>

#include <exchange_harness.hpp>

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using waypoint::app::client_address;
using waypoint::app::trusted_proxies;
using fields = std::vector<std::string_view>;

// --- trusted_proxies ----------------------------------------------------------------

struct range_case {
  const char* rule;
  std::string_view entry;
  std::string_view address;
  bool contained;
};

TEST(TrustedProxies, RangeContainsExactlyItsAddresses) {
  const range_case rows[] = {
      {"single IPv4 is a /32", "127.0.0.1", "127.0.0.1", true},
      {"single IPv4 is a /32", "127.0.0.1", "127.0.0.2", false},
      {"/8 covers its first byte", "10.0.0.0/8", "10.255.3.4", true},
      {"/8 stops at its boundary", "10.0.0.0/8", "11.0.0.0", false},
      {"non-byte prefix", "192.168.0.0/23", "192.168.1.255", true},
      {"non-byte prefix stops", "192.168.0.0/23", "192.168.2.0", false},
      {"/0 covers every IPv4", "0.0.0.0/0", "203.0.113.9", true},
      {"/0 IPv4 covers no IPv6", "0.0.0.0/0", "2001:db8::1", false},
      {"single IPv6", "::1", "::1", true},
      {"IPv6 compared by value, not text", "::1", "0:0:0:0:0:0:0:1", true},
      {"IPv6 /8", "fd00::/8", "fd12:3456::1", true},
      {"IPv6 /8 stops", "fd00::/8", "fe00::1", false},
      {"IPv6 /127", "2001:db8::/127", "2001:db8::1", true},
      {"IPv6 /127 stops", "2001:db8::/127", "2001:db8::2", false},
      {"mapped address compares as IPv4", "10.0.0.0/8", "::ffff:10.1.2.3", true},
      {"mapped entry compares as IPv4", "::ffff:10.0.0.0/104", "10.9.9.9", true},
      {"mapped entry prefix is shifted", "::ffff:10.0.0.0/104", "11.0.0.1", false},
      {"IPv6 /0 covers no IPv4", "::/0", "192.0.2.1", false},
      {"IPv6 /0 covers IPv6", "::/0", "2001:db8::1", true},
      {"zone ignored", "fe80::/10", "fe80::1%eth0", true},
      {"host name is not an address", "127.0.0.1", "localhost", false},
      {"empty text is not an address", "127.0.0.1", "", false},
      {"port is not part of an address", "127.0.0.1", "127.0.0.1:80", false},
      {"brackets are not part of an address", "::1", "[::1]", false},
      {"leading zero octet is not an address", "10.0.0.0/8", "010.0.0.1", false},
      {"\"unix\" trusts a unix peer", "unix", "unix:4242", true},
      {"\"unix\" trusts a unix peer without a pid", "unix", "unix:", true},
      {"\"unix\" trusts no IP address", "unix", "127.0.0.1", false},
      {"an IP range trusts no unix peer", "0.0.0.0/0", "unix:4242", false},
      {"\"unix\" is no prefix of a word", "unix", "unixy", false},
  };
  for (const range_case& row : rows) {
    trusted_proxies proxies({row.entry});
    EXPECT_EQ(proxies.contains(row.address), row.contained)
        << row.rule << ": " << row.entry << " contains " << row.address;
  }
}

struct bad_range_case {
  const char* rule;
  std::string_view entry;
  std::string_view message_part;
};

TEST(TrustedProxies, RejectsBadEntryNamingItAndWhy) {
  const bad_range_case rows[] = {
      {"host name", "localhost", "is not an IPv4 or IPv6 address"},
      {"empty", "", "is not an IPv4 or IPv6 address"},
      {"too many octets", "1.2.3.4.5", "is not an IPv4 or IPv6 address"},
      {"octet over 255", "1.2.3.256", "is not an IPv4 or IPv6 address"},
      {"missing prefix length", "10.0.0.0/", "prefix length that is not a number"},
      {"signed prefix length", "10.0.0.0/+8", "prefix length that is not a number"},
      {"IPv4 prefix over 32", "10.0.0.0/33", "prefix length over 32"},
      {"IPv6 prefix over 128", "fd00::/129", "prefix length over 128"},
      {"host bits past prefix", "10.0.0.1/8", "bits set past its prefix (the range is 10.0.0.0/8)"},
      {"IPv6 host bits", "fd00::1/8", "the range is fd00::/8"},
      {"mapped prefix shorter than the IPv4 part", "::ffff:10.0.0.0/64", "shorter than /96"},
      {"zone in a range", "fe80::1%eth0", "names a zone"},
      {"whitespace", " 10.0.0.1", "is not an IPv4 or IPv6 address"},
  };
  for (const bad_range_case& row : rows) {
    try {
      trusted_proxies proxies({"127.0.0.1", row.entry});
      ADD_FAILURE() << row.rule << ": accepted \"" << row.entry << "\"";
    } catch (const std::invalid_argument& e) {
      std::string message = e.what();
      EXPECT_NE(message.find("\"" + std::string(row.entry) + "\""), std::string::npos)
          << row.rule << ": " << message;
      EXPECT_NE(message.find(row.message_part), std::string::npos) << row.rule << ": " << message;
    }
  }
}

TEST(TrustedProxies, DefaultTrustsNobody) {
  trusted_proxies nobody;
  EXPECT_TRUE(nobody.empty());
  EXPECT_FALSE(nobody.contains("127.0.0.1"));
  EXPECT_FALSE(nobody.contains("::1"));
  EXPECT_FALSE(trusted_proxies({"::1"}).empty());
  EXPECT_FALSE(trusted_proxies({"unix"}).empty());
  EXPECT_FALSE(nobody.contains("unix:4242"));
}

// nginx on the same host, reaching us over a unix socket: its X-Forwarded-For is believed.
TEST(ClientAddress, TrustedUnixPeerIsWalkedPast) {
  trusted_proxies through_unix({"unix"});
  std::string_view xff[] = {"203.0.113.7"};
  EXPECT_EQ(client_address("unix:4242", {}, xff, through_unix), "203.0.113.7");
  EXPECT_EQ(client_address("unix:4242", {}, xff, trusted_proxies({"10.0.0.0/8"})), "unix:4242");
}

// --- client_address -----------------------------------------------------------------

// Proxies at 10.0.0.0/8 and ::1; 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24 are clients.
const trusted_proxies& proxies() {
  static const trusted_proxies p({"10.0.0.0/8", "::1"});
  return p;
}

struct walk_case {
  const char* rule;
  std::string_view peer;
  fields forwarded;
  fields x_forwarded_for;
  std::string_view expected;
};

void expect_walks(const std::vector<walk_case>& rows) {
  for (const walk_case& row : rows)
    EXPECT_EQ(client_address(row.peer, row.forwarded, row.x_forwarded_for, proxies()), row.expected)
        << row.rule;
}

TEST(ClientAddress, UntrustedPeerIgnoresHeadersEntirely) {
  expect_walks({
      {"Forwarded from an untrusted peer", "192.0.2.1", {"for=10.0.0.1"}, {}, "192.0.2.1"},
      {"X-Forwarded-For from an untrusted peer", "192.0.2.1", {}, {"203.0.113.5"}, "192.0.2.1"},
      {"peer that is not an address is returned as given", "garbage", {"for=1.2.3.4"}, {}, "garbage"},
      {"trusted peer without headers is itself", "10.0.0.1", {}, {}, "10.0.0.1"},
  });
  EXPECT_EQ(client_address("10.0.0.1", fields{"for=192.0.2.9"}, {}, trusted_proxies()), "10.0.0.1")
      << "nobody trusted: the headers are never read";
}

TEST(ClientAddress, ForwardedRfc7239Examples) {
  expect_walks({
      {"§4 for with proto and by", "10.0.0.1", {"for=192.0.2.60;proto=http;by=203.0.113.43"}, {},
       "192.0.2.60"},
      {"§4 quoted IPv6 with port", "10.0.0.1", {"for=\"[2001:db8:cafe::17]:4711\""}, {},
       "2001:db8:cafe::17"},
      {"§4 parameter names are case-insensitive", "10.0.0.1", {"For=\"192.0.2.43:47011\""}, {},
       "192.0.2.43"},
      {"§7.1 several elements, nearest untrusted wins", "10.0.0.1",
       {"for=192.0.2.43, for=198.51.100.17"}, {}, "198.51.100.17"},
      {"§7.1 same list split over fields", "10.0.0.1", {"for=192.0.2.43", "for=198.51.100.17"},
       {}, "198.51.100.17"},
      {"trusted hops are skipped", "10.0.0.1", {"for=192.0.2.43, for=10.1.1.1, for=\"[::1]\""}, {},
       "192.0.2.43"},
      {"§6.2 for=unknown stops at the last trusted hop", "10.0.0.1",
       {"for=192.0.2.43, for=unknown, for=10.0.0.7"}, {}, "10.0.0.7"},
      {"unknown nearest leaves the peer", "10.0.0.1", {"for=192.0.2.43, for=unknown"}, {},
       "10.0.0.1"},
      {"§6.3 obfuscated identifier stops the walk", "10.0.0.1", {"for=_hidden, for=10.0.0.8"}, {},
       "10.0.0.8"},
      {"obfuscated port is still an address", "10.0.0.1", {"for=\"192.0.2.43:_p1\""}, {},
       "192.0.2.43"},
      {"element without for stops the walk", "10.0.0.1", {"for=192.0.2.43, proto=https"}, {},
       "10.0.0.1"},
      {"every hop trusted gives the leftmost", "10.0.0.1", {"for=10.0.0.3, for=10.0.0.2"}, {},
       "10.0.0.3"},
      {"Forwarded wins over X-Forwarded-For", "10.0.0.1", {"for=192.0.2.1"}, {"198.51.100.1"},
       "192.0.2.1"},
      {"empty list elements are skipped", "10.0.0.1", {", for=192.0.2.5 ,,"}, {}, "192.0.2.5"},
      {"mapped IPv6 peer is trusted as IPv4", "::ffff:10.0.0.1", {"for=192.0.2.60"}, {},
       "192.0.2.60"},
      {"quoted by with a quoted-pair is skipped over", "10.0.0.1",
       {"by=\"a\\\"b\";for=192.0.2.61"}, {}, "192.0.2.61"},
  });
}

TEST(ClientAddress, ForwardedMalformedStopsAtLastTrustedHop) {
  expect_walks({
      {"unquoted IPv6 is not a token", "10.0.0.1", {"for=192.0.2.1, for=[2001:db8::1]"}, {},
       "10.0.0.1"},
      {"unquoted port is not a token", "10.0.0.1", {"for=192.0.2.1:80"}, {}, "10.0.0.1"},
      {"IPv6 without brackets", "10.0.0.1", {"for=\"2001:db8::1\""}, {}, "10.0.0.1"},
      {"IPv4 in brackets", "10.0.0.1", {"for=\"[192.0.2.1]\""}, {}, "10.0.0.1"},
      {"port too long", "10.0.0.1", {"for=\"192.0.2.1:123456\""}, {}, "10.0.0.1"},
      {"unterminated quote", "10.0.0.1", {"for=\"192.0.2.1"}, {}, "10.0.0.1"},
      {"for twice in one element", "10.0.0.1", {"for=192.0.2.1;for=192.0.2.2"}, {}, "10.0.0.1"},
      {"missing value", "10.0.0.1", {"for="}, {}, "10.0.0.1"},
      {"missing equals", "10.0.0.1", {"for"}, {}, "10.0.0.1"},
      {"host name", "10.0.0.1", {"for=example.com"}, {}, "10.0.0.1"},
      {"escaped for value", "10.0.0.1", {"for=\"192.0.2.\\1\""}, {}, "10.0.0.1"},
      {"malformed far left, trusted hops right of it", "10.0.0.1",
       {"for=\"oops, for=10.0.0.4", "for=10.0.0.5"}, {}, "10.0.0.5"},
      {"spoofed left of a malformed hop is never believed", "10.0.0.1",
       {"for=192.0.2.66, for=@@@, for=10.0.0.9"}, {}, "10.0.0.9"},
  });
}

TEST(ClientAddress, XForwardedForWalksFromTheRight) {
  expect_walks({
      {"single entry", "10.0.0.1", {}, {"203.0.113.7"}, "203.0.113.7"},
      {"spoofed left entries are skipped", "10.0.0.1", {}, {"6.6.6.6, 203.0.113.7, 10.0.0.9"},
       "203.0.113.7"},
      {"spoof claiming a trusted address is still left of the client", "10.0.0.1", {},
       {"10.0.0.2, 203.0.113.7"}, "203.0.113.7"},
      {"several fields are one list", "10.0.0.1", {}, {"6.6.6.6, 203.0.113.7", "10.0.0.9"},
       "203.0.113.7"},
      {"port on IPv4", "10.0.0.1", {}, {"203.0.113.7:5555"}, "203.0.113.7"},
      {"bare IPv6", "10.0.0.1", {}, {"2001:db8::9"}, "2001:db8::9"},
      {"bracketed IPv6 with port", "10.0.0.1", {}, {"[2001:db8::9]:443"}, "2001:db8::9"},
      {"trusted IPv6 hop skipped", "::1", {}, {"198.51.100.3, ::1"}, "198.51.100.3"},
      {"all trusted gives the leftmost", "10.0.0.1", {}, {"10.0.0.3,10.0.0.2"}, "10.0.0.3"},
      {"whitespace and empty elements", "10.0.0.1", {}, {" ,\t198.51.100.4 , ,"}, "198.51.100.4"},
      {"unknown stops the walk", "10.0.0.1", {}, {"198.51.100.4, unknown, 10.0.0.5"}, "10.0.0.5"},
      {"garbage nearest leaves the peer", "10.0.0.1", {}, {"198.51.100.4, <script>"}, "10.0.0.1"},
      {"host name stops the walk", "10.0.0.1", {}, {"evil.example"}, "10.0.0.1"},
      {"port out of range", "10.0.0.1", {}, {"198.51.100.4:999999"}, "10.0.0.1"},
      {"empty field", "10.0.0.1", {}, {""}, "10.0.0.1"},
  });
}

TEST(ClientAddress, GarbageNeverBelievedPastThePeer) {
  const std::string_view garbage[] = {
      "\"", "\"\"", ";", ";;;,,,", "for", "=", "for==1.2.3.4", "for=\"[", "for=\"[::1\"",
      "for=\"[::1]x\"", "for=\"[::1]:\"", "\\", "for=1.2.3.4 junk", "for=\x01", "\xff\xfe",
  };
  for (std::string_view g : garbage) {
    std::string_view one[] = {g};
    EXPECT_EQ(client_address("10.0.0.1", one, {}, proxies()), "10.0.0.1") << "Forwarded: " << g;
    if (g.find(',') == std::string_view::npos) {
      EXPECT_EQ(client_address("10.0.0.1", {}, one, proxies()), "10.0.0.1") << "XFF: " << g;
    }
  }
}

// Random fields built from address-like pieces and delimiters: client_address must never
// crash and must return the peer or text that occurs in one of the fields.
TEST(ClientAddress, RandomFieldsYieldPeerOrHeaderText) {
  const std::string_view pieces[] = {
      "for=", "For=", "\"", "[", "]", ":", ",", ";", " ", "\\", "=", "proto=https", "by=x",
      "10.0.0.5", "192.0.2.1", "::1", "2001:db8::1", "::ffff:10.0.0.1", "unknown", "_obf",
      "80", "99999", "a", "%eth0", "\t", "1.2.3.4.5"};
  std::mt19937 random(20240607);
  std::uniform_int_distribution<std::size_t> piece(0, std::size(pieces) - 1);
  std::uniform_int_distribution<int> length(0, 12);
  std::uniform_int_distribution<int> field_count(0, 3);
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::string> texts;
    for (int f = field_count(random); f > 0; --f) {
      std::string text;
      for (int n = length(random); n > 0; --n) text += pieces[piece(random)];
      texts.push_back(std::move(text));
    }
    std::vector<std::string_view> views(texts.begin(), texts.end());
    bool as_forwarded = round % 2 == 0;
    std::string got = client_address("10.0.0.1", as_forwarded ? views : fields{},
                                     as_forwarded ? fields{} : views, proxies());
    bool from_headers = false;
    for (const std::string& t : texts)
      from_headers = from_headers || (!got.empty() && t.find(got) != std::string::npos);
    ASSERT_TRUE(got == "10.0.0.1" || from_headers) << "round " << round << " gave " << got;
    // The result is always an address: a trusted hop, the peer, or an untrusted address.
    ASSERT_TRUE(got == "10.0.0.1" || trusted_proxies({"0.0.0.0/0", "::/0"}).contains(got))
        << "round " << round << " gave non-address " << got;
  }
}

}  // namespace

// The context form reads the connection's peer and the request's fields.
namespace {
TEST(ClientAddress, ContextFormUsesThePeerAndTheLastFields) {
  using namespace waypoint::app;
  waypoint::testing::exchange_harness connection;  // peer 127.0.0.1
  application app;
  std::string seen;
  trusted_proxies proxies({"127.0.0.1"});
  app.get("/who", [&](context& ctx) { seen = client_address(ctx, proxies); });
  auto dispatch = dispatch_to(app);
  struct row {
    const char* rule;
    std::vector<std::pair<std::string, std::string>> fields;
    std::string client;
  };
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 20; ++i) many.push_back({"X-Forwarded-For", "10.0.0." + std::to_string(i)});
  const std::vector<row> rows = {
      {"no fields: the peer", {}, "127.0.0.1"},
      {"X-Forwarded-For from a trusted peer", {{"X-Forwarded-For", "198.51.100.7"}}, "198.51.100.7"},
      {"Forwarded wins", {{"Forwarded", "for=192.0.2.60"}, {"X-Forwarded-For", "198.51.100.7"}},
       "192.0.2.60"},
      {"the last of many fields is the one walked", many, "10.0.0.19"},
  };
  for (const row& r : rows) {
    request req{http::verb::get, "/who", 11};
    req.set(http::field::host, "t");
    for (const auto& [name, value] : r.fields) req.insert(name, value);
    response res{http::status::ok, 11};
    connection.answer(dispatch, req, res);
    EXPECT_EQ(seen, r.client) << r.rule;
  }
}
}  // namespace
