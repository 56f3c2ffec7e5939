// cose_cli: waypoint's COSE (cose.hpp) as a filter, for the interoperability tests
// (cose_interop.py against python3-cryptography and cbor2, tests/cose/interop.mjs against
// cose-js): they make messages for it to open, and open the messages it makes.
//
//   cose_cli protect ALG KID KEY [AAD_HEX] < payload > message
//   cose_cli open    ALG KID KEY [AAD_HEX] < message > payload
//
// ALG: a256gcm, chacha20_poly1305, hmac_256, es256, eddsa. KEY: the secret in hex for the
// first three, a PEM file's path for the others. Exit status: 0; 40 when open() refused
// with 400 and 41 with 401 (the status and reason on stderr); 2 for a wrong command line.
#include "hex_text.hpp"
#include <waypoint/app/security/cose.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

namespace {

using waypoint::app::testing::from_hex;

namespace cose = waypoint::app::cose;

constexpr int usage_error = 2;

bool algorithm_named(std::string_view name, cose::algorithm& alg) {
  struct entry {
    std::string_view name;
    cose::algorithm alg;
  };
  constexpr entry table[] = {{"a256gcm", cose::algorithm::a256gcm},
                             {"chacha20_poly1305", cose::algorithm::chacha20_poly1305},
                             {"hmac_256", cose::algorithm::hmac_256},
                             {"es256", cose::algorithm::es256},
                             {"eddsa", cose::algorithm::eddsa}};
  for (const entry& e : table)
    if (e.name == name) {
      alg = e.alg;
      return true;
    }
  return false;
}

cose::key key_from(std::string id, cose::algorithm alg, const std::string& key_argument) {
  if (alg != cose::algorithm::es256 && alg != cose::algorithm::eddsa)
    return cose::key::symmetric(std::move(id), alg, from_hex(key_argument));
  std::ifstream in(key_argument);
  if (!in) throw std::invalid_argument("cannot read " + key_argument);
  std::stringstream text;
  text << in.rdbuf();
  return cose::key::pem(std::move(id), alg, text.str());
}

}  // namespace

int main(int argc, char** argv) {
  cose::algorithm alg{};
  if ((argc != 5 && argc != 6) ||
      (std::string_view(argv[1]) != "protect" && std::string_view(argv[1]) != "open") ||
      !algorithm_named(argv[2], alg)) {
    std::cerr << "usage: cose_cli protect|open a256gcm|chacha20_poly1305|hmac_256|es256|eddsa KID "
                 "KEY [AAD_HEX]\n";
    return usage_error;
  }
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  try {
    cose::key k = key_from(argv[3], alg, argv[4]);
    std::string aad = argc == 6 ? from_hex(argv[5]) : "";
    std::string output;
    if (std::string_view(argv[1]) == "protect") {
      output = cose::protect(k, input, aad);
    } else {
      cose::keyring ring;
      ring.grace(k);  // a public key only verifies: grace takes every kind
      output = ring.open(input, aad);
    }
    std::cout.write(output.data(), static_cast<std::streamsize>(output.size()));
    return std::cout.flush() ? 0 : 1;
  } catch (const cose::error& e) {
    std::cerr << e.status() << ' ' << e.what() << '\n';
    return e.status() == 400 ? 40 : 41;
  } catch (const std::exception& e) {
    std::cerr << "cose_cli: " << e.what() << '\n';
    return usage_error;
  }
}
