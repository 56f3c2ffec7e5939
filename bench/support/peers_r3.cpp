// The R3 adapter (see peers.hpp). r3.h is C: in C++ it needs -fpermissive (a member named
// like its type), and its logging macros would break other headers, so it is kept here.
#include "peers.hpp"

#include "waypoint/pattern.hpp"

#include <r3/r3.h>
#undef info
#undef debug

// Exported by libr3 (its zmalloc.c) but declared only in a private header.
extern "C" void zfree(void* p);

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::bench {
namespace {

// R3's method bits; 0 (every method) for the empty method, -1 for one it cannot name.
int r3_method(std::string_view m) {
  if (m.empty()) return 0;
  if (m == "GET") return METHOD_GET;
  if (m == "POST") return METHOD_POST;
  if (m == "PUT") return METHOD_PUT;
  if (m == "DELETE") return METHOD_DELETE;
  if (m == "PATCH") return METHOD_PATCH;
  if (m == "HEAD") return METHOD_HEAD;
  if (m == "OPTIONS") return METHOD_OPTIONS;
  return -1;
}

// The named values of a match: a trailing slash's anonymous rest captures one more.
std::vector<std::string> named_only(const pattern& p, std::vector<std::string> values) {
  if (p.ends_in_rest() && p.last().text.empty() && !values.empty()) values.pop_back();
  return values;
}

node* tree_of(void* tree) { return static_cast<node*>(tree); }

// R3 1.3 writes a node's combined pattern into a fixed 200-byte buffer without a bound
// check (r3_tree_compile_patterns), so a node with many edges corrupts the heap. Its
// length is computed first, the way R3 composes it, and such a table is refused.
constexpr std::size_t combined_pattern_capacity = 200;

std::size_t combined_pattern_length(const node* n) {
  std::size_t length = 1;  // the terminating NUL
  for (unsigned i = 0; i < n->edge_len; ++i) {
    const edge* e = n->edges[i];
    if (e->has_slug) {
      char* slug = r3_slug_compile(e->pattern, e->pattern_len);
      length += std::strlen(slug);
      zfree(slug);  // R3's allocator keeps a size header: its memory goes back through it
    } else {
      length += e->pattern_len + 3;  // ^( pattern )
    }
    if (i + 1 < n->edge_len) length += 1;  // |
  }
  return length;
}

// r3_tree_compile, minus its defects: R3 1.3 takes a NULL from pcre_study() for an error,
// although PCRE returns NULL whenever studying finds nothing to optimise, and then stops
// compiling, leaving every later node's slugs unable to match; and it overflows the
// buffer above. This walk refuses the overflow, compiles every node, and ignores only
// the study report (the pattern itself compiled).
bool compile_tree(node* n, std::string& failure) {
  if (r3_node_has_slug_edges(n)) {
    std::size_t needed = combined_pattern_length(n);
    if (needed > combined_pattern_capacity) {
      failure = "a node with " + std::to_string(n->edge_len) + " edges needs a " +
                std::to_string(needed) + "-byte pattern; R3 1.3 writes it into a " +
                std::to_string(combined_pattern_capacity) + "-byte buffer (heap overflow)";
      return false;
    }
    char* error = nullptr;
    if (r3_tree_compile_patterns(n, &error) != 0) {
      std::string what = error ? error : "r3_tree_compile_patterns failed";
      if (what.find("PCRE study failed") == std::string::npos || !n->pcre_pattern) failure = what;
    }
    std::free(error);
    if (!failure.empty()) return false;
  }
  for (unsigned i = 0; i < n->edge_len; ++i)
    if (!compile_tree(n->edges[i]->child, failure)) return false;
  return true;
}

}  // namespace

r3_impl::r3_impl(const prepared& table) : table_(&table), rejected_(table.rejected) {
  node* tree = r3_tree_create(10);
  tree_ = tree;
  for (std::size_t i = 0; i < table.paths.size(); ++i) {
    int method = r3_method(table.methods[i]);
    if (method < 0) {
      rejected_.push_back({table.index[i], "method " + table.methods[i] + " has no R3 bit"});
      continue;
    }
    char* error = nullptr;
    const std::string& path = table.paths[i];
    void* data = const_cast<std::uint32_t*>(&table.index[i]);
    route* added = r3_tree_insert_routel_ex(tree, method, path.c_str(),
                                            static_cast<int>(path.size()), data, &error);
    if (!added)
      rejected_.push_back({table.index[i], error ? error : "r3_tree_insert_route failed"});
    std::free(error);
  }
  std::string failure;
  if (!compile_tree(tree, failure)) {
    rejected_.push_back({table.source.patterns.size(), "whole table: " + failure});
    usable_ = false;
  }
}

r3_impl::~r3_impl() { r3_tree_free(tree_of(tree_)); }

r3_impl::query r3_impl::compile(const request& r) const {
  // Bit 0 is no METHOD_* bit: a method R3 cannot name matches only method-less routes.
  int method = r3_method(r.method);
  return {r.path.c_str(), static_cast<int>(r.path.size()), method < 0 ? 1 : method};
}

void r3_impl::run(const query& q) const {
  if (!usable_) return;
  match_entry* entry = match_entry_createl(q.path, q.length);
  entry->request_method = q.method;
  route* hit = r3_tree_match_route(tree_of(tree_), entry);
  benchmark::DoNotOptimize(hit);
  match_entry_free(entry);
}

outcome r3_impl::answer(const request& r) const {
  if (!usable_) return {};
  query q = compile(r);
  match_entry* entry = match_entry_createl(q.path, q.length);
  entry->request_method = q.method;
  route* hit = r3_tree_match_route(tree_of(tree_), entry);
  std::uint32_t index = hit ? *static_cast<const std::uint32_t*>(hit->data) : no_route;
  std::vector<std::string> values;
  if (hit && entry->vars)
    for (int i = 0; i < entry->vars->len; ++i) values.emplace_back(entry->vars->tokens[i]);
  match_entry_free(entry);
  if (index == no_route) return {};
  return peer_outcome(table_->source, index,
                      named_only(parse_pattern(table_->source.patterns[index]), values));
}

}  // namespace waypoint::bench
