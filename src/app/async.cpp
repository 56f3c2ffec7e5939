// Coroutine chains and the two ways in: the server's exchange (application::dispatch, which
// dispatch_to() reaches) and a user's own coroutine server (application::async_handle).
#include "waypoint/app/application.hpp"
#include "waypoint/app/middleware.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <new>
#include <optional>
#include <stdexcept>
#include <vector>

namespace waypoint::app {

namespace asio = boost::asio;

// --- running a chain ----------------------------------------------------------------

awaitable<void> next::operator()() const { return ctx_->run_async(index_); }

// A coroutine layer awaits the rest; hooks await it between their halves; a handler that
// returns void runs at once, then a response it deferred is waited for.
awaitable<void> context::run_async(std::uint32_t index) {
  if (index < chain_.size()) {
    const middleware& layer = *chain_[index];
    if (layer.form() == middleware::kind::coroutine) {
      co_await layer.coroutine()(*this, next(*this, index + 1));
      co_return;
    }
    if (layer.form() == middleware::kind::hooks) {
      const layer_hooks& hooks = layer.hooks();
      if (hooks.before && !hooks.before(*this)) co_return;
      std::exception_ptr error;
      try {
        co_await run_async(index + 1);
      } catch (...) {
        error = std::current_exception();
      }
      if (hooks.after) hooks.after(*this, error);
      if (error) std::rethrow_exception(error);
      co_return;
    }
  } else if (endpoint_->is_async()) {
    co_await endpoint_->coroutine()(*this);
    if (deferred_) co_await finish_deferred();
    co_return;
  }
  run(index);
  if (deferred_) co_await finish_deferred();
}

boost::asio::any_io_executor connection::executor() const { return host_->executor(); }

const beast::connection_endpoints& connection::endpoints() const { return host_->endpoints(); }

// --- the ways in --------------------------------------------------------------------

// Runs the chain as far as it goes without waiting; true when the request is answered
// (neither a coroutine chain nor a deferred response).
bool application::run_now(context& ctx) const noexcept {
  if (ctx.async_chain_) return false;
  try {
    ctx.run(0);
  } catch (...) {
    // The error is the answer; a response deferred before it is no longer awaited.
    if (ctx.deferred()) ctx.detach_deferred();
    ctx.postponed_.clear();
    answer_current_exception(ctx);
  }
  return !ctx.deferred();
}

// What run_now() left: the whole coroutine chain, or the wait for a deferred response.
// Errors become answers; a cancellation (the caller's, or the connection's) goes on up.
awaitable<void> application::run_rest(context& ctx) const {
  std::exception_ptr error;
  try {
    if (ctx.async_chain_)
      co_await ctx.run_async(0);
    else
      co_await ctx.finish_deferred();
    // An encoded streamed body ends once every layer is done. Tested first: a request
    // without an encoder awaits nothing more (no frame, and no await a drain's cancellation
    // could turn into an exception).
    if (ctx.chunk_encoder_) co_await ctx.finish_chunks();
  } catch (...) {
    error = std::current_exception();
  }
  if (!error) co_return;
  asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
  if (state.cancelled() != asio::cancellation_type::none) std::rethrow_exception(error);
  try {
    std::rethrow_exception(error);
  } catch (...) {
    answer_current_exception(ctx);
  }
}

namespace {

// The connection as async_handle() knows it: the awaiting coroutine's executor, and the
// endpoints its caller gave. Its cancellation is the caller's own slot, so this one's is
// never emitted; deferral goes through the context, not here.
class awaiting_connection final : public beast::exchange_host {
 public:
  awaiting_connection(asio::any_io_executor executor, const beast::connection_endpoints* ends)
      : executor_(std::move(executor)), ends_(ends) {}
  asio::any_io_executor executor() override { return executor_; }
  const beast::connection_endpoints& endpoints() override { return ends_ ? *ends_ : none_; }
  asio::cancellation_slot cancellation_slot() override { return unused_.slot(); }
  void deferred_done() noexcept override {}

 private:
  asio::any_io_executor executor_;
  const beast::connection_endpoints* ends_;
  beast::connection_endpoints none_;
  asio::cancellation_signal unused_;
};

// The connection of respond(): in memory, with an io_context made only when the request
// waits for something (a coroutine, a deferred response); respond() then runs it on the
// calling thread until the response is sent. No file can be attached and no upgrade
// taken, so a file body is read into the string and a WebSocket route answers 501.
class in_memory_connection final : public beast::exchange_host {
 public:
  asio::any_io_executor executor() override {
    if (!io_) io_.emplace(1);
    return io_->get_executor();
  }
  const beast::connection_endpoints& endpoints() override { return none_; }
  asio::cancellation_slot cancellation_slot() override { return never_.slot(); }
  void deferred_done() noexcept override { sent_ = true; }

  // Runs the exchange's work until its response is sent. A deferred response sent from
  // another thread arrives as a handler posted here, so the loop waits for it.
  void wait_until_sent() {
    if (sent_) return;
    auto guard = asio::make_work_guard(*io_);
    while (!sent_ && io_->run_one()) {
    }
  }

 private:
  std::optional<asio::io_context> io_;
  beast::connection_endpoints none_;
  asio::cancellation_signal never_;  // nobody leaves an in-memory connection
  bool sent_ = false;
};

// Contexts for the server's requests, recycled per thread: one that waits for a coroutine
// or a deferred response outlives the dispatch call, and a request should not pay an
// allocation for that possibility.
class context_pool {
 public:
  context_pool() { free_.reserve(keep); }
  ~context_pool() {
    for (void* block : free_) ::operator delete(block);
  }

  // A block for a context; the caller constructs it there.
  void* allocate() {
    if (free_.empty()) return ::operator new(sizeof(context));
    void* block = free_.back();
    free_.pop_back();
    return block;
  }

  void destroy(context* ctx) noexcept {
    ctx->~context();
    if (free_.size() < keep) {
      free_.push_back(ctx);
    } else {
      ::operator delete(ctx);
    }
  }

 private:
  static constexpr std::size_t keep = 256;  // idle contexts a thread holds on to
  std::vector<void*> free_;
};

thread_local context_pool pool;

// A planned context its dispatch did not take (beast::planned_request): back to the heap,
// not to a pool, since the server may drop it on any thread, even one whose pool is gone.
void drop_planned(void* state) noexcept {
  auto* ctx = static_cast<context*>(state);
  ctx->~context();
  ::operator delete(ctx);
}

}  // namespace

// Routed as the request will be, header alone, into the context its dispatch will use
// (body_plan::planned): a request with a body is matched once, here.
beast::body_plan application::plan_body(const request& header,
                                        std::uint64_t server_limit) noexcept {
  context* ctx = nullptr;
  try {
    if (!frozen()) freeze();
    ctx = ::new (pool.allocate()) context(*this, header);
  } catch (...) {
    return {server_limit, false};  // the dispatch answers it: 500 for a refused freeze
  }
  route(*ctx);
  beast::body_plan plan{server_limit, false, beast::planned_request(this, ctx, drop_planned)};
  if (const route_entry* ep = ctx->matched_route()) {
    if (ep->body_limit_) plan.max_bytes = ep->body_limit_;
    plan.streamed = ep->stream_body_;
  }
  return plan;
}

void application::dispatch(beast::exchange& x) noexcept {
  response& res = x.response();
  auto* ctx = static_cast<context*>(x.take_planned(this));
  if (ctx && &ctx->request() != &x.request()) {  // planned for another request
    drop_planned(ctx);
    ctx = nullptr;
  }
  if (ctx) {
    ctx->bind(x);
  } else {
    try {
      if (!frozen()) freeze();
      ctx = ::new (pool.allocate()) context(*this, x.request(), x.response(), x.host());
    } catch (const std::exception& e) {
      // A chain freeze() refuses, or no memory: nothing can be routed.
      res.result(http::status::internal_server_error);
      log(std::string("waypoint: cannot answer: ") + e.what());
      return;
    }
    route(*ctx);
  }
  if (run_now(*ctx)) {
    if (ctx->upgrade_ && start_upgrade(ctx)) return;  // the upgrade's now
    ctx->hand_over_file();
    pool.destroy(ctx);
    return;
  }
  try {
    // Sent from the connection's thread, in request order, once the chain is done; the
    // connection's cancellation (its client gone) stops the coroutine.
    beast::deferred_send done = x.defer();
    asio::co_spawn(x.executor(), run_rest(*ctx),
                   asio::bind_cancellation_slot(
                       x.cancellation_slot(),
                       [this, ctx, done = std::move(done)](std::exception_ptr error) mutable {
                         // Cancelled (the drain, a client gone) after the head went out:
                         // the body is cut, not complete.
                         if (error && ctx->streamed_) ctx->host_->abort_response();
                         if (!(ctx->upgrade_ && start_upgrade(ctx))) {
                           ctx->hand_over_file();
                           pool.destroy(ctx);
                         }
                         done.send();
                       }));
  } catch (...) {
    // No memory to start the coroutine: the deferred_send, if made, answers 500.
    pool.destroy(ctx);
  }
}

void application::respond(const request& req, response& res) noexcept {
  in_memory_connection connection;
  beast::exchange x(connection, req, res);
  dispatch(x);
  if (x.deferred()) {
    try {
      connection.wait_until_sent();
    } catch (...) {
      // A handler's exception is answered inside the chain; this is the io_context itself
      // failing (no memory). The response as it stands is all there is.
      res.result(http::status::internal_server_error);
      log("waypoint: respond() could not wait for the response");
    }
  }
  // The caller is the writer here: the message as the server would send it.
  finish_message(req.method() == http::verb::head, res);
}

response application::respond(const request& req) {
  response res{http::status::ok, req.version()};
  respond(req, res);
  return res;
}

awaitable<void> application::async_handle(const request& req, response& res,
                                          const beast::connection_endpoints* ends) {
  if (!frozen()) freeze();
  awaiting_connection connection(co_await asio::this_coro::executor, ends);
  context ctx(*this, req, res, connection);
  route(ctx);
  if (!run_now(ctx)) co_await run_rest(ctx);
  ctx.hand_over_file();
  finish_message(ctx.outcome().head, res);
  // Ready to write with Beast: a HEAD answer keeps the length finish_message() gave it.
  if (!ctx.outcome().head) res.prepare_payload();
}

// --- the deadline layer -------------------------------------------------------------

middleware deadline(std::chrono::milliseconds limit) {
  if (limit <= std::chrono::milliseconds::zero())
    throw std::invalid_argument("waypoint::app: a deadline must be positive");
  return [limit](context& ctx, next inner) -> awaitable<void> {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(co_await asio::this_coro::executor, limit);
    auto first = co_await (inner() || timer.async_wait(asio::use_awaitable));
    if (first.index() == 1)
      ctx.response().problem(503, "the handler did not answer within " +
                                      std::to_string(limit.count()) + " ms");
  };
}

}  // namespace waypoint::app
