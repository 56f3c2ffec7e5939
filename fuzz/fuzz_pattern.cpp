// Fuzzes the pattern parser with arbitrary bytes. Parsing never crashes; a refusal is a
// pattern_error whose offset lies within the text; an accepted pattern keeps the
// representation invariants pattern.hpp states, relates to itself as equivalent, and
// is matched by the router (and the reference) at its own example path.
#include <waypoint/detail/escape.hpp>
#include <waypoint/pattern.hpp>
#include <waypoint/reference/servemux.hpp>
#include <waypoint/router.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"

namespace {

using waypoint::segment;
using waypoint::fuzzing::quoted;
using waypoint::fuzzing::require;

void check_structure(const waypoint::pattern& p, std::string_view text,
                     const std::string& context) {
  require(p.text() == text, "text() is the input", context);
  const auto& segments = p.segments();
  require(!segments.empty(), "a pattern has a segment", context);
  std::size_t named = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const segment& s = segments[i];
    bool last = i + 1 == segments.size();
    require(last || (s.type != segment::kind::rest && s.type != segment::kind::end),
            "rest and {$} only last", context);
    require(s.type != segment::kind::literal || !s.text.empty(), "literals are not empty", context);
    require(s.type != segment::kind::wildcard || !s.text.empty(), "wildcards are named", context);
    if (s.type == segment::kind::wildcard || (s.type == segment::kind::rest && !s.text.empty()))
      require(named < p.wildcard_names().size() && p.wildcard_names()[named++] == s.text,
              "wildcard_names() lists the wildcards in order", context);
  }
  require(named == p.wildcard_names().size(), "wildcard_names() has nothing else", context);
  require(waypoint::compare(p, p) == waypoint::relation::equivalent, "self is equivalent", context);
  require(waypoint::conflicts(p, p), "a pattern conflicts with itself", context);
}

// The example path of a pattern against itself is a request it matches; when that path is
// a clean, valid request path and the pattern's host can be a request host, the router and
// the reference (each holding only this pattern) match it to the pattern.
void check_example(const waypoint::pattern& p, std::string_view text, const std::string& context) {
  std::string path = waypoint::example_path(p, p);
  std::string method = p.method().empty() ? "GET" : std::string(p.method());
  require(waypoint::matches(p, p.host(), method, path), "matches its example path",
          context + " example " + path);
  if (waypoint::detail::path_error(path) || !waypoint::detail::is_clean_path(path) ||
      waypoint::detail::strip_port(p.host()) != p.host() ||
      path.size() > waypoint::max_path_length ||
      p.wildcard_names().size() > waypoint::max_wildcards)
    return;
  waypoint::basic_router<int> router;
  router.add(text, 1);
  auto m = router.match(method, path, p.host());
  require(m.status() == waypoint::match_status::matched, "the router matches the example path",
          context + " example " + path);
  require(m.value_count() == p.wildcard_names().size(), "one value per wildcard", context);
  waypoint::reference::servemux<int> mux;
  mux.add(text, 1);
  require(mux.match(method, path, p.host()).status == waypoint::match_status::matched,
          "the reference matches the example path", context + " example " + path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string context = "pattern " + quoted(text);
  waypoint::pattern p;
  try {
    p = waypoint::parse_pattern(text);
  } catch (const waypoint::pattern_error& e) {
    require(e.offset() <= size, "an error's offset lies within the pattern", context);
    // The message quotes the pattern, so a NUL in the pattern ends what() early.
    require(text.find('\0') != std::string_view::npos ||
                std::string_view(e.what()).find("at offset") != std::string_view::npos,
            "an error message names its offset", context);
    return 0;
  }
  check_structure(p, text, context);
  check_example(p, text, context);
  return 0;
}
