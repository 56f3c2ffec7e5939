// waypoint::beast::resource_budget: a count of something a server holds for its clients
// (descriptors; bytes of temporary disk) with a ceiling, and resource_permit, a share of it
// that goes back when its holder goes, whatever way the request ends.
//
//   waypoint::beast::resource_budget disk(2ull << 30);        // 2 GiB for all uploads
//   auto permit = disk.try_acquire(content_length);           // false: answer 507
//   if (!permit.try_grow(n)) ...                              // a chunked body grew past it
//
// The server keeps one for descriptors (server::descriptor_budget()): every connection
// takes one unit, and so does a request's work through exchange_host::acquire_descriptor()
// (an upstream socket, a temporary file), so that the process stays below RLIMIT_NOFILE.
// Thread-safe: one atomic counter, taken with compare-and-swap, given back with a
// subtraction. A permit keeps the counter alive, so it may outlive the budget's owner.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

namespace waypoint::beast {

class resource_budget;

// A share of a resource_budget, or a refusal (false), or a share of nothing (granted by a
// host that has no budget: it always succeeds and counts nothing). Move-only; destroying
// it, or reset(), gives its units back.
class resource_permit {
 public:
  resource_permit() noexcept = default;  // refused: holds nothing
  resource_permit(resource_permit&& other) noexcept
      : counter_(std::move(other.counter_)),
        units_(std::exchange(other.units_, 0)),
        granted_(std::exchange(other.granted_, false)) {}
  resource_permit& operator=(resource_permit&& other) noexcept {
    if (this != &other) {
      reset();
      counter_ = std::move(other.counter_);
      units_ = std::exchange(other.units_, 0);
      granted_ = std::exchange(other.granted_, false);
    }
    return *this;
  }
  ~resource_permit() { reset(); }

  // Granted, counting nothing: what a host without a budget hands out.
  static resource_permit unbounded() noexcept {
    resource_permit p;
    p.granted_ = true;
    return p;
  }

  explicit operator bool() const noexcept { return granted_; }
  std::uint64_t units() const noexcept { return units_; }
  // Takes `more` units besides those held; false, holding what it held, when they do not
  // fit (or the permit was refused). Unbounded: always true.
  bool try_grow(std::uint64_t more) noexcept;
  // Gives the units back; the permit is refused afterwards.
  void reset() noexcept;

 private:
  friend class resource_budget;
  struct counter;
  resource_permit(std::shared_ptr<counter> c, std::uint64_t units) noexcept
      : counter_(std::move(c)), units_(units), granted_(true) {}

  std::shared_ptr<counter> counter_;  // null: unbounded or refused
  std::uint64_t units_ = 0;
  bool granted_ = false;
};

// Copies share the count. Invariant: in_use() <= limit() + the allowance of try_take.
class resource_budget {
 public:
  explicit resource_budget(std::uint64_t limit);

  // `units`, if in_use() + units <= limit(); a refused permit otherwise.
  resource_permit try_acquire(std::uint64_t units = 1) noexcept;
  std::uint64_t limit() const noexcept;
  std::uint64_t in_use() const noexcept;

  // The raw count, for an owner that tracks its units itself (the server's connections):
  // takes `units` if in_use() + units <= limit() + allowance; give_back() returns them.
  bool try_take(std::uint64_t units, std::uint64_t allowance = 0) noexcept;
  void give_back(std::uint64_t units) noexcept;

 private:
  std::shared_ptr<resource_permit::counter> counter_;
};

struct resource_permit::counter {
  explicit counter(std::uint64_t l) noexcept : limit(l) {}
  bool try_take(std::uint64_t units, std::uint64_t allowance) noexcept {
    std::uint64_t cap = allowance > UINT64_MAX - limit ? UINT64_MAX : limit + allowance;
    std::uint64_t now = used.load(std::memory_order_relaxed);
    do {
      if (units > cap || now > cap - units) return false;
    } while (!used.compare_exchange_weak(now, now + units, std::memory_order_relaxed));
    return true;
  }
  const std::uint64_t limit;
  std::atomic<std::uint64_t> used{0};
};

inline bool resource_permit::try_grow(std::uint64_t more) noexcept {
  if (!granted_) return false;
  if (!counter_ || more == 0) return true;
  if (!counter_->try_take(more, 0)) return false;
  units_ += more;
  return true;
}

inline void resource_permit::reset() noexcept {
  if (counter_) counter_->used.fetch_sub(units_, std::memory_order_relaxed);
  counter_.reset();
  units_ = 0;
  granted_ = false;
}

inline resource_budget::resource_budget(std::uint64_t limit)
    : counter_(std::make_shared<resource_permit::counter>(limit)) {}

inline resource_permit resource_budget::try_acquire(std::uint64_t units) noexcept {
  if (!counter_->try_take(units, 0)) return {};
  return {counter_, units};
}

inline std::uint64_t resource_budget::limit() const noexcept { return counter_->limit; }
inline std::uint64_t resource_budget::in_use() const noexcept {
  return counter_->used.load(std::memory_order_relaxed);
}
inline bool resource_budget::try_take(std::uint64_t units, std::uint64_t allowance) noexcept {
  return counter_->try_take(units, allowance);
}
inline void resource_budget::give_back(std::uint64_t units) noexcept {
  counter_->used.fetch_sub(units, std::memory_order_relaxed);
}

}  // namespace waypoint::beast
