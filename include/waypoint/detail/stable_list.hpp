// stable_list<T>: an append-only sequence whose elements never move, in chunks of
// chunk_size. A std::deque also keeps references, but libstdc++ gives it 512-byte blocks,
// one allocation for every two routes; chunks of 64 make that one in 64.
#pragma once

#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace waypoint::detail {

template <class T>
class stable_list {
 public:
  // Chosen so that a chunk's allocation costs under 2% of the allocations of registering
  // its routes (tests/core/router_test.cpp, RegistrationAllocations).
  static constexpr std::size_t chunk_size = 64;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    const_iterator(const stable_list* list, std::size_t i) : list_(list), i_(i) {}
    reference operator*() const { return (*list_)[i_]; }
    pointer operator->() const { return &(*list_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++i_;
      return before;
    }
    friend bool operator==(const const_iterator&, const const_iterator&) = default;

   private:
    const stable_list* list_ = nullptr;
    std::size_t i_ = 0;
  };

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const T& operator[](std::size_t i) const noexcept { return chunks_[i / chunk_size][i % chunk_size]; }
  T& operator[](std::size_t i) noexcept { return chunks_[i / chunk_size][i % chunk_size]; }
  const T& front() const noexcept { return (*this)[0]; }
  const T& back() const noexcept { return (*this)[size_ - 1]; }
  T& back() noexcept { return (*this)[size_ - 1]; }
  const_iterator begin() const noexcept { return {this, 0}; }
  const_iterator end() const noexcept { return {this, size_}; }

  // Invariant: no chunk grows past chunk_size, so no element is ever moved.
  void push_back(T value) {
    if (size_ % chunk_size == 0) {
      chunks_.emplace_back();
      chunks_.back().reserve(chunk_size);
    }
    chunks_.back().push_back(std::move(value));
    ++size_;
  }

 private:
  std::vector<std::vector<T>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace waypoint::detail
