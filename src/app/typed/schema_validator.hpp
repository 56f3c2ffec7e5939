// A compiled JSON Schema (draft 2020-12) validator: the schema is read once, by compile(), into
// a vector of nodes linked by index ($ref resolved, numbers pre-parsed, patterns compiled to a
// small NFA), and then valid() and check() walk those nodes against a document. Private to
// waypoint_app (not installed); a class template over the nlohmann JSON type because the library
// compiles its JSON code once per nlohmann ABI (json_codec.ipp).
//
// Keywords enforced, with 2020-12 meaning:
//   type enum const minimum maximum exclusiveMinimum exclusiveMaximum multipleOf
//   minLength maxLength (code points) pattern (ECMA-262 subset, see pattern_program)
//   format: date-time date email uuid uri (any other format value is an annotation)
//   items prefixItems minItems maxItems uniqueItems properties required additionalProperties
//   allOf anyOf oneOf not $ref ("#" + a JSON Pointer, percent-encoded or not) true false
// Annotations accepted and ignored: title description default examples readOnly writeOnly
// deprecated $schema $comment contentMediaType contentEncoding, OpenAPI 3.1's example xml
// externalDocs discriminator, and $defs as a container. Any other keyword makes compile()
// throw, naming it and its schema pointer: a schema never silently passes a constraint that
// is not enforced.
//
// Bounds: evaluation nests at most max_schema_evaluation_depth schema applications (a document
// deeper than that, under a schema that descends into it, is a "depth" violation, never a stack
// overflow); a $ref cycle that never descends into the document (which would loop forever) is
// refused at compile(); patterns run in time linear in the text.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace waypoint::app::detail {

// Where a document breaks its schema: the shape of a 422 problem document.
struct schema_violation {
  std::string pointer;  // JSON Pointer (RFC 6901) of the offending value, "" for the root
  std::string keyword;  // the keyword it broke: "maximum", "required", "type", ...
  std::string message;  // one sentence for a problem "detail": "is 120; the maximum is 100"
};

// The deepest nesting of schema applications one evaluation makes: each step into an array
// element or object member counts one, and so does each $ref, allOf, anyOf, oneOf and not.
// 512 allows a 256-level document (max_json_depth) under a schema with one $ref per level.
// Measured with GCC 12's -fstack-usage in a debug build, a level costs eval()'s 160 bytes plus
// check_object()'s 384 (check_in_place 224, check_array 208): at most about 280 KiB for 512
// levels, within an 8 MiB thread stack and a 1 MiB one; pattern searches add 4.7 KiB once.
inline constexpr std::size_t max_schema_evaluation_depth = 512;
// The deepest nesting of the schema text itself that compile() follows.
inline constexpr std::size_t max_schema_nesting = 256;
// The most instructions a compiled pattern may have: matching keeps two bit sets and a stack of
// this many entries on the stack (about 4.5 KiB). "[a-z]{1,255}" takes about 510.
inline constexpr std::size_t max_pattern_instructions = 2048;
// The most nested groups a pattern may have (the parser recurses once per group).
inline constexpr std::size_t max_pattern_nesting = 32;
// The largest count of a {m,n} quantifier.
inline constexpr std::size_t max_pattern_repeat = 1000;
// uniqueItems compares every pair of an array up to this many items (496 comparisons at most,
// no allocation); a longer array is sorted by hash first (one allocation), so that a hostile
// 100,000-item array costs n log n, not n^2.
inline constexpr std::size_t unique_items_pairwise_limit = 32;

namespace validation {

// --- text --------------------------------------------------------------------------------

// The code point at text[at], advancing `at`. Bytes that are not UTF-8 count one each (as
// U+FFFD): nlohmann's parser guarantees UTF-8, a document built in code may not.
inline char32_t next_code_point(std::string_view text, std::size_t& at) noexcept {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3
                                       : (lead >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || at + length > text.size()) {
    ++at;
    return lead < 0x80 ? lead : 0xFFFD;
  }
  char32_t c = length == 1 ? lead : length == 2 ? (lead & 0x1F) : length == 3 ? (lead & 0x0F) : (lead & 0x07);
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) {
      ++at;
      return 0xFFFD;
    }
    c = (c << 6) | (byte(at + i) & 0x3F);
  }
  at += length;
  return c;
}

// Length in code points (JSON Schema counts characters, not bytes nor UTF-16 units).
inline std::size_t code_points(std::string_view text) noexcept {
  std::size_t count = 0;
  for (std::size_t at = 0; at < text.size(); ++count) next_code_point(text, at);
  return count;
}

// --- patterns ----------------------------------------------------------------------------

// An ECMA-262 regular expression (with the "u" flag's meaning: code points, strict escapes)
// compiled to a Thompson NFA and searched (unanchored, as "pattern" is) by simulating every
// state at once: time O(text × program), no backtracking, no allocation.
//
// Why not std::regex: it backtracks (exponential on "(a*)*b" against "aaaa…"), recurses per
// character (a long string overflows the stack) and allocates while matching. Why not RE2
// (Debian 12's libre2-dev, linear-time): its matching allocates (the lazy DFA's state cache,
// BitState's visited bitmap), which breaks valid()'s promise of no allocation; its syntax is
// not ECMA's (\s is ASCII-only there, \Q…\E and (?i) are accepted where ECMA refuses them); and
// it would add a dependency to waypoint_app and its consumers' packaging for the few hundred
// lines below. Nothing else in Debian 12 gives linear time without allocation.
//
// Supported: literals; "."; classes [...] and [^...] with ranges; \d \D \w \W \s \S inside and
// outside classes; \t \n \v \f \r \0 \cX \xHH \uHHHH (surrogate pairs joined) \u{H...};
// escaped syntax characters; ^ and $ (no multiline flag: input start and end); \b \B; groups
// (...) (?:...) (?<name>...); alternation; * + ? {n} {n,} {n,m} and their lazy forms (laziness
// changes captures, not whether a match exists). Refused, with the reason: backreferences,
// lookahead and lookbehind, \p{...} property escapes, and whatever the "u" flag makes a
// syntax error (a lone "{", "}" or "]", an unknown escape).
class pattern_program {
 public:
  static pattern_program compile(std::string_view pattern) {
    pattern_program program;
    parser p{pattern, program.sets_};
    regex_node tree = p.parse();
    program.emit(tree);
    program.add({op::match, false, 0, 0, 0});
    program.anchored_runs_ = runs_of(tree, program.runs_);
    return program;
  }

  bool search(std::string_view text) const noexcept {
    if (anchored_runs_) return match_runs(text);
    state_set current{}, next{};
    std::array<std::uint16_t, max_pattern_instructions> stack;
    const std::size_t words = (program_.size() + 63) / 64;
    const auto match = static_cast<std::uint16_t>(program_.size() - 1);
    std::size_t at = 0;
    char32_t previous = no_character;
    char32_t c = at < text.size() ? peek(text, at) : no_character;
    for (;;) {
      add(current, 0, previous, c, stack);  // a match may start at every position
      if (test(current, match)) return true;
      if (c == no_character) return false;
      next_code_point(text, at);
      char32_t following = at < text.size() ? peek(text, at) : no_character;
      for (std::size_t w = 0; w < words; ++w) {
        for (std::uint64_t bits = current[w]; bits != 0; bits &= bits - 1) {
          auto pc = static_cast<std::uint16_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
          if (consumes(program_[pc], c)) add(next, static_cast<std::uint16_t>(pc + 1), c, following, stack);
        }
        current[w] = 0;
      }
      std::swap(current, next);
      previous = c;
      c = following;
    }
  }

  std::size_t size() const noexcept { return program_.size(); }

 private:
  using state_set = std::array<std::uint64_t, max_pattern_instructions / 64>;
  using range = std::pair<char32_t, char32_t>;
  static constexpr char32_t no_character = 0xFFFFFFFF;  // before the start, after the end

  enum class op : std::uint8_t {
    literal,            // c
    any,                // "." : every code point but line terminators
    set,                // sets_[x], or its complement when negated
    split,              // continue at x and at y
    jump,               // continue at x
    input_begin,        // ^
    input_end,          // $
    word_boundary,      // \b, or \B when negated
    match,
  };
  struct instruction {
    op code;
    bool negated;
    std::uint16_t x, y;
    char32_t c;
  };

  // The parsed pattern, before code generation ({m,n} copies its operand m..n times).
  struct regex_node {
    enum class kind : std::uint8_t { empty, atom, concat, alternation, repeat };
    kind type = kind::empty;
    instruction atom{};            // kind::atom: a consuming or assertion instruction
    std::size_t min = 0, max = 0;  // kind::repeat; max == unbounded for * and +
    std::vector<regex_node> children;
  };
  static constexpr std::size_t unbounded = std::numeric_limits<std::size_t>::max();

  static bool is_line_terminator(char32_t c) noexcept {
    return c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029;
  }
  static bool is_word(char32_t c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  static char32_t peek(std::string_view text, std::size_t at) noexcept {
    return next_code_point(text, at);
  }
  static bool test(const state_set& s, std::uint16_t pc) noexcept {
    return (s[pc / 64] >> (pc % 64)) & 1;
  }

  // The shape most API patterns have, "^[A-Z0-9][A-Z0-9-]{1,31}$", "^acct-[0-9]+$": anchored
  // at both ends, a sequence of single-character atoms each repeated {m,n}, every one but the
  // last a fixed number of times. Such a pattern matches in one pass, one test per character,
  // where the NFA would step the {m,n} copies of its last run at every character (about ten
  // times the time for "[a-z0-9-]{1,32}"): bench/app_bench.cpp's BM_RecordWrite measures it.
  struct run {
    instruction atom;
    std::size_t min, max;
  };
  static bool consuming(const regex_node& n) noexcept {
    return n.type == regex_node::kind::atom &&
           (n.atom.code == op::literal || n.atom.code == op::any || n.atom.code == op::set);
  }
  static bool runs_of(const regex_node& tree, std::vector<run>& runs) {
    const std::vector<regex_node>& items = tree.children;
    if (tree.type != regex_node::kind::concat || items.size() < 2 ||
        items.front().type != regex_node::kind::atom || items.front().atom.code != op::input_begin ||
        items.back().type != regex_node::kind::atom || items.back().atom.code != op::input_end)
      return false;
    std::vector<run> found;
    for (std::size_t k = 1; k + 1 < items.size(); ++k) {
      const regex_node& item = items[k];
      if (consuming(item)) {
        found.push_back({item.atom, 1, 1});
      } else if (item.type == regex_node::kind::repeat && item.children.size() == 1 &&
                 consuming(item.children.front())) {
        found.push_back({item.children.front().atom, item.min, item.max});
      } else {
        return false;
      }
    }
    for (std::size_t k = 0; k + 1 < found.size(); ++k)
      if (found[k].min != found[k].max) return false;
    runs = std::move(found);
    return true;
  }
  bool match_runs(std::string_view text) const noexcept {
    std::size_t at = 0;
    for (std::size_t k = 0; k < runs_.size(); ++k) {
      const run& r = runs_[k];
      bool last = k + 1 == runs_.size();
      std::size_t count = 0;
      while (at < text.size() && (last || count < r.min)) {
        if (!consumes(r.atom, next_code_point(text, at))) return false;
        if (++count > r.max) return false;
      }
      if (count < r.min) return false;
    }
    return at == text.size();
  }

  bool in_set(const instruction& i, char32_t c) const noexcept {
    const auto& ranges = sets_[i.x];
    auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                               [](char32_t v, const range& r) { return v < r.first; });
    bool inside = it != ranges.begin() && c <= std::prev(it)->second;
    return inside != i.negated;
  }
  bool consumes(const instruction& i, char32_t c) const noexcept {
    switch (i.code) {
      case op::literal: return c == i.c;
      case op::any: return !is_line_terminator(c);
      case op::set: return in_set(i, c);
      default: return false;
    }
  }

  // Adds `pc` and every state reachable from it without consuming, between `before` and
  // `after`. Invariant: a state is pushed at most once (marked when pushed), so the stack
  // never holds more than program_.size() entries.
  void add(state_set& s, std::uint16_t pc, char32_t before, char32_t after,
           std::array<std::uint16_t, max_pattern_instructions>& stack) const noexcept {
    std::size_t top = 0;
    auto push = [&](std::uint16_t p) {
      if (test(s, p)) return;
      s[p / 64] |= std::uint64_t{1} << (p % 64);
      stack[top++] = p;
    };
    push(pc);
    while (top > 0) {
      const instruction& i = program_[stack[--top]];
      std::uint16_t next = static_cast<std::uint16_t>(&i - program_.data() + 1);
      switch (i.code) {
        case op::jump: push(i.x); break;
        case op::split: push(i.x); push(i.y); break;
        case op::input_begin: if (before == no_character) push(next); break;
        case op::input_end: if (after == no_character) push(next); break;
        case op::word_boundary: {
          bool boundary = is_word(before) != is_word(after);
          if (boundary != i.negated) push(next);
          break;
        }
        default: break;  // consuming states and match wait in the set
      }
    }
  }

  std::uint16_t add(instruction i) {
    if (program_.size() >= max_pattern_instructions)
      throw std::invalid_argument("compiles to more than " + std::to_string(max_pattern_instructions) +
                                  " NFA states (a large {m,n} count?)");
    program_.push_back(i);
    return static_cast<std::uint16_t>(program_.size() - 1);
  }
  std::uint16_t here() const noexcept { return static_cast<std::uint16_t>(program_.size()); }

  void emit(const regex_node& n) {
    using kind = regex_node::kind;
    switch (n.type) {
      case kind::empty: return;
      case kind::atom: add(n.atom); return;
      case kind::concat:
        for (const auto& child : n.children) emit(child);
        return;
      case kind::alternation: {
        // split L1, next; L1: a; jump end; next: split L2, ... ; last alternative alone.
        std::vector<std::uint16_t> exits;
        for (std::size_t k = 0; k + 1 < n.children.size(); ++k) {
          std::uint16_t split = add({op::split, false, 0, 0, 0});
          program_[split].x = here();
          emit(n.children[k]);
          exits.push_back(add({op::jump, false, 0, 0, 0}));
          program_[split].y = here();
        }
        emit(n.children.back());
        for (auto e : exits) program_[e].x = here();
        return;
      }
      case kind::repeat: {
        const regex_node& body = n.children.front();
        for (std::size_t k = 0; k < n.min; ++k) emit(body);
        if (n.max == unbounded) {
          std::uint16_t loop = add({op::split, false, 0, 0, 0});
          program_[loop].x = here();
          emit(body);
          add({op::jump, false, loop, 0, 0});
          program_[loop].y = here();
        } else {
          std::vector<std::uint16_t> skips;
          for (std::size_t k = n.min; k < n.max; ++k) {
            std::uint16_t split = add({op::split, false, 0, 0, 0});
            program_[split].x = here();
            skips.push_back(split);
            emit(body);
          }
          for (auto s : skips) program_[s].y = here();
        }
        return;
      }
    }
  }

  // Recursive descent over ECMA-262's Pattern grammar (22.2.1), the subset named above.
  struct parser {
    std::string_view text;
    std::vector<std::vector<range>>& sets;
    std::size_t at = 0;
    std::size_t nesting = 0;

    [[noreturn]] void refuse(const std::string& why) const {
      throw std::invalid_argument(why + " at offset " + std::to_string(at));
    }
    bool done() const noexcept { return at >= text.size(); }
    char peek() const noexcept { return done() ? '\0' : text[at]; }
    bool eat(char c) noexcept {
      if (peek() != c || done()) return false;
      ++at;
      return true;
    }

    regex_node parse() {
      regex_node tree = disjunction();
      if (!done()) refuse(peek() == ')' ? "an unmatched ')'" : "an unexpected character");
      return tree;
    }

    regex_node disjunction() {
      regex_node first = alternative();
      if (peek() != '|') return first;
      regex_node alt{regex_node::kind::alternation, {}, 0, 0, {}};
      alt.children.push_back(std::move(first));
      while (eat('|')) alt.children.push_back(alternative());
      return alt;
    }

    regex_node alternative() {
      regex_node seq{regex_node::kind::concat, {}, 0, 0, {}};
      while (!done() && peek() != '|' && peek() != ')') seq.children.push_back(term());
      return seq;
    }

    static regex_node atom_node(instruction i) { return {regex_node::kind::atom, i, 0, 0, {}}; }

    regex_node term() {
      if (eat('^')) return assertion(op::input_begin, false);
      if (eat('$')) return assertion(op::input_end, false);
      if (text.substr(at, 2) == "\\b") return at += 2, assertion(op::word_boundary, false);
      if (text.substr(at, 2) == "\\B") return at += 2, assertion(op::word_boundary, true);
      regex_node a = atom();
      return quantified(std::move(a));
    }

    regex_node assertion(op code, bool negated) {
      if (peek() == '*' || peek() == '+' || peek() == '?' || (peek() == '{' && quantifier_ahead()))
        refuse("a quantifier after an assertion");
      return atom_node({code, negated, 0, 0, 0});
    }

    bool quantifier_ahead() const noexcept {
      std::size_t i = at + 1, digits = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
      return digits > 0 && i < text.size() && (text[i] == '}' || text[i] == ',');
    }

    std::size_t count() {
      std::size_t value = 0, digits = 0;
      while (!done() && peek() >= '0' && peek() <= '9') {
        value = std::min(value * 10 + static_cast<std::size_t>(peek() - '0'), max_pattern_repeat + 1);
        ++at, ++digits;
      }
      if (digits == 0) refuse("a malformed {m,n} quantifier");
      if (value > max_pattern_repeat)
        refuse("a repetition count above " + std::to_string(max_pattern_repeat));
      return value;
    }

    regex_node quantified(regex_node operand) {
      std::size_t min = 0, max = 0;
      if (eat('*')) {
        min = 0, max = unbounded;
      } else if (eat('+')) {
        min = 1, max = unbounded;
      } else if (eat('?')) {
        min = 0, max = 1;
      } else if (peek() == '{' && quantifier_ahead()) {
        ++at;
        min = max = count();
        if (eat(',')) max = peek() == '}' ? unbounded : count();
        if (!eat('}')) refuse("a malformed {m,n} quantifier");
        if (max < min) refuse("a {m,n} quantifier with n < m");
      } else {
        return operand;
      }
      eat('?');  // lazy: the same set of matches
      if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') refuse("nothing to repeat");
      regex_node r{regex_node::kind::repeat, {}, min, max, {}};
      r.children.push_back(std::move(operand));
      return r;
    }

    regex_node atom() {
      char c = peek();
      switch (c) {
        case '.': ++at; return atom_node({op::any, false, 0, 0, 0});
        case '(': return group();
        case '[': return atom_node(character_class());
        case '\\': return atom_node(atom_escape());
        case '*': case '+': case '?': refuse("nothing to repeat");
        case '{': refuse(quantifier_ahead() ? "nothing to repeat" : "a lone '{' (escape it)");
        case '}': refuse("a lone '}' (escape it)");
        case ']': refuse("a lone ']' (escape it)");
        default: return atom_node({op::literal, false, 0, 0, next_code_point(text, at)});
      }
    }

    regex_node group() {
      ++at;  // '('
      if (eat('?')) {
        if (eat(':')) {
        } else if (peek() == '<' && at + 1 < text.size() && text[at + 1] != '=' && text[at + 1] != '!') {
          std::size_t close = text.find('>', at);
          if (close == std::string_view::npos) refuse("an unterminated group name");
          at = close + 1;  // a named group matches as a plain one
        } else {
          refuse("lookahead and lookbehind are not supported");
        }
      }
      if (++nesting > max_pattern_nesting)
        refuse("groups nested deeper than " + std::to_string(max_pattern_nesting));
      regex_node inner = disjunction();
      --nesting;
      if (!eat(')')) refuse("an unterminated group");
      return inner;
    }

    std::uint16_t add_set(std::vector<range> ranges) {
      std::sort(ranges.begin(), ranges.end());
      std::vector<range> merged;
      for (const auto& r : ranges) {
        if (!merged.empty() && r.first <= merged.back().second + 1)
          merged.back().second = std::max(merged.back().second, r.second);
        else
          merged.push_back(r);
      }
      sets.push_back(std::move(merged));
      return static_cast<std::uint16_t>(sets.size() - 1);
    }

    static std::vector<range> predefined(char letter) {
      switch (letter) {
        case 'd': return {{'0', '9'}};
        case 'w': return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
        default:  // 's': WhiteSpace and LineTerminator (ECMA-262 22.2.2.9)
          return {{0x09, 0x0D}, {0x20, 0x20}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
                  {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
                  {0xFEFF, 0xFEFF}};
      }
    }
    static std::vector<range> complement(const std::vector<range>& ranges) {
      std::vector<range> out;
      char32_t from = 0;
      for (const auto& r : ranges) {
        if (r.first > from) out.push_back({from, r.first - 1});
        from = r.second + 1;
      }
      if (from <= 0x10FFFF) out.push_back({from, 0x10FFFF});
      return out;
    }

    unsigned hex_digits(std::size_t n) {
      unsigned value = 0;
      for (std::size_t i = 0; i < n; ++i) {
        char h = peek();
        int digit = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                  : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (digit < 0) refuse("a malformed hexadecimal escape");
        value = value * 16 + static_cast<unsigned>(digit);
        ++at;
      }
      return value;
    }

    // \cX, after the "\c": the letter's code modulo 32.
    char32_t control_escape() {
      char letter = peek();
      if (!((letter >= 'a' && letter <= 'z') || (letter >= 'A' && letter <= 'Z')))
        refuse("a malformed \\c escape");
      ++at;
      return static_cast<char32_t>(letter % 32);
    }

    // \u{X...} or \uXXXX after the "\u"; a high surrogate followed by \u and a low one is
    // the pair's code point.
    char32_t unicode_escape() {
      if (eat('{')) {
        char32_t value = 0;
        std::size_t digits = 0;
        while (!done() && peek() != '}' && digits < 8) value = value * 16 + hex_digits(1), ++digits;
        if (!eat('}') || digits == 0 || value > 0x10FFFF) refuse("a malformed \\u{...} escape");
        return value;
      }
      char32_t unit = hex_digits(4);
      if (unit >= 0xD800 && unit <= 0xDBFF && text.substr(at, 2) == "\\u") {
        std::size_t mark = at;
        at += 2;
        char32_t low = hex_digits(4);
        if (low >= 0xDC00 && low <= 0xDFFF) return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        at = mark;
      }
      return unit;
    }

    // An escape naming one code point, after the backslash; `in_class` allows \b and \-.
    // Returns no_character for \d \w \s and their negations, setting `set`.
    char32_t escape(bool in_class, std::vector<range>& set, bool& set_negated) {
      if (done()) refuse("a pattern ending in a backslash");
      char e = text[at++];
      switch (e) {
        case 'd': case 'w': case 's': set = predefined(e); set_negated = false; return no_character;
        case 'D': case 'W': case 'S':
          set = predefined(static_cast<char>(e + 32)); set_negated = true; return no_character;
        case 't': return '\t';
        case 'n': return '\n';
        case 'v': return '\v';
        case 'f': return '\f';
        case 'r': return '\r';
        case '0':
          if (peek() >= '0' && peek() <= '9') refuse("an octal escape");
          return 0;
        case 'c': return control_escape();
        case 'x': return hex_digits(2);
        case 'u': return unicode_escape();
        case 'b':
          if (in_class) return 0x08;
          break;
        case '-':
          if (in_class) return '-';
          break;
        case 'p': case 'P': refuse("Unicode property escapes (\\p{...}) are not supported");
        case 'k': refuse("backreferences are not supported");
        default:
          if (e >= '1' && e <= '9') refuse("backreferences are not supported");
          if (std::string_view("^$\\.*+?()[]{}|/").find(e) != std::string_view::npos)
            return static_cast<unsigned char>(e);
      }
      refuse(std::string("an unknown escape \\") + e);
    }

    instruction atom_escape() {
      ++at;  // '\\'
      std::vector<range> set;
      bool negated = false;
      char32_t c = escape(false, set, negated);
      if (c != no_character) return {op::literal, false, 0, 0, c};
      return {op::set, negated, add_set(std::move(set)), 0, 0};
    }

    // One class atom: a code point, or (returning no_character) the ranges of \d \w \s.
    char32_t class_atom(std::vector<range>& ranges) {
      if (peek() != '\\') return next_code_point(text, at);
      ++at;
      std::vector<range> set;
      bool negated = false;
      char32_t c = escape(true, set, negated);
      if (c == no_character) {
        auto add = negated ? complement(set) : set;
        ranges.insert(ranges.end(), add.begin(), add.end());
      }
      return c;
    }

    instruction character_class() {
      ++at;  // '['
      bool negated = eat('^');
      std::vector<range> ranges;
      while (!done() && peek() != ']') {
        char32_t low = class_atom(ranges);
        if (peek() == '-' && at + 1 < text.size() && text[at + 1] != ']') {
          ++at;
          char32_t high = class_atom(ranges);
          if (low == no_character || high == no_character) refuse("a class range with \\d, \\w or \\s");
          if (high < low) refuse("a class range out of order");
          ranges.push_back({low, high});
        } else if (low != no_character) {
          ranges.push_back({low, low});
        }
      }
      if (!eat(']')) refuse("an unterminated character class");
      return {op::set, negated, add_set(std::move(ranges)), 0, 0};
    }
  };

  std::vector<instruction> program_;
  bool anchored_runs_ = false;  // search() is match_runs() over runs_
  std::vector<run> runs_;
  std::vector<std::vector<range>> sets_;
};

// --- formats -----------------------------------------------------------------------------

inline bool digits_at(std::string_view s, std::size_t at, std::size_t n) noexcept {
  if (at + n > s.size()) return false;
  for (std::size_t i = at; i < at + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}
inline unsigned number_at(std::string_view s, std::size_t at, std::size_t n) noexcept {
  unsigned value = 0;
  for (std::size_t i = at; i < at + n; ++i) value = value * 10 + static_cast<unsigned>(s[i] - '0');
  return value;
}
inline bool is_hex(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// RFC 3339 full-date: YYYY-MM-DD, the day within its month (leap years counted).
inline bool is_date(std::string_view s) noexcept {
  if (s.size() != 10 || !digits_at(s, 0, 4) || s[4] != '-' || !digits_at(s, 5, 2) || s[7] != '-' ||
      !digits_at(s, 8, 2))
    return false;
  unsigned year = number_at(s, 0, 4), month = number_at(s, 5, 2), day = number_at(s, 8, 2);
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr std::array<unsigned, 12> days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= days[month - 1] + (month == 2 && leap ? 1 : 0);
}

// RFC 3339 date-time: full-date "T" HH:MM:SS[.frac] (Z | +HH:MM | -HH:MM), T and Z in either
// case (RFC 3339 5.6, note); second 60 allowed (a leap second, which RFC 3339 permits).
inline bool is_date_time(std::string_view s) noexcept {
  if (s.size() < 20 || !is_date(s.substr(0, 10)) || (s[10] != 'T' && s[10] != 't')) return false;
  if (!digits_at(s, 11, 2) || s[13] != ':' || !digits_at(s, 14, 2) || s[16] != ':' || !digits_at(s, 17, 2))
    return false;
  if (number_at(s, 11, 2) > 23 || number_at(s, 14, 2) > 59 || number_at(s, 17, 2) > 60) return false;
  std::size_t at = 19;
  if (s[at] == '.') {
    std::size_t start = ++at;
    while (at < s.size() && is_digit(s[at])) ++at;
    if (at == start) return false;
  }
  if (at == s.size()) return false;
  if ((s[at] == 'Z' || s[at] == 'z') && at + 1 == s.size()) return true;
  if (s[at] != '+' && s[at] != '-') return false;
  return s.size() == at + 6 && digits_at(s, at + 1, 2) && s[at + 3] == ':' && digits_at(s, at + 4, 2) &&
         number_at(s, at + 1, 2) <= 23 && number_at(s, at + 4, 2) <= 59;
}

// RFC 4122's textual form: 8-4-4-4-12 hexadecimal digits.
inline bool is_uuid(std::string_view s) noexcept {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !is_hex(s[i])) return false;
  }
  return true;
}

// A hostname of RFC 1123: dot-separated labels of letters, digits and '-', each 1-63
// characters, not starting or ending with '-'.
inline bool is_hostname(std::string_view s) noexcept {
  if (s.empty() || s.size() > 253) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '.') {
      if (label == 0 || label > 63 || s[i - 1] == '-' || s[i - label] == '-') return false;
      label = 0;
    } else if (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '-') {
      ++label;
    } else {
      return false;
    }
  }
  return true;
}

// RFC 5321's Mailbox, without quoted local parts or comments: a dot-atom of atext before the
// '@', a hostname or an address literal ("[...]" of digits, hex, '.' and ':') after it.
inline bool is_email(std::string_view s) noexcept {
  std::size_t at = s.rfind('@');
  if (at == std::string_view::npos || at == 0 || at > 64) return false;
  std::string_view local = s.substr(0, at), domain = s.substr(at + 1);
  if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string_view::npos) return false;
  for (char c : local)
    if (!is_alpha(c) && !is_digit(c) && std::string_view("!#$%&'*+-/=?^_`{|}~.").find(c) == std::string_view::npos)
      return false;
  if (domain.size() > 2 && domain.front() == '[' && domain.back() == ']') {
    for (char c : domain.substr(1, domain.size() - 2))
      if (!is_hex(c) && c != '.' && c != ':') return false;
    return true;
  }
  return is_hostname(domain);
}

// RFC 3986's unreserved and sub-delims characters.
inline bool is_uri_unreserved(char c) noexcept {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}
inline bool is_uri_sub_delim(char c) noexcept { return std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos; }

// Characters of s[from, to) all unreserved, sub-delims, in `extra`, or a complete %HH.
inline bool is_uri_component(std::string_view s, std::size_t from, std::size_t to, std::string_view extra) noexcept {
  for (std::size_t i = from; i < to; ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= to || !is_hex(s[i + 1]) || !is_hex(s[i + 2])) return false;
      i += 2;
    } else if (!is_uri_unreserved(c) && !is_uri_sub_delim(c) && extra.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
inline bool is_uri_scheme(std::string_view scheme) noexcept {
  if (scheme.empty() || !is_alpha(scheme[0])) return false;
  for (char c : scheme.substr(1))
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '-' && c != '.') return false;
  return true;
}

// host [":" port] in s[host, end): an IP literal "[...]" of hex digits, ':' and '.', or a
// name of component characters; the port all digits.
inline bool is_uri_host_port(std::string_view s, std::size_t host, std::size_t end) noexcept {
  std::size_t port = end;
  if (host < end && s[host] == '[') {
    std::size_t close = s.find(']', host);
    if (close == std::string_view::npos || close >= end) return false;
    for (std::size_t i = host + 1; i < close; ++i)
      if (!is_hex(s[i]) && s[i] != ':' && s[i] != '.') return false;
    if (close + 1 < end && s[close + 1] != ':') return false;
    port = close + 1;
  } else {
    std::size_t last_colon = s.rfind(':', end - 1);
    if (last_colon != std::string_view::npos && last_colon >= host) port = last_colon;
    if (!is_uri_component(s, host, port, "")) return false;
  }
  for (std::size_t i = port + 1; i < end; ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

// The authority after "//" at `authority`: [userinfo "@"] host [":" port], up to the next
// '/' or `question`, where `end` is set (the path starts there).
inline bool is_uri_authority(std::string_view s, std::size_t authority, std::size_t question,
                             std::size_t& end) noexcept {
  end = s.find('/', authority);
  if (end == std::string_view::npos || end > question) end = question;
  std::size_t host = authority;
  std::size_t at_sign = s.find('@', authority);
  if (at_sign != std::string_view::npos && at_sign < end) {
    if (!is_uri_component(s, authority, at_sign, ":")) return false;
    host = at_sign + 1;
  }
  return is_uri_host_port(s, host, end);
}

// RFC 3986's URI (an absolute reference, with a scheme): scheme ":" hier-part ["?" query]
// ["#" fragment], every character in its component's set, percent-encodings complete.
inline bool is_uri(std::string_view s) noexcept {
  std::size_t colon = s.find(':');
  if (colon == std::string_view::npos || !is_uri_scheme(s.substr(0, colon))) return false;
  std::size_t hash = s.find('#', colon);
  if (hash == std::string_view::npos)
    hash = s.size();
  else if (!is_uri_component(s, hash + 1, s.size(), ":@/?"))
    return false;
  std::size_t question = s.find('?', colon);
  if (question == std::string_view::npos || question >= hash)
    question = hash;
  else if (!is_uri_component(s, question + 1, hash, ":@/?"))
    return false;
  std::size_t path = colon + 1;
  if (s.substr(path, 2) == "//" && !is_uri_authority(s, path + 2, question, path)) return false;
  return is_uri_component(s, path, question, ":@/");
}

// --- numbers -----------------------------------------------------------------------------

// A JSON number exactly as nlohmann/json holds it: int64, uint64 or double. Comparisons
// between kinds are exact (no rounding through double): 2^63 - 1 < 9223372036854775808.0.
struct number {
  enum class kind : std::uint8_t { signed_integer, unsigned_integer, floating };
  kind type = kind::signed_integer;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;

  template <class Json>
  static number of(const Json& j) noexcept {
    number n;
    if (j.is_number_unsigned()) {
      n.type = kind::unsigned_integer;
      n.u = j.template get<std::uint64_t>();
    } else if (j.is_number_integer()) {
      n.i = j.template get<std::int64_t>();
    } else {
      n.type = kind::floating;
      n.d = j.template get<double>();
    }
    return n;
  }
  bool is_integer() const noexcept { return type != kind::floating; }
  bool negative() const noexcept {
    return type == kind::signed_integer ? i < 0 : type == kind::floating && d < 0;
  }
  // |value| of an integer, exact (|-2^63| = 2^63 fits a uint64).
  std::uint64_t magnitude() const noexcept {
    if (type == kind::unsigned_integer) return u;
    return i < 0 ? static_cast<std::uint64_t>(-(i + 1)) + 1 : static_cast<std::uint64_t>(i);
  }
  double as_double() const noexcept {
    return type == kind::floating ? d : type == kind::unsigned_integer ? static_cast<double>(u)
                                                                       : static_cast<double>(i);
  }
  std::string text() const {
    if (type == kind::signed_integer) return std::to_string(i);
    if (type == kind::unsigned_integer) return std::to_string(u);
    return nlohmann::json(d).dump();
  }
};

// -1, 0 or 1 as integer `a` is below, equal to or above double `d` (finite), exactly.
inline int compare_integer_double(const number& a, double d) noexcept {
  if (a.negative()) {
    if (d >= 0) return -1;
    if (d < -9223372036854775808.0) return 1;
    double whole = std::floor(d);  // in [-2^63, 0): exact in int64
    auto t = static_cast<std::int64_t>(whole);
    if (a.i != t) return a.i < t ? -1 : 1;
    return whole < d ? -1 : 0;
  }
  std::uint64_t u = a.magnitude();
  if (d < 0) return 1;
  if (d >= 18446744073709551616.0) return -1;
  double whole = std::floor(d);  // in [0, 2^64): exact in uint64
  auto t = static_cast<std::uint64_t>(whole);
  if (u != t) return u < t ? -1 : 1;
  return whole < d ? -1 : 0;
}

inline int compare(const number& a, const number& b) noexcept {
  if (!a.is_integer() && !b.is_integer()) return a.d < b.d ? -1 : a.d > b.d ? 1 : 0;
  if (!b.is_integer()) return compare_integer_double(a, b.d);
  if (!a.is_integer()) return -compare_integer_double(b, a.d);
  if (a.negative() != b.negative()) return a.negative() ? -1 : 1;
  std::uint64_t x = a.magnitude(), y = b.magnitude();
  if (x == y) return 0;
  return (x < y) != a.negative() ? -1 : 1;
}

// An odd integer and a power of two whose product is `d` (finite, non-zero).
inline std::pair<std::uint64_t, int> odd_mantissa(double d) noexcept {
  int exponent = 0;
  double fraction = std::frexp(std::fabs(d), &exponent);  // in [0.5, 1)
  auto mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
  exponent -= 53;
  while ((mantissa & 1) == 0) mantissa >>= 1, ++exponent;
  return {mantissa, exponent};
}

// Whether value / divisor is an integer (divisor > 0). Integers divide exactly. With a
// fractional divisor the quotient is taken in double and must be whole, as Python's
// jsonschema does (so 0.0075 is a multiple of 0.0001, whose doubles are not exact multiples);
// when that quotient overflows, the doubles' exact values decide (1e308 is a multiple of 0.5).
inline bool is_multiple(const number& value, const number& divisor) noexcept {
  if (divisor.is_integer()) {
    std::uint64_t m = divisor.magnitude();
    if (value.is_integer()) return value.magnitude() % m == 0;
    double d = value.d;
    if (d != std::trunc(d)) return false;
    if (std::fabs(d) < 18446744073709551616.0) return static_cast<std::uint64_t>(std::fabs(d)) % m == 0;
    return std::fmod(d, static_cast<double>(m)) == 0;
  }
  double quotient = value.as_double() / divisor.d;
  if (std::isfinite(quotient)) return quotient == std::trunc(quotient);
  if (value.as_double() == 0) return true;
  auto [a, ea] = odd_mantissa(value.as_double());
  auto [b, eb] = odd_mantissa(divisor.d);
  return a % b == 0 && ea >= eb;
}

// --- values ------------------------------------------------------------------------------

// Whether `value` nests no deeper than `budget` levels (a scalar is level 0). Recurses at most
// `budget` times.
template <class Json>
bool within_depth(const Json& value, std::size_t budget) noexcept {
  if (!value.is_structured()) return true;
  if (budget == 0) return false;
  for (const auto& element : value)
    if (!within_depth(element, budget - 1)) return false;
  return true;
}

// JSON Schema's equality (2020-12 core 4.2.2): numbers by value (1 == 1.0, exactly), objects
// by members whatever their order. Recurses as deep as the shallower of the two.
template <class Json>
bool same_value(const Json& a, const Json& b) noexcept {
  if (a.is_number() && b.is_number()) return compare(number::of(a), number::of(b)) == 0;
  if (a.type() != b.type()) return false;
  if (a.is_string()) return a.template get_ref<const typename Json::string_t&>() ==
                            b.template get_ref<const typename Json::string_t&>();
  if (a.is_boolean()) return a.template get<bool>() == b.template get<bool>();
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (!same_value(a[k], b[k])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !same_value(it.value(), *other)) return false;
    }
    return true;
  }
  return true;  // null, and discarded/binary, which a parsed document never holds
}

inline std::uint64_t mix(std::uint64_t h) noexcept {  // splitmix64's finalizer
  h ^= h >> 30, h *= 0xBF58476D1CE4E5B9u;
  h ^= h >> 27, h *= 0x94D049BB133111EBu;
  return h ^ (h >> 31);
}

// A hash consistent with same_value: equal values hash equal (an integral double hashes as the
// integer it equals; an object's members combine in any order).
template <class Json>
std::uint64_t value_hash(const Json& v) noexcept {
  if (v.is_number()) {
    number n = number::of(v);
    if (!n.is_integer() && n.d == std::trunc(n.d) && std::fabs(n.d) < 18446744073709551616.0) {
      if (n.d < -9223372036854775808.0) return mix(std::bit_cast<std::uint64_t>(n.d));
      if (n.d < 0) n = {number::kind::signed_integer, static_cast<std::int64_t>(n.d), 0, 0};
      else n = {number::kind::unsigned_integer, 0, static_cast<std::uint64_t>(n.d), 0};
    }
    if (!n.is_integer()) return mix(std::bit_cast<std::uint64_t>(n.d));
    return mix(n.magnitude() ^ (n.negative() ? 0x8000000000000001u : 0));
  }
  if (v.is_string()) {
    std::uint64_t h = 0xCBF29CE484222325u;  // FNV-1a
    for (char c : v.template get_ref<const typename Json::string_t&>())
      h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3u;
    return mix(h);
  }
  if (v.is_array()) {
    std::uint64_t h = 0xA11A4;
    for (const auto& e : v) h = mix(h * 31 + value_hash(e));
    return h;
  }
  if (v.is_object()) {
    std::uint64_t h = 0x0B1EC7;
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::uint64_t k = 0xCBF29CE484222325u;
      for (char c : it.key()) k = (k ^ static_cast<unsigned char>(c)) * 0x100000001B3u;
      h += mix(mix(k) ^ value_hash(it.value()));
    }
    return mix(h);
  }
  return mix(static_cast<std::uint64_t>(v.type()) + (v.is_boolean() && v.template get<bool>() ? 7 : 0));
}

// `value` for a message: scalars as JSON (long strings cut), containers by size (never
// dumped: a deep document would make the message as deep as itself).
template <class Json>
std::string describe(const Json& value) {
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " items";
  if (value.is_object()) return "an object of " + std::to_string(value.size()) + " members";
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 64) text = text.substr(0, 60) + "...\"";
  return text;
}

// "/" + token with '~' and '/' escaped (RFC 6901).
inline std::string pointer_token(std::string_view name) {
  std::string token = "/";
  for (char c : name) {
    if (c == '~') token += "~0";
    else if (c == '/') token += "~1";
    else token += c;
  }
  return token;
}

}  // namespace validation

// A JSON Schema compiled for one nlohmann JSON type. Immutable after compile(): valid() and
// check() may run on many threads at once.
template <class Json>
class schema_validator {
 public:
  // Compiles `schema`. `root`, when given, is the document "$ref": "#/..." pointers resolve in
  // (an OpenAPI document whose components/schemas hold named types); otherwise the schema itself.
  // Throws std::invalid_argument naming the schema pointer of a malformed or unsupported keyword.
  static schema_validator compile(const Json& schema, const Json* root = nullptr) {
    schema_validator v;
    compiler c{v, root ? *root : schema, {}, {}};
    c.compile(schema, root ? c.pointer_of(schema) : std::string(), 0);
    c.refuse_loops();
    return v;
  }

  // Whether `document` satisfies the schema. Allocates nothing, except that uniqueItems on an
  // array longer than unique_items_pairwise_limit sorts an index of its items; should that
  // allocation fail, the document is reported invalid.
  bool valid(const Json& document) const noexcept {
    try {
      return eval(0, document, 0, nullptr) == verdict::pass;
    } catch (...) {
      return false;
    }
  }

  // The first violation, in schema order; allocates only when there is one.
  std::optional<schema_violation> check(const Json& document) const {
    schema_violation found;
    if (eval(0, document, 0, &found) == verdict::pass) return std::nullopt;
    return found;
  }

 private:
  using string_t = typename Json::string_t;
  using index = std::uint32_t;
  static constexpr index none = std::numeric_limits<index>::max();

  enum class verdict : std::uint8_t { pass, fail, too_deep };

  enum keyword : std::uint8_t {
    k_type, k_enum, k_const, k_minimum, k_maximum, k_exclusive_minimum, k_exclusive_maximum,
    k_multiple_of, k_min_length, k_max_length, k_pattern, k_format, k_min_items, k_max_items,
    k_unique_items, k_prefix_items, k_items, k_properties, k_required, k_additional_properties,
    k_ref, k_all_of, k_any_of, k_one_of, k_not,
  };
  enum type_bit : std::uint8_t {
    t_null = 1, t_boolean = 2, t_object = 4, t_array = 8, t_number = 16, t_string = 32, t_integer = 64,
  };
  enum class format_kind : std::uint8_t { date_time, date, email, uuid, uri };

  // One schema object. Invariant: a field is meaningful only when its keyword's bit is in
  // `present`; node indices are valid indices of nodes_ (or `none`).
  struct node {
    std::uint32_t present = 0;
    bool is_false = false;  // the boolean schema false (true is a node with nothing present)
    std::uint8_t types = 0;
    format_kind format = format_kind::date;
    validation::number minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;
    std::size_t min_length = 0, max_length = 0, min_items = 0, max_items = 0;
    std::uint32_t pattern = 0;                             // into patterns_
    index items = none, additional = none, negated = none, ref = none;
    std::vector<index> prefix_items, all_of, any_of, one_of;
    std::vector<std::pair<string_t, index>> properties;  // sorted by name
    std::vector<string_t> required;
    std::vector<Json> values;                              // enum's, or const's one
    bool has(keyword k) const noexcept { return (present >> k) & 1; }
  };

  std::vector<node> nodes_;  // nodes_[0] is the schema compiled
  std::vector<validation::pattern_program> patterns_;
  std::vector<std::string> pattern_sources_;

  // --- compilation -----------------------------------------------------------------------

  struct compiler {
    schema_validator& out;
    const Json& root;
    std::map<const Json*, index> compiled;  // every schema object compiled once, by address
    std::vector<std::string> where;         // each node's schema pointer, for errors

    [[noreturn]] static void refuse(const std::string& pointer, const std::string& why) {
      throw std::invalid_argument("JSON Schema at #" + pointer + ": " + why);
    }

    // The pointer of `schema` inside root, when it is root or a value in it (depth-first).
    std::string pointer_of(const Json& schema) const {
      std::string path;
      return find(root, &schema, path, 0) ? path : std::string();
    }
    static bool find(const Json& at, const Json* target, std::string& path, std::size_t depth) {
      if (&at == target) return true;
      if (!at.is_structured() || depth > max_schema_nesting) return false;
      if (at.is_object()) {
        for (auto it = at.begin(); it != at.end(); ++it) {
          std::size_t size = path.size();
          path += validation::pointer_token(it.key());
          if (find(it.value(), target, path, depth + 1)) return true;
          path.resize(size);
        }
      } else {
        for (std::size_t k = 0; k < at.size(); ++k) {
          std::size_t size = path.size();
          path += "/" + std::to_string(k);
          if (find(at[k], target, path, depth + 1)) return true;
          path.resize(size);
        }
      }
      return false;
    }

    index compile(const Json& schema, const std::string& pointer, std::size_t depth) {
      if (auto known = compiled.find(&schema); known != compiled.end()) return known->second;
      if (depth > max_schema_nesting)
        refuse(pointer, "nests deeper than " + std::to_string(max_schema_nesting) + " schemas");
      if (!schema.is_object() && !schema.is_boolean()) refuse(pointer, "a schema must be an object or a boolean");
      auto self = static_cast<index>(out.nodes_.size());
      out.nodes_.emplace_back();
      where.push_back(pointer);
      compiled.emplace(&schema, self);
      node n;
      if (schema.is_boolean()) {
        n.is_false = !schema.template get<bool>();
      } else {
        for (auto it = schema.begin(); it != schema.end(); ++it)
          keyword_of(n, it.key(), it.value(), pointer + validation::pointer_token(it.key()), depth);
        std::sort(n.properties.begin(), n.properties.end());
      }
      out.nodes_[self] = std::move(n);  // by index: compiling children may have grown nodes_
      return self;
    }

    static bool is_annotation(const string_t& name) {
      static constexpr std::array<std::string_view, 16> names = {
          "title", "description", "default", "examples", "readOnly", "writeOnly", "deprecated",
          "$schema", "$comment", "$defs",
          // 2020-12's content vocabulary is an annotation unless asked for; OpenAPI 3.1's own
          // keywords describe (example, xml, externalDocs) or hint (discriminator: the oneOf
          // it names is enforced by itself).
          "contentMediaType", "contentEncoding", "example", "xml", "externalDocs",
          "discriminator"};
      return std::find(names.begin(), names.end(), std::string_view(name)) != names.end();
    }

    static validation::number numeric(const Json& v, const std::string& pointer) {
      if (!v.is_number()) refuse(pointer, "must be a number");
      return validation::number::of(v);
    }
    static std::size_t count(const Json& v, const std::string& pointer) {
      validation::number n = v.is_number() ? validation::number::of(v) : validation::number{};
      bool whole = v.is_number() && (n.is_integer() ? !n.negative() : n.d >= 0 && n.d == std::trunc(n.d));
      if (!whole) refuse(pointer, "must be a non-negative integer");
      if (n.is_integer()) return static_cast<std::size_t>(n.magnitude());
      return n.d >= 1.8e19 ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(n.d);
    }
    std::vector<index> schemas(const Json& v, const std::string& pointer, std::size_t depth, bool allow_empty) {
      if (!v.is_array() || (!allow_empty && v.empty())) refuse(pointer, "must be a non-empty array of schemas");
      std::vector<index> list;
      for (std::size_t k = 0; k < v.size(); ++k) list.push_back(compile(v[k], pointer + "/" + std::to_string(k), depth + 1));
      return list;
    }

    static void mark(node& n, keyword k) { n.present |= std::uint32_t{1} << k; }

    // One schema keyword into `n`, by its vocabulary; an unknown keyword that is not an
    // annotation is refused, since nothing would enforce it.
    void keyword_of(node& n, const string_t& name, const Json& v, const std::string& pointer, std::size_t depth) {
      if (value_keyword(n, name, v, pointer) || number_keyword(n, name, v, pointer) ||
          count_keyword(n, name, v, pointer) || object_keyword(n, name, v, pointer, depth) ||
          applicator_keyword(n, name, v, pointer, depth))
        return;
      if (!is_annotation(name))
        refuse(pointer, "the keyword \"" + std::string(name) + "\" is not supported (it would not be enforced)");
    }

    // type, enum, const, pattern, format; false for another keyword.
    bool value_keyword(node& n, const string_t& name, const Json& v, const std::string& pointer) {
      if (name == "type") {
        type_keyword(n, v, pointer);
      } else if (name == "enum") {
        if (!v.is_array()) refuse(pointer, "must be an array");
        mark(n, k_enum);
        n.values.assign(v.begin(), v.end());
      } else if (name == "const") {
        mark(n, k_const);
        n.values = {v};
      } else if (name == "pattern") {
        pattern_keyword(n, v, pointer);
      } else if (name == "format") {
        format_keyword(n, v, pointer);
      } else {
        return false;
      }
      return true;
    }

    // "type": a type name or an array of them, each one of JSON Schema's seven.
    static void type_keyword(node& n, const Json& v, const std::string& pointer) {
      mark(n, k_type);
      auto add = [&](const Json& t) {
        static constexpr std::array<std::pair<std::string_view, std::uint8_t>, 7> known = {{
            {"null", t_null}, {"boolean", t_boolean}, {"object", t_object}, {"array", t_array},
            {"number", t_number}, {"string", t_string}, {"integer", t_integer}}};
        for (const auto& [type_name, bit] : known)
          if (t.is_string() && t.template get_ref<const string_t&>() == type_name) return void(n.types |= bit);
        refuse(pointer, "an unknown type " + t.dump());
      };
      if (v.is_array()) {
        for (const auto& t : v) add(t);
      } else {
        add(v);
      }
    }

    void pattern_keyword(node& n, const Json& v, const std::string& pointer) {
      if (!v.is_string()) refuse(pointer, "must be a string");
      const auto& source = v.template get_ref<const string_t&>();
      try {
        out.patterns_.push_back(validation::pattern_program::compile(source));
      } catch (const std::invalid_argument& e) {
        refuse(pointer, "the pattern " + v.dump() + " is not supported: " + e.what());
      }
      out.pattern_sources_.push_back(source);
      n.pattern = static_cast<std::uint32_t>(out.patterns_.size() - 1);
      mark(n, k_pattern);
    }

    // "format": asserted for the formats we check; any other name is an annotation.
    static void format_keyword(node& n, const Json& v, const std::string& pointer) {
      if (!v.is_string()) refuse(pointer, "must be a string");
      static constexpr std::array<std::pair<std::string_view, format_kind>, 5> asserted = {{
          {"date-time", format_kind::date_time}, {"date", format_kind::date}, {"email", format_kind::email},
          {"uuid", format_kind::uuid}, {"uri", format_kind::uri}}};
      for (const auto& [format_name, kind] : asserted)
        if (v.template get_ref<const string_t&>() == format_name) n.format = kind, mark(n, k_format);
    }

    // The bounds on a number; false for another keyword.
    static bool number_keyword(node& n, const string_t& name, const Json& v, const std::string& pointer) {
      if (name == "minimum") {
        mark(n, k_minimum), n.minimum = numeric(v, pointer);
      } else if (name == "maximum") {
        mark(n, k_maximum), n.maximum = numeric(v, pointer);
      } else if (name == "exclusiveMinimum") {
        mark(n, k_exclusive_minimum), n.exclusive_minimum = numeric(v, pointer);
      } else if (name == "exclusiveMaximum") {
        mark(n, k_exclusive_maximum), n.exclusive_maximum = numeric(v, pointer);
      } else if (name == "multipleOf") {
        n.multiple_of = numeric(v, pointer);
        if (n.multiple_of.negative() || n.multiple_of.as_double() == 0) refuse(pointer, "must be greater than 0");
        mark(n, k_multiple_of);
      } else {
        return false;
      }
      return true;
    }

    // The bounds on a string's length and an array's items; false for another keyword.
    static bool count_keyword(node& n, const string_t& name, const Json& v, const std::string& pointer) {
      if (name == "minLength") {
        mark(n, k_min_length), n.min_length = count(v, pointer);
      } else if (name == "maxLength") {
        mark(n, k_max_length), n.max_length = count(v, pointer);
      } else if (name == "minItems") {
        mark(n, k_min_items), n.min_items = count(v, pointer);
      } else if (name == "maxItems") {
        mark(n, k_max_items), n.max_items = count(v, pointer);
      } else if (name == "uniqueItems") {
        if (!v.is_boolean()) refuse(pointer, "must be a boolean");
        if (v.template get<bool>()) mark(n, k_unique_items);
      } else {
        return false;
      }
      return true;
    }

    // properties, required, additionalProperties; false for another keyword.
    bool object_keyword(node& n, const string_t& name, const Json& v, const std::string& pointer, std::size_t depth) {
      if (name == "properties") {
        if (!v.is_object()) refuse(pointer, "must be an object of schemas");
        mark(n, k_properties);
        for (auto it = v.begin(); it != v.end(); ++it)
          n.properties.emplace_back(it.key(), compile(it.value(), pointer + validation::pointer_token(it.key()), depth + 1));
      } else if (name == "required") {
        if (!v.is_array()) refuse(pointer, "must be an array of strings");
        for (const auto& r : v) {
          if (!r.is_string()) refuse(pointer, "must be an array of strings");
          n.required.push_back(r.template get<string_t>());
        }
        mark(n, k_required);
      } else if (name == "additionalProperties") {
        mark(n, k_additional_properties), n.additional = compile(v, pointer, depth + 1);
      } else {
        return false;
      }
      return true;
    }

    // The keywords that apply subschemas (and $defs, which holds them); false for another.
    bool applicator_keyword(node& n, const string_t& name, const Json& v, const std::string& pointer, std::size_t depth) {
      if (name == "items") {
        if (v.is_array()) refuse(pointer, "must be a schema (the array form is draft 2019-09's; use prefixItems)");
        mark(n, k_items), n.items = compile(v, pointer, depth + 1);
      } else if (name == "prefixItems") {
        mark(n, k_prefix_items), n.prefix_items = schemas(v, pointer, depth, false);
      } else if (name == "allOf") {
        mark(n, k_all_of), n.all_of = schemas(v, pointer, depth, false);
      } else if (name == "anyOf") {
        mark(n, k_any_of), n.any_of = schemas(v, pointer, depth, false);
      } else if (name == "oneOf") {
        mark(n, k_one_of), n.one_of = schemas(v, pointer, depth, false);
      } else if (name == "not") {
        mark(n, k_not), n.negated = compile(v, pointer, depth + 1);
      } else if (name == "$ref") {
        if (!v.is_string()) refuse(pointer, "must be a string");
        auto [target, target_pointer] = resolve(v.template get_ref<const string_t&>(), pointer);
        mark(n, k_ref), n.ref = compile(*target, target_pointer, depth + 1);
      } else if (name == "$defs") {
        if (!v.is_object()) refuse(pointer, "must be an object of schemas");
      } else {
        return false;
      }
      return true;
    }

    // The schema "#/a/b" names in root: percent-decoded (RFC 3986), then RFC 6901 tokens.
    std::pair<const Json*, std::string> resolve(const string_t& ref, const std::string& pointer) const {
      if (ref.empty() || ref[0] != '#')
        refuse(pointer, "only local references (\"#/...\") are supported, not \"" + std::string(ref) + "\"");
      std::string decoded;
      for (std::size_t k = 1; k < ref.size(); ++k) {
        if (ref[k] == '%' && k + 2 < ref.size() && validation::is_hex(ref[k + 1]) && validation::is_hex(ref[k + 2])) {
          decoded += static_cast<char>(std::stoi(std::string(ref.substr(k + 1, 2)), nullptr, 16));
          k += 2;
        } else {
          decoded += ref[k];
        }
      }
      if (!decoded.empty() && decoded[0] != '/')
        refuse(pointer, "anchors (\"" + std::string(ref) + "\") are not supported; use a JSON Pointer");
      const Json* at = &root;
      std::string path;
      for (std::size_t start = 1; start <= decoded.size() && !decoded.empty();) {
        std::size_t end = std::min(decoded.find('/', start), decoded.size());
        std::string token;
        for (std::size_t k = start; k < end; ++k) {
          if (decoded[k] == '~' && k + 1 < end && (decoded[k + 1] == '0' || decoded[k + 1] == '1'))
            token += decoded[++k] == '0' ? '~' : '/';
          else
            token += decoded[k];
        }
        if (at->is_object() && at->contains(token)) {
          at = &(*at)[token];
        } else if (at->is_array() && !token.empty() && token.size() < 10 &&
                   std::all_of(token.begin(), token.end(), validation::is_digit) &&
                   (token == "0" || token[0] != '0') && std::stoul(token) < at->size()) {
          at = &(*at)[std::stoul(token)];
        } else {
          refuse(pointer, "\"" + std::string(ref) + "\" names nothing in the document");
        }
        path += validation::pointer_token(token);
        start = end + 1;
      }
      return {at, path};
    }

    // Refuses a cycle of $ref, allOf, anyOf, oneOf and not that applies a schema to the same
    // value it started from: evaluating it would never end.
    void refuse_loops() const {
      const auto& nodes = out.nodes_;
      std::vector<std::uint8_t> state(nodes.size(), 0);  // 0 new, 1 on the path, 2 done
      std::vector<std::pair<index, std::size_t>> stack;   // node, next edge
      auto edges = [&](index i) {
        const node& n = nodes[i];
        std::vector<index> e(n.all_of);
        e.insert(e.end(), n.any_of.begin(), n.any_of.end());
        e.insert(e.end(), n.one_of.begin(), n.one_of.end());
        if (n.negated != none) e.push_back(n.negated);
        if (n.ref != none) e.push_back(n.ref);
        return e;
      };
      for (index start = 0; start < nodes.size(); ++start) {
        if (state[start]) continue;
        stack.push_back({start, 0});
        state[start] = 1;
        while (!stack.empty()) {
          auto& [i, next] = stack.back();
          auto e = edges(i);
          if (next == e.size()) {
            state[i] = 2;
            stack.pop_back();
            continue;
          }
          index to = e[next++];
          if (state[to] == 1)
            refuse(where[to], "a $ref cycle that never descends into the document (through #" + where[i] + ")");
          if (state[to] == 0) {
            state[to] = 1;
            stack.push_back({to, 0});
          }
        }
      }
    }
  };

  // --- evaluation --------------------------------------------------------------------------

  template <class Message>
  static verdict fail(schema_violation* out, const char* keyword, Message&& message) {
    if (out) {
      out->keyword = keyword;
      out->message = message();
    }
    return verdict::fail;
  }
  static verdict too_deep(schema_violation* out) {
    if (out) {
      out->keyword = "depth";
      out->message = "nests deeper than the " + std::to_string(max_schema_evaluation_depth) +
                     " schema applications the validator follows";
    }
    return verdict::too_deep;
  }
  // Prefixes the pointer of a failure found in a child value.
  template <class Token>
  static verdict within(verdict v, schema_violation* out, Token&& token) {
    if (v != verdict::pass && out) out->pointer.insert(0, token());
    return v;
  }
  static auto index_token(std::size_t k) {
    return [k] { return "/" + std::to_string(k); };
  }
  static auto member_token(const string_t& name) {
    return [&name] { return validation::pointer_token(name); };
  }

  static const char* type_name(const Json& v) noexcept {
    if (v.is_number_integer()) return "an integer";
    if (v.is_number()) return "a number";
    if (v.is_string()) return "a string";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    if (v.is_boolean()) return "a boolean";
    return "null";
  }
  static bool type_matches(std::uint8_t types, const Json& v) noexcept {
    switch (v.type()) {
      case nlohmann::json::value_t::null: return types & t_null;
      case nlohmann::json::value_t::boolean: return types & t_boolean;
      case nlohmann::json::value_t::object: return types & t_object;
      case nlohmann::json::value_t::array: return types & t_array;
      case nlohmann::json::value_t::string: return types & t_string;
      case nlohmann::json::value_t::number_integer:
      case nlohmann::json::value_t::number_unsigned: return types & (t_number | t_integer);
      case nlohmann::json::value_t::number_float: {
        if (types & t_number) return true;
        double d = v.template get<double>();
        return (types & t_integer) && std::isfinite(d) && d == std::trunc(d);
      }
      default: return false;
    }
  }
  static std::string types_text(std::uint8_t types) {
    static constexpr std::array<std::pair<std::uint8_t, std::string_view>, 7> names = {{
        {t_null, "null"}, {t_boolean, "boolean"}, {t_object, "object"}, {t_array, "array"},
        {t_number, "number"}, {t_string, "string"}, {t_integer, "integer"}}};
    std::string text;
    for (const auto& [bit, name] : names) {
      if (!(types & bit)) continue;
      if (!text.empty()) text += " or ";
      text += name;
    }
    return text.empty() ? "nothing" : text;
  }

  verdict eval(index at, const Json& doc, std::size_t depth, schema_violation* out) const {
    if (depth > max_schema_evaluation_depth) return too_deep(out);
    const node& n = nodes_[at];
    if (n.is_false) return fail(out, "false", [] { return std::string("is not allowed (the schema is false)"); });
    if (n.has(k_type) && !type_matches(n.types, doc))
      return fail(out, "type", [&] { return std::string("is ") + type_name(doc) + "; expected " + types_text(n.types); });
    if (n.has(k_enum) && std::none_of(n.values.begin(), n.values.end(),
                                      [&](const Json& v) { return validation::same_value(v, doc); }))
      return fail(out, "enum", [&] { return "is " + validation::describe(doc) + "; not one of the values enum lists"; });
    if (n.has(k_const) && !validation::same_value(n.values.front(), doc))
      return fail(out, "const", [&] { return "is " + validation::describe(doc) + "; expected " + validation::describe(n.values.front()); });
    verdict v = verdict::pass;
    if (doc.is_number()) v = check_number(n, doc, out);
    else if (doc.is_string()) v = check_string(n, doc, out);
    else if (doc.is_array()) v = check_array(n, doc, depth, out);
    else if (doc.is_object()) v = check_object(n, doc, depth, out);
    if (v != verdict::pass) return v;
    return check_in_place(n, doc, depth, out);
  }

  verdict check_number(const node& n, const Json& doc, schema_violation* out) const {
    using validation::compare;
    validation::number value = validation::number::of(doc);
    auto text = [&] { return validation::describe(doc); };
    if (n.has(k_minimum) && compare(value, n.minimum) < 0)
      return fail(out, "minimum", [&] { return "is " + text() + "; the minimum is " + n.minimum.text(); });
    if (n.has(k_maximum) && compare(value, n.maximum) > 0)
      return fail(out, "maximum", [&] { return "is " + text() + "; the maximum is " + n.maximum.text(); });
    if (n.has(k_exclusive_minimum) && compare(value, n.exclusive_minimum) <= 0)
      return fail(out, "exclusiveMinimum",
                  [&] { return "is " + text() + "; it must be greater than " + n.exclusive_minimum.text(); });
    if (n.has(k_exclusive_maximum) && compare(value, n.exclusive_maximum) >= 0)
      return fail(out, "exclusiveMaximum",
                  [&] { return "is " + text() + "; it must be less than " + n.exclusive_maximum.text(); });
    if (n.has(k_multiple_of) && !validation::is_multiple(value, n.multiple_of))
      return fail(out, "multipleOf", [&] { return "is " + text() + "; not a multiple of " + n.multiple_of.text(); });
    return verdict::pass;
  }

  verdict check_string(const node& n, const Json& doc, schema_violation* out) const {
    const string_t& s = doc.template get_ref<const string_t&>();
    if (n.has(k_min_length) || n.has(k_max_length)) {
      std::size_t length = validation::code_points(s);
      if (n.has(k_min_length) && length < n.min_length)
        return fail(out, "minLength", [&] {
          return "is " + std::to_string(length) + " characters long; the minimum is " + std::to_string(n.min_length);
        });
      if (n.has(k_max_length) && length > n.max_length)
        return fail(out, "maxLength", [&] {
          return "is " + std::to_string(length) + " characters long; the maximum is " + std::to_string(n.max_length);
        });
    }
    if (n.has(k_pattern) && !patterns_[n.pattern].search(s))
      return fail(out, "pattern", [&] {
        return "is " + validation::describe(doc) + "; it does not match the pattern " +
               nlohmann::json(pattern_sources_[n.pattern]).dump();
      });
    if (n.has(k_format) && !format_matches(n.format, s))
      return fail(out, "format", [&] { return "is " + validation::describe(doc) + "; not a valid " + format_name(n.format); });
    return verdict::pass;
  }

  static bool format_matches(format_kind f, std::string_view s) noexcept {
    switch (f) {
      case format_kind::date_time: return validation::is_date_time(s);
      case format_kind::date: return validation::is_date(s);
      case format_kind::email: return validation::is_email(s);
      case format_kind::uuid: return validation::is_uuid(s);
      case format_kind::uri: return validation::is_uri(s);
    }
    return true;
  }
  static std::string format_name(format_kind f) {
    static constexpr std::array<std::string_view, 5> names = {"date-time (RFC 3339)", "date (RFC 3339 full-date)",
                                                              "email address", "UUID", "URI (RFC 3986)"};
    return std::string(names[static_cast<std::size_t>(f)]);
  }

  verdict check_array(const node& n, const Json& doc, std::size_t depth, schema_violation* out) const {
    std::size_t size = doc.size();
    if (n.has(k_min_items) && size < n.min_items)
      return fail(out, "minItems", [&] { return "has " + std::to_string(size) + " items; the minimum is " + std::to_string(n.min_items); });
    if (n.has(k_max_items) && size > n.max_items)
      return fail(out, "maxItems", [&] { return "has " + std::to_string(size) + " items; the maximum is " + std::to_string(n.max_items); });
    if (n.has(k_unique_items)) {
      if (verdict v = check_unique(doc, depth, out); v != verdict::pass) return v;
    }
    std::size_t prefix = std::min(size, n.prefix_items.size());
    for (std::size_t k = 0; k < prefix; ++k)
      if (verdict v = within(eval(n.prefix_items[k], doc[k], depth + 1, out), out, index_token(k)); v != verdict::pass)
        return v;
    if (n.has(k_items)) {
      for (std::size_t k = n.prefix_items.size(); k < size; ++k) {
        if (nodes_[n.items].is_false)
          return within(fail(out, "items", [&] {
                          return "is not allowed: the array's schema allows " + std::to_string(n.prefix_items.size()) + " items";
                        }), out, index_token(k));
        if (verdict v = within(eval(n.items, doc[k], depth + 1, out), out, index_token(k)); v != verdict::pass) return v;
      }
    }
    return verdict::pass;
  }

  // uniqueItems: the first item (by index) equal to an earlier one.
  verdict check_unique(const Json& doc, std::size_t depth, schema_violation* out) const {
    std::size_t size = doc.size();
    std::size_t budget = max_schema_evaluation_depth - std::min(depth, max_schema_evaluation_depth);
    for (std::size_t k = 0; k < size; ++k)
      if (!validation::within_depth(doc[k], budget)) return within(too_deep(out), out, index_token(k));
    std::size_t repeat = size, first = size;
    auto found = [&](std::size_t a, std::size_t b) {
      if (b < repeat) repeat = b, first = a;
    };
    if (size <= unique_items_pairwise_limit) {
      for (std::size_t b = 1; b < size && repeat == size; ++b)
        for (std::size_t a = 0; a < b; ++a)
          if (validation::same_value(doc[a], doc[b])) {
            found(a, b);
            break;
          }
    } else {
      std::vector<std::pair<std::uint64_t, std::size_t>> hashed(size);
      for (std::size_t k = 0; k < size; ++k) hashed[k] = {validation::value_hash(doc[k]), k};
      std::sort(hashed.begin(), hashed.end());
      for (std::size_t lo = 0; lo < size;) {
        std::size_t hi = lo + 1;
        while (hi < size && hashed[hi].first == hashed[lo].first) ++hi;
        for (std::size_t b = lo + 1; b < hi; ++b)
          for (std::size_t a = lo; a < b; ++a)
            if (validation::same_value(doc[hashed[a].second], doc[hashed[b].second]))
              found(std::min(hashed[a].second, hashed[b].second), std::max(hashed[a].second, hashed[b].second));
        lo = hi;
      }
    }
    if (repeat == size) return verdict::pass;
    return within(fail(out, "uniqueItems", [&] { return "repeats item " + std::to_string(first) + "; items must be unique"; }),
                  out, index_token(repeat));
  }

  bool declared(const node& n, const string_t& name) const noexcept {
    auto it = std::lower_bound(n.properties.begin(), n.properties.end(), name,
                               [](const auto& p, const string_t& key) { return p.first < key; });
    return it != n.properties.end() && it->first == name;
  }

  verdict check_object(const node& n, const Json& doc, std::size_t depth, schema_violation* out) const {
    for (const auto& name : n.required)
      if (doc.find(name) == doc.end())
        return within(fail(out, "required", [&] { return "is missing: the object requires the member \"" + std::string(name) + "\""; }),
                      out, member_token(name));
    for (const auto& [name, child] : n.properties) {
      auto it = doc.find(name);
      if (it == doc.end()) continue;
      if (verdict v = within(eval(child, *it, depth + 1, out), out, member_token(name)); v != verdict::pass) return v;
    }
    if (n.has(k_additional_properties)) {
      for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (declared(n, it.key())) continue;
        if (nodes_[n.additional].is_false)
          return within(fail(out, "additionalProperties", [&] { return std::string("is not allowed: the object's schema does not declare this member"); }),
                        out, member_token(it.key()));
        if (verdict v = within(eval(n.additional, it.value(), depth + 1, out), out, member_token(it.key())); v != verdict::pass)
          return v;
      }
    }
    return verdict::pass;
  }

  verdict check_in_place(const node& n, const Json& doc, std::size_t depth, schema_violation* out) const {
    if (n.ref != none)
      if (verdict v = eval(n.ref, doc, depth + 1, out); v != verdict::pass) return v;
    for (index child : n.all_of)
      if (verdict v = eval(child, doc, depth + 1, out); v != verdict::pass) return v;
    if (n.has(k_any_of)) {
      bool matched = false;
      for (index child : n.any_of) {
        verdict v = eval(child, doc, depth + 1, nullptr);
        if (v == verdict::too_deep) return too_deep(out);
        if (v == verdict::pass) {
          matched = true;
          break;
        }
      }
      if (!matched)
        return fail(out, "anyOf", [&] { return "matches none of the " + std::to_string(n.any_of.size()) + " schemas of anyOf"; });
    }
    if (n.has(k_one_of)) {
      std::size_t matches = 0, first = 0, second = 0;
      for (std::size_t k = 0; k < n.one_of.size() && matches < 2; ++k) {
        verdict v = eval(n.one_of[k], doc, depth + 1, nullptr);
        if (v == verdict::too_deep) return too_deep(out);
        if (v == verdict::pass) (matches++ == 0 ? first : second) = k;
      }
      if (matches == 0)
        return fail(out, "oneOf", [&] { return "matches none of the " + std::to_string(n.one_of.size()) + " schemas of oneOf"; });
      if (matches > 1)
        return fail(out, "oneOf", [&] {
          return "matches schemas " + std::to_string(first) + " and " + std::to_string(second) + " of oneOf; exactly one must match";
        });
    }
    if (n.negated != none) {
      verdict v = eval(n.negated, doc, depth + 1, nullptr);
      if (v == verdict::too_deep) return too_deep(out);
      if (v == verdict::pass) return fail(out, "not", [] { return std::string("matches the schema of not, which it must not"); });
    }
    return verdict::pass;
  }
};

}  // namespace waypoint::app::detail
