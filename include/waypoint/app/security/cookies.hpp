// Cookies (RFC 6265, and its revision draft-ietf-httpbis-rfc6265bis): reading the Cookie
// fields a browser sends, writing Set-Cookie, and values signed or encrypted with the
// server's keys so that a client can neither forge nor read them.
//
//   auto session = app::cookies(ctx.request()).find("session");    // first one sent
//   app::add_cookie(ctx.response(), {.name = "session", .value = keys.seal_encrypted("session", id),
//                                    .max_age = std::chrono::hours(8)});
//   std::optional<std::string> id = keys.open_encrypted("session", *session);  // nullopt: absent
//
// This is the one place the framework parses cookies: typed inputs (from::cookie, inputs.hpp)
// read them through cookies() too. docs/framework.md, "Cookies", says what is read and
// refused, and why.
#pragma once

#include "waypoint/app/message.hpp"
#include "waypoint/app/response.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

// One cookie as the client sent it: views into the request's fields, valid while it lives.
struct cookie {
  std::string_view name;
  std::string_view value;  // without the double quotes around it, when it had them
  friend bool operator==(const cookie&, const cookie&) = default;
};

// The most `name=value` pairs read from one request; later pairs are not seen. Browsers
// send at most 180 cookies to a site (Chromium's per-domain cap; Firefox's is 180 too, and
// RFC 6265 §6.1 asks for at least 50), so 256 reads every request a browser sends, while a
// request of 8 KiB of "a;a;a;..." costs a lookup 256 pairs rather than 4,000.
inline constexpr std::size_t max_request_cookies = 256;

// The cookies of a request's Cookie fields (every one, in order: HTTP/2 and HTTP/3 clients
// send one field per cookie, RFC 9113 §8.2.3), or of one field's value. A forward range of
// `cookie` read as it is walked: no allocation, no copy. What is read (RFC 6265 §5.4 as
// browsers write it, RFC 6265bis §5.7.4):
//   - pairs are separated by ';', with or without the space browsers put after it; spaces
//     and tabs around names and values are dropped, empty pairs skipped;
//   - a value in double quotes is given without them (`a="x y"` is `x y`), as Go's net/http
//     and Python's http.cookies give it;
//   - a name must be an RFC 9110 token, else the pair is skipped (Go does the same); a value
//     holding a control character (but tab) is skipped; other bytes, UTF-8 included, are
//     given as sent, as browsers store them (Go would skip non-ASCII: cookies set by
//     scripts hold them);
//   - a pair without '=' is skipped. Browsers send one only for a cookie whose name is empty
//     (RFC 6265bis §5.8.3: `document.cookie = "abc"` comes back as `abc`), so `abc` is a
//     value, not a name: reading it as the cookie "abc" with an empty value, as Go does,
//     would let a script or a sibling subdomain that sets a nameless cookie "session"
//     shadow the real "session" cookie sent after it;
//   - a name sent twice gives both, in the order sent; find() gives the first, which
//     browsers put first when its Path is longer, else when it was created earlier
//     (RFC 6265 §5.4 step 2);
//   - at most max_request_cookies non-empty pairs are read.
class cookie_list {
 public:
  class iterator {
   public:
    using value_type = cookie;
    using difference_type = std::ptrdiff_t;
    using reference = const cookie&;
    using pointer = const cookie*;
    using iterator_category = std::forward_iterator_tag;

    iterator() noexcept = default;
    reference operator*() const noexcept { return current_; }
    pointer operator->() const noexcept { return &current_; }
    iterator& operator++() noexcept {
      advance();
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator before = *this;
      advance();
      return before;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.done_ == b.done_ && (a.done_ || a.current_.name.data() == b.current_.name.data());
    }
    friend bool operator==(const iterator& it, std::default_sentinel_t) noexcept { return it.done_; }

   private:
    friend class cookie_list;
    // Moves to the next valid pair, or to the end.
    void advance() noexcept;

    http::fields::const_iterator field_{};       // the next field to read
    http::fields::const_iterator fields_end_{};  // past the last Cookie field
    std::string_view rest_{};                    // what is left of the field being read
    cookie current_{};
    std::size_t pairs_ = 0;  // non-empty pairs read so far, valid or not
    bool done_ = true;
  };

  // Every Cookie field of `fields` (a request), in order.
  explicit cookie_list(const http::fields& fields) noexcept : fields_(&fields) {}
  // The pairs of one Cookie field's value.
  explicit cookie_list(std::string_view field) noexcept : field_(field) {}

  iterator begin() const noexcept;
  std::default_sentinel_t end() const noexcept { return {}; }
  // The value of the first cookie named `name` (compared byte for byte: cookie names are
  // case-sensitive), nullopt when none was sent.
  std::optional<std::string_view> find(std::string_view name) const noexcept;

 private:
  const http::fields* fields_ = nullptr;  // null: read field_ alone
  std::string_view field_{};
};

// The cookies `req` carries.
inline cookie_list cookies(const request& req) noexcept { return cookie_list(req.base()); }

// --- Set-Cookie --------------------------------------------------------------------------

enum class same_site_policy : std::uint8_t {
  unset,   // no attribute: browsers apply their default (Lax in Chromium, none in Safari)
  lax,     // sent on top-level navigations from other sites, not on their subrequests
  strict,  // never sent on a request another site starts
  none,    // sent on every request: needs Secure (refused without)
};

// A cookie to set, rendered as RFC 6265bis §4.1 writes Set-Cookie. The defaults are the safe
// choice, so the short form is the safe one: Path=/ (one cookie for the whole site, not one
// per directory the first response happened to come from), Secure (never sent over plain
// HTTP; browsers treat http://localhost as secure, so development works), HttpOnly (no
// script reads it) and SameSite=Lax (no cross-site subrequest carries it, as CSRF needs).
// A cookie a script must read sets http_only = false.
struct set_cookie {
  std::string name;   // an RFC 9110 token
  std::string value;  // cookie-octets: printable ASCII but space, '"', ',', ';' and '\'
  std::string path = "/";   // empty: no Path attribute
  std::string domain{};     // empty: host-only (sent back to this host alone, the safest)
  // Max-Age; 0 deletes the cookie. Browsers cap it at 400 days (RFC 6265bis §5.6.2).
  std::optional<std::chrono::seconds> max_age{};
  // Expires, for clients older than Max-Age (HTTP/1.0 caches, IE); Max-Age wins where both are.
  std::optional<std::chrono::system_clock::time_point> expires{};
  bool secure = true;
  bool http_only = true;
  same_site_policy same_site = same_site_policy::lax;
  // CHIPS: a third-party cookie kept per top-level site. Needs Secure.
  bool partitioned = false;
};

// The largest name plus value browsers store (RFC 6265bis §5.6 step 2: longer is ignored,
// silently), and the largest Path or Domain (§5.6 step 8).
inline constexpr std::size_t max_cookie_name_value_bytes = 4096;
inline constexpr std::size_t max_cookie_attribute_bytes = 1024;

// The Set-Cookie field value: `name=value; Path=/; Domain=...; Max-Age=...; Expires=...;
// Secure; HttpOnly; SameSite=Lax; Partitioned`. Throws std::invalid_argument, naming the
// rule and the offending byte and its position, for what a browser would drop or misread:
// a name that is not a token, a value byte outside cookie-octet, a ';' or control byte in
// Path or Domain, a name and value over 4096 bytes or an attribute over 1024, a negative
// Max-Age, SameSite=None or Partitioned without Secure, and a cookie that breaks its name
// prefix (RFC 6265bis §4.1.3, compared ignoring case as browsers do): `__Secure-` needs
// Secure; `__Host-` needs Secure, Path=/ and no Domain. A value is never quoted or escaped
// here: seal it (cookie_keys) or encode it first.
std::string render(const set_cookie& cookie);

// Adds a Set-Cookie field to `res`, keeping the others (one field per cookie, RFC 6265 §3).
// Throws as render() does.
void add_cookie(response_builder& res, const set_cookie& cookie);

// Whether `name` is a cookie name render() accepts (an RFC 9110 token).
bool is_cookie_name(std::string_view name) noexcept;
// Whether every byte of `value` is a cookie-octet (RFC 6265 §4.1.1).
bool is_cookie_value(std::string_view value) noexcept;

// --- Signed and encrypted values -----------------------------------------------------------

// A server key for cookie values: an id, carried in every value it seals so that the right
// key opens it after a rotation, and a secret of at least 32 random bytes.
struct cookie_key {
  std::uint8_t id = 0;
  std::string secret;
  // A key of 32 bytes from OpenSSL's RAND_bytes.
  static cookie_key generate(std::uint8_t id);
};

// The server's cookie keys: the first seals, every one opens. To rotate, put a new key first
// and keep the old ones until the cookies they sealed have expired. Each secret gives two
// keys through HKDF-SHA256 (one for HMAC, one for AES-256-GCM), so no key serves two
// algorithms.
//
// Sealed values carry when they were sealed (seconds since the epoch). A cookie's Max-Age
// is the browser's business: a client that keeps a copy can send it again forever. Passing
// `max_age` to an open function makes the server refuse values sealed longer ago than that,
// whatever the browser did; values sealed more than a minute in the future (beyond clock
// skew between servers) are refused then too.
//
// An open function returns nullopt for anything it cannot vouch for: a value that was
// tampered with, sealed for another cookie name, sealed with a key not held (any more),
// expired, truncated, or not in the format at all. Treat it as if the cookie were absent.
class cookie_keys {
 public:
  // Throws std::invalid_argument for no keys, two keys with one id, or a secret shorter
  // than 32 bytes.
  explicit cookie_keys(std::vector<cookie_key> keys);
  cookie_keys(const cookie_keys&) = delete;
  cookie_keys& operator=(const cookie_keys&) = delete;
  ~cookie_keys();

  // `value` followed by '.' and the base64url (no padding) of: the key id (1 byte), the time
  // sealed (8 bytes, big-endian seconds) and HMAC-SHA256 over the id, the time, the cookie's
  // name and the value (55 characters in all). A client reads the value; it cannot change
  // it, nor move it to another cookie. Throws std::invalid_argument when `value` is not
  // cookie-octets.
  std::string seal_signed(std::string_view name, std::string_view value,
                          std::chrono::system_clock::time_point sealed_at =
                              std::chrono::system_clock::now()) const;
  // The value `sealed` carries, when it is `name`'s and a held key signed it.
  std::optional<std::string> open_signed(
      std::string_view name, std::string_view sealed,
      std::optional<std::chrono::seconds> max_age = std::nullopt,
      std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;

  // The base64url (no padding) of: the key id (1 byte), a random 12-byte nonce, and
  // AES-256-GCM of the time sealed (8 bytes) and `value` with its 16-byte tag, the id and
  // the cookie's name as associated data. Any bytes may be sealed; the result is 4/3 of
  // the value plus 50 characters. With a random nonce, one key seals safely up to 2^32
  // values (NIST SP 800-38D §8.3): rotate before then.
  std::string seal_encrypted(std::string_view name, std::string_view value,
                             std::chrono::system_clock::time_point sealed_at =
                                 std::chrono::system_clock::now()) const;
  std::optional<std::string> open_encrypted(
      std::string_view name, std::string_view sealed,
      std::optional<std::chrono::seconds> max_age = std::nullopt,
      std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;

 private:
  struct derived;  // a key's id and the keys HKDF derives from its secret
  const derived* find(std::uint8_t id) const noexcept;
  std::vector<derived> keys_;
};

}  // namespace waypoint::app
