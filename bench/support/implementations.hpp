// The routers under measurement, behind one shape so that every suite runs them side by
// side with the same loop:
//
//   Impl::prepared p = Impl::prepare(table);  // untimed: translation to the router's syntax
//   Impl impl(p);                             // timed by the registration suite
//   auto q = impl.compile(request);           // untimed: what a server has already parsed
//   impl.run(q);                              // timed by the match suites
//   impl.answer(request);                     // the outcome, for the agreement report
//
// waypoint and the reference matcher are here; the peers (R3, RESTinio) are in peers.hpp.
// Each router is used through its documented match call, with its own result type: the
// allocations a caller of that API pays are part of what is measured.
#pragma once

#include "tables.hpp"

#include "waypoint/reference/outcome.hpp"
#include "waypoint/reference/servemux.hpp"
#include "waypoint/router.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::bench {

using reference::outcome;

// A route a router refused, by table index, and why.
struct rejection {
  std::size_t route;
  std::string reason;
};

inline constexpr std::uint32_t no_route = 0xFFFFFFFFu;

// The three views a router's match call takes, pointing into a request that outlives them.
struct plain_query {
  std::string_view method;
  std::string_view path;
  std::string_view host;
};

class waypoint_impl {
 public:
  static constexpr std::string_view name = "waypoint";
  using router_type = basic_router<std::uint32_t>;
  using prepared = route_table;

  static prepared prepare(const route_table& table) { return table; }

  explicit waypoint_impl(const prepared& table) {
    for (std::size_t i = 0; i < table.patterns.size(); ++i)
      router_.add(table.patterns[i], static_cast<std::uint32_t>(i));
    router_.freeze();
  }

  // Never any: every table is registered in waypoint and checked by verify_or_exit before
  // a suite runs, and add() throws rather than skipping.
  const std::vector<rejection>& rejected() const noexcept {
    static const std::vector<rejection> none;
    return none;
  }

  // The result object (~16 KiB) is made once and reused by every match, as a server
  // keeps one per connection.
  plain_query compile(const request& r) {
    if (!result_) result_ = std::make_unique<router_type::match_result>();
    return {r.method, r.path, r.host};
  }

  void run(const plain_query& q) {
    router_.match(q.method, q.path, q.host, *result_);
    benchmark::DoNotOptimize(result_->status());
  }

  outcome answer(const request& r) const {
    return reference::outcome_of(router_.match(r.method, r.path, r.host));
  }

  const router_type& router() const noexcept { return router_; }

 private:
  router_type router_;
  std::unique_ptr<router_type::match_result> result_;
};

// Go 1.22 ServeMux's algorithm written for clarity (include/waypoint/reference): the
// oracle waypoint is tested against, and the baseline a faster router has to beat.
class reference_impl {
 public:
  static constexpr std::string_view name = "reference";
  using mux_type = reference::servemux<std::uint32_t>;
  using prepared = route_table;

  static prepared prepare(const route_table& table) { return table; }

  explicit reference_impl(const prepared& table) {
    for (std::size_t i = 0; i < table.patterns.size(); ++i) {
      try {
        mux_.add(table.patterns[i], static_cast<std::uint32_t>(i));
      } catch (const std::exception& e) {
        rejected_.push_back({i, e.what()});
      }
    }
  }

  const std::vector<rejection>& rejected() const noexcept { return rejected_; }

  plain_query compile(const request& r) const { return {r.method, r.path, r.host}; }

  void run(const plain_query& q) const {
    auto result = mux_.match(q.method, q.path, q.host);
    benchmark::DoNotOptimize(result);
  }

  outcome answer(const request& r) const {
    return reference::outcome_of(mux_.match(r.method, r.path, r.host));
  }

 private:
  mux_type mux_;
  std::vector<rejection> rejected_;
};

// The routes of `table` in waypoint's precedence order (table indexes). First-match
// routers get their routes in this order: the best a registration-order router can do.
std::vector<std::uint32_t> precedence_order(const route_table& table);

// A peer's answer as an outcome: matched route `index` of `table` with `values` named by
// its pattern's wildcards, or a 404 when index is no_route.
outcome peer_outcome(const route_table& table, std::uint32_t index,
                     const std::vector<std::string>& values);

}  // namespace waypoint::bench
