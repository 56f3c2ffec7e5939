// CBOR items written deterministically and read strictly (cbor.hpp).
#include "app/typed/cbor.hpp"

#include "app/detail/utf8.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace waypoint::app::detail::cbor {
namespace {

constexpr unsigned additional_one_byte = 24;  // the argument follows in 1, 2, 4, 8 bytes
constexpr unsigned additional_indefinite = 31;
constexpr std::uint8_t simple_false = 20, simple_true = 21, simple_null = 22;
constexpr std::uint8_t simple_half = 25, simple_single = 26, simple_double = 27;

void put_big_endian(std::string& out, std::uint64_t value, unsigned bytes) {
  for (unsigned i = bytes; i-- > 0;) out.push_back(static_cast<char>(value >> (8 * i)));
}

std::uint8_t initial_byte(major type, unsigned additional) {
  return static_cast<std::uint8_t>((static_cast<unsigned>(type) << 5) | additional);
}

// The half-precision bits of `value` when it is exactly representable as one, else nothing.
// Via the float's bits: a half is a float whose exponent fits 5 bits (or a subnormal half)
// and whose low 13 mantissa bits are zero.
bool to_half(float value, std::uint16_t& half) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  int exponent = static_cast<int>((bits >> 23) & 0xffu) - 127;
  std::uint32_t mantissa = bits & 0x7fffffu;
  if (((bits >> 23) & 0xffu) == 0xffu) {  // infinity (NaN is handled before)
    half = static_cast<std::uint16_t>(sign | 0x7c00u);
    return mantissa == 0;
  }
  if ((bits & 0x7fffffffu) == 0) {
    half = sign;
    return true;
  }
  if (exponent >= -14 && exponent <= 15) {  // a normal half
    if (mantissa & 0x1fffu) return false;
    half = static_cast<std::uint16_t>(sign | ((exponent + 15) << 10) | (mantissa >> 13));
    return true;
  }
  if (exponent >= -24 && exponent < -14) {  // a subnormal half: 1.m × 2^e = k × 2^-24
    std::uint32_t significand = mantissa | 0x800000u;
    int shift = -exponent - 14 + 13;  // from 23 fraction bits to the half's 10, scaled
    if (significand & ((1u << shift) - 1)) return false;
    half = static_cast<std::uint16_t>(sign | (significand >> shift));
    return true;
  }
  return false;
}

double from_half(std::uint16_t half) {
  int exponent = (half >> 10) & 0x1f;
  int mantissa = half & 0x3ff;
  double value = exponent == 0    ? std::ldexp(mantissa, -24)
                 : exponent == 31 ? (mantissa == 0 ? INFINITY : NAN)
                                  : std::ldexp(mantissa + 1024, exponent - 25);
  return (half & 0x8000) ? -value : value;
}

std::string shortest_rule(major type) {
  switch (type) {
    case major::byte_string:
    case major::text_string: return "string length not in its shortest form";
    case major::array:
    case major::map: return "count not in its shortest form";
    case major::tag: return "tag number not in its shortest form";
    default: return "integer not in its shortest form";
  }
}

}  // namespace

void writer::head(major type, std::uint64_t argument) {
  if (argument < additional_one_byte) {
    out_.push_back(static_cast<char>(initial_byte(type, static_cast<unsigned>(argument))));
    return;
  }
  unsigned size_code = argument <= 0xff ? 0 : argument <= 0xffff ? 1 : argument <= 0xffffffff ? 2 : 3;
  out_.push_back(static_cast<char>(initial_byte(type, additional_one_byte + size_code)));
  put_big_endian(out_, argument, 1u << size_code);
}

void writer::integer(std::int64_t value) {
  if (value >= 0)
    head(major::unsigned_integer, static_cast<std::uint64_t>(value));
  else  // -1 - n, computed without overflow at INT64_MIN
    head(major::negative_integer, ~static_cast<std::uint64_t>(value));
}

void writer::bytes(std::string_view value) {
  head(major::byte_string, value.size());
  out_.append(value);
}

void writer::text(std::string_view value) {
  head(major::text_string, value.size());
  out_.append(value);
}

void writer::boolean(bool value) {
  out_.push_back(static_cast<char>(initial_byte(major::simple, value ? simple_true : simple_false)));
}

void writer::null() { out_.push_back(static_cast<char>(initial_byte(major::simple, simple_null))); }

void writer::floating(double value) {
  if (std::isnan(value)) {
    out_.append("\xf9\x7e\x00", 3);
    return;
  }
  // A double beyond float's range is written as one; converting it to float first would be
  // undefined behaviour ([conv.double]), not merely inexact. Infinities fit every width.
  bool fits_single = std::isinf(value) || std::fabs(value) <= FLT_MAX;
  auto single = fits_single ? static_cast<float>(value) : 0.0f;
  if (!fits_single || static_cast<double>(single) != value) {
    out_.push_back(static_cast<char>(initial_byte(major::simple, simple_double)));
    put_big_endian(out_, std::bit_cast<std::uint64_t>(value), 8);
    return;
  }
  std::uint16_t half = 0;
  if (to_half(single, half)) {
    out_.push_back(static_cast<char>(initial_byte(major::simple, simple_half)));
    put_big_endian(out_, half, 2);
    return;
  }
  out_.push_back(static_cast<char>(initial_byte(major::simple, simple_single)));
  put_big_endian(out_, std::bit_cast<std::uint32_t>(single), 4);
}

std::uint64_t reader::argument(std::size_t head_at, unsigned additional) {
  if (additional < additional_one_byte) return additional;
  if (additional == additional_indefinite)
    throw malformed(head_at, "indefinite length (only definite lengths are accepted)");
  if (additional > additional_one_byte + 3)
    throw malformed(head_at, "reserved additional information " + std::to_string(additional));
  unsigned size = 1u << (additional - additional_one_byte);
  if (bytes_.size() - at_ < size) throw malformed(head_at, "truncated head");
  std::uint64_t value = 0;
  for (unsigned i = 0; i < size; ++i) value = (value << 8) | static_cast<unsigned char>(bytes_[at_++]);
  return value;
}

std::string_view reader::take(std::size_t head_at, std::uint64_t length) {
  if (length > bytes_.size() - at_)
    throw malformed(head_at, "string of " + std::to_string(length) + " bytes where " +
                                 std::to_string(bytes_.size() - at_) + " are left");
  std::string_view content = bytes_.substr(at_, length);
  at_ += length;
  return content;
}

namespace {

// A float head's bits as a double, by the head's width (half, single or double).
double float_of(unsigned additional, std::uint64_t bits) {
  if (additional == simple_half) return from_half(static_cast<std::uint16_t>(bits));
  if (additional == simple_single)
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  return std::bit_cast<double>(bits);
}

// Refuses a simple value no JSON value is: undefined, the others, and the reserved heads.
[[noreturn]] void refuse_simple(std::size_t offset, unsigned additional) {
  if (additional > simple_double)  // 28-30, as for the other major types
    throw malformed(offset, "reserved additional information " + std::to_string(additional));
  throw malformed(offset, additional == 23 ? "undefined (no JSON value is one)"
                                           : "simple value " + std::to_string(additional));
}

// §4.2.1: the argument in the fewest bytes. A one-byte argument under 24 fits the initial byte.
void check_shortest(const item& head, unsigned additional, major type) {
  if (additional < additional_one_byte) return;
  unsigned size = 1u << (additional - additional_one_byte);
  std::uint64_t smaller_max =
      size == 1 ? additional_one_byte - 1 : (std::uint64_t{1} << (4 * size)) - 1;
  if (head.argument <= smaller_max) throw malformed(head.offset, shortest_rule(type));
}

// Every element takes at least a byte: a count beyond the bytes `left` cannot be met.
void check_count(const item& head, major type, std::uint64_t left) {
  std::uint64_t needed_pairs = type == major::map ? 2 : 1;
  if (head.argument > left / needed_pairs)
    throw malformed(head.offset, (type == major::map ? "map of " : "array of ") +
                                     std::to_string(head.argument) + " items where " +
                                     std::to_string(left) + " bytes are left");
}

}  // namespace

void reader::read_simple(item& out, unsigned additional) {
  switch (additional) {
    case simple_false:
    case simple_true:
      out.type = kind::boolean;
      out.argument = additional == simple_true;
      return;
    case simple_null:
      out.type = kind::null;
      return;
    case simple_half:
    case simple_single:
    case simple_double:
      out.number = float_of(additional, argument(out.offset, additional));
      if (!std::isfinite(out.number))
        throw malformed(out.offset, "NaN or infinity (no JSON number is one)");
      out.type = kind::floating;
      return;
    case additional_indefinite:
      throw malformed(out.offset, "unexpected break");
    default:
      refuse_simple(out.offset, additional);
  }
}

void reader::read_content(item& out, major type) {
  switch (type) {
    case major::unsigned_integer: out.type = kind::unsigned_integer; break;
    case major::negative_integer: out.type = kind::negative_integer; break;
    case major::byte_string:
      out.type = kind::byte_string;
      out.content = take(out.offset, out.argument);
      break;
    case major::text_string:
      out.type = kind::text_string;
      out.content = take(out.offset, out.argument);
      if (!is_utf8(out.content)) throw malformed(out.offset, "text string not valid UTF-8");
      break;
    case major::array:
    case major::map:
      check_count(out, type, bytes_.size() - at_);
      out.type = type == major::map ? kind::map : kind::array;
      break;
    case major::tag: out.type = kind::tag; break;
    case major::simple:
      break;  // read_simple's
  }
}

item reader::next() {
  item out;
  out.offset = at_;
  if (at_ == bytes_.size()) throw malformed(at_, "truncated: an item expected");
  auto initial = static_cast<unsigned char>(bytes_[at_++]);
  auto type = static_cast<major>(initial >> 5);
  unsigned additional = initial & 0x1fu;
  if (type == major::simple) {
    read_simple(out, additional);
    return out;
  }
  out.argument = argument(out.offset, additional);
  check_shortest(out, additional, type);
  read_content(out, type);
  return out;
}

void reader::enter(const item& container) {
  if (++depth_ > max_depth)
    throw malformed(container.offset, "nested deeper than " + std::to_string(max_depth) + " levels");
}

void reader::expect_end() const {
  if (at_ != bytes_.size())
    throw malformed(at_, std::to_string(bytes_.size() - at_) + " bytes after the item");
}

void reader::skip() {
  // Iterative: a count of items still to read per open container, so skipping costs no
  // recursion however deep the item (within max_depth).
  std::uint64_t pending = 1;
  std::uint64_t stack[max_depth + 1];
  std::size_t open = 0;
  while (true) {
    while (pending == 0) {
      if (open == 0) return;
      leave();
      pending = stack[--open];
    }
    --pending;
    item it = next();
    if (it.type == kind::tag) {
      ++pending;
    } else if (it.type == kind::array || it.type == kind::map) {
      enter(it);
      stack[open++] = pending;
      pending = it.type == kind::map ? it.argument * 2 : it.argument;
    }
  }
}


}  // namespace waypoint::app::detail::cbor
