// docs/framework.md's contracts example, compiled by tests/docs/check.
#include <waypoint/app/all.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace app = waypoint::app;

struct signup {
  std::string name;
  std::string email;
  std::int32_t age = 0;
  std::vector<std::string> tags;
};
WAYPOINT_JSON_OBJECT(signup, name, email, age, tags)
// Shown in the document and enforced on every request: a 422 naming the member and the
// keyword ({"pointer":"/age","keyword":"minimum",...}) before the handler runs.
nlohmann::ordered_json schema_constraints(const signup*) {
  return {{"properties",
           {{"name", {{"minLength", 1}, {"maxLength", 64}}},
            {"email", {{"format", "email"}}},
            {"age", {{"minimum", 13}}},
            {"tags", {{"maxItems", 8}, {"uniqueItems", true}}}}}};
}

struct account {
  std::string id;
  std::int32_t age = 0;
};
WAYPOINT_JSON_OBJECT(account, id, age)
nlohmann::ordered_json schema_constraints(const account*) {
  return {{"properties", {{"id", {{"pattern", "^acct-[0-9]+$"}}}}}};
}

int main() {
  // The answer is checked too: an account whose id breaks the pattern is a 500 and a log
  // line (contract_check::enforce, the default), sent with a line (log), or unchecked (off).
  app::application a({}, app::typed_route_options{.response_contract = app::contract_check::enforce});
  a.post<signup, account>("/v1/accounts", [](signup in) {
    return account{"acct-1", in.age};
  });
  a.freeze();  // compiles the schemas; one the validator cannot enforce is refused here
}
