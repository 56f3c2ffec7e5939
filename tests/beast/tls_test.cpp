// TLS listeners over loopback, with certificates made at test time by `openssl` (a CA, a
// server certificate for localhost and 127.0.0.1, a renewed one, an expired one, one for
// another host, a client certificate) and the clients users use: curl with --cacert,
// `openssl s_client`, and an Asio TLS client where a test must control the records (split
// requests, a keep-alive connection across a reload). Timeouts are short so the suite stays
// fast; every wait is bounded.
#include "server_fixture.hpp"
#include "test_client.hpp"

#include <waypoint/beast/router_dispatch.hpp>
#include <waypoint/beast/server.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>

#include "../support/command.hpp"
#include "../support/missing_tool.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;
namespace wb = waypoint::beast;
namespace fs = std::filesystem;
using waypoint::testing::make_router;
using waypoint::testing::patience;
using waypoint::testing::request_text;
using waypoint::testing::test_client;
using waypoint::testing::test_options;

using waypoint::testing::command_result;

command_result run(const std::string& command) { return waypoint::testing::run_command(command); }

bool have(const char* tool) {
  return run(std::string("command -v ") + tool + " >/dev/null").status == 0;
}

// The certificates, made once for the suite in a temporary directory.
struct certificates {
  fs::path dir;
  std::string error;  // why they could not be made

  fs::path file(const std::string& name) const { return dir / name; }
  std::string path(const std::string& name) const { return file(name).string(); }

  certificates() {
    char pattern[] = "/tmp/waypoint-tls-XXXXXX";
    if (!::mkdtemp(pattern)) {
      error = "mkdtemp failed";
      return;
    }
    dir = pattern;
    // A P-256 key and a certificate signed by the CA, with the given days and extensions.
    std::string script = "set -e; cd '" + dir.string() + "'\n" + R"(
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"; }
sign() {  # name subject days extensions
  key "$1"
  openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
  printf '%s\n' "$4" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days "$3" \
    -extfile "$1.ext" -out "$1.pem"
}
key ca
openssl req -x509 -new -key ca.key -subj /CN=waypoint-test-ca -days 2 -out ca.pem
here='subjectAltName=DNS:localhost,IP:127.0.0.1'
sign server /CN=first 2 "$here"
sign renewed /CN=renewed 2 "$here"
sign expired /CN=expired -1 "$here"
sign elsewhere /CN=elsewhere 2 'subjectAltName=DNS:elsewhere.example'
sign client /CN=client 2 'extendedKeyUsage=clientAuth'
key stranger
openssl req -x509 -new -key stranger.key -subj /CN=stranger -days 2 -out stranger.pem
# An RSA key, the only kind a static-RSA suite (AES128-SHA) can be negotiated with.
openssl req -x509 -newkey rsa:2048 -nodes -keyout rsa.key -subj /CN=rsa -days 2 -out rsa.pem
)";
    std::ofstream(dir / "make.sh") << script;
    command_result r = run("bash '" + (dir / "make.sh").string() + "'");
    if (r.status != 0) error = "openssl failed: " + r.output;
  }
  ~certificates() {
    std::error_code ignored;
    if (!dir.empty()) fs::remove_all(dir, ignored);
  }
};

const certificates& certs() {
  static certificates c;
  return c;
}

// The live copy of the server's files that a reload reads: `name`.pem and `name`.key.
struct live_files {
  fs::path chain = certs().file("live.pem");
  fs::path key = certs().file("live.key");
  void use(const std::string& name) const {
    fs::copy_file(certs().file(name + ".pem"), chain, fs::copy_options::overwrite_existing);
    fs::copy_file(certs().file(name + ".key"), key, fs::copy_options::overwrite_existing);
  }
};

wb::server_options tls_options(const std::string& name = "server") {
  wb::server_options o = test_options();
  o.listen = {{"127.0.0.1", 0, true}};
  o.tls.certificate_chain_file = certs().path(name + ".pem");
  o.tls.private_key_file = certs().path(name + ".key");
  return o;
}

// A started TLS server with the test router.
struct tls_server {
  explicit tls_server(wb::server_options o = tls_options())
      : router(make_router()), server(std::move(o), wb::dispatch_to(*router)) {
    server.start();
    port = server.endpoints().front().port;
  }
  std::string url(const std::string& target) const {
    return "https://localhost:" + std::to_string(port) + target;
  }
  std::unique_ptr<wb::router> router;
  wb::server server;
  std::uint16_t port = 0;
};

// curl with the test CA, localhost pinned to 127.0.0.1; prints the status last.
command_result curl(const tls_server& s, const std::string& target, const std::string& extra = "") {
  return run("curl -sS --max-time 10 --cacert '" + certs().path("ca.pem") + "' --resolve localhost:" +
             std::to_string(s.port) + ":127.0.0.1 " + extra + " -w ' %{http_code}' '" +
             s.url(target) + "'");
}

// A blocking TLS client whose every wait is bounded (SO_RCVTIMEO/SO_SNDTIMEO).
class tls_client {
 public:
  explicit tls_client(std::uint16_t port) : context_(ssl::context::tls_client), stream_(io_, context_) {
    context_.load_verify_file(certs().path("ca.pem"));
    stream_.set_verify_mode(ssl::verify_peer);
    stream_.set_verify_callback(ssl::host_name_verification("localhost"));
    ::SSL_set_tlsext_host_name(stream_.native_handle(), "localhost");
    stream_.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
    timeval tv{static_cast<time_t>(patience.count() / 1000), 0};
    int fd = stream_.next_layer().native_handle();
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    stream_.handshake(ssl::stream_base::client);
  }
  // Each piece is a TLS write of its own (a record), with a pause after it.
  void send(const std::vector<std::string>& pieces,
            std::chrono::milliseconds gap = std::chrono::milliseconds(0)) {
    for (const std::string& p : pieces) {
      asio::write(stream_, asio::buffer(p));
      if (gap.count()) std::this_thread::sleep_for(gap);
    }
  }
  waypoint::testing::reply read() {
    waypoint::testing::reply res;
    http::read(stream_, buffer_, res);
    return res;
  }
  // The common name of the certificate the server presented.
  std::string peer_name() {
    X509* cert = ::SSL_get1_peer_certificate(stream_.native_handle());
    if (!cert) return "";
    char name[256] = {};
    ::X509_NAME_get_text_by_NID(::X509_get_subject_name(cert), NID_commonName, name, sizeof name);
    ::X509_free(cert);
    return name;
  }
  std::string alpn() {
    const unsigned char* data = nullptr;
    unsigned int length = 0;
    ::SSL_get0_alpn_selected(stream_.native_handle(), &data, &length);
    return std::string(reinterpret_cast<const char*>(data), length);
  }

 private:
  asio::io_context io_;
  ssl::context context_;
  ssl::stream<asio::ip::tcp::socket> stream_;
  boost::beast::flat_buffer buffer_;
};

std::string get(const std::string& target) { return request_text("GET", target); }

class Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"openssl", "curl"})
      if (!have(tool)) WAYPOINT_SKIP_MISSING(tool);
    ASSERT_EQ(certs().error, "");
  }
};

// --- real clients ---------------------------------------------------------------------

TEST_F(Tls, CurlWithTheCaGetsTheRoutedAnswer) {
  tls_server s;
  command_result r = curl(s, "/users/42");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "GET /users/{id} 42 200");
  EXPECT_EQ(s.server.stats().tls.handshakes, 1u);
}

// A unix listener with `tls` set: the same handshake and connection code, through curl's
// --unix-socket (the certificate is checked against the URL's host, localhost).
TEST_F(Tls, ServesTlsOverAUnixSocket) {
  fs::path socket = certs().file("tls-" + std::to_string(::getpid()) + ".sock");
  wb::server_options o = tls_options();
  o.listen = {wb::listen_address::unix_socket(socket.string())};
  o.listen[0].tls = true;
  auto router = make_router();
  wb::server s(std::move(o), wb::dispatch_to(*router));
  s.start();
  command_result r = run("curl -sS --max-time 10 --cacert '" + certs().path("ca.pem") +
                         "' --unix-socket '" + socket.string() +
                         "' -w ' %{http_code}' https://localhost/users/42");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "GET /users/{id} 42 200");
  EXPECT_EQ(s.stats().tls.handshakes, 1u);
}

TEST_F(Tls, CurlKeepsOneConnectionForSeveralRequests) {
  tls_server s;
  std::string other = s.url("/users/me");
  command_result r = curl(s, "/users/42", "'" + other + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("GET /users/{id} 42"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GET /users/me"), std::string::npos) << r.output;
  EXPECT_EQ(s.server.stats().tls.handshakes, 1u);
  EXPECT_EQ(s.server.stats().requests, 2u);
}

TEST_F(Tls, OpensslSClientVerifiesAndNegotiatesHttp11) {
  tls_server s;
  command_result r = run("printf 'GET /users/7 HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' | "
                         "timeout 10 openssl s_client -connect 127.0.0.1:" + std::to_string(s.port) +
                         " -servername localhost -verify_hostname localhost -verify_return_error"
                         " -alpn h2,http/1.1 -CAfile '" + certs().path("ca.pem") + "' -ign_eof");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Verify return code: 0 (ok)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ALPN protocol: http/1.1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("HTTP/1.1 200 OK"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GET /users/{id} 7"), std::string::npos) << r.output;
}

TEST_F(Tls, VersionsBeforeTls12AreRefused) {
  tls_server s;
  // Security level 0 lets this client offer TLS 1.1 at all; the refusal is the server's.
  command_result r = run("timeout 10 openssl s_client -connect 127.0.0.1:" + std::to_string(s.port) +
                         " -tls1_1 -cipher DEFAULT@SECLEVEL=0 </dev/null");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_EQ(s.server.stats().tls.handshakes, 0u);
  EXPECT_GE(s.server.stats().tls.handshake_failures, 1u) << r.output;
  command_result ok = run("timeout 10 openssl s_client -connect 127.0.0.1:" + std::to_string(s.port) +
                          " -tls1_2 -CAfile '" + certs().path("ca.pem") + "' </dev/null");
  EXPECT_NE(ok.output.find("Protocol  : TLSv1.2"), std::string::npos) << ok.output;
}

// TLS 1.2 with forward secrecy and AEAD only, by default; TLS 1.3; the list configurable.
// An RSA certificate, so that a static-RSA CBC suite could be negotiated at all (before,
// OpenSSL's default list let `-cipher AES128-SHA` through).
TEST_F(Tls, Tls12CiphersAreEcdheAndAeadOnlyByDefault) {
  struct row {
    const char* rule;
    const char* server_ciphers;  // null: the default
    const char* client;
    bool accepted;
  };
  const row rows[] = {
      {"static RSA, CBC", nullptr, "-tls1_2 -cipher AES128-SHA", false},
      {"ECDHE, but CBC", nullptr, "-tls1_2 -cipher ECDHE-RSA-AES128-SHA", false},
      {"ECDHE with AES-GCM", nullptr, "-tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256", true},
      {"ECDHE with ChaCha20-Poly1305", nullptr, "-tls1_2 -cipher ECDHE-RSA-CHACHA20-POLY1305",
       true},
      {"TLS 1.3", nullptr, "-tls1_3", true},
      {"a configured list is what is served", "AES128-SHA", "-tls1_2 -cipher AES128-SHA", true},
  };
  for (const row& r : rows) {
    wb::server_options o = tls_options("rsa");
    if (r.server_ciphers) o.tls.tls12_ciphers = r.server_ciphers;
    tls_server s(o);
    command_result c = run("timeout 10 openssl s_client -connect 127.0.0.1:" +
                           std::to_string(s.port) + " " + r.client + " </dev/null");
    auto settled = [&] {
      const auto& t = s.server.stats().tls;
      return t.handshakes + t.handshake_failures > 0;
    };
    for (int i = 0; i < 100 && !settled(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(s.server.stats().tls.handshakes, r.accepted ? 1u : 0u) << r.rule << "\n" << c.output;
  }
  wb::server_options bad = tls_options("rsa");
  bad.tls.tls12_ciphers = "NO-SUCH-CIPHER";
  EXPECT_THROW(tls_server{bad}, std::invalid_argument);
}

struct refused_certificate_row {
  std::string rule;
  std::string certificate;
  std::string curl_says;  // part of curl's error
};

TEST_F(Tls, ClientRefusesCertificatesThatDoNotProveTheHost) {
  std::vector<refused_certificate_row> rows = {
      {"an expired certificate", "expired", "expired"},
      {"a certificate for another host", "elsewhere", "localhost"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.rule);
    tls_server s(tls_options(row.certificate));
    command_result r = curl(s, "/users/42");
    EXPECT_EQ(r.status, 60) << r.output;  // CURLE_PEER_FAILED_VERIFICATION
    EXPECT_NE(r.output.find(row.curl_says), std::string::npos) << r.output;
    EXPECT_EQ(s.server.stats().requests, 0u);
  }
}

TEST_F(Tls, ClientCertificateRequiredRefusesClientsWithoutOne) {
  wb::server_options o = tls_options();
  o.tls.client_ca_file = certs().path("ca.pem");
  o.tls.require_client_certificate = true;
  tls_server s(std::move(o));
  command_result without = curl(s, "/users/42");
  EXPECT_NE(without.status, 0) << without.output;
  EXPECT_EQ(s.server.stats().requests, 0u);
  command_result with = curl(s, "/users/42", "--cert '" + certs().path("client.pem") + "' --key '" +
                                                 certs().path("client.key") + "'");
  EXPECT_EQ(with.status, 0) << with.output;
  EXPECT_EQ(with.output, "GET /users/{id} 42 200");
  // A certificate the CA did not sign is no better than none.
  command_result stranger = curl(s, "/users/42", "--cert '" + certs().path("stranger.pem") +
                                                     "' --key '" + certs().path("stranger.key") + "'");
  EXPECT_NE(stranger.status, 0) << stranger.output;
}

TEST_F(Tls, ClientCertificateOptionalStillServesClientsWithoutOne) {
  wb::server_options o = tls_options();
  o.tls.client_ca_file = certs().path("ca.pem");
  tls_server s(std::move(o));
  EXPECT_EQ(curl(s, "/users/1").output, "GET /users/{id} 1 200");
  EXPECT_EQ(curl(s, "/users/2", "--cert '" + certs().path("client.pem") + "' --key '" +
                                    certs().path("client.key") + "'")
                .output,
            "GET /users/{id} 2 200");
}

// --- the bytes as the network delivers them --------------------------------------------

TEST_F(Tls, RequestSplitAcrossTlsRecordsIsAnsweredOnce) {
  tls_server s;
  tls_client c(s.port);
  EXPECT_EQ(c.alpn(), "");  // offered nothing: none selected
  c.send({"GE", "T /users/", "42 HTTP/1.1\r\nHo", "st: x\r", "\n\r\n"}, std::chrono::milliseconds(20));
  auto res = c.read();
  EXPECT_EQ(res.result_int(), 200u);
  EXPECT_EQ(res.body(), "GET /users/{id} 42");
  // Pipelined in one record: answered in order.
  c.send({get("/users/1") + get("/users/me")});
  EXPECT_EQ(c.read().body(), "GET /users/{id} 1");
  EXPECT_EQ(c.read().body(), "GET /users/me");
}

TEST_F(Tls, PlaintextRequestOnATlsPortIs400SayingHttps) {
  tls_server s;
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    test_client c(s.port);
    ASSERT_TRUE(c.send(get("/users/42")));
    auto res = c.read();
    ASSERT_TRUE(res);
    EXPECT_EQ(res->result_int(), 400u);
    EXPECT_NE(res->body().find("HTTPS"), std::string::npos) << res->body();
    EXPECT_TRUE(c.closed_by_server());
  }
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(s.server.stats().tls.plaintext_on_tls, 3u);
  EXPECT_EQ(s.server.stats().tls.handshakes, 0u);
  // Told once, counted every time.
  std::size_t first = log.find("plaintext request on the TLS port");
  EXPECT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("plaintext request on the TLS port", first + 1), std::string::npos) << log;
}

TEST_F(Tls, TlsHelloOnAPlaintextPortIs400AndCounted) {
  auto router = make_router();
  wb::server plain(test_options(), wb::dispatch_to(*router));
  plain.start();
  std::uint16_t port = plain.endpoints().front().port;
  for (int i = 0; i < 2; ++i) {
    command_result r = run("curl -sS --max-time 10 -k https://127.0.0.1:" + std::to_string(port) + "/");
    EXPECT_NE(r.status, 0) << r.output;
  }
  EXPECT_EQ(plain.stats().tls.tls_on_plaintext, 2u);
  EXPECT_EQ(plain.stats().errors[0], 2u);  // 400s
}

TEST_F(Tls, StalledHandshakeIsCutByItsTimeout) {
  wb::server_options o = tls_options();
  o.tls_handshake_timeout = std::chrono::milliseconds(200);
  tls_server s(std::move(o));
  test_client silent(s.port);                // connects, sends nothing
  test_client partial(s.port);               // the first bytes of a hello, then nothing
  ASSERT_TRUE(partial.send(std::string("\x16\x03\x01\x02\x00\x01", 6)));
  EXPECT_TRUE(silent.closed_by_server());
  EXPECT_TRUE(partial.closed_by_server());
  EXPECT_EQ(s.server.stats().timeouts.tls_handshake, 2u);
  // The close the client saw comes just before the connection is counted out.
  for (int i = 0; i < 200 && s.server.stats().open > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(s.server.stats().open, 0u);
}

TEST_F(Tls, HandshakeCountsAgainstTheConnectionLimit) {
  wb::server_options o = tls_options();
  o.max_connections = 1;
  o.tls_handshake_timeout = std::chrono::milliseconds(300);
  tls_server s(std::move(o));
  test_client silent(s.port);  // holds the only slot until its handshake times out
  for (int i = 0; i < 100 && s.server.stats().open < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  command_result refused = curl(s, "/users/1");
  EXPECT_NE(refused.status, 0) << refused.output;  // closed at once: no 503 over TLS
  EXPECT_GE(s.server.stats().refused, 1u);
  EXPECT_TRUE(silent.closed_by_server());
  EXPECT_EQ(curl(s, "/users/1").output, "GET /users/{id} 1 200");
}

// A streamed response behind a pipelined one: over TLS the first response's write is always
// asynchronous, and the stream's first chunk (sent from the dispatch, so it runs once the
// dispatch has returned, while that write is in flight) waits for it. Before, the chunk and
// the head were appended to the output under the write and cleared with it: the client got
// the first response, then a last chunk with no head.
TEST_F(Tls, ChunkWaitsForAnEarlierResponseStillBeingWritten) {
  wb::server s(tls_options(), [](wb::exchange& x) {
    if (x.request().target() != "/stream") {
      x.response().body() = "first";
      return;
    }
    auto later = std::make_shared<wb::deferred_send>(x.defer());
    x.host().write_chunk("hello", [later](boost::system::error_code ec) {
      if (!ec) later->send();
    });
  });
  s.start();
  tls_client c(s.endpoints().front().port);
  c.send({get("/first") + request_text("GET", "/stream", "Connection: close\r\n")});
  waypoint::testing::reply first = c.read();
  EXPECT_EQ(first.body(), "first");
  waypoint::testing::reply stream;
  ASSERT_NO_THROW(stream = c.read());
  EXPECT_EQ(stream.result_int(), 200u);
  EXPECT_EQ(stream[http::field::transfer_encoding], "chunked");
  EXPECT_EQ(stream.body(), "hello");
}

// --- reload ----------------------------------------------------------------------------

wb::server_options live_options(const live_files& live) {
  wb::server_options o = test_options();
  o.listen = {{"127.0.0.1", 0, true}};
  o.tls.certificate_chain_file = live.chain.string();
  o.tls.private_key_file = live.key.string();
  return o;
}

TEST_F(Tls, ReloadServesTheNewCertificateToNewConnectionsAndKeepsOldOnes) {
  live_files live;
  live.use("server");
  tls_server s(live_options(live));
  tls_client before(s.port);
  before.send({get("/users/1")});
  EXPECT_EQ(before.read().body(), "GET /users/{id} 1");
  EXPECT_EQ(before.peer_name(), "first");

  live.use("renewed");
  s.server.reload_tls();
  before.send({get("/users/2")});  // the same connection goes on
  EXPECT_EQ(before.read().body(), "GET /users/{id} 2");
  tls_client after(s.port);
  EXPECT_EQ(after.peer_name(), "renewed");
  after.send({get("/users/3")});
  EXPECT_EQ(after.read().body(), "GET /users/{id} 3");
}

TEST_F(Tls, FailedReloadKeepsTheCertificateInUseAndSaysWhy) {
  live_files live;
  live.use("server");
  tls_server s(live_options(live));
  std::ofstream(live.chain) << "not a certificate\n";
  try {
    s.server.reload_tls();
    ADD_FAILURE() << "a broken certificate file was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(live.chain.string()), std::string::npos) << e.what();
  }
  tls_client c(s.port);
  EXPECT_EQ(c.peer_name(), "first");
}

TEST_F(Tls, SighupReloadsTheCertificate) {
  live_files live;
  live.use("server");
  wb::server_options o = live_options(live);
  o.handle_signals = true;
  tls_server s(std::move(o));
  tls_client before(s.port);
  EXPECT_EQ(before.peer_name(), "first");
  live.use("renewed");
  ::kill(::getpid(), SIGHUP);
  std::string name;
  for (auto end = std::chrono::steady_clock::now() + patience;
       std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(std::chrono::milliseconds(10))) {
    name = tls_client(s.port).peer_name();
    if (name == "renewed") break;
  }
  EXPECT_EQ(name, "renewed");
  before.send({get("/users/9")});
  EXPECT_EQ(before.read().body(), "GET /users/{id} 9");
}

// --- files over TLS ----------------------------------------------------------------------

TEST_F(Tls, FileBodyGoesThroughTheCipherInChunksAndTheEndpointSaysTls) {
  // 300 KiB and a bit: several 64 KiB chunks and a short last one.
  std::string content;
  for (int i = 0; content.size() < 300 * 1024 + 17; ++i) content += std::to_string(i) + ",";
  fs::path file = certs().file("body.txt");
  std::ofstream(file, std::ios::binary) << content;
  wb::server_options o = tls_options();
  std::atomic<bool> over_tls{false};
  wb::server server(std::move(o), [&](wb::exchange& x) {
    over_tls = x.endpoints().local.tls;
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    wb::file_payload body(fd, 0, content.size());
    if (!x.attach_file(body)) x.response().body() = "not attached";
  });
  server.start();
  std::uint16_t port = server.endpoints().front().port;
  command_result r = run("curl -sS --max-time 10 --cacert '" + certs().path("ca.pem") +
                         "' --resolve localhost:" + std::to_string(port) +
                         ":127.0.0.1 https://localhost:" + std::to_string(port) + "/f");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output.size(), content.size());
  EXPECT_TRUE(r.output == content);
  EXPECT_TRUE(over_tls);  // the dispatch can tell the scheme
}

// --- options -------------------------------------------------------------------------------

struct bad_files_row {
  std::string rule;
  std::string chain, key, client_ca;
  bool require_client = false;
  std::string message;  // part of what the constructor throws
};

TEST_F(Tls, ServerRefusesTlsFilesItCannotUseNamingTheFile) {
  std::string missing = certs().path("missing.pem");
  std::vector<bad_files_row> rows = {
      {"a missing chain file", missing, certs().path("server.key"), "", false, missing},
      {"a missing key file", certs().path("server.pem"), missing, "", false, missing},
      {"a key of another certificate", certs().path("server.pem"), certs().path("renewed.key"), "",
       false, certs().path("renewed.key")},
      {"a chain file that is not PEM", certs().path("server.key"), certs().path("server.key"), "",
       false, certs().path("server.key")},
      {"a missing client CA file", certs().path("server.pem"), certs().path("server.key"), missing,
       false, missing},
      {"a required client certificate without a CA", certs().path("server.pem"),
       certs().path("server.key"), "", true, "client_ca_file"},
      {"no chain file at all", "", certs().path("server.key"), "", false, "certificate chain file"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.rule);
    wb::server_options o = tls_options();
    o.tls = {row.chain, row.key, row.client_ca, row.require_client};
    auto router = make_router();
    try {
      wb::server s(std::move(o), wb::dispatch_to(*router));
      ADD_FAILURE() << "accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(row.message), std::string::npos) << e.what();
    }
  }
}

TEST_F(Tls, ReloadWithoutTlsListenersIsALogicError) {
  auto router = make_router();
  wb::server plain(test_options(), wb::dispatch_to(*router));
  EXPECT_THROW(plain.reload_tls(), std::logic_error);
}

}  // namespace
