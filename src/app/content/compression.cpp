// The compression layer: Accept-Encoding negotiation, the three codecs (zlib for gzip,
// libbrotli for br, libzstd for zstd) behind one streaming shape, the whole-body path (an
// `after` hook), the streamed-body path (a chunk_encoding the first write_chunk() opens),
// and the decoding of request bodies under a limit. The only file that includes the codecs.
//
// Memory per stream is bounded by the parameters below, set explicitly rather than left to
// each library's defaults (which grow with the input): deflate windowBits 15, memLevel 8;
// brotli lgwin 18; zstd windowLog 19. With the codecs' match tables, measured through their
// allocator hooks: about 260 KiB for gzip, 2.2 MiB for br 4, 2.0 MiB for zstd 3
// (docs/framework.md). Decoding: inflate's 32 KiB window; zstd refuses windows over 8 MiB
// (RFC 9659's limit for HTTP); brotli's format caps its window at 16 MiB. Those windows are
// what a small body can make a request hold while it is decoded; the decoded bytes
// themselves stop at the limit.
#include "waypoint/app/content/compression.hpp"

#include "waypoint/app/application.hpp"
#include "waypoint/app/context.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include "app/detail/media_type.hpp"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

namespace waypoint::app {

using waypoint::detail::iequals;
using waypoint::detail::trim;

std::string_view coding_name(content_coding coding) noexcept {
  switch (coding) {
    case content_coding::gzip:
      return "gzip";
    case content_coding::br:
      return "br";
    case content_coding::zstd:
      return "zstd";
    case content_coding::identity:
      break;
  }
  return "identity";
}

namespace detail {
namespace {

bool names(std::string_view token, content_coding coding) noexcept {
  return iequals(token, coding_name(coding)) ||
         (coding == content_coding::gzip && iequals(token, "x-gzip"));
}

}  // namespace

content_coding negotiate_coding(std::string_view field, bool present,
                                std::span<const content_coding> offered) noexcept {
  if (!present) return content_coding::identity;
  // q-values of what the field names; -1: not named.
  constexpr std::size_t coding_count = 4;
  std::array<int, coding_count> named{-1, -1, -1, -1};
  int star = -1;
  waypoint::detail::for_each_list_element(field, [&](std::string_view text) {
    // An element whose q does not parse is ignored.
    waypoint::detail::weighted_element e = waypoint::detail::parse_weighted_element(text);
    if (e.q < 0) return;
    if (e.value == "*") {
      star = e.q;
      return;
    }
    for (content_coding c : {content_coding::identity, content_coding::gzip, content_coding::br,
                             content_coding::zstd})
      if (names(e.value, c)) named[static_cast<std::size_t>(c)] = e.q;
  });
  auto q_of = [&](content_coding c) {
    int q = named[static_cast<std::size_t>(c)];
    return q >= 0 ? q : (star >= 0 ? star : 0);
  };
  content_coding best = content_coding::identity;
  int best_q = 0;
  for (content_coding c : offered) {
    int q = q_of(c);
    if (q > best_q) best = c, best_q = q;
  }
  // Nothing offered is acceptable: identity, even when "identity;q=0" refuses it, as nginx
  // and Go answer (§12.5.3 allows a 406; a body the client may still read serves it better).
  // identity itself gets a q-value only by name ("*" does not cover it), and wins only when
  // the client named it with a higher one.
  if (best_q == 0 || named[0] > best_q) return content_coding::identity;
  return best;
}

namespace {
// compression_options::content_types: a whole type, a "text/" prefix or a "+json" suffix.
bool type_matches(std::string_view type, std::string_view pattern) noexcept {
  if (pattern.ends_with('/')) return waypoint::detail::istarts_with(type, pattern);
  if (pattern.starts_with('+'))
    return type.size() > pattern.size() &&
           iequals(type.substr(type.size() - pattern.size()), pattern);
  return iequals(type, pattern);
}
}  // namespace

bool compressible_type(std::string_view type, std::span<const std::string> patterns) noexcept {
  std::optional<media_type> parsed = parse_media_type(type);
  if (!parsed) return false;  // a type no client could read either: sent as it is
  std::string_view essence = parsed->value;
  return std::any_of(patterns.begin(), patterns.end(), [essence](const auto& p) {
    return type_matches(essence, p);
  });
}

}  // namespace detail

namespace {

// --- encoding -------------------------------------------------------------------------

// The window and table sizes that bound an encoder's memory (the file's opening comment).
constexpr int deflate_window_bits = 15;
constexpr int deflate_mem_level = 8;
constexpr int brotli_window_bits = 18;
constexpr int zstd_window_log = 19;
// Output grows in steps of this many bytes while a codec has more to write.
constexpr std::size_t output_step = 16 * 1024;

// One compressed stream: bytes in, compressed bytes appended to `out`, each call ending
// with a flush (all input so far decodable) or, with `last`, the end of the stream.
class encoder {
 public:
  virtual ~encoder() = default;
  virtual void write(std::string_view in, bool last, std::string& out) = 0;
};

// Appends to `out` through a window of `out`'s spare capacity: `step(next_out, avail)`
// writes and returns how much space it left, and whether it is done.
template <class Step>
void append_output(std::string& out, Step&& step) {
  for (;;) {
    std::size_t used = out.size();
    out.resize(used + output_step);
    std::size_t left = output_step;
    bool done = step(reinterpret_cast<unsigned char*>(out.data() + used), left);
    out.resize(used + output_step - left);
    if (done) return;
  }
}

class gzip_encoder final : public encoder {
 public:
  explicit gzip_encoder(int level) {
    if (deflateInit2(&z_, level, Z_DEFLATED, deflate_window_bits + 16, deflate_mem_level,
                     Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::bad_alloc();
  }
  ~gzip_encoder() override { deflateEnd(&z_); }

  void write(std::string_view in, bool last, std::string& out) override {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    append_output(out, [&](unsigned char* to, std::size_t& left) {
      z_.next_out = to;
      z_.avail_out = static_cast<uInt>(left);
      int rc = deflate(&z_, last ? Z_FINISH : Z_SYNC_FLUSH);
      left = z_.avail_out;
      // Done when the flush completed: input consumed and room to spare (zlib's rule).
      return last ? rc == Z_STREAM_END : (z_.avail_in == 0 && left != 0);
    });
  }

 private:
  z_stream z_{};
};

class brotli_encoder final : public encoder {
 public:
  explicit brotli_encoder(int quality)
      : state_(BrotliEncoderCreateInstance(nullptr, nullptr, nullptr)) {
    if (!state_) throw std::bad_alloc();
    BrotliEncoderSetParameter(state_.get(), BROTLI_PARAM_QUALITY, static_cast<uint32_t>(quality));
    BrotliEncoderSetParameter(state_.get(), BROTLI_PARAM_LGWIN, brotli_window_bits);
  }

  void write(std::string_view in, bool last, std::string& out) override {
    std::size_t avail_in = in.size();
    const auto* next_in = reinterpret_cast<const uint8_t*>(in.data());
    BrotliEncoderOperation op = last ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_FLUSH;
    append_output(out, [&](unsigned char* to, std::size_t& left) {
      if (!BrotliEncoderCompressStream(state_.get(), op, &avail_in, &next_in, &left, &to,
                                       nullptr))
        throw std::bad_alloc();  // brotli fails only for want of memory here
      return avail_in == 0 && !BrotliEncoderHasMoreOutput(state_.get()) &&
             (!last || BrotliEncoderIsFinished(state_.get()));
    });
  }

 private:
  struct destroy {
    void operator()(BrotliEncoderState* s) const noexcept { BrotliEncoderDestroyInstance(s); }
  };
  std::unique_ptr<BrotliEncoderState, destroy> state_;
};

class zstd_encoder final : public encoder {
 public:
  zstd_encoder(int level, std::size_t whole_size) : context_(ZSTD_createCCtx()) {
    if (!context_) throw std::bad_alloc();
    ZSTD_CCtx_setParameter(context_.get(), ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(context_.get(), ZSTD_c_windowLog, zstd_window_log);
    // A whole body's size lets zstd shrink its tables to it, and goes into the frame.
    if (whole_size) ZSTD_CCtx_setPledgedSrcSize(context_.get(), whole_size);
  }

  void write(std::string_view in, bool last, std::string& out) override {
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    append_output(out, [&](unsigned char* to, std::size_t& left) {
      ZSTD_outBuffer output{to, left, 0};
      std::size_t remaining =
          ZSTD_compressStream2(context_.get(), &output, &input, last ? ZSTD_e_end : ZSTD_e_flush);
      if (ZSTD_isError(remaining)) throw std::bad_alloc();
      left -= output.pos;
      return remaining == 0;
    });
  }

 private:
  struct destroy {
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
  };
  std::unique_ptr<ZSTD_CCtx, destroy> context_;
};

// --- decoding -------------------------------------------------------------------------

// RFC 9659 §3: a zstd decoder for HTTP needs no window over 8 MiB, and may refuse larger.
constexpr int zstd_max_window_log = 23;

enum class decode_status : std::uint8_t { ok, too_large, malformed };

// Decodes `in` into `out`, never holding more than `limit` decoded bytes (plus one step of
// spare capacity): a body that would exceed it stops there.
decode_status decode_gzip(std::string_view in, std::uint64_t limit, std::string& out) {
  z_stream z{};
  if (inflateInit2(&z, deflate_window_bits + 16) != Z_OK) throw std::bad_alloc();
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  decode_status status = decode_status::ok;
  for (;;) {
    bool stream_end = false;
    append_output(out, [&](unsigned char* to, std::size_t& left) {
      z.next_out = to;
      z.avail_out = static_cast<uInt>(left);
      int rc = inflate(&z, Z_NO_FLUSH);
      left = z.avail_out;
      if (rc == Z_STREAM_END) return stream_end = true;
      if (rc != Z_OK && rc != Z_BUF_ERROR) return status = decode_status::malformed, true;
      if (out.size() - left > limit) return status = decode_status::too_large, true;
      // Z_BUF_ERROR with input left would be a full buffer; without, the input ran out.
      if (z.avail_in == 0 && left != 0) return status = decode_status::malformed, true;
      return false;
    });
    if (status != decode_status::ok) return status;
    if (out.size() > limit) return decode_status::too_large;
    if (z.avail_in == 0) return decode_status::ok;
    // Concatenated gzip members (RFC 1952 §2.2) are one body.
    if (!stream_end || inflateReset(&z) != Z_OK) return decode_status::malformed;
  }
}

decode_status decode_brotli(std::string_view in, std::uint64_t limit, std::string& out) {
  struct destroy {
    void operator()(BrotliDecoderState* s) const noexcept { BrotliDecoderDestroyInstance(s); }
  };
  std::unique_ptr<BrotliDecoderState, destroy> state(
      BrotliDecoderCreateInstance(nullptr, nullptr, nullptr));
  if (!state) throw std::bad_alloc();
  std::size_t avail_in = in.size();
  const auto* next_in = reinterpret_cast<const uint8_t*>(in.data());
  decode_status status = decode_status::ok;
  append_output(out, [&](unsigned char* to, std::size_t& left) {
    BrotliDecoderResult rc =
        BrotliDecoderDecompressStream(state.get(), &avail_in, &next_in, &left, &to, nullptr);
    if (out.size() - left > limit) status = decode_status::too_large;
    else if (rc == BROTLI_DECODER_RESULT_SUCCESS)
      status = avail_in == 0 ? decode_status::ok : decode_status::malformed;  // bytes after the end
    else if (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT)
      return false;
    else
      status = decode_status::malformed;  // an error, or the input ended mid-stream
    return true;
  });
  return status;
}

decode_status decode_zstd(std::string_view in, std::uint64_t limit, std::string& out) {
  struct destroy {
    void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
  };
  std::unique_ptr<ZSTD_DCtx, destroy> context(ZSTD_createDCtx());
  if (!context) throw std::bad_alloc();
  ZSTD_DCtx_setParameter(context.get(), ZSTD_d_windowLogMax, zstd_max_window_log);
  ZSTD_inBuffer input{in.data(), in.size(), 0};
  decode_status status = decode_status::ok;
  std::size_t hint = 1;  // 0 once a frame is complete
  append_output(out, [&](unsigned char* to, std::size_t& left) {
    ZSTD_outBuffer output{to, left, 0};
    hint = ZSTD_decompressStream(context.get(), &output, &input);
    left -= output.pos;
    if (ZSTD_isError(hint)) return status = decode_status::malformed, true;
    if (out.size() - left > limit) return status = decode_status::too_large, true;
    if (input.pos < input.size || left == 0) return false;  // more to read, or to write
    // The input is used up: complete only at a frame's end (frames may follow each other).
    if (hint != 0) status = decode_status::malformed;
    return true;
  });
  return status;
}

decode_status decode(content_coding coding, std::string_view in, std::uint64_t limit,
                     std::string& out) {
  switch (coding) {
    case content_coding::gzip:
      return decode_gzip(in, limit, out);
    case content_coding::br:
      return decode_brotli(in, limit, out);
    case content_coding::zstd:
      return decode_zstd(in, limit, out);
    case content_coding::identity:
      break;
  }
  out.assign(in);
  return decode_status::ok;
}

// --- the layer ------------------------------------------------------------------------

// A chunk_encoder over one of the encoders above: what write_chunk() sends.
class stream_encoder final : public chunk_encoder {
 public:
  explicit stream_encoder(std::unique_ptr<encoder> codec) : codec_(std::move(codec)) {}
  std::string_view encode(std::string_view piece, bool last) override {
    out_.clear();
    codec_->write(piece, last, out_);
    return out_;
  }

 private:
  std::unique_ptr<encoder> codec_;
  std::string out_;  // one piece's output; its capacity is kept for the next
};

class compression_policy final : public chunk_encoding {
 public:
  explicit compression_policy(compression_options options) : options_(std::move(options)) {
    auto in_range = [](int level, int low, int high) { return level >= low && level <= high; };
    if (!in_range(options_.gzip_level, 1, 9) || !in_range(options_.br_level, 0, 11) ||
        !in_range(options_.zstd_level, 1, ZSTD_maxCLevel()))
      throw std::invalid_argument("waypoint::app: a compression level is out of its range");
    for (std::size_t i = 0; i < options_.codings.size(); ++i) {
      content_coding c = options_.codings[i];
      if (c == content_coding::identity ||
          std::count(options_.codings.begin(), options_.codings.end(), c) > 1)
        throw std::invalid_argument(
            "waypoint::app: compression codings name identity or a coding twice");
      if (!accepted_.empty()) accepted_ += ", ";
      accepted_ += coding_name(c);
    }
    if (accepted_.empty()) accepted_ = "identity";
  }

  // Before the handler: a request body with a Content-Encoding is decoded, or answered
  // (false) with why it cannot be.
  bool decode_request(context& ctx) const {
    // Nearly every request has no Content-Encoding: one lookup says so.
    if (!options_.decode_requests ||
        ctx.request().find(http::field::content_encoding) == ctx.request().end())
      return true;
    auto [first_line, end_line] = ctx.request().equal_range(http::field::content_encoding);
    const route_entry* route = ctx.matched_route();
    if (route && route->streams_body()) return true;  // the handler reads it as it was sent
    content_coding coding = content_coding::identity;
    int layers = 0;
    bool known = true;
    // Every field line: a second Content-Encoding line is a second coding (RFC 9110 §5.3).
    for (auto line = first_line; line != end_line; ++line) {
      std::string_view field(line->value().data(), line->value().size());
      waypoint::detail::for_each_list_element(field, [&](std::string_view token) {
        if (iequals(token, "identity")) return;
        ++layers;
        auto it = std::find_if(options_.codings.begin(), options_.codings.end(),
                               [&](content_coding c) { return detail::names(token, c); });
        if (it == options_.codings.end()) known = false;
        else coding = *it;
      });
    }
    if (!known || layers > 1) {
      // RFC 9110 §15.5.16: a 415 for a coding names those accepted.
      ctx.response().header(http::field::accept_encoding, accepted_);
      ctx.response().problem(415, known ? "the body has more than one content coding; this "
                                          "server decodes one: " + accepted_
                                        : "the body's Content-Encoding is not one this server "
                                          "decodes: " + accepted_);
      return false;
    }
    if (coding == content_coding::identity) return true;
    std::uint64_t limit = options_.max_decoded_bytes;
    if (!limit)
      limit = route && route->body_limit() ? route->body_limit() : default_max_decoded_bytes;
    std::string decoded;
    decode_status status = decode(coding, ctx.body(), limit, decoded);
    if (status == decode_status::too_large) {
      ctx.response().problem(413, "the body decoded is longer than the " + std::to_string(limit) +
                                      " bytes this route accepts");
      return false;
    }
    if (status == decode_status::malformed) {
      ctx.response().problem(
          400, "the body is not valid " + std::string(coding_name(coding)) + " data");
      return false;
    }
    decoded.shrink_to_fit();  // the last output step's spare capacity
    ctx.replace_body(std::move(decoded));
    return true;
  }

  // After the handler: a whole body worth compressing is compressed.
  void compress_whole(context& ctx) const {
    app::response& res = ctx.response().message();
    // A 304 carries the Vary and validators the 200 would have (RFC 9110 §15.4.5).
    if (res.result_int() == 304) return revalidated(ctx);
    std::string& body = res.body();
    // Empty: a streamed body (already sent, encoded by open()) or a file's, never compressed.
    if (body.empty() || body.size() < options_.min_size || !worth_encoding(res)) return;
    content_coding coding = announce(ctx);
    if (coding == content_coding::identity) return;
    std::string out;
    out.reserve(body.size() / 3 + 64);
    make_encoder(coding, body.size())->write(body, true, out);
    body.swap(out);
    // A HEAD answer keeps the compressed length (finish_body measures the body it drops);
    // a length a handler stated is the identity body's.
    res.erase(http::field::content_length);
  }

  // The first write_chunk(): the head stands, so the same rules decide, but for the size.
  std::unique_ptr<chunk_encoder> open(context& ctx) const override {
    if (!worth_encoding(ctx.response().message())) return nullptr;
    content_coding coding = announce(ctx);
    if (coding == content_coding::identity) return nullptr;
    return std::make_unique<stream_encoder>(make_encoder(coding, 0));
  }

 private:
  // The rules on what is never compressed; the size is the caller's.
  bool worth_encoding(const app::response& res) const noexcept {
    unsigned status = res.result_int();
    if (status < 200 || status == 204 || status == 206 || status == 304) return false;
    if (res.find(http::field::content_encoding) != res.end()) return false;  // already encoded
    if (res.find(http::field::content_range) != res.end()) return false;
    auto [first, last] = res.equal_range(http::field::cache_control);
    for (auto it = first; it != last; ++it)
      if (waypoint::detail::list_has_token(std::string_view(it->value().data(), it->value().size()),
                                           "no-transform"))
        return false;
    auto type = res[http::field::content_type];
    return detail::compressible_type(std::string_view(type.data(), type.size()),
                                     options_.content_types);
  }

  // The response could be compressed: Vary, whatever the client accepts; the coding chosen
  // and, unless identity, Content-Encoding and a weakened ETag.
  content_coding announce(context& ctx) const {
    response_builder& res = ctx.response();
    add_vary(res.message());
    auto accepted = ctx.request().find(http::field::accept_encoding);
    content_coding coding = detail::negotiate_coding(
        ctx.header(http::field::accept_encoding), accepted != ctx.request().end(),
        options_.codings);
    if (coding == content_coding::identity) return coding;
    res.header(http::field::content_encoding, coding_name(coding));
    // The compressed bytes are not the identity ones a range would count (nginx drops it too).
    res.message().erase(http::field::accept_ranges);
    // Made weak, as nginx does: the compressed bytes are not the ones the strong tag names
    // (nor stable across codec versions), yet If-None-Match, which compares weakly, still
    // revalidates against the handler's own tag. Ranges, which need a strong tag, are never
    // compressed.
    std::string_view etag = res.header("ETag");
    if (!etag.empty() && !etag.starts_with("W/")) res.header(http::field::etag, "W/" + std::string(etag));
    return coding;
  }

  // A 304 for a representation this layer would have compressed: Vary, and the ETag weak
  // when the client's Accept-Encoding picks a coding, as announce() leaves the 200's.
  void revalidated(context& ctx) const {
    add_vary(ctx.response().message());
    auto accepted = ctx.request().find(http::field::accept_encoding);
    content_coding coding = detail::negotiate_coding(
        ctx.header(http::field::accept_encoding), accepted != ctx.request().end(),
        options_.codings);
    std::string_view etag = ctx.response().header("ETag");
    if (coding != content_coding::identity && !etag.empty() && !etag.starts_with("W/"))
      ctx.response().header(http::field::etag, "W/" + std::string(etag));
  }

  // Vary: Accept-Encoding, once (a handler or another layer may have said it already).
  static void add_vary(app::response& res) {
    auto [first, last] = res.equal_range(http::field::vary);
    for (auto it = first; it != last; ++it)
      if (waypoint::detail::list_has_token(std::string_view(it->value().data(), it->value().size()),
                                           "Accept-Encoding"))
        return;
    res.insert(http::field::vary, "Accept-Encoding");
  }

  std::unique_ptr<encoder> make_encoder(content_coding coding, std::size_t whole_size) const {
    switch (coding) {
      case content_coding::gzip:
        return std::make_unique<gzip_encoder>(options_.gzip_level);
      case content_coding::br:
        return std::make_unique<brotli_encoder>(options_.br_level);
      case content_coding::zstd:
        return std::make_unique<zstd_encoder>(options_.zstd_level, whole_size);
      case content_coding::identity:
        break;
    }
    throw std::logic_error("waypoint::app: no encoder for identity");
  }

  compression_options options_;
  std::string accepted_;  // the codings offered, as a 415's Accept-Encoding lists them
};

}  // namespace

middleware compression(compression_options options) {
  auto policy = std::make_shared<const compression_policy>(std::move(options));
  return layer_hooks{[policy](context& ctx) {
                       if (!policy->decode_request(ctx)) return false;
                       ctx.encode_chunks(*policy);
                       return true;
                     },
                     [policy](context& ctx, std::exception_ptr& error) {
                       // An exception is answered outside, with a short problem document.
                       if (!error) policy->compress_whole(ctx);
                     }};
}

}  // namespace waypoint::app
