// The TLS contexts of a server: what its TLS listeners hand to each connection they accept
// (the certificate chain, the key, client verification, TLS 1.2 and later, ALPN
// http/1.1), made from server_options::tls and remade from the same files on reload, so
// that a renewed certificate reaches new connections while old ones keep theirs. Also
// the once-only log lines for the mismatches a TLS port meets: a flood of them is counted
// (server_stats::tls), never printed line by line.
#pragma once

#include "waypoint/beast/server.hpp"

#include <openssl/ossl_typ.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace waypoint::beast::detail {

// A context from the files `o` names; throws std::runtime_error naming the file (and
// OpenSSL's reason) that is missing, unreadable or unusable.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const tls_options& o);

// ALPN per connection: a connection of a listener that serves HTTP/2 may select h2 (the
// context is shared by every TLS listener, so the choice is marked on the connection).
void offer_h2(SSL* connection) noexcept;
// Whether the handshake selected h2.
bool selected_h2(const SSL* connection) noexcept;

enum class tls_notice : std::uint8_t { plaintext_on_tls_port, tls_on_plaintext_port, handshake_failed };

class tls_state {
 public:
  // No context when the server has no TLS listener.
  explicit tls_state(const tls_options& o, bool enabled);

  bool enabled() const noexcept { return enabled_; }
  // The context new connections are made from; any thread.
  std::shared_ptr<boost::asio::ssl::context> current() const;
  // Remakes the context from the files; on failure throws (as make_tls_context) and keeps
  // the one in use.
  void reload();
  // True the first time this kind of notice comes, and never again: the caller then writes
  // it with print_notice(), so that a flood costs a flag test, not a formatted line each.
  bool first_notice(tls_notice kind) noexcept {
    return !noticed_[static_cast<std::size_t>(kind)].exchange(true, std::memory_order_relaxed);
  }
  static void print_notice(std::string_view line) noexcept;

 private:
  const tls_options& options_;
  bool enabled_;
  mutable std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> current_;  // under mutex_
  std::atomic<bool> noticed_[3]{};
};

}  // namespace waypoint::beast::detail
