// limits_for: the connection limit a server starts with.
#include "limits.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace waypoint::beast::detail {

namespace {
connection_limits from_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return {std::size_t{1} << 20, refusal_reserve};
  auto descriptors = static_cast<std::size_t>(limit.rlim_cur);
  std::size_t reserve = std::max<std::size_t>(descriptors / 8, 2 * refusal_reserve);
  if (descriptors > 2 * reserve) return {descriptors - reserve, refusal_reserve};
  return {std::max<std::size_t>(1, descriptors / 2), descriptors / 4};
}
}  // namespace

connection_limits limits_for(const server_options& o) {
  connection_limits most = from_descriptor_limit();
  if (o.max_connections && o.max_connections < most.connections)
    return {o.max_connections, std::min(refusal_reserve, most.refusals)};
  return most;
}

}  // namespace waypoint::beast::detail
