// The request view's non-template members: header lookup, path values and the lazy query
// index.
#include "waypoint/app/request_view.hpp"

#include "waypoint/detail/escape.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>

namespace waypoint::app {
namespace detail {

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
  // The client's text, clipped: it is echoed back, and a header may be long.
  constexpr std::size_t shown = 64;
  detail.append(text.substr(0, shown));
  detail += text.size() > shown ? "...\"" : "\"";
  throw http_error(400, std::move(detail));
}

}  // namespace detail

void request_view::fit_match_storage() noexcept {
  std::string_view target = request_->target();
  // The path the router matches is no longer than the target up to its query.
  std::size_t path = std::min({target.find('?'), target.size(), max_path_length});
  std::size_t need = match_storage_bytes(path);
  if (need <= match_storage_.size()) return match_.lend_storage(match_storage_);
  // Routed again (an upgrade's request, the same path): the same block, so that the values
  // read before stay where they were.
  if (long_match_storage_size_ < need) {
    long_match_storage_.reset(new (std::nothrow) char[need]);
    long_match_storage_size_ = long_match_storage_ ? need : 0;
  }
  if (long_match_storage_)
    match_.lend_storage({long_match_storage_.get(), long_match_storage_size_});
  else
    match_.lend_storage(match_storage_);  // no memory: the router refuses the long path
}

void request_view::replace_body(std::string decoded) {
  replaced_body_ = std::make_unique<std::string>(std::move(decoded));
  body_read_ = 0;
}

std::string_view request_view::header(std::string_view name) const noexcept {
  auto it = request_->find(name);
  return it == request_->end() ? std::string_view() : std::string_view(it->value());
}

std::string_view request_view::header(http::field name) const noexcept {
  auto it = request_->find(name);
  return it == request_->end() ? std::string_view() : std::string_view(it->value());
}

namespace {
// What route_pattern() answers when no route matched; at namespace scope, so that the
// handlers and layers that ask on every request pay no function-local static's guard.
const waypoint::pattern no_route;
}  // namespace

const waypoint::pattern& request_view::route_pattern() const noexcept {
  if (outcome_.kind != match_status::matched || !match_.route()) return no_route;
  return match_.route()->pattern;
}

std::string_view request_view::path_value(std::string_view name) const {
  // One walk over the wildcard names finds the value; the checks below only explain a miss.
  if (outcome_.kind == match_status::matched && match_.route()) {
    const auto& names = match_.route()->pattern.wildcard_names();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return match_.value(i);
  }
  std::string what = "waypoint::app: path_value(\"";
  what.append(name);
  what += "\"): ";
  if (outcome_.kind != match_status::matched) {
    what += "no route matched";
  } else {
    what += "route \"";
    what.append(route_pattern().text());
    what += "\" has no such wildcard";
  }
  throw std::logic_error(what);
}

std::optional<std::string_view> request_view::query(std::string_view name) {
  for (const query_param& p : query())
    if (p.name == name) return p.value;
  return std::nullopt;
}

}  // namespace waypoint::app
