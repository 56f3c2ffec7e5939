// Per-request values: what layers set for the handler (an authenticated user, a tenant, a
// deadline), keyed by type, and the request's id. A base of context.
//
//   app.use(layer_hooks{[](context& ctx) { ctx.set(user{"ada"}); return true; }});
//   app.get("/me", [](context& ctx) { ctx.response().body(ctx.get<user>().name); });
#pragma once

#include "waypoint/app/extensions.hpp"  // detail::value_key

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>

namespace waypoint::app {
namespace detail {

// T built from `args` at `where` (nullptr: on the heap): T(args...) when T has such a
// constructor, else T{args...}. C++20 lets an aggregate take parenthesised values (P0960),
// but clang before 16 does not implement it, and set<tenant>(7) must build there too.
template <class T, class... Args>
T* construct_value(void* where, Args&&... args) {
  if constexpr (std::is_constructible_v<T, Args&&...>) {
    return where ? ::new (where) T(std::forward<Args>(args)...)
                 : new T(std::forward<Args>(args)...);
  } else {
    return where ? ::new (where) T{std::forward<Args>(args)...}
                 : new T{std::forward<Args>(args)...};
  }
}

// Request-scoped values keyed by type: a fixed array of slots, each with inline storage,
// searched linearly. Middleware sets a handful of values at most, so a scan of a few
// pointers beats any map and nothing is allocated for values that fit a slot.
class value_slots {
 public:
  // Eight values and 48 bytes each hold a user record, a tenant, a deadline, a trace span
  // and a few flags; a larger or over-aligned value is heap-allocated (the cold path).
  static constexpr std::size_t capacity = 8;
  static constexpr std::size_t inline_bytes = 48;

  value_slots() noexcept = default;
  value_slots(const value_slots&) = delete;
  value_slots& operator=(const value_slots&) = delete;
  ~value_slots() { clear(); }

  template <class T, class... Args>
  T& emplace(Args&&... args) {
    static_assert(std::is_object_v<T> && !std::is_const_v<T>, "request values are objects");
    slot& s = vacate(&value_key<T>::id);
    T* object;
    if constexpr (fits_inline<T>) {
      object = construct_value<T>(static_cast<void*>(s.storage), std::forward<Args>(args)...);
      s.destroy = [](void* p) noexcept { static_cast<T*>(p)->~T(); };
    } else {
      object = construct_value<T>(nullptr, std::forward<Args>(args)...);
      s.destroy = [](void* p) noexcept { delete static_cast<T*>(p); };
    }
    s.object = object;
    s.key = &value_key<T>::id;  // last: a throwing constructor leaves the slot free
    return *object;
  }

  template <class T>
  T* find() const noexcept {
    for (std::size_t i = 0; i < used_; ++i)
      if (slots_[i].key == &value_key<T>::id) return static_cast<T*>(slots_[i].object);
    return nullptr;
  }

  void clear() noexcept {
    for (std::size_t i = 0; i < used_; ++i)
      if (slots_[i].key) slots_[i].destroy(slots_[i].object);
    used_ = 0;
  }

 private:
  template <class T>
  static constexpr bool fits_inline = sizeof(T) <= inline_bytes &&
                                      alignof(T) <= alignof(std::max_align_t);

  // Invariant: a slot below used_ holds a value exactly when key is non-null.
  struct slot {
    const void* key;
    void* object;
    void (*destroy)(void*) noexcept;
    alignas(std::max_align_t) unsigned char storage[inline_bytes];
  };

  // The slot for `key`, emptied: the one holding the key (its value destroyed), else a
  // free one. Throws std::length_error when all are taken.
  slot& vacate(const void* key);

  std::array<slot, capacity> slots_;
  std::size_t used_ = 0;
};

}  // namespace detail

// Longest request id kept; a longer X-Request-Id is replaced by a generated one.
inline constexpr std::size_t max_request_id_length = 64;

class request_values {
 public:
  request_values(const request_values&) = delete;
  request_values& operator=(const request_values&) = delete;

  // Stores a value, replacing any earlier one of its type; it lives until the response is
  // done. set(value) keeps a copy of `value` (or moves it); set<T>(args...) constructs a T
  // in place from `args`, for a type that cannot be moved or that is cheaper built there.
  template <class V>
  std::decay_t<V>& set(V&& value) {
    return values_.emplace<std::decay_t<V>>(std::forward<V>(value));
  }
  template <class T, class... Args>
    requires(!std::is_reference_v<T>)
  T& set(Args&&... args) {
    return values_.emplace<T>(std::forward<Args>(args)...);
  }
  // The value of type T, or nullptr when no layer set one.
  template <class T>
  T* find() const noexcept {
    return values_.find<T>();
  }
  // The value of type T; throws std::logic_error (a 500) when none was set.
  template <class T>
  T& get() const {
    if (T* value = values_.find<T>()) return *value;
    throw_missing_value();
  }

  // This request's id: the one adopted by request_id(id) (the request_id middleware), else
  // one generated on first use, unique within the process.
  std::string_view request_id();
  // Adopts `id` when it is 1..max_request_id_length bytes of [A-Za-z0-9._:+/=-]; false
  // (and nothing changed) otherwise.
  bool request_id(std::string_view id) noexcept;

 protected:
  request_values() noexcept = default;
  ~request_values() = default;

 private:
  [[noreturn]] static void throw_missing_value();

  detail::value_slots values_;
  std::uint8_t request_id_length_ = 0;
  std::array<char, max_request_id_length> request_id_;
};

}  // namespace waypoint::app
