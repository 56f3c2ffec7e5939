// Peer routers, each optional: R3 (libr3-dev, a C radix tree with PCRE slugs) and
// RESTinio's express router (librestinio-dev, one std::regex per route tried in order).
// CMake defines WAYPOINT_BENCH_HAVE_R3 / WAYPOINT_BENCH_HAVE_RESTINIO when they are
// installed (scripts/install-deps bench); without them the suites simply do not list them.
//
// Translation from waypoint's grammar, refused where a peer cannot express a pattern:
//   {name}       R3 {name}          RESTinio :name
//   {name...}    R3 {name:.*}       RESTinio :name(.*)
//   trailing /   as {name...} with a name no table uses, whose value is not reported
//   {$}          a trailing '/' in both
//   HOST/...     refused by both: neither routes on the host
// Both are first-match routers; they get the routes in waypoint's precedence order. Both
// are case-sensitive and strict about trailing slashes here (RESTinio's defaults are not:
// its options are set to match waypoint). Neither answers 405, HEAD-for-GET or redirects:
// such requests show up in the agreement report, never hidden.
#pragma once

#include "implementations.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#if defined(WAYPOINT_BENCH_HAVE_RESTINIO)
#include <restinio/router/express.hpp>
#endif

namespace waypoint::bench {

// A table translated for a peer: one entry per accepted route, in insertion order.
struct peer_table {
  route_table source;
  std::vector<std::string> paths;    // in the peer's syntax
  std::vector<std::string> methods;  // "" for every method
  std::vector<std::uint32_t> index;  // the route's index in `source`
  std::vector<rejection> rejected;   // routes the translation refused
};

// Which syntax to translate to.
enum class peer_syntax { r3, express };

// The order routes are given to a first-match peer: waypoint's precedence order (what
// the suites use), or the table's own order (to show what precedence buys).
enum class peer_order { precedence, file };

// Translates `table`; routes that the syntax cannot express are recorded in `rejected`
// with the reason.
peer_table translate(const route_table& table, peer_syntax syntax,
                     peer_order order = peer_order::precedence);

#if defined(WAYPOINT_BENCH_HAVE_R3)

// r3.h cannot share a translation unit with RESTinio (its `info` macro) and needs
// -fpermissive in C++, so R3 lives in peers_r3.cpp behind an opaque tree pointer; the
// out-of-line call costs each R3 match a few nanoseconds.
class r3_impl {
 public:
  static constexpr std::string_view name = "r3";
  static constexpr peer_syntax syntax = peer_syntax::r3;
  using prepared = peer_table;

  static prepared prepare(const route_table& table) { return translate(table, peer_syntax::r3); }

  // R3 keeps pointers to the path texts and to the route data: `table` must outlive it.
  explicit r3_impl(const prepared& table);
  ~r3_impl();
  r3_impl(const r3_impl&) = delete;
  r3_impl& operator=(const r3_impl&) = delete;

  const std::vector<rejection>& rejected() const noexcept { return rejected_; }
  // False when R3 cannot hold the table at all (see peers_r3.cpp): nothing is matched.
  bool usable() const noexcept { return usable_; }

  struct query {
    const char* path;
    int length;
    int method;
  };
  query compile(const request& r) const;

  // R3's documented idiom: a match_entry per request (it collects the slug values).
  void run(const query& q) const;

  outcome answer(const request& r) const;

 private:
  const peer_table* table_;
  void* tree_ = nullptr;  // R3's node*
  std::vector<rejection> rejected_;
  bool usable_ = true;
};

#endif

#if defined(WAYPOINT_BENCH_HAVE_RESTINIO)

class restinio_impl {
 public:
  static constexpr std::string_view name = "restinio";
  static constexpr peer_syntax syntax = peer_syntax::express;
  using prepared = peer_table;
  using entry_type = restinio::router::express_route_entry_t<>;

  static prepared prepare(const route_table& table) {
    return translate(table, peer_syntax::express);
  }

  explicit restinio_impl(const prepared& table);

  const std::vector<rejection>& rejected() const noexcept { return rejected_; }

  // A parsed request header, as a RESTinio server hands it to its router.
  struct query {
    restinio::http_request_header_t header;
  };
  query compile(const request& r) const;

  // The loop of restinio::router::express_router_t::operator(), without the handler call:
  // each route's matcher in turn until one accepts the request.
  void run(const query& q) const {
    restinio::router::impl::target_path_holder_t target{q.header.path()};
    restinio::router::route_params_t params;
    for (const entry_type& e : entries_) {
      if (e.match(q.header, target, params)) break;
    }
    benchmark::DoNotOptimize(params);
  }

  outcome answer(const request& r) const;

 private:
  const peer_table* table_;
  std::vector<entry_type> entries_;
  std::vector<std::uint32_t> index_;  // entries_[i] serves route index_[i] of the table
  std::vector<rejection> rejected_;
};

#endif

}  // namespace waypoint::bench
