// A server with a plaintext and a TLS listener, as docs/server.md shows it: the same
// dispatch answers both, and SIGHUP reads the certificate files again.
// Compiled by tests/docs/check.
#include <waypoint/beast/server.hpp>

#include <string>

int main() {
  waypoint::beast::server_options options;
  // Both listeners serve HTTP/2 beside HTTP/1.1: h2c by prior knowledge, h2 by ALPN.
  options.listen = {{"127.0.0.1", 8080, /*tls=*/false, /*http2=*/true},
                    {"127.0.0.1", 8443, /*tls=*/true, /*http2=*/true}};
  options.tls.certificate_chain_file = "/etc/waypoint/fullchain.pem";  // leaf first
  options.tls.private_key_file = "/etc/waypoint/privkey.pem";
  // Optional: ask clients for a certificate signed by this CA, and refuse those without.
  // options.tls.client_ca_file = "/etc/waypoint/clients-ca.pem";
  // options.tls.require_client_certificate = true;
  options.tls_handshake_timeout = std::chrono::seconds(10);
  waypoint::beast::server s(options, [](waypoint::beast::exchange& x) {
    bool over_tls = x.endpoints().local.tls;  // which listener the request came to
    x.response().body() = over_tls ? "hello over TLS\n" : "hello\n";
  });
  s.run();  // the constructor has read the files: a missing one throws, naming it
}
