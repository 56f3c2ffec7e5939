// application/cose on typed routes (json.hpp with typed_route_options::cose_keys): the
// request's protection is checked before its CBOR is read, the answer to a protected request
// is protected, and each refusal has its status: 503 without keys, 400 for bytes that are not
// a COSE message, 401 with WWW-Authenticate for an unknown key or a failed check. The messages
// themselves are cose.hpp's, tested in cose_test.cpp and against other implementations.
#include "app_test_support.hpp"

#include <waypoint/app/security/cose.hpp>
#include <waypoint/app/typed/json.hpp>
#include <waypoint/app/documents/openapi.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

using namespace waypoint::app;
using namespace waypoint::app::testing;

struct reading {
  std::string sensor;
  std::int64_t value = 0;
};
WAYPOINT_JSON_OBJECT(reading, sensor, value)

const std::string secret_a(32, 'a');
const std::string secret_b(32, 'b');
const std::string secret_c(32, 'c');

cose::key chacha(std::string id, const std::string& secret) {
  return cose::key::symmetric(std::move(id), cose::algorithm::chacha20_poly1305, secret);
}

std::string cbor_of(const nlohmann::json& value) {
  std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(value);
  return std::string(bytes.begin(), bytes.end());
}

const nlohmann::json sample = {{"sensor", "t1"}, {"value", 21}};

class CoseRoutes : public ::testing::Test {
 protected:
  explicit CoseRoutes(std::shared_ptr<cose::keyring> keys = default_keys())
      : keys_(keys),
        app{{.logger = [](std::string_view) {}}, typed_route_options{.cose_keys = keys}} {
    app.post<reading, reading>("/readings", [](reading r) {
      r.value += 1;
      return r;
    });
    app.get<reading>("/readings/latest", [] { return reading{"t1", 7}; });
  }

  static std::shared_ptr<cose::keyring> default_keys() {
    auto keys = std::make_shared<cose::keyring>();
    keys->current(chacha("k-new", secret_a)).grace(chacha("k-old", secret_b));
    return keys;
  }

  request cose_request(std::string body) {
    return json_request("POST", "/readings", std::move(body), "application/cose");
  }

  std::shared_ptr<cose::keyring> keys_;
  application app;
};

TEST_F(CoseRoutes, AProtectedRequestIsOpenedAndItsAnswerProtectedWithTheCurrentKey) {
  response res = app.respond(cose_request(cose::protect(chacha("k-new", secret_a), cbor_of(sample))));
  ASSERT_EQ(res.result_int(), 201u) << res.body();
  EXPECT_EQ(field(res, "Content-Type"), "application/cose; cose-type=\"cose-encrypt0\"");
  EXPECT_EQ(field(res, "Vary"), "Accept");
  std::string payload = keys_->open(res.body());
  EXPECT_EQ(nlohmann::json::from_cbor(payload), (nlohmann::json{{"sensor", "t1"}, {"value", 22}}));
}

TEST_F(CoseRoutes, AGraceKeyOpensARequestAndTheAnswerUsesTheCurrentKey) {
  response res = app.respond(cose_request(cose::protect(chacha("k-old", secret_b), cbor_of(sample))));
  ASSERT_EQ(res.result_int(), 201u) << res.body();
  cose::keyring current_only;
  current_only.current(chacha("k-new", secret_a));
  EXPECT_NO_THROW(current_only.open(res.body()));
}

TEST_F(CoseRoutes, TheAnswerIsProtectedEvenWhenAcceptPrefersJson) {
  request req = cose_request(cose::protect(chacha("k-new", secret_a), cbor_of(sample)));
  req.set(http::field::accept, "application/json");
  response res = app.respond(req);
  ASSERT_EQ(res.result_int(), 201u) << res.body();
  EXPECT_EQ(field(res, "Content-Type").rfind("application/cose", 0), 0u);
}

TEST_F(CoseRoutes, AcceptRankingCoseFirstGetsAProtectedAnswerToAPlainRequest) {
  request req = make_request("GET", "/readings/latest");
  req.set(http::field::accept, "application/cose, application/json;q=0.5");
  response res = app.respond(req);
  ASSERT_EQ(res.result_int(), 200u) << res.body();
  EXPECT_EQ(nlohmann::json::from_cbor(keys_->open(res.body())),
            (nlohmann::json{{"sensor", "t1"}, {"value", 7}}));
}

TEST_F(CoseRoutes, HeadGetsTheHeadOfAProtectedAnswerAndNoBody) {
  request req = make_request("HEAD", "/readings/latest");
  req.set(http::field::accept, "application/cose");
  response res = app.respond(req);
  EXPECT_EQ(res.result_int(), 200u) << res.body();
  EXPECT_EQ(field(res, "Content-Type"), "application/cose; cose-type=\"cose-encrypt0\"");
  EXPECT_TRUE(res.body().empty());
}

TEST_F(CoseRoutes, EveryAnswerCarriesAFreshNonceSoTwoAnswersDiffer) {
  request req = make_request("GET", "/readings/latest");
  req.set(http::field::accept, "application/cose");
  EXPECT_NE(app.respond(req).body(), app.respond(req).body());
}

struct refusal_row {
  const char* rule;
  std::string body;
  unsigned status;
  const char* detail;  // a part of the problem's detail
};

class CoseRefusals : public CoseRoutes, public ::testing::WithParamInterface<refusal_row> {};

TEST_P(CoseRefusals, EachRefusalHasItsStatusAndSaysWhy) {
  response res = app.respond(cose_request(GetParam().body));
  EXPECT_EQ(res.result_int(), GetParam().status) << GetParam().rule << ": " << res.body();
  EXPECT_EQ(field(res, "Content-Type"), "application/problem+json");
  EXPECT_NE(body_json(res).value("detail", "").find(GetParam().detail), std::string::npos)
      << GetParam().rule << ": " << res.body();
  // RFC 9110 15.5.2: a 401 says how to authenticate.
  EXPECT_EQ(field(res, "WWW-Authenticate"), GetParam().status == 401 ? "COSE" : "")
      << GetParam().rule;
}

std::string tampered(std::string message) {
  message[message.size() - 20] ^= 0x01;  // inside the ciphertext or its tag
  return message;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, CoseRefusals,
    ::testing::Values(
        refusal_row{"unknown key id", cose::protect(chacha("k-gone", secret_c), cbor_of(sample)),
                    401, "k-gone"},
        refusal_row{"a known key id with the wrong key",
                    cose::protect(chacha("k-new", secret_c), cbor_of(sample)), 401, ""},
        refusal_row{"a flipped bit", tampered(cose::protect(chacha("k-new", secret_a), cbor_of(sample))),
                    401, ""},
        refusal_row{"not CBOR at all", "hello", 400, "COSE"},
        refusal_row{"CBOR but no COSE message", cbor_of(sample), 400, "COSE"},
        refusal_row{"empty", "", 400, "COSE"}));

TEST_F(CoseRoutes, APayloadThatIsNotCborIsA400AfterItsProtectionVerified) {
  response res = app.respond(cose_request(cose::protect(chacha("k-new", secret_a), "{\"json\": 1}")));
  EXPECT_EQ(res.result_int(), 400u) << res.body();
  EXPECT_NE(body_json(res).value("detail", "").find("malformed CBOR"), std::string::npos)
      << res.body();
}

TEST_F(CoseRoutes, APayloadOfTheWrongShapeIsThe422OfAnyBody) {
  nlohmann::json wrong = {{"sensor", 5}, {"value", 1}};
  response res = app.respond(cose_request(cose::protect(chacha("k-new", secret_a), cbor_of(wrong))));
  EXPECT_EQ(res.result_int(), 422u) << res.body();
  EXPECT_EQ(body_json(res).value("pointer", ""), "/sensor");
}

class CoseWithoutKeys : public CoseRoutes {
 protected:
  CoseWithoutKeys() : CoseRoutes(nullptr) {}
};

TEST_F(CoseWithoutKeys, AProtectedRequestIs503AndTheHandlerDoesNotRun) {
  response res = app.respond(cose_request(cose::protect(chacha("k-new", secret_a), cbor_of(sample))));
  EXPECT_EQ(res.result_int(), 503u) << res.body();
  EXPECT_NE(body_json(res).value("detail", "").find("no COSE keys"), std::string::npos);
}

TEST_F(CoseWithoutKeys, AnAcceptRankingCoseFirstIs503BeforeTheHandlerRuns) {
  request req = make_request("GET", "/readings/latest");
  req.set(http::field::accept, "application/cose");
  EXPECT_EQ(app.respond(req).result_int(), 503u);
}

TEST_F(CoseWithoutKeys, JsonAndCborAreUnaffected) {
  response res = app.respond(json_request("POST", "/readings", sample.dump(), "application/json"));
  EXPECT_EQ(res.result_int(), 201u) << res.body();
}

TEST(CoseOpenApi, TheMediaTypeAndThe401AreListedOnlyWithKeys) {
  for (bool with_keys : {false, true}) {
    std::shared_ptr<cose::keyring> keys;
    if (with_keys) {
      keys = std::make_shared<cose::keyring>();
      keys->current(chacha("k", secret_a));
    }
    application app{{}, typed_route_options{.cose_keys = keys}};
    app.post<reading, reading>("/readings", [](reading r) { return r; });
    auto doc = openapi<nlohmann::json>(app, {.title = "t", .version = "1"});
    const nlohmann::json& op = doc["paths"]["/readings"]["post"];
    EXPECT_EQ(op["requestBody"]["content"].contains("application/cose"), with_keys);
    EXPECT_EQ(op["responses"]["201"]["content"].contains("application/cose"), with_keys);
    EXPECT_EQ(op["responses"].contains("401"), with_keys);
    EXPECT_EQ(doc["components"]["responses"].contains("Unauthorized"), with_keys);
  }
}

}  // namespace
