// Random routing scenarios for the differential test and the differential fuzzer: a table
// of patterns (in registration order) and requests against it. Every choice goes through a
// `Source` (anything with `unsigned below(unsigned n)`), so the same generator runs from a
// seeded PRNG in tests/reference/differential_test.cpp and from the fuzzer's bytes in
// fuzz/fuzz_differential.cpp.
//
// The alphabets are small on purpose: with three literals, two hosts and six methods,
// random patterns overlap, conflict and shadow each other often, and random requests hit
// the corners ServeMux defines (HEAD, trailing slashes, unclean paths, "%2F" in a
// segment, ports, invalid escapes, over-long paths).
#pragma once

#include <waypoint/pattern.hpp>
#include <waypoint/router.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::testing {

struct request {
  std::string method;
  std::string path;
  std::string host;

  friend bool operator==(const request&, const request&) = default;
};

struct scenario {
  std::vector<std::string> patterns;  // registration order; some are meant to be refused
  std::vector<request> requests;
};

// Choices from a seeded PRNG. The modulo (not std::uniform_int_distribution, whose
// algorithm differs between standard libraries) keeps a seed's scenarios the same under
// g++ and clang.
class seeded_source {
 public:
  explicit seeded_source(std::uint64_t seed) : engine_(seed) {}
  unsigned below(unsigned n) { return n == 0 ? 0 : static_cast<unsigned>(engine_() % n); }

 private:
  std::mt19937_64 engine_;
};

// Choices read from fuzzer input, one byte each (two when n > 256); zeros once it runs out,
// so every input decodes to some scenario.
class byte_source {
 public:
  byte_source(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  unsigned below(unsigned n) {
    if (n <= 1) return 0;
    unsigned v = next();
    if (n > 256) v = v << 8 | next();
    return v % n;
  }
  bool exhausted() const noexcept { return pos_ >= size_; }

 private:
  unsigned next() { return pos_ < size_ ? data_[pos_++] : 0u; }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

template <class Source>
class scenario_generator {
 public:
  explicit scenario_generator(Source& source) : source_(source) {}

  // Between 1 and max_patterns patterns, mostly valid, some repeated or malformed.
  // One table in five is wide: three times the patterns over a dozen literals, so that
  // nodes outgrow the router's scanned literal list and it builds its hash index.
  std::vector<std::string> table(unsigned max_patterns = 10) {
    std::vector<std::string> out;
    wide_ = below(5) == 0;
    unsigned n = 1 + below(wide_ ? 3 * max_patterns : max_patterns);
    for (unsigned i = 0; i < n; ++i) out.push_back(pattern_text(out));
    return out;
  }

  // A request; most paths are built from one of the table's patterns so that they match
  // something or miss it narrowly.
  request request_for(const std::vector<std::string>& table) {
    request r;
    r.method = pick(methods_for_requests);
    r.host = pick(request_hosts);
    r.path = below(10) < 7 && !table.empty() ? instantiate(table[below(table.size())], r.host)
                                             : random_path();
    mutate(r.path);
    return r;
  }

  scenario make(unsigned max_patterns, unsigned requests) {
    scenario s;
    s.patterns = table(max_patterns);
    for (unsigned i = 0; i < requests; ++i) s.requests.push_back(request_for(s.patterns));
    return s;
  }

 private:
  static constexpr std::string_view pattern_methods[] = {"",     "",    "GET",   "HEAD",
                                                         "POST", "PUT", "DELETE"};
  static constexpr std::string_view pattern_hosts[] = {"", "", "", "", "h.com", "k.org"};
  // "%61" is "a" escaped (an equivalent literal); "a%2Fb" a literal holding '/'.
  static constexpr std::string_view literals[] = {"a", "b", "c", "a", "b", "%61", "a%2Fb"};
  static constexpr std::string_view wide_literals[] = {"a", "b", "c", "d", "e", "f",   "g",
                                                       "h", "i", "j", "k", "l", "%61", "a%2Fb"};
  static constexpr std::string_view malformed[] = {
      "",       "GET", "G@T /a", "{h}/a", "/a//b",    "/a/./b",    "/a/../b", "/{x",   "/a}",
      "/b_{x}", "/{}", "/{...}", "/{1x}", "/{x}/{x}", "/{x...}/a", "/{$}/a",  "/a%zz", "/a%4"};
  static constexpr std::string_view methods_for_requests[] = {
      "GET", "GET", "HEAD", "HEAD", "POST", "PUT", "DELETE", "PATCH", "BREW", "get", ""};
  static constexpr std::string_view request_hosts[] = {"",           "",       "",          "h.com",
                                                       "h.com:8080", "k.org",  "k.org:443", "x.net",
                                                       "[::1]:80",   "h.com:", "H.COM"};
  // Request segments: literals, their escapes, data slashes and percents, an escaped dot.
  // Dot and empty segments, escaped or not, come from mutate(), so that most paths are
  // clean.
  static constexpr std::string_view request_segments[] = {
      "a", "b", "c", "d", "a", "b", "%61", "A", "a%2Fb", "%2F", "%25", "%2e", "a%2fb"};

  unsigned below(std::size_t n) { return source_.below(static_cast<unsigned>(n)); }
  template <std::size_t N>
  std::string pick(const std::string_view (&options)[N]) {
    return std::string(options[below(N)]);
  }

  std::string pattern_text(const std::vector<std::string>& earlier) {
    unsigned roll = below(100);
    if (roll < 3) return pick(malformed);
    if (roll < 4) return too_many_wildcards();
    if (roll < 10 && !earlier.empty()) return respell(earlier[below(earlier.size())]);
    std::string text;
    std::string method = pick(pattern_methods);
    if (!method.empty()) text = method + (below(10) == 0 ? "\t" : " ");
    text += pick(pattern_hosts);
    unsigned segments = below(5);
    unsigned wildcards = 0;
    for (unsigned i = 0; i < segments; ++i) {
      text += '/';
      bool last = i + 1 == segments;
      unsigned kind = below(last ? 10 : 7);
      if (kind < 4) {
        text += wide_ ? pick(wide_literals) : pick(literals);
      } else if (kind < 7) {
        text += "{w" + std::to_string(wildcards++) + "}";
      } else if (kind < 8) {
        text += "{r...}";
      } else if (kind < 9) {
        text += "{$}";
      }  // else: a trailing slash
    }
    if (segments == 0) text += '/';
    return text;
  }

  // An earlier pattern again, or with another method, wildcard name or literal escape:
  // equivalent or near-equivalent patterns are where conflict detection earns its keep.
  std::string respell(std::string text) {
    switch (below(4)) {
      case 0:
        return text;
      case 1: {
        std::size_t space = text.find_first_of(" \t");
        std::string rest = space == std::string::npos ? text : text.substr(space + 1);
        std::string method = pick(pattern_methods);
        return method.empty() ? rest : method + " " + rest;
      }
      case 2:
        if (std::size_t w = text.find("{w"); w != std::string::npos) text.replace(w, 2, "{v");
        return text;
      default:
        if (std::size_t a = text.find("/a"); a != std::string::npos) text.replace(a, 2, "/%61");
        return text;
    }
  }

  std::string too_many_wildcards() {
    std::string text;
    for (std::size_t i = 0; i <= max_wildcards; ++i) text += "/{w" + std::to_string(i) + "}";
    return text;
  }

  // A request path that `pattern_text` matches (when it parses): each literal spelled
  // escaped or not, each wildcard given a segment, a rest zero to two segments.
  std::string instantiate(const std::string& pattern_text, std::string& host) {
    pattern p;
    try {
      p = parse_pattern(pattern_text);
    } catch (const pattern_error&) {
      return random_path();
    }
    if (!p.host().empty() && below(2) == 0) host = std::string(p.host());
    std::string path;
    for (const segment& s : p.segments()) {
      switch (s.type) {
        case segment::kind::literal:
          path += '/';
          if (below(8) == 0 && s.text == "a") {
            path += "%61";
          } else {
            detail::append_escaped(path, s.text);
          }
          break;
        case segment::kind::wildcard:
          path += '/' + pick(request_segments);
          break;
        case segment::kind::rest:
          path += '/';
          for (unsigned i = below(3); i > 0; --i)
            path += pick(request_segments) + (i > 1 ? "/" : "");
          break;
        case segment::kind::end:
          path += '/';
          break;
      }
    }
    return path;
  }

  std::string random_path() {
    std::string path;
    for (unsigned i = below(5); i > 0; --i)
      path += '/' + (wide_ && below(2) == 0 ? pick(wide_literals) : pick(request_segments));
    if (path.empty() || below(4) == 0) path += '/';
    return path;
  }

  // Perturbations that exercise cleaning, redirects and bad requests.
  void mutate(std::string& path) {
    switch (below(40)) {
      case 0:
        path += '/';
        break;
      case 1:
        if (path.size() > 1 && path.back() == '/') path.pop_back();
        break;
      case 2:
        path.insert(0, "/");
        break;  // "//a"
      case 3:
        path.insert(std::min(path.find('/', 1), path.size()), "/.");
        break;  // "/a/./b"
      case 4:
        path += "/..";
        break;
      case 5:
        path += "/../";
        break;
      case 6:
        path.insert(0, "/x/..");
        break;
      case 7:
        path += "/%zz";
        break;  // invalid escape
      case 8:
        path += "%4";
        break;  // truncated escape
      case 9:
        path += "/a b";
        break;  // a byte that must be escaped
      case 10:
        path += "/\x80";
        break;
      case 11:
        path = "";
        break;
      case 12:
        path = path.empty() ? "a" : path.substr(1);
        break;  // no leading '/'
      case 13:
        path = long_path(max_path_length + 1 + below(2));
        break;
      case 14:
        path = long_path(max_path_length);
        break;  // the longest accepted
      case 15:
        path += "//";
        break;
      case 16:
        path += "/.";
        break;
      case 17:
        path.insert(0, "/..");
        break;
      case 18:
        path.insert(std::min(path.find('/', 1), path.size()), "/");
        break;  // "/a//b"
      // Dot segments spelled with escapes, which clean like the plain ones, and escaped
      // slashes joining a dot, which are refused; then names that only hold dots.
      case 19:
        path.insert(std::min(path.find('/', 1), path.size()), "/%2e%2e");
        break;  // "/a/%2e%2e/b"
      case 20:
        path += "/.%2E";
        break;
      case 21:
        path.insert(0, "/%2e");
        break;
      case 22:
        path += "/%2E./";
        break;
      case 23:
        path += "/a%2F..%2Fb";
        break;
      case 24:
        path.insert(std::min(path.find('/', 1), path.size()), "/%2f%2e");
        break;  // "/a/%2f%2e/b"
      case 25:
        path += "/..%2F";
        break;
      case 26:
        path += "/%2e%2e%2e";
        break;
      case 27:
        path += "/a.%2e";
        break;
      default:
        break;  // most requests stay as built
    }
  }

  std::string long_path(std::size_t size) {
    std::string path = "/" + pick(literals);
    while (path.size() + 2 <= size) path += "/a";
    if (path.size() < size) path += '/';
    return path.substr(0, size);
  }

  Source& source_;
  bool wide_ = false;  // this table draws its literals from wide_literals
};

}  // namespace waypoint::testing
