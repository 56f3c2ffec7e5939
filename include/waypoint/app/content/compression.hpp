// Content codings, both ways, as one layer: compression() compresses the responses a
// client accepts compressed (Accept-Encoding: gzip, br, zstd), whole bodies and streamed
// ones alike, and decodes request bodies sent with a Content-Encoding before the handler
// (or a typed route's contract) reads ctx.body().
//
//   app.use(waypoint::app::compression());                       // br > zstd > gzip
//   app.use(waypoint::app::compression({.min_size = 256}));
//
// What it never compresses, and why: docs/framework.md, "Compression". The codecs (zlib,
// libbrotli, libzstd) are compiled into src/app/content/compression.cpp alone.
#pragma once

#include "waypoint/app/handler.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

// A content coding (RFC 9110 §8.4.1) the layer reads and writes.
enum class content_coding : std::uint8_t { identity, gzip, br, zstd };

// Its token in Accept-Encoding and Content-Encoding: "identity", "gzip", "br", "zstd".
std::string_view coding_name(content_coding coding) noexcept;

// The decoded request body's default limit when the route sets no body_limit: the server's
// default max_body_bytes (1 MiB), so that decoding never lets through more than an
// uncompressed body could bring.
inline constexpr std::uint64_t default_max_decoded_bytes = std::uint64_t{1} << 20;

struct compression_options {
  // The codings offered, in the server's order of preference, which breaks ties between
  // equal q-values. br first: every browser decodes it, and so do the HTTP clients and
  // proxies that decode anything beyond gzip. zstd compresses JSON to within a few per cent
  // of br's size for about a third of br's CPU at these levels (BENCHMARKS.md §18), but
  // with it first a client that forwards its caller's Accept-Encoding without decoding zstd
  // itself breaks (Prism 5 does, in tests/gateway/prism_test.py): put it first, {zstd, br,
  // gzip}, where you know the clients. gzip last, the one every client decodes. Remove one
  // to disable it.
  std::vector<content_coding> codings{content_coding::br, content_coding::zstd,
                                      content_coding::gzip};
  // Whole bodies shorter than this go as they are: a response of about 1 KiB fits one TCP
  // segment with its head anyway (an MSS is ~1460 bytes), so compressing it saves no round
  // trip and costs CPU, and the codings' own framing (gzip's 18 bytes) eats the gain on the
  // smallest. A streamed body is always compressed: its size is not known up front.
  std::size_t min_size = 1024;
  // The Content-Types worth compressing, compared without parameters or case: a whole type
  // ("application/json"), a prefix ending in '/' ("text/"), or a structured-syntax suffix
  // beginning with '+' ("+json": application/ld+json, application/problem+json).
  // Already-compressed formats (images, video, archives, woff2) are not worth it.
  std::vector<std::string> content_types{"text/",
                                         "application/json",
                                         "application/javascript",
                                         "application/xml",
                                         "application/x-ndjson",
                                         "application/wasm",
                                         "image/svg+xml",
                                         "+json",
                                         "+xml"};
  // Levels: zlib's default (1-9); br 4 (0-11), the level CDNs use for dynamic responses,
  // near gzip's speed and smaller; zstd 3 (1-19), its own default.
  int gzip_level = 6;
  int br_level = 4;
  int zstd_level = 3;
  // Request bodies with Content-Encoding: gzip, br or zstd are decoded before the handler
  // runs (one coding: a list of several is refused with 415). false leaves them as sent.
  bool decode_requests = true;
  // The most bytes a decoded request body may hold; decoding stops there with 413. 0: the
  // route's limit (route_body::max_bytes), else default_max_decoded_bytes.
  std::uint64_t max_decoded_bytes = 0;
};

// The layer. Use it once, with app.use() or on a group; throws std::invalid_argument for a
// level out of range or a coding list holding identity or a coding twice.
middleware compression(compression_options options = {});

namespace detail {

// RFC 9110 §12.5.3: the coding of `offered` (in preference order) that Accept-Encoding
// `field` accepts with the highest q-value, the first of equals; identity when none is
// acceptable, when identity has a higher q-value than the best of them, and when the field
// is absent (`present` false). "x-gzip" is gzip (§8.4.1.3). Elements whose q-value does not
// parse are ignored.
content_coding negotiate_coding(std::string_view field, bool present,
                                std::span<const content_coding> offered) noexcept;

// Whether Content-Type `type` is one `patterns` names (compression_options::content_types).
bool compressible_type(std::string_view type, std::span<const std::string> patterns) noexcept;

}  // namespace detail

}  // namespace waypoint::app
