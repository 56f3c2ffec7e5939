// The context's non-template members: header lookup, path values, the lazy query index,
// request-scoped value slots and request ids.
#include "waypoint/app/context.hpp"

#include "waypoint/app/application.hpp"
#include "waypoint/detail/escape.hpp"

#include <atomic>
#include <random>
#include <stdexcept>

namespace waypoint::app {
namespace detail {

value_slots::slot& value_slots::vacate(const void* key) {
  slot* free_slot = nullptr;
  for (std::size_t i = 0; i < used_; ++i) {
    slot& s = slots_[i];
    if (s.key == key) {
      s.key = nullptr;
      s.destroy(s.object);
      return s;
    }
    if (!s.key && !free_slot) free_slot = &s;
  }
  if (free_slot) return *free_slot;
  if (used_ == capacity)
    throw std::length_error("waypoint::app: more than " + std::to_string(capacity) +
                            " request-scoped value types in one request");
  slot& s = slots_[used_++];
  s.key = nullptr;
  return s;
}

namespace {

// application/x-www-form-urlencoded decoding at `out`, which it advances.
std::string_view form_decode(std::string_view raw, char*& out) noexcept {
  std::size_t n = waypoint::detail::percent_decode(raw, out, /*plus_is_space=*/true);
  out += n;
  return {out - n, n};
}

}  // namespace

std::span<const query_param> query_index::params(std::string_view raw) {
  if (!parsed_) parse(raw);
  if (!spilled_params_.empty()) return spilled_params_;
  return {params_.items, count_};
}

void query_index::parse(std::string_view raw) {
  parsed_ = true;
  char* out = bytes_;
  if (raw.size() > inline_bytes) {
    spilled_bytes_.reset(new char[raw.size()]);
    out = spilled_bytes_.get();
  }
  std::size_t pos = 0;
  while (pos < raw.size()) {
    std::size_t end = raw.find('&', pos);
    if (end == std::string_view::npos) end = raw.size();
    std::string_view piece = raw.substr(pos, end - pos);
    pos = end + 1;
    if (piece.empty()) continue;
    std::size_t equals = piece.find('=');
    query_param p;
    p.name = form_decode(piece.substr(0, equals), out);
    if (equals != std::string_view::npos) p.value = form_decode(piece.substr(equals + 1), out);
    push(p);
  }
}

void query_index::push(query_param p) {
  if (spilled_params_.empty() && count_ < inline_params) {
    ::new (static_cast<void*>(&params_.items[count_++])) query_param(p);
    return;
  }
  if (spilled_params_.empty()) spilled_params_.assign(params_.items, params_.items + count_);
  spilled_params_.push_back(p);
  ++count_;
}

void throw_bad_value(std::string_view where, std::string_view name, std::string_view text,
                     std::string_view expected) {
  std::string detail(where);
  detail += " \"";
  detail.append(name);
  detail += "\" must be ";
  detail.append(expected);
  detail += ", not \"";
  detail.append(text);
  detail += '"';
  throw http_error(400, std::move(detail));
}

}  // namespace detail

namespace {

constexpr bool is_request_id_byte(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '+' || c == '/' || c == '=' || c == '-';
}

// splitmix64's finalizer: a bijection on 64-bit values, so distinct counters give distinct
// ids, and the random seed makes ids differ between processes.
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

std::uint64_t process_seed() noexcept {
  static const std::uint64_t seed = [] {
    try {
      std::random_device device;
      return (std::uint64_t{device()} << 32) ^ device();
    } catch (...) {
      return std::uint64_t{0x5eed};  // no entropy source: ids stay unique in the process
    }
  }();
  return seed;
}

std::atomic<std::uint64_t> next_request_number{0};

}  // namespace

std::string_view context::header(std::string_view name) const noexcept {
  auto it = request_->find(name);
  return it == request_->end() ? std::string_view() : std::string_view(it->value());
}

std::string_view context::header(http::field name) const noexcept {
  auto it = request_->find(name);
  return it == request_->end() ? std::string_view() : std::string_view(it->value());
}

std::string_view context::route_pattern() const noexcept {
  if (outcome_.kind != match_status::matched || !match_.route()) return {};
  return match_.route()->pattern.text();
}

bool context::has_path_value(std::string_view name) const noexcept {
  return outcome_.kind == match_status::matched && match_.has_value(name);
}

std::string_view context::path_value(std::string_view name) const {
  if (!has_path_value(name)) {
    std::string what = "waypoint::app: path_value(\"";
    what.append(name);
    what += "\"): ";
    if (outcome_.kind != match_status::matched) {
      what += "no route matched";
    } else {
      what += "route \"";
      what.append(route_pattern());
      what += "\" has no such wildcard";
    }
    throw std::logic_error(what);
  }
  return match_.value(name);
}

std::optional<std::string_view> context::query(std::string_view name) {
  for (const query_param& p : query_params())
    if (p.name == name) return p.value;
  return std::nullopt;
}

std::string_view context::request_id() {
  if (request_id_length_ == 0) {
    std::uint64_t id =
        mix(process_seed() + next_request_number.fetch_add(1, std::memory_order_relaxed));
    constexpr char digits[] = "0123456789abcdef";
    for (int i = 15; i >= 0; --i, id >>= 4)
      request_id_[static_cast<std::size_t>(i)] = digits[id & 0xf];
    request_id_length_ = 16;
  }
  return {request_id_.data(), request_id_length_};
}

bool context::set_request_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > max_request_id_length) return false;
  for (char c : id)
    if (!is_request_id_byte(c)) return false;
  id.copy(request_id_.data(), id.size());
  request_id_length_ = static_cast<std::uint8_t>(id.size());
  return true;
}

void context::throw_missing_value() {
  throw std::logic_error("waypoint::app: context::get<T>(): no layer set a value of this type");
}

}  // namespace waypoint::app
