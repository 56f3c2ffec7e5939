// Typed slots in which a feature keeps its own state: one per application (its settings,
// what it collected while routes were registered) and one per route (what it attached to
// that route), keyed by type, so that the kernel holds them without knowing the types, as
// axum's and http's Extensions do. The seam a feature builds on (docs/framework.md,
// "Building a feature"):
//
//   struct audit_settings { std::string sink; };            // the feature's own type
//   app.extension<audit_settings>().sink = "audit.log";     // while registering
//   if (const auto* s = ctx.app().find_extension<audit_settings>()) ...   // per request
//
// Written while routes are registered (and by freeze hooks), read from any thread once the
// application is frozen. Lookup is a scan of a few pointers: a feature or two per route,
// a handful per application.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace waypoint::app {
namespace detail {

// One address per type: the key of a request value (request_values.hpp) or an extension.
template <class T>
struct value_key {
  static constexpr char id = 0;
};

}  // namespace detail

class extensions {
 public:
  // The value of type T, null when none was set.
  template <class T>
  const T* find() const noexcept {
    for (const slot& s : slots_)
      if (s.key == &detail::value_key<T>::id) return static_cast<const T*>(s.value.get());
    return nullptr;
  }
  template <class T>
  T* find() noexcept {
    return const_cast<T*>(std::as_const(*this).find<T>());
  }
  // The value of type T, value-initialised when none was set.
  template <class T>
  T& get() {
    if (T* value = find<T>()) return *value;
    return set(T{});
  }
  // Sets the value of type T, replacing any earlier one.
  template <class T>
  std::decay_t<T>& set(T&& value) {
    using V = std::decay_t<T>;
    return *put(std::make_shared<V>(std::forward<T>(value)));
  }
  // The same for a value already shared (a feature that keeps a pointer to it too).
  template <class T>
  T* put(std::shared_ptr<T> value) {
    static_assert(std::is_object_v<T>, "extensions are objects");
    T* raw = value.get();
    const void* key = &detail::value_key<std::remove_const_t<T>>::id;
    for (slot& s : slots_) {
      if (s.key != key) continue;
      s.value = std::move(value);
      return raw;
    }
    slots_.push_back({key, std::move(value)});
    return raw;
  }

 private:
  struct slot {
    const void* key;
    std::shared_ptr<const void> value;
  };
  std::vector<slot> slots_;
};

}  // namespace waypoint::app
