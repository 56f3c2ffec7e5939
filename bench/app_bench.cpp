// What waypoint::app costs on top of the router it dispatches with: the framework tax for
// a static and a param route (against waypoint::beast::dispatch_to, the raw router
// dispatch with the same Beast messages and the same handler work), the cost of middleware
// depth, and typed JSON routes against hand-written decoding and encoding of the same
// payload (with the contract checked and not, and called as an MCP tool), with one
// nlohmann/json encode as a ruler. Every row reports allocs/op, counted
// exactly by waypoint_bench_alloc_counter (bench/support/malloc_counter.cpp), which
// implements support/alloc_counter.hpp at the malloc level, so operator new and
// direct malloc calls are counted alike.
#include <waypoint/app/async.hpp>
#include <waypoint/app/security/cose.hpp>
#include <waypoint/app/typed/json.hpp>
#include <waypoint/app/documents/mcp.hpp>
#include <waypoint/app/serve.hpp>
#include <waypoint/beast/router_dispatch.hpp>

#include "records.hpp"

#include <benchmark/benchmark.h>
#include <alloc_counter.hpp>
#include <exchange_harness.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace app = waypoint::app;
namespace wb = waypoint::beast;
namespace http = boost::beast::http;

// --- payloads: an 8-member request, a 5-member response -----------------------------

struct create_session {
  std::string user;
  std::string device;
  std::string locale;
  std::int64_t ttl_seconds = 0;
  bool remember = false;
  double latitude = 0;
  double longitude = 0;
  std::vector<std::string> scopes;
};
WAYPOINT_JSON_OBJECT(create_session, user, device, locale, ttl_seconds, remember, latitude,
                     longitude, scopes)

struct session {
  std::string id;
  std::string user;
  std::int64_t expires_at = 0;
  bool remembered = false;
  std::int64_t scope_count = 0;
};
WAYPOINT_JSON_OBJECT(session, id, user, expires_at, remembered, scope_count)

constexpr std::string_view session_body =
    R"({"user":"ada.lovelace","device":"ios-17.2-iphone15","locale":"en-GB","ttl_seconds":3600,)"
    R"("remember":true,"latitude":51.5072,"longitude":-0.1276,"scopes":["read","write","admin"]})";

session open_session(const create_session& in) {
  return {"sess-0001", in.user, 1700000000 + in.ttl_seconds, in.remember,
          static_cast<std::int64_t>(in.scopes.size())};
}

// --- requests -----------------------------------------------------------------------

app::request make_request(http::verb method, std::string_view target, std::string body = {}) {
  app::request req{method, target, 11};
  req.set(http::field::host, "api.example.com");
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  req.body() = std::move(body);
  return req;
}

// Runs `dispatch` once per iteration on a fresh response, as the server does, and reports
// allocations per request, counted outside the timed loop as in the router suites.
template <class Dispatch>
void run(benchmark::State& state, const app::request& req, Dispatch&& dispatch) {
  auto once = [&] {
    app::response res{http::status::ok, 11};
    dispatch(req, res);
    benchmark::DoNotOptimize(res.body().data());
  };
  double allocations = waypoint::testing::allocations_per_call(once);
  for (auto _ : state) once();
  state.counters["allocs/op"] = allocations;
}

// The handler work is the same everywhere: a short body, no header field.
void write_ok(app::response& res) { res.body() = "ok"; }

// A route table like the gateway's: a few services, statics and params side by side.
template <class Add>
void add_table(Add&& add) {
  for (std::string service : {"iam", "tracker", "commerce", "kms", "cloud"}) {
    add("GET /v1/" + service + "/health");
    add("GET /v1/" + service + "/items");
    add("POST /v1/" + service + "/items");
    add("GET /v1/" + service + "/items/{id}");
    add("DELETE /v1/" + service + "/items/{id}");
    add("GET /v1/" + service + "/items/{id}/history/{version}");
  }
}

const app::request static_request = make_request(http::verb::get, "/v1/commerce/health");
const app::request param_request = make_request(http::verb::get, "/v1/commerce/items/12345");

// --- framework tax ------------------------------------------------------------------

void BM_RawDispatch(benchmark::State& state, const app::request& req) {
  wb::router router;
  add_table([&](const std::string& pattern) {
    router.add(pattern, [](const wb::request&, wb::response& res, const wb::route_match&) {
      write_ok(res);
    });
  });
  router.freeze();
  wb::dispatch_function dispatch = wb::dispatch_to(router);
  run(state, req, dispatch);
}

void BM_AppDispatch(benchmark::State& state, const app::request& req) {
  app::application application;
  add_table([&](const std::string& pattern) {
    application.handle(pattern, [](app::context& ctx) { write_ok(ctx.response().message()); });
  });
  application.freeze();
  run(state, req, [&](const app::request& r, app::response& res) { application.respond(r, res); });
}

BENCHMARK_CAPTURE(BM_RawDispatch, static, static_request);
BENCHMARK_CAPTURE(BM_AppDispatch, static, static_request);
BENCHMARK_CAPTURE(BM_RawDispatch, param, param_request);
BENCHMARK_CAPTURE(BM_AppDispatch, param, param_request);

// --- the server's path: synchronous, coroutine and deferred handlers --------------
// Through dispatch_to(app) and the exchange, as the server calls it, without the
// socket (support/exchange_harness.hpp); the coroutine suspends once (a post), so the row
// includes one trip through the io_context's queue.

void BM_ServerPath(benchmark::State& state, const char* kind) {
  app::application application;
  std::string_view k = kind;
  add_table([&](const std::string& pattern) {
    if (k == "sync") {
      application.handle(pattern, [](app::context& ctx) { write_ok(ctx.response().message()); });
    } else if (k == "coroutine") {
      application.handle(pattern, [](app::context& ctx) -> app::awaitable<void> {
        co_await boost::asio::post(ctx.executor(), boost::asio::use_awaitable);
        write_ok(ctx.response().message());
      });
    } else {
      application.handle(pattern, [](app::context& ctx) {
        app::deferred_response later = ctx.defer();
        write_ok(later.response().message());
        later.send();
      });
    }
  });
  application.freeze();
  waypoint::testing::exchange_harness connection;
  auto dispatch = app::dispatch_to(application);
  run(state, param_request, [&](const app::request& r, app::response& res) {
    connection.answer(dispatch, r, res);
  });
}
BENCHMARK_CAPTURE(BM_ServerPath, sync, "sync");
BENCHMARK_CAPTURE(BM_ServerPath, coroutine, "coroutine");
BENCHMARK_CAPTURE(BM_ServerPath, deferred, "deferred");

// A request with a body as the server answers it: planned at its header
// (application::plan_body, which routes it) and dispatched once the body is in, beside
// the same request dispatched without a plan (routed at the dispatch), and beside the plan
// as it was before issue #45: a match of its own into a result on the stack, then the
// dispatch matching again.
const app::request post_request =
    make_request(http::verb::post, "/v1/commerce/items/12345", "{\"qty\":1}");

enum class body_planning { none, routed_once, matched_twice };

void BM_ServerPathWithBody(benchmark::State& state, body_planning planning) {
  app::application application;
  add_table([&](const std::string& pattern) {
    application.handle(pattern, [](app::context& ctx) { write_ok(ctx.response().message()); });
  });
  application.handle("POST /v1/commerce/items/{id}",
                     [](app::context& ctx) { write_ok(ctx.response().message()); });
  application.freeze();
  waypoint::testing::exchange_harness connection;
  auto dispatch = app::dispatch_to(application);
  run(state, post_request, [&](const app::request& r, app::response& res) {
    wb::body_plan plan;
    if (planning == body_planning::routed_once) plan = application.plan_body(r, 1 << 20);
    if (planning == body_planning::matched_twice) {
      waypoint::basic_match_result<const app::route_entry*> match;
      benchmark::DoNotOptimize(wb::route(application.router(), r, match).kind);
    }
    connection.answer(dispatch, r, res, &plan.planned);
  });
}
BENCHMARK_CAPTURE(BM_ServerPathWithBody, unplanned, body_planning::none);
BENCHMARK_CAPTURE(BM_ServerPathWithBody, planned, body_planning::routed_once);
BENCHMARK_CAPTURE(BM_ServerPathWithBody, matched_twice, body_planning::matched_twice);

// --- middleware depth ---------------------------------------------------------------

void BM_ChainDepth(benchmark::State& state) {
  app::application application;
  for (int i = 0; i < state.range(0); ++i)
    application.use(app::layer_hooks{[](app::context&) { return true; }});
  add_table([&](const std::string& pattern) {
    application.handle(pattern, [](app::context& ctx) { write_ok(ctx.response().message()); });
  });
  application.freeze();
  run(state, param_request,
      [&](const app::request& r, app::response& res) { application.respond(r, res); });
}
BENCHMARK(BM_ChainDepth)->Arg(0)->Arg(1)->Arg(3)->Arg(5)->Arg(10);

// --- typed JSON routes --------------------------------------------------------------

const app::request session_request =
    make_request(http::verb::post, "/v1/iam/sessions", std::string(session_body));

// One typed route answering `req`; the same for both encodings, so that only the
// encoding differs between BM_TypedPost and BM_TypedPostCbor.
void run_typed_post(benchmark::State& state, const app::request& req) {
  app::application application;
  application.post<create_session, session>("/v1/iam/sessions",
                                            [](create_session in) { return open_session(in); });
  application.freeze();
  run(state, req, [&](const app::request& r, app::response& res) { application.respond(r, res); });
}

void BM_TypedPost(benchmark::State& state) { run_typed_post(state, session_request); }
BENCHMARK(BM_TypedPost);

// The same with the contract unchecked (typed_route_options request_contract and
// response_contract off): what checking the body and the answer against their schemas costs.
void BM_TypedPostUnchecked(benchmark::State& state) {
  app::application application(
      {}, app::typed_route_options{.request_contract = app::contract_check::off,
                                   .response_contract = app::contract_check::off});
  application.post<create_session, session>("/v1/iam/sessions",
                                            [](create_session in) { return open_session(in); });
  application.freeze();
  run(state, session_request,
      [&](const app::request& r, app::response& res) { application.respond(r, res); });
}
BENCHMARK(BM_TypedPostUnchecked);

// The mixed workload's typed write (bench/load/mixed): the gateway's record route, its body
// one line of bench/tables/mix1000.replay, with its contract checked (constraints on six of
// the eight members: lengths, a format, bounds, a pattern per tag, an enum) and unchecked.
void BM_RecordWrite(benchmark::State& state, app::contract_check check) {
  app::application application(
      {}, app::typed_route_options{.request_contract = check, .response_contract = check});
  waypoint::examples::add_record_route(application, "POST /inventory/leads/latest");
  application.freeze();
  app::request req = make_request(
      http::verb::post, "/inventory/leads/latest",
      R"({"name":"user-51903","email":"user-51903@example.com","quantity":41,"active":false,)"
      R"("score":6.35,"tags":["web","beta","mobile"],"region":"eu-central","note":"note 418"})");
  run(state, req, [&](const app::request& r, app::response& res) { application.respond(r, res); });
}
BENCHMARK_CAPTURE(BM_RecordWrite, checked, app::contract_check::enforce);
BENCHMARK_CAPTURE(BM_RecordWrite, unchecked, app::contract_check::off);

// The same checked record write in each codec (BENCHMARKS.md §19): JSON, CBOR both ways, and a
// COSE_Encrypt0 (ChaCha20-Poly1305) of the CBOR both ways: the request opened, the answer
// sealed under a fresh nonce, every iteration.
enum class codec { json, cbor, cose };

void BM_RecordWriteCodec(benchmark::State& state, codec format) {
  auto keys = std::make_shared<app::cose::keyring>();
  keys->current(app::cose::key::symmetric("bench", app::cose::algorithm::chacha20_poly1305,
                                          std::string(32, 'k')));
  app::application application({}, app::typed_route_options{.cose_keys = keys});
  waypoint::examples::add_record_route(application, "POST /inventory/leads/latest");
  application.freeze();
  std::string body =
      R"({"name":"user-51903","email":"user-51903@example.com","quantity":41,"active":false,)"
      R"("score":6.35,"tags":["web","beta","mobile"],"region":"eu-central","note":"note 418"})";
  std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(nlohmann::json::parse(body));
  std::string media = "application/json";
  if (format != codec::json) {
    body.assign(cbor.begin(), cbor.end());
    media = "application/cbor";
  }
  if (format == codec::cose) {
    body = keys->protect(body);
    media = "application/cose";
  }
  app::request req = make_request(http::verb::post, "/inventory/leads/latest", body);
  req.set(http::field::content_type, media);
  req.set(http::field::accept, media);
  // A refusal would measure the error path: the request must be the route's success.
  if (app::response res = application.respond(req); res.result_int() != 201)
    return state.SkipWithError(("answered " + std::to_string(res.result_int()) + ": " +
                                res.body()).c_str());
  run(state, req, [&](const app::request& r, app::response& res) { application.respond(r, res); });
}
BENCHMARK_CAPTURE(BM_RecordWriteCodec, json, codec::json);
BENCHMARK_CAPTURE(BM_RecordWriteCodec, cbor, codec::cbor);
BENCHMARK_CAPTURE(BM_RecordWriteCodec, cose, codec::cose);

// The same route called as a Model Context Protocol tool (waypoint/app/documents/mcp.hpp): the JSON-RPC
// message parsed, the REST request built and run through async_handle, its answer wrapped.
void BM_TypedPostAsTool(benchmark::State& state) {
  app::application application;
  application.post<create_session, session>("/v1/iam/sessions",
                                            [](create_session in) { return open_session(in); })
      .describe({.name = "openSession"});
  app::serve_mcp(application);
  application.freeze();
  app::request req = make_request(
      http::verb::post, "/mcp",
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"openSession","arguments":)" +
          std::string(session_body) + "}}");
  run(state, req, [&](const app::request& r, app::response& res) { application.respond(r, res); });
}
BENCHMARK(BM_TypedPostAsTool);

// The same route and value in CBOR both ways (Content-Type and Accept application/cbor).
const app::request session_request_cbor = [] {
  std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(nlohmann::json::parse(session_body));
  app::request req = make_request(http::verb::post, "/v1/iam/sessions",
                                  std::string(bytes.begin(), bytes.end()));
  req.set(http::field::content_type, "application/cbor");
  req.set(http::field::accept, "application/cbor");
  return req;
}();

void BM_TypedPostCbor(benchmark::State& state) { run_typed_post(state, session_request_cbor); }
BENCHMARK(BM_TypedPostCbor);

// The same work written by hand in an untyped route: nlohmann/json's own conversions
// (j.at(...).get_to), no strictness checks, no validation hook, no problem documents.
void BM_HandWrittenPost(benchmark::State& state) {
  app::application application;
  application.post("/v1/iam/sessions", [](app::context& ctx) {
    nlohmann::json j = nlohmann::json::parse(ctx.body());
    create_session in;
    j.at("user").get_to(in.user);
    j.at("device").get_to(in.device);
    j.at("locale").get_to(in.locale);
    j.at("ttl_seconds").get_to(in.ttl_seconds);
    j.at("remember").get_to(in.remember);
    j.at("latitude").get_to(in.latitude);
    j.at("longitude").get_to(in.longitude);
    j.at("scopes").get_to(in.scopes);
    session out = open_session(in);
    nlohmann::json encoded = {{"id", out.id},
                              {"user", out.user},
                              {"expires_at", out.expires_at},
                              {"remembered", out.remembered},
                              {"scope_count", out.scope_count}};
    ctx.response().status(201).body(encoded.dump(), "application/json");
  });
  application.freeze();
  run(state, session_request,
      [&](const app::request& r, app::response& res) { application.respond(r, res); });
}
BENCHMARK(BM_HandWrittenPost);

// The ruler: one nlohmann/json encode (to_json and dump) of the 5-member response.
void BM_Ruler_EncodeSession(benchmark::State& state) {
  session s{"sess-0001", "ada.lovelace", 1700003600, true, 3};
  auto once = [&] {
    std::string text = nlohmann::json(s).dump();
    benchmark::DoNotOptimize(text.data());
  };
  double allocations = waypoint::testing::allocations_per_call(once);
  for (auto _ : state) once();
  state.counters["allocs/op"] = allocations;
}
BENCHMARK(BM_Ruler_EncodeSession);

}  // namespace

BENCHMARK_MAIN();
