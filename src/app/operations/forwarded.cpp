// Trusted proxies and the client address behind them: IP and CIDR parsing on inet_pton, and
// one scanner each for RFC 7239 `Forwarded` elements and `X-Forwarded-For` entries, both
// feeding the same right-to-left trust walk. Nothing here allocates except the result
// (and the error message of a bad range).
#include "waypoint/app/operations/forwarded.hpp"

#include "waypoint/app/context.hpp"
#include "waypoint/detail/http_grammar.hpp"
#include "waypoint/detail/url.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace waypoint::app {
namespace {

struct ip_address {
  std::array<std::uint8_t, 16> bytes{};  // an IPv4 address in bytes[0..4), the rest zero
  bool ipv4 = false;
  bool mapped = false;  // written as ::ffff:a.b.c.d and folded to IPv4
};

constexpr std::array<std::uint8_t, 12> mapped_prefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

// Longer than any textual address (INET6_ADDRSTRLEN is 46), so inet_pton gets a terminated copy.
constexpr std::size_t max_address_text = 64;

// Parses an IPv4 or IPv6 address (an IPv6 zone suffix ignored); nothing when it is not one.
std::optional<ip_address> parse_address(std::string_view text) noexcept {
  bool ipv6 = text.find(':') != std::string_view::npos;
  if (std::size_t zone = text.find('%'); zone != std::string_view::npos) {
    if (!ipv6 || zone + 1 == text.size()) return std::nullopt;
    text = text.substr(0, zone);
  }
  if (text.empty() || text.size() >= max_address_text) return std::nullopt;
  char terminated[max_address_text];
  std::memcpy(terminated, text.data(), text.size());
  terminated[text.size()] = '\0';

  ip_address a;
  if (!ipv6) {
    if (inet_pton(AF_INET, terminated, a.bytes.data()) != 1) return std::nullopt;
    a.ipv4 = true;
    return a;
  }
  if (inet_pton(AF_INET6, terminated, a.bytes.data()) != 1) return std::nullopt;
  if (std::equal(mapped_prefix.begin(), mapped_prefix.end(), a.bytes.begin())) {
    std::memmove(a.bytes.data(), a.bytes.data() + 12, 4);
    std::fill(a.bytes.begin() + 4, a.bytes.end(), std::uint8_t{0});
    a.ipv4 = a.mapped = true;
  }
  return a;
}

// Whether `bytes` has any bit set at or past bit `from`.
bool any_bit_from(const std::array<std::uint8_t, 16>& bytes, unsigned from) noexcept {
  for (unsigned bit = from; bit < 128; ++bit)
    if (bytes[bit / 8] & (0x80u >> (bit % 8))) return true;
  return false;
}

bool same_prefix(const std::array<std::uint8_t, 16>& a, const std::array<std::uint8_t, 16>& b,
                 unsigned bits) noexcept {
  unsigned whole = bits / 8;
  if (std::memcmp(a.data(), b.data(), whole) != 0) return false;
  if (bits % 8 == 0) return true;
  auto mask = static_cast<std::uint8_t>(0xff00u >> (bits % 8));
  return (a[whole] & mask) == (b[whole] & mask);
}

[[noreturn]] void throw_bad_range(std::string_view entry, std::string_view why) {
  throw std::invalid_argument("trusted_proxies: \"" + std::string(entry) + "\" " + std::string(why));
}

// "a/bits" with the bits past the prefix cleared: the range an entry with host bits meant.
std::string format_range(ip_address base, unsigned bits) {
  for (unsigned bit = bits; bit < 128; ++bit)
    base.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80u >> (bit % 8)));
  char text[max_address_text];
  inet_ntop(base.ipv4 ? AF_INET : AF_INET6, base.bytes.data(), text, sizeof text);
  return std::string(text) + "/" + std::to_string(bits);
}

// --- header scanning -------------------------------------------------------------------

using waypoint::detail::for_each_list_element;
using waypoint::detail::iequals;
using waypoint::detail::is_ows;
using waypoint::detail::is_token_byte;

// RFC 7239 node-port: 1..5 digits, or an obfuscated "_" 1*(ALPHA / DIGIT / "." / "_" / "-").
bool is_node_port(std::string_view port) noexcept {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto obfuscated = [&](char c) {
    return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '_' ||
           c == '-';
  };
  if (port.size() > 1 && port.front() == '_')
    return std::all_of(port.begin() + 1, port.end(), obfuscated);
  return !port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), digit);
}

// One hop of the chain: the address it names, or nothing when it names none we can believe.
using hop = std::optional<std::string_view>;

// The address of a node "host", "host:port", "[v6]" or "[v6]:port"; `bare_ipv6` admits an
// unbracketed IPv6 address (X-Forwarded-For writes them so; RFC 7239 does not).
hop parse_node(std::string_view node, bool bare_ipv6) noexcept {
  waypoint::detail::host_port split;
  if (waypoint::detail::split_host_port(node, split) != nullptr) return std::nullopt;
  std::optional<ip_address> a = parse_address(split.host);
  if (!a) return std::nullopt;
  if (split.bracketed) {
    if (a->ipv4 && !a->mapped) return std::nullopt;
  } else if (split.has_port ? !a->ipv4 : (!a->ipv4 && !bare_ipv6)) {
    return std::nullopt;  // an IPv6 address with a port, or unbracketed where it must not be
  }
  if (split.has_port && !is_node_port(split.port)) return std::nullopt;
  return split.host;
}

// Moves `i` past the ',' that ends the element it is in, stepping over quoted strings;
// false when the field ends first (or inside an unterminated quote).
bool skip_to_next_element(std::string_view field, std::size_t& i) noexcept {
  while (i < field.size() && field[i] != ',') {
    if (field[i] == '"') {
      for (++i; i < field.size() && field[i] != '"'; ++i)
        if (field[i] == '\\') ++i;
    }
    if (i < field.size()) ++i;
  }
  if (i >= field.size()) return false;
  ++i;
  return true;
}

// A position in one Forwarded field.
struct forwarded_cursor {
  std::string_view field;
  std::size_t i = 0;

  bool at_end() const noexcept { return i == field.size(); }
  bool at(char c) const noexcept { return i < field.size() && field[i] == c; }
  void skip_ows() noexcept {
    while (i < field.size() && is_ows(field[i])) ++i;
  }
  std::string_view token() noexcept {
    std::size_t start = i;
    while (i < field.size() && is_token_byte(field[i])) ++i;
    return field.substr(start, i - start);
  }
};

// A pair's value, a token or a quoted-string (its text between the quotes; `escaped` when
// it holds a quoted-pair); false when it is malformed.
bool read_pair_value(forwarded_cursor& c, std::string_view& value, bool& escaped) noexcept {
  if (!c.at('"')) {
    value = c.token();
    return !value.empty();
  }
  std::size_t start = ++c.i;
  while (c.i < c.field.size() && c.field[c.i] != '"') {
    if (c.field[c.i] == '\\') escaped = true, ++c.i;
    ++c.i;
  }
  if (c.i >= c.field.size()) return false;
  value = c.field.substr(start, c.i - start);
  ++c.i;
  return true;
}

// One name=value pair of an element; false when it is malformed. A for= pair sets
// `for_value` (once: RFC 7239 §4 allows a parameter at most once per element).
bool read_pair(forwarded_cursor& c, bool& seen_for, hop& for_value) noexcept {
  std::string_view name = c.token();
  if (name.empty() || !c.at('=')) return false;
  ++c.i;
  std::string_view value;
  bool escaped = false;
  if (!read_pair_value(c, value, escaped)) return false;
  c.skip_ows();
  if (!c.at_end() && !c.at(';') && !c.at(',')) return false;
  if (!iequals(name, "for")) return true;
  if (seen_for) return false;
  seen_for = true;
  // No address needs a quoted-pair, and decoding one would need a copy.
  if (!escaped) for_value = parse_node(value, false);
  return true;
}

// An element's pairs, up to the ',' that ends it or the field's end; false when it is
// malformed. `for_value` is its for= address, when it names one we can believe.
bool read_element(forwarded_cursor& c, hop& for_value) noexcept {
  bool seen_for = false;
  while (true) {
    c.skip_ows();
    if (c.at_end() || c.at(',')) return true;
    if (c.at(';')) {
      ++c.i;
      continue;
    }
    if (!read_pair(c, seen_for, for_value)) return false;
  }
}

// Calls `visit(hop)` for each element of the Forwarded fields, left to right. A malformed
// element is visited as an unbelievable hop; parsing resumes after the ',' that ends it.
template <class Visit>
void for_each_forwarded_hop(std::span<const std::string_view> fields, Visit&& visit) {
  for (std::string_view field : fields) {
    forwarded_cursor c{field};
    while (true) {
      c.skip_ows();
      if (c.at_end()) break;
      if (c.at(',')) {  // an empty list element
        ++c.i;
        continue;
      }
      hop for_value;
      if (!read_element(c, for_value)) {
        visit(hop());
        if (!skip_to_next_element(field, c.i)) break;
        continue;
      }
      visit(for_value);
      if (!c.at_end()) ++c.i;  // the ','
    }
  }
}

// Calls `visit(hop)` for each entry of the X-Forwarded-For fields, left to right.
template <class Visit>
void for_each_x_forwarded_for_hop(std::span<const std::string_view> fields, Visit&& visit) {
  for (std::string_view field : fields)
    for_each_list_element(field, [&](std::string_view entry) { visit(parse_node(entry, true)); });
}

// The right-to-left walk, computed left to right so that no hop list is stored: the answer
// is fixed by the rightmost hop that stops the walk — an untrusted address is the answer;
// an unbelievable hop makes the hop right of it (or the peer) the answer — and when no hop
// stops it, by the leftmost hop.
class trust_walk {
 public:
  trust_walk(std::string_view peer, const trusted_proxies& proxies) noexcept
      : answer_(peer), peer_(peer), proxies_(&proxies) {}

  void operator()(hop h) noexcept {
    if (!h) {
      answer_ = peer_, take_next_ = true;
    } else if (!proxies_->contains(*h)) {
      answer_ = *h, take_next_ = false;
    } else if (take_next_) {
      answer_ = *h, take_next_ = false;
    }
  }
  std::string_view answer() const noexcept { return answer_; }

 private:
  std::string_view answer_;
  std::string_view peer_;
  const trusted_proxies* proxies_;
  // Invariant: true while every hop since the last unbelievable one (or the start) is
  // trusted and there has been none, so the next trusted hop is the walk's end.
  bool take_next_ = true;
};

}  // namespace

trusted_proxies::trusted_proxies(std::vector<std::string_view> entries) {
  ranges_.reserve(entries.size());
  for (std::string_view entry : entries) {
    if (entry == "unix") {
      unix_peers_ = true;
      continue;
    }
    std::size_t slash = entry.find('/');
    std::optional<ip_address> a = parse_address(entry.substr(0, slash));
    if (!a) throw_bad_range(entry, "is not an IPv4 or IPv6 address, a CIDR range or \"unix\"");
    if (entry.find('%') != std::string_view::npos)
      throw_bad_range(entry, "names a zone; trusted ranges are zone-free");
    unsigned family_bits = a->ipv4 ? 32 : 128;
    unsigned bits = family_bits;
    if (slash != std::string_view::npos) {
      std::string_view length = entry.substr(slash + 1);
      unsigned written_bits = a->mapped ? 128 : family_bits;
      if (length.empty() || length.size() > 3 ||
          !std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw_bad_range(entry, "has a prefix length that is not a number");
      unsigned n = 0;
      for (char c : length) n = n * 10 + static_cast<unsigned>(c - '0');
      if (n > written_bits)
        throw_bad_range(entry, "has a prefix length over " + std::to_string(written_bits));
      if (a->mapped && n < 96)
        throw_bad_range(entry, "is an IPv4-mapped range shorter than /96");
      bits = a->mapped ? n - 96 : n;
    }
    if (any_bit_from(a->bytes, bits))
      throw_bad_range(entry, "has address bits set past its prefix (the range is " +
                                 format_range(*a, bits) + ")");
    ranges_.push_back(range{a->bytes, static_cast<std::uint8_t>(bits), a->ipv4});
  }
}

bool trusted_proxies::contains(std::string_view address) const noexcept {
  if (address.starts_with("unix:")) return unix_peers_;
  if (ranges_.empty()) return false;
  std::optional<ip_address> a = parse_address(address);
  if (!a) return false;
  return std::any_of(ranges_.begin(), ranges_.end(), [&](const range& r) {
    return r.ipv4 == a->ipv4 && same_prefix(r.bytes, a->bytes, r.prefix_bits);
  });
}

std::string client_address(std::string_view peer, std::span<const std::string_view> forwarded_fields,
                           std::span<const std::string_view> x_forwarded_for_fields,
                           const trusted_proxies& proxies) {
  if (!proxies.contains(peer)) return std::string(peer);
  trust_walk walk(peer, proxies);
  if (!forwarded_fields.empty())
    for_each_forwarded_hop(forwarded_fields, walk);
  else
    for_each_x_forwarded_for_hop(x_forwarded_for_fields, walk);
  return std::string(walk.answer());
}

std::string client_address(context& ctx, const trusted_proxies& proxies) {
  std::string_view peer = ctx.endpoints().remote.address;
  if (proxies.empty() || !proxies.contains(peer)) return std::string(peer);
  // The walk starts at the last field, the one our own proxy wrote, so when a client sent
  // more fields than fit, the first ones are dropped. A fixed array: no allocation.
  constexpr std::size_t most = 16;
  struct last_fields {
    std::array<std::string_view, most> values{};
    std::size_t count = 0;
    void keep(std::string_view v) {
      if (count == most) {
        std::move(values.begin() + 1, values.end(), values.begin());
        --count;
      }
      values[count++] = v;
    }
    std::span<const std::string_view> view() const { return {values.data(), count}; }
  } forwarded, x_forwarded_for;
  for (const auto& f : ctx.request()) {
    if (f.name() == http::field::forwarded)
      forwarded.keep(f.value());
    else if (iequals(f.name_string(), "X-Forwarded-For"))
      x_forwarded_for.keep(f.value());
  }
  return client_address(peer, forwarded.view(), x_forwarded_for.view(), proxies);
}

}  // namespace waypoint::app
