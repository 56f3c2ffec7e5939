// jwt_cli: the bearer_auth() layer (jwt.hpp) as a filter, for the interoperability tests
// (jwt_interop.py against PyJWT, tests/jwt/interop.mjs against jose): they make tokens, and
// this answers one request per token through an application whose only route, GET /whoami,
// sits behind the layer.
//
//   jwt_cli [--jwks FILE] [--pem KID ALG FILE] [--secret KID HEX] [--issuer ISS]
//           [--audience AUD]... [--scope SCOPE]... [--now SECONDS] < tokens
//
// ALG: RS256, ES256, EdDSA. One token a line ("-" for a request without Authorization);
// for each, one line: the status, a tab, then the route's answer (the subject, for a 200)
// or the WWW-Authenticate field. Exit status 0; 2 for a wrong command line or keys refused
// (the reason on stderr).
//
//   jwt_cli --sign KID HEX < claims
//
// sign_jwt instead: one JSON object a line in, the token it makes a line out.
#include <waypoint/app/application.hpp>
#include <waypoint/app/context.hpp>
#include <waypoint/app/security/jwt.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace app = waypoint::app;

constexpr int usage_error = 2;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) throw std::invalid_argument("odd-length hex");
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

app::jwt_algorithm algorithm_named(std::string_view name) {
  for (auto alg : {app::jwt_algorithm::rs256, app::jwt_algorithm::es256,
                   app::jwt_algorithm::eddsa, app::jwt_algorithm::hs256})
    if (app::name_of(alg) == name) return alg;
  throw std::invalid_argument("unknown algorithm " + std::string(name));
}

app::bearer_auth_options options_from(int argc, char** argv) {
  app::jwt_keys keys;
  app::bearer_auth_options options;
  std::vector<std::string> args(argv + 1, argv + argc);
  auto value = [&](std::size_t& i) -> const std::string& {
    if (++i >= args.size()) throw std::invalid_argument(args[i - 1] + " needs a value");
    return args[i];
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--jwks") {
      keys = app::jwt_keys::from_jwks(read_file(value(i)));
    } else if (flag == "--pem") {
      std::string kid = value(i);
      app::jwt_algorithm alg = algorithm_named(value(i));
      keys.add_pem(kid, alg, read_file(value(i)));
    } else if (flag == "--secret") {
      std::string kid = value(i);
      keys.add_secret(kid, from_hex(value(i)));
    } else if (flag == "--issuer") {
      options.verify.issuer = value(i);
    } else if (flag == "--audience") {
      options.verify.audiences.push_back(value(i));
    } else if (flag == "--scope") {
      options.required_scopes.push_back(value(i));
    } else if (flag == "--now") {
      auto now = std::chrono::system_clock::time_point(std::chrono::seconds(std::stoll(value(i))));
      options.verify.now = [now] { return now; };
    } else {
      throw std::invalid_argument("unknown option " + flag);
    }
  }
  options.keys = std::make_shared<app::jwt_key_store>(std::move(keys));
  return options;
}

// --sign: the tokens sign_jwt makes, for PyJWT and jose to verify.
int sign(const std::string& kid, const std::string& secret) {
  std::string claims;
  while (std::getline(std::cin, claims)) std::cout << app::sign_jwt(claims, secret, kid) << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string_view(argv[1]) == "--sign") {
    try {
      return sign(argv[2], from_hex(argv[3]));
    } catch (const std::exception& e) {
      std::cerr << "jwt_cli: " << e.what() << "\n";
      return usage_error;
    }
  }
  app::application application;
  try {
    application.use(app::bearer_auth(options_from(argc, argv)));
    application.get("/whoami", [](app::context& ctx) {
      ctx.response().body(ctx.get<app::jwt_claims>().subject());
    });
  } catch (const std::exception& e) {
    std::cerr << "jwt_cli: " << e.what() << "\n";
    return usage_error;
  }
  std::string token;
  while (std::getline(std::cin, token)) {
    app::request req;
    req.method(app::http::verb::get);
    req.target("/whoami");
    req.version(11);
    req.set(app::http::field::host, "example.com");
    if (token != "-") req.set(app::http::field::authorization, "Bearer " + token);
    app::response res = application.respond(req);
    std::string said = res.result_int() == 200
                           ? res.body()
                           : std::string(res[app::http::field::www_authenticate]);
    std::cout << res.result_int() << '\t' << said << '\n';
  }
  return 0;
}
