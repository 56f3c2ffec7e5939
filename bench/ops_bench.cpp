// What each operational layer costs a request (application::respond, one param route):
// none, the access log to /dev/null by one write(2) a line (the gateway's way), the same
// line through the application's logger (fprintf to stderr, which takes stdio's lock),
// the line only (a sink that drops it: the formatting alone), the metrics layer, trace
// context, and all of them; then the request guards: rate_limit() by client address (one key,
// a rate it never reaches, so every request takes a token and is let through), the same by
// API key, csrf_protection() on a request it passes by Sec-Fetch-Site, and with
// double_submit on one that carries its token cookie; security_headers() with its defaults;
// bearer_auth() on a valid HS256 and a valid EdDSA token (made here with OpenSSL);
// api_key_auth() on a key in X-API-Key (the last of 8 held) and basic_auth() on a user it
// holds (curl's -u encoding of its password); sessions()
// on a returning client whose session is unchanged (a load from the memory store, nothing
// saved). Every row reports allocs/op (waypoint_bench_alloc_counter).
#include <waypoint/app/middleware.hpp>
#include <waypoint/app/operations/access_log.hpp>
#include <waypoint/app/operations/metrics.hpp>
#include <waypoint/app/operations/trace_context.hpp>
#include <waypoint/app/security/auth.hpp>
#include <waypoint/app/security/csrf.hpp>
#include <waypoint/app/security/jwt.hpp>
#include <waypoint/app/security/rate_limit.hpp>
#include <waypoint/app/security/security_headers.hpp>
#include <waypoint/app/security/sessions.hpp>

#include <benchmark/benchmark.h>
#include <alloc_counter.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

namespace app = waypoint::app;

enum class layers {
  none, log_fd, log_stdio, log_format_only, metrics, tracing, all,
  rate_limit_address, rate_limit_api_key, csrf, csrf_double_submit, security_headers,
  bearer_hs256, bearer_eddsa, api_key, basic, session_unchanged
};

// A token as an issuer makes one, for the bearer rows: header.claims.signature.
std::string base64url(std::string_view bytes) {
  static constexpr char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t bits = 0;
  int held = 0;
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c;
    for (held += 8; held >= 6;) out.push_back(alphabet[(bits >> (held -= 6)) & 63]);
  }
  if (held > 0) out.push_back(alphabet[(bits << (6 - held)) & 63]);
  return out;
}

constexpr std::string_view bench_secret = "0123456789abcdef0123456789abcdef";
const std::string token_claims = base64url(R"({"sub":"bench","exp":4102444800})");

std::string hs256_token() {
  std::string signed_part = base64url(R"({"alg":"HS256","typ":"JWT"})") + "." + token_claims;
  unsigned char mac[32];
  std::size_t length = 0;
  EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, bench_secret.data(), bench_secret.size(),
            reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size(), mac,
            sizeof mac, &length);
  return signed_part + "." + base64url(std::string_view(reinterpret_cast<char*>(mac), length));
}

// An Ed25519 key made for the run; the token signed with it, and its public key in PEM.
struct eddsa_token {
  std::string token, public_pem;
};

eddsa_token make_eddsa_token() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  std::string signed_part = base64url(R"({"alg":"EdDSA","typ":"JWT"})") + "." + token_claims;
  unsigned char signature[64];
  std::size_t length = sizeof signature;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, key);
  EVP_DigestSign(ctx, signature, &length, reinterpret_cast<const unsigned char*>(signed_part.data()),
                 signed_part.size());
  EVP_MD_CTX_free(ctx);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, key);
  char* pem = nullptr;
  long pem_length = BIO_get_mem_data(bio, &pem);
  eddsa_token out{signed_part + "." + base64url(std::string_view(reinterpret_cast<char*>(signature), length)),
                  std::string(pem, static_cast<std::size_t>(pem_length))};
  BIO_free(bio);
  EVP_PKEY_free(key);
  return out;
}

app::request param_request() {
  app::request req{app::http::verb::get, "/v1/users/42", 11};
  req.set(app::http::field::host, "api.example.com");
  req.set(app::http::field::user_agent, "wrk/4.2.0");
  req.set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  return req;
}

void BM_Operations(benchmark::State& state, layers which) {
  static const eddsa_token eddsa = make_eddsa_token();
  int null_fd = ::open("/dev/null", O_WRONLY);
  // stdio's stderr pointed at /dev/null, so the logger row measures the lock and the call.
  std::FILE* saved = stderr;
  std::FILE* null_file = std::fopen("/dev/null", "w");
  app::application application;
  app::metrics counted;
  switch (which) {
    case layers::none: break;
    case layers::log_fd: application.use(app::access_log({.fd = null_fd})); break;
    case layers::log_stdio: stderr = null_file; application.use(app::access_log()); break;
    case layers::log_format_only:
      application.use(app::access_log({.sink = [](std::string_view line) {
        benchmark::DoNotOptimize(line.data());
      }}));
      break;
    case layers::metrics: application.use(counted.layer()); break;
    case layers::tracing: application.use(app::tracing()); break;
    case layers::all:
      application.use(app::access_log({.fd = null_fd}));
      application.use(counted.layer());
      application.use(app::tracing());
      break;
    case layers::rate_limit_address: application.use(app::rate_limit({.rate = 1e9, .burst = 1000})); break;
    case layers::rate_limit_api_key:
      application.use(app::rate_limit({.rate = 1e9, .burst = 1000, .key = app::rate_limit_key::api_key}));
      break;
    case layers::csrf: application.use(app::csrf_protection()); break;
    case layers::csrf_double_submit: application.use(app::csrf_protection({.double_submit = true})); break;
    case layers::security_headers: application.use(app::security_headers()); break;
    case layers::bearer_hs256:
      application.use(app::bearer_auth({.keys = std::make_shared<app::jwt_key_store>(
                                            app::jwt_keys().add_secret("k", bench_secret))}));
      break;
    case layers::bearer_eddsa:
      application.use(app::bearer_auth({.keys = std::make_shared<app::jwt_key_store>(
                                            app::jwt_keys().add_pem("k", app::jwt_algorithm::eddsa,
                                                                    eddsa.public_pem))}));
      break;
    case layers::api_key: {
      // Eight keys: every request compares against all of them.
      app::api_key_auth_options options;
      for (int i = 0; i < 8; ++i)
        options.keys.push_back({.key = "k-7f3a9c2e51b04d6" + std::to_string(i), .principal = "svc"});
      application.use(app::api_key_auth(std::move(options)));
      break;
    }
    case layers::basic:
      application.use(app::basic_auth({.users = {{.name = "ada", .password = "pa:ss:word"}}}));
      break;
    case layers::session_unchanged: application.use(app::sessions()); break;
  }
  application.get("/v1/users/{id}", [](app::context& ctx) { ctx.response().body() = "user"; });
  if (which == layers::session_unchanged)
    application.get("/v1/login", [](app::context& ctx) { ctx.get<app::session>().set("user", "ada"); });
  application.freeze();
  app::request req = param_request();
  if (which == layers::rate_limit_api_key) req.set("X-API-Key", "k-7f3a9c2e51b04d68");
  if (which == layers::csrf || which == layers::csrf_double_submit) req.set("Sec-Fetch-Site", "same-origin");
  if (which == layers::csrf_double_submit)
    req.set(app::http::field::cookie, "__Host-csrf-token=Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9");
  if (which == layers::bearer_hs256) req.set(app::http::field::authorization, "Bearer " + hs256_token());
  if (which == layers::bearer_eddsa) req.set(app::http::field::authorization, "Bearer " + eddsa.token);
  if (which == layers::api_key) req.set("X-API-Key", "k-7f3a9c2e51b04d67");
  if (which == layers::basic)  // base64 of ada:pa:ss:word, as curl -u writes it
    req.set(app::http::field::authorization, "Basic YWRhOnBhOnNzOndvcmQ=");
  app::response res{app::http::status::ok, 11};
  if (which == layers::session_unchanged) {
    // A first request whose handler stores a value: its cookie makes the client a returning one.
    app::request login = req;
    login.target("/v1/login");
    application.respond(login, res);
    std::string cookie(res[app::http::field::set_cookie]);
    req.set(app::http::field::cookie, cookie.substr(0, cookie.find(';')));
  }
  for (int i = 0; i < 16; ++i) application.respond(req, res);  // per-thread buffers grow
  if (res.result_int() != 200) return state.SkipWithError("the request was not answered 200");
  std::uint64_t allocations = 0;
  for (auto _ : state) {
    res = app::response{app::http::status::ok, 11};
    waypoint::testing::allocation_scope scope;
    application.respond(req, res);
    allocations += scope.count();
    benchmark::DoNotOptimize(res);
  }
  state.counters["allocs"] = benchmark::Counter(static_cast<double>(allocations),
                                                benchmark::Counter::kAvgIterations);
  stderr = saved;
  std::fclose(null_file);
  ::close(null_fd);
}
BENCHMARK_CAPTURE(BM_Operations, none, layers::none);
BENCHMARK_CAPTURE(BM_Operations, access_log_fd, layers::log_fd);
BENCHMARK_CAPTURE(BM_Operations, access_log_stdio_logger, layers::log_stdio);
BENCHMARK_CAPTURE(BM_Operations, access_log_format_only, layers::log_format_only);
BENCHMARK_CAPTURE(BM_Operations, metrics, layers::metrics);
BENCHMARK_CAPTURE(BM_Operations, tracing, layers::tracing);
BENCHMARK_CAPTURE(BM_Operations, all, layers::all);
BENCHMARK_CAPTURE(BM_Operations, rate_limit_address, layers::rate_limit_address);
BENCHMARK_CAPTURE(BM_Operations, rate_limit_api_key, layers::rate_limit_api_key);
BENCHMARK_CAPTURE(BM_Operations, csrf, layers::csrf);
BENCHMARK_CAPTURE(BM_Operations, csrf_double_submit, layers::csrf_double_submit);
BENCHMARK_CAPTURE(BM_Operations, security_headers, layers::security_headers);
BENCHMARK_CAPTURE(BM_Operations, bearer_hs256, layers::bearer_hs256);
BENCHMARK_CAPTURE(BM_Operations, bearer_eddsa, layers::bearer_eddsa);
BENCHMARK_CAPTURE(BM_Operations, api_key, layers::api_key);
BENCHMARK_CAPTURE(BM_Operations, basic, layers::basic);
BENCHMARK_CAPTURE(BM_Operations, session_unchanged, layers::session_unchanged);

}  // namespace

BENCHMARK_MAIN();
