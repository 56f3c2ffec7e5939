// Reads JSON lines {"schema":...,"document":...} and prints one verdict line each, for the
// differential test against python3-jsonschema (schema_validator_differential.py):
// "valid", "invalid <keyword> <pointer>", or "refused <reason>" when compile() throws.
#include "app/typed/schema_validator.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>

int main() {
  using json = nlohmann::json;
  using validator = waypoint::app::detail::schema_validator<json>;
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    json pair = json::parse(line);
    try {
      auto v = validator::compile(pair["schema"]);
      auto violation = v.check(pair["document"]);
      if (v.valid(pair["document"]) != !violation) {
        std::cout << "inconsistent valid() and check()\n";
      } else if (violation) {
        std::cout << "invalid " << violation->keyword << ' ' << violation->pointer << '\n';
      } else {
        std::cout << "valid\n";
      }
    } catch (const std::invalid_argument& e) {
      std::cout << "refused " << e.what() << '\n';
    }
  }
}
