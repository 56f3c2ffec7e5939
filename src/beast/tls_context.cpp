// Building an OpenSSL server context from tls_options, and swapping it on reload.
#include "tls_context.hpp"

#include <boost/asio/ssl/context.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace waypoint::beast::detail {
namespace {

namespace ssl = boost::asio::ssl;

[[noreturn]] void fail(std::string_view what, const std::string& file, const std::string& why) {
  throw std::runtime_error("waypoint: TLS " + std::string(what) + " \"" + file + "\": " + why);
}

// Opening the file first gives "No such file or directory" rather than OpenSSL's
// "system lib" for the commonest mistake.
void check_readable(std::string_view what, const std::string& file) {
  if (file.empty()) throw std::invalid_argument("waypoint: TLS needs a " + std::string(what));
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) fail(what, file, std::strerror(errno));
  std::fclose(f);
}

// OpenSSL's reason for the last failure, or Asio's message when the queue is empty.
std::string reason(const boost::system::error_code& ec) {
  const char* openssl = ::ERR_reason_error_string(::ERR_peek_last_error());
  std::string why = openssl ? openssl : ec.message();
  ::ERR_clear_error();
  return why;
}

// The index of the mark offer_h2() leaves on a connection.
int h2_mark() noexcept {
  static const int index = ::SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// ALPN: h2 when the client offers it and the connection's listener serves HTTP/2, else
// http/1.1 when the client offers it. A client offering only other protocols (h2 to a
// listener without HTTP/2) goes on without ALPN rather than being refused, as nginx does:
// it may still speak HTTP/1.1, and refusing would only turn a degraded connection into a
// failed one.
int select_protocol(SSL* ssl, const unsigned char** out, unsigned char* out_length,
                    const unsigned char* offered, unsigned int offered_length, void*) {
  static constexpr unsigned char with_h2[] = {2,   'h', '2', 8,   'h', 't',
                                              't', 'p', '/', '1', '.', '1'};
  static constexpr unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  bool h2 = ::SSL_get_ex_data(ssl, h2_mark()) != nullptr;
  unsigned char* selected = nullptr;
  if (::SSL_select_next_proto(&selected, out_length, h2 ? with_h2 : http11,
                              h2 ? sizeof with_h2 : sizeof http11, offered,
                              offered_length) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_NOACK;
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

// The files must be readable, and a required client certificate needs CAs to verify it.
void check_files(const tls_options& o) {
  check_readable("certificate chain file", o.certificate_chain_file);
  check_readable("private key file", o.private_key_file);
  if (!o.client_ca_file.empty()) check_readable("client CA file", o.client_ca_file);
  if (o.require_client_certificate && o.client_ca_file.empty())
    throw std::invalid_argument(
        "waypoint: TLS require_client_certificate needs a client_ca_file to verify them with");
}

// Protocol versions, ciphers and options that do not depend on the files.
void set_protocol(SSL_CTX* native, const tls_options& o) {
  // TLS 1.2's ciphers are ours (tls_options::tls12_ciphers), TLS 1.3's and the groups
  // OpenSSL's. Renegotiation is off: a client-started one costs the server a handshake per
  // request of the attacker's.
  ::SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  if (::SSL_CTX_set_cipher_list(native, o.tls12_ciphers.c_str()) != 1)
    throw std::invalid_argument("waypoint: TLS tls12_ciphers \"" + o.tls12_ciphers +
                                "\" names no cipher suite this OpenSSL has");
  ::SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                    SSL_OP_CIPHER_SERVER_PREFERENCE);
  // OpenSSL frees a connection's record buffers (some 34 KB) whenever they are empty, rather
  // than keeping them for the connection's life: an idle keep-alive connection, or one
  // between the records of its handshake, holds none.
  ::SSL_CTX_set_mode(native, SSL_MODE_RELEASE_BUFFERS);
}

// The certificate chain and its private key, which must match.
void use_certificate(ssl::context& context, const tls_options& o) {
  boost::system::error_code ec;
  context.use_certificate_chain_file(o.certificate_chain_file, ec);
  if (ec) fail("certificate chain file", o.certificate_chain_file, reason(ec));
  context.use_private_key_file(o.private_key_file, ssl::context::pem, ec);
  if (ec) fail("private key file", o.private_key_file, reason(ec));
  if (::SSL_CTX_check_private_key(context.native_handle()) != 1)
    fail("private key file", o.private_key_file,
         "does not match the certificate in \"" + o.certificate_chain_file + "\"");
}

// Client certificates verified against client_ca_file, asked for (or required).
void verify_clients(ssl::context& context, const tls_options& o) {
  boost::system::error_code ec;
  context.load_verify_file(o.client_ca_file, ec);
  if (ec) fail("client CA file", o.client_ca_file, reason(ec));
  // The CAs are also named in the certificate request, so a client with several
  // certificates knows which to send.
  STACK_OF(X509_NAME)* names = ::SSL_load_client_CA_file(o.client_ca_file.c_str());
  if (names) ::SSL_CTX_set_client_CA_list(context.native_handle(), names);
  ssl::context::verify_mode mode = ssl::verify_peer;
  if (o.require_client_certificate) mode |= ssl::verify_fail_if_no_peer_cert;
  context.set_verify_mode(mode);
}

}  // namespace

std::shared_ptr<ssl::context> make_tls_context(const tls_options& o) {
  check_files(o);
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  ::ERR_clear_error();
  set_protocol(native, o);
  use_certificate(*context, o);
  if (!o.client_ca_file.empty()) verify_clients(*context, o);
  // Session resumption with client verification needs a session id context, or OpenSSL
  // refuses every resumed handshake.
  static constexpr unsigned char session_context[] = "waypoint";
  ::SSL_CTX_set_session_id_context(native, session_context, sizeof session_context - 1);
  ::SSL_CTX_set_alpn_select_cb(native, select_protocol, nullptr);
  return context;
}

void offer_h2(SSL* connection) noexcept {
  static int mark = 1;
  ::SSL_set_ex_data(connection, h2_mark(), &mark);
}

bool selected_h2(const SSL* connection) noexcept {
  const unsigned char* name = nullptr;
  unsigned int length = 0;
  ::SSL_get0_alpn_selected(connection, &name, &length);
  return length == 2 && name[0] == 'h' && name[1] == '2';
}

tls_state::tls_state(const tls_options& o, bool enabled) : options_(o), enabled_(enabled) {
  if (enabled_) current_ = make_tls_context(o);
}

std::shared_ptr<ssl::context> tls_state::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

void tls_state::reload() {
  if (!enabled_) throw std::logic_error("waypoint: reload_tls() on a server without TLS listeners");
  auto fresh = make_tls_context(options_);
  std::lock_guard lock(mutex_);
  current_ = std::move(fresh);
}

void tls_state::print_notice(std::string_view line) noexcept {
  std::fprintf(stderr, "waypoint: %.*s (logged once; server_stats::tls counts them)\n",
               static_cast<int>(line.size()), line.data());
}

}  // namespace waypoint::beast::detail
