// The per-request context of waypoint::app: one object per request, handed by reference to
// every layer and to the handler. It is split by concern, one header each:
//   request_view.hpp    the request: method, path, headers, body, route, path values, query
//   response.hpp        the response builder, ctx.response()
//   request_values.hpp  values layers set for the handler, keyed by type; the request id
//   connection.hpp      the connection: executor, endpoints, answering later (defer)
// and holds here only what needs more than one of them: writing the body in pieces or from
// a file, and running the chain of layers.
//
//   app.get("/users/{id}", [](waypoint::app::context& ctx) {
//     auto id = ctx.path_value<std::int64_t>("id");       // 400 problem when not a number
//     auto verbose = ctx.query("verbose");                  // std::optional<std::string_view>
//     const user& who = ctx.get<user>();                    // set by an auth layer
//     ctx.response().status(200).json({{"id", id}, {"by", who.name}});
//   });
//
// Nothing here allocates per layer: `next` is a chain index, not a closure, and the
// context's storage (match result, query index, value slots) is fixed-size, sized for
// common requests (about 1 KiB of match storage: paths up to 511 bytes). Allocations come
// from what a handler asks for (header fields, long bodies) and from the cold spill paths
// named in the parts (a longer path's match storage among them).
#pragma once

#include "waypoint/app/connection.hpp"
#include "waypoint/app/handler.hpp"
#include "waypoint/app/request_values.hpp"
#include "waypoint/app/request_view.hpp"
#include "waypoint/app/response.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace waypoint::app {

namespace detail {
struct pending_upgrade;  // src/app/upgrade.cpp
}

// The body write_chunk() sends, transformed as it goes: the extension point of a layer
// that encodes streamed bodies (compression(), compression.hpp). A layer installs a
// chunk_encoding with context::encode_chunks(); the first write_chunk() opens it with the
// response's head as it then stands, and the encoder it returns sees every piece.
class chunk_encoder {
 public:
  virtual ~chunk_encoder() = default;
  // The bytes to send for `piece`, flushed so that the client can decode all of it at once;
  // with `last`, also the end of the encoding (`piece` is then empty). Valid until the next
  // call.
  virtual std::string_view encode(std::string_view piece, bool last) = 0;
};

class chunk_encoding {
 public:
  // An encoder for this response, having set the head's fields that announce it
  // (Content-Encoding); null to send the pieces as written.
  virtual std::unique_ptr<chunk_encoder> open(context& ctx) const = 0;

 protected:
  ~chunk_encoding() = default;
};

class context : public request_view, public request_values, public connection {
 public:
  // `host`: the connection the request came on; its executor and endpoints, and the bodies
  // that are not strings (files, streams) go through it.
  context(application& app, const app::request& req, app::response& res,
          beast::exchange_host& host) noexcept
      : request_view(req, &host), app::connection(&host), app_(&app), response_(res) {}
  ~context() {
    if (deferred_) detach_deferred();
  }

  application& app() const noexcept { return *app_; }
  response_builder& response() noexcept { return response_; }

  // --- answering later ---------------------------------------------------------------
  // Takes the response out of the handler: it is sent once the returned handle's send()
  // has run, from any thread; the layers around the handler finish then. For libraries
  // that call back. Once per request; throws std::logic_error on a second call.
  deferred_response defer();

  // --- the body in pieces, or from a file (docs/files.md) --------------------------------
  // Sends `data` as the next piece of the body, and returns once it is with the kernel
  // (so one piece is in memory at a time, and a slow reader slows the writer). The first
  // call sends the response's head as it stands, chunked (HTTP/1.0: until the connection
  // closes); what layers set afterwards is not sent. Throws std::system_error when the
  // client has gone or stopped reading for write_timeout. Outside waypoint::beast::server
  // (respond(), async_handle()) the pieces are gathered into the body.
  awaitable<void> write_chunk(std::string_view data);
  // From the first write_chunk() on, the pieces go through an encoder `encoding` opens (the
  // last installed wins); its end is sent once the chain is done. `encoding` outlives the
  // request (a layer's own state).
  void encode_chunks(const chunk_encoding& encoding) noexcept { chunk_encoding_ = &encoding; }
  // A field sent after the last chunk (announce it with a `Trailer` header before the
  // first write_chunk). Replaces one of the same name.
  void set_trailer(std::string_view name, std::string_view value);
  // The open file range `file` is the body (its fields are the caller's: Content-Type,
  // Content-Length is written from the range). Served by waypoint::beast::server it is sent
  // with sendfile, never read into memory; elsewhere (respond(), async_handle()) it is read
  // into the body once the chain is done. A layer that writes a body, or a status without
  // content (304), replaces it.
  void send_file(beast::file_payload file) noexcept;
  // The body's length as it will be sent: the chunks write_chunk() sent, else the range
  // given to send_file() unless a layer replaced it, else the body written (0 for HEAD).
  // What the access log reports.
  std::uint64_t body_size() const noexcept;

  // --- handing the connection over (WebSocket routes build on it: realtime/websocket.hpp)
  // Whether the connection can be handed over at all: served by waypoint::beast::server;
  // not under respond() or async_handle(), which answer 501 instead.
  bool can_upgrade() const noexcept;
  // What runs on the connection once it is a WebSocket: this context, rebound to the
  // upgraded connection's request and response, and the connection.
  using upgrade_run = std::function<awaitable<void>(context&, beast::websocket_channel&)>;
  // Sets the status to 101 and asks for the connection once the chain is done: if the
  // answer is then still 101 (no layer replaced it), the server completes the handshake
  // with `options` and calls `run` on the connection's thread; else the answer goes out
  // as any other and `run` is dropped. Call can_upgrade() first.
  void upgrade(const beast::websocket_options& options, upgrade_run run);

 private:
  friend class application;
  friend class next;
  friend struct detail::deferred_state;
  friend struct detail::pending_upgrade;
  friend void answer_current_exception(context& ctx) noexcept;

  // A context made at a request's header (application::plan_body), routed then, and bound
  // to its exchange at the dispatch, so that a request with a body is routed once.
  context(application& app, const app::request& req) noexcept
      : request_view(req, nullptr), app::connection(nullptr), app_(&app) {}
  void bind(beast::exchange& x) noexcept {
    response_ = response_builder(x.response());
    host_ = body_source_ = &x.host();
  }

  bool deferred() const noexcept { return static_cast<bool>(deferred_); }
  void detach_deferred() noexcept;  // the deferred response outlives its request
  // The request goes on over another connection (a WebSocket's, after the upgrade).
  void rebind(beast::exchange_host& to) noexcept { host_ = body_source_ = &to; }

  // Runs the chain from position `index`: the layers' hooks, then the endpoint. For a
  // chain without a coroutine; one with a coroutine runs through run_async. A layer with
  // only a `before` hook needs no frame of its own (nothing of it runs after the inner
  // layers, an exception passes it untouched, a deferred response has nothing of it to
  // postpone), so a run of them is a loop; one with an `after` hook goes through run_hooks.
  void run(std::uint32_t index) {
    for (; index < chain_.size(); ++index) {
      const layer_hooks& hooks = chain_[index]->hooks();
      if (hooks.after) return run_hooks(hooks, index);
      if (hooks.before && !hooks.before(*this)) return;
    }
    (*endpoint_)(*this);
  }
  void run_hooks(const layer_hooks& hooks, std::uint32_t index);
  // Any chain, from position `index`; waits for a deferred response (src/app/async.cpp).
  awaitable<void> run_async(std::uint32_t index);
  // After a synchronous part of the chain deferred: waits until the response is sent,
  // then runs the hooks it postponed.
  awaitable<void> finish_deferred();
  // The `after` hooks a deferred response postponed, innermost first.
  void run_postponed();
  // After the chain: the file body goes to the connection, or into the body.
  void hand_over_file() noexcept;
  // write_chunk() without the encoder.
  awaitable<void> send_chunk(std::string_view data);
  // After the chain: the end of an encoded body (encode_chunks), when one was opened.
  awaitable<void> finish_chunks();

  application* app_;
  response_builder response_;
  std::span<const middleware* const> chain_;
  const handler* endpoint_ = nullptr;
  // Set by defer(); with the chain positions of hooks whose `after` waits for it.
  std::shared_ptr<detail::deferred_state> deferred_;
  std::vector<std::uint32_t> postponed_;
  bool async_chain_ = false;  // the chain holds a coroutine: it runs through run_async
  std::shared_ptr<detail::pending_upgrade> upgrade_;  // upgrade(); null for nearly every request
  beast::file_payload file_;  // send_file(): the body, unless a layer replaced it
  std::uint64_t chunked_bytes_ = 0;   // write_chunk(): the body sent so far
  bool streamed_ = false;  // write_chunk() sent the head: an error can only cut the body
  std::unique_ptr<http::fields> trailers_;  // set_trailer()
  // encode_chunks(): to open at the first write_chunk(); null once opened, or never set.
  const chunk_encoding* chunk_encoding_ = nullptr;
  std::unique_ptr<chunk_encoder> chunk_encoder_;  // what it opened, null for nearly every request
};

}  // namespace waypoint::app
