// Which address a request came from when it passed through reverse proxies. The socket's
// peer is the nearest proxy; the client is further left in the `Forwarded` (RFC 7239) or
// `X-Forwarded-For` header, which every hop may have appended to and which the client itself
// may have filled with anything. Only hops appended by proxies we trust can be believed, so
// the walk starts at the peer and goes right to left while the hops are trusted:
//
//   waypoint::app::trusted_proxies proxies({"10.0.0.0/8", "::1"});
//   // peer 10.0.0.2, X-Forwarded-For: 6.6.6.6, 203.0.113.7, 10.0.0.9
//   //   -> "203.0.113.7": 10.0.0.9 is a trusted hop; 6.6.6.6 may be the client's own lie.
//
// Standard library only; the parsing (src/app/operations/forwarded.cpp) allocates nothing beyond the
// returned string.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

// A set of proxy addresses and CIDR ranges: "10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8".
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d), as a dual-stack socket reports an IPv4
// peer, compares as the IPv4 address; "::ffff:10.0.0.0/104" is the range 10.0.0.0/8. An
// IPv6 range covers IPv6 addresses only ("::/0" does not trust 192.0.2.1). A zone
// ("fe80::1%eth0") is ignored when comparing. The entry "unix" trusts every peer on a unix
// socket (its address "unix:" and a pid: connection_endpoints): a proxy on the same host,
// such as nginx with `proxy_pass http://unix:/run/app.sock`, which only processes allowed
// by the socket file's mode and group can reach.
class trusted_proxies {
 public:
  trusted_proxies() = default;  // trusts nobody
  // Throws std::invalid_argument naming the first bad entry and why: not an address, a
  // prefix length out of range, or bits set past the prefix ("10.0.0.1/8").
  explicit trusted_proxies(std::vector<std::string_view> ranges);

  // False for text that is not an address (a host name, "unknown", garbage).
  bool contains(std::string_view address) const noexcept;
  bool empty() const noexcept { return ranges_.empty() && !unix_peers_; }

 private:
  // Invariant: the bytes past prefix_bits are zero; an IPv4 range uses bytes[0..4).
  struct range {
    std::array<std::uint8_t, 16> bytes;
    std::uint8_t prefix_bits;
    bool ipv4;
  };

  // A proxy list is a handful of entries, so a scan beats any trie.
  std::vector<range> ranges_;
  bool unix_peers_ = false;  // "unix"
};

// The client's address for a request that reached us from `peer` (the socket's remote
// address, returned as given when it is not trusted: the headers are then ignored).
// When the peer is trusted, walks the `Forwarded` fields (RFC 7239: for= values, possibly
// quoted, IPv6 in brackets, ports dropped), or when there are none the `X-Forwarded-For`
// fields (comma lists: "a.b.c.d", "a.b.c.d:port", "::1", "[::1]:port"), from the right,
// skipping trusted hops, and returns the first untrusted address. A hop that is not an
// address ("unknown", an obfuscated "_name", an element without for=, malformed text)
// stops the walk and the last trusted hop is returned — the peer when it is the nearest —
// so nothing left of an untrusted or unreadable hop is ever believed. When every hop is
// trusted, the leftmost is returned. Fields are given in the order they appeared in the
// request; empty list elements are skipped. The address is returned as written (no
// brackets, port or quotes), not normalised.
std::string client_address(std::string_view peer, std::span<const std::string_view> forwarded_fields,
                           std::span<const std::string_view> x_forwarded_for_fields,
                           const trusted_proxies& proxies);

class context;

// The same for a request being answered: its connection's remote address as the peer, and
// its Forwarded and X-Forwarded-For fields in the order they came.
std::string client_address(context& ctx, const trusted_proxies& proxies);

}  // namespace waypoint::app
