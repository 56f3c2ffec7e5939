// The parsers under forms.hpp, with no I/O: application/x-www-form-urlencoded as the WHATWG
// URL standard parses it, and multipart/form-data (RFC 7578 over RFC 2046 §5.1) as a push
// parser fed the body in pieces of any size. Tests and benchmarks drive them directly;
// handlers use read_form() and multipart_reader (forms.hpp), which feed them from the
// request.
//
//   multipart_parser parser(boundary, limits);
//   for (std::string_view piece : pieces)                // any split, down to single bytes
//     for (auto e = parser.next(piece); e != multipart_event::need_more; e = parser.next(piece))
//       if (e == multipart_event::data) use(parser.part(), parser.data());
//   parser.finish();                                     // done, or the missing final boundary
//
// The multipart grammar as read here: a delimiter is CRLF "--" boundary (the body may start
// with "--" boundary), followed by "--" (the last one: what follows is the epilogue and is
// ignored) or by optional spaces and tabs and CRLF. Bytes before the first delimiter (the
// preamble) are ignored. A part's header lines end in CRLF and the header ends with an empty
// line; Content-Disposition (form-data, with a name) is required, Content-Type is kept, other
// fields are skipped. Line ends are CRLF only: a bare LF or CR is malformed (every browser
// and curl send CRLF, and a lenient reading is how two parsers come to disagree on where a
// part ends). Folded header lines (obs-fold) are refused, as RFC 9112 §5.2 lets a server do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::app {

// What a client may make a form's parser hold or read. Every limit reached is a 413 whose
// detail names it; defaults suit HTML forms with a few file inputs.
struct form_limits {
  // Parts of a multipart body, or name=value pairs of a urlencoded one.
  std::size_t max_parts = 256;
  // The header lines of one part, CRLFs included: a Content-Disposition with a long
  // filename and a Content-Type fit in a few hundred bytes.
  std::size_t max_part_header_bytes = 4 * 1024;
  // A field's value (a part without a filename, or a urlencoded value with its name): held
  // in memory, so with max_parts it bounds a form's fields at 256 × 64 KiB.
  std::size_t max_field_bytes = 64 * 1024;
  // One file's content (streamed, never held).
  std::uint64_t max_file_bytes = std::uint64_t{1} << 30;
  // The whole body, preamble and epilogue included (the route's stream_body limit applies
  // as well; this one is the form's own).
  std::uint64_t max_total_bytes = std::uint64_t{4} << 30;
};

// A decoded name=value pair of a form.
struct form_field {
  std::string name;
  std::string value;
};

// Why a form was refused: the status (400 malformed, 413 a limit reached) and a detail for
// the problem document.
struct form_error {
  int status = 0;
  std::string detail;
};

// An application/x-www-form-urlencoded body as the WHATWG URL standard's parser reads it
// (§5.1): split on '&', empty pieces skipped, name and value split at the first '=', '+' a
// space, %XX decoded and a '%' without two hex digits kept as it is, then invalid UTF-8
// replaced by U+FFFD. Repeated names are kept, in order. Past a limit: the 413 error.
std::vector<form_field> parse_urlencoded(std::string_view body, const form_limits& limits,
                                         form_error& error);

// Parameters are read as RFC 9110 §5.6.6 writes them, and as strictly as Go's
// mime.ParseMediaType: a value whose parameters do not parse (one without '=' or a value, an
// unclosed quoted-string) or name one parameter twice (say two boundaries, which two parsers
// could each take differently) has none to give.

// The value of parameter `name` (case-insensitive) of a header value with parameters
// ("multipart/form-data; boundary=x", "form-data; name=\"a\""), a quoted string unquoted
// (backslash escapes taken, as RFC 9110 §5.6.4's quoted-pair); nullopt when absent or when
// the value does not parse.
std::optional<std::string> header_parameter(std::string_view value, std::string_view name);

// Whether a Content-Type value names `media_type` (case-insensitive, parameters aside);
// false for one that does not parse.
bool is_media_type(std::string_view content_type, std::string_view media_type) noexcept;

// The boundary of a multipart Content-Type: 1 to 70 characters of RFC 2046's bchars, not
// ending in a space. Missing, invalid, or in a Content-Type that does not parse (the detail
// names why: "names the parameter \"boundary\" twice"): nullopt, with the 400 error's detail.
std::optional<std::string> multipart_boundary(std::string_view content_type, form_error& error);

// A filename from a client made safe to use as the last component of a path: what follows
// the last '/' or '\\', without control characters (NUL included) or DEL, without leading
// dots and spaces (so never "." or ".." or a hidden file) or trailing dots and spaces, cut to
// at most 255 bytes at a UTF-8 character boundary; "file" when nothing is left. It is still
// the client's choice of name: use it for display or under a directory of your own, never to
// decide anything about where the file goes.
std::string safe_filename(std::string_view client_name);

// What a part's header says.
struct form_part {
  std::string name{};           // Content-Disposition's name
  std::string filename{};       // as the client sent it (filename*, RFC 5987, when given)
  std::string safe_filename{};  // safe_filename(filename); empty for a field
  std::string content_type{};   // the part's Content-Type; empty when absent
  std::size_t index = 0;     // 1 for the first part
  // A file is a part with a non-empty filename (an empty file input sends filename="" and
  // is read as an empty field, as Go's mime/multipart does).
  bool is_file() const noexcept { return !filename.empty(); }
};

enum class multipart_event : std::uint8_t {
  need_more,   // the input given is consumed: feed the next piece (or finish())
  part_begin,  // part() holds the next part's header
  data,        // data() holds the next bytes of the current part's content
  part_end,    // the current part's content is complete
  done,        // the final boundary was read; anything after it is ignored
  error,       // error() says why; the parser stays in error
};

class multipart_parser {
 public:
  // `boundary` as multipart_boundary() gives it.
  multipart_parser(std::string_view boundary, const form_limits& limits);

  // Reads from the front of `input`, removing what it consumed, up to the next event. A
  // data event's bytes are a view into `input` or into the parser (valid until the next
  // call). After done, the rest of any input is consumed and ignored.
  multipart_event next(std::string_view& input);
  // The body ended: done, or the 400 error when the final boundary has not been read.
  multipart_event finish();

  const form_part& part() const noexcept { return part_; }
  std::string_view data() const noexcept { return data_; }
  const form_error& error() const noexcept { return error_; }

 private:
  // Where the parser is. Invariant: in preamble and content, matched_ bytes of the
  // delimiter were read at the end of the input so far and not yet given out as data.
  enum class state : std::uint8_t {
    preamble,         // before the first delimiter
    after_boundary,   // a delimiter read: "--", padding or CRLF comes
    final_dash,       // "-" of the final "--" read
    padding,          // spaces and tabs after a delimiter
    boundary_lf,      // the CR ending a delimiter line read
    header,           // in a part's header lines
    header_lf,        // a CR in the header read
    content,          // in a part's content
    epilogue,         // after the final delimiter
    failed,
  };

  multipart_event scan(std::string_view& input);
  multipart_event after_delimiter(char c);
  multipart_event header_byte(char c);
  multipart_event end_header_line();
  multipart_event end_header();
  multipart_event give_data(std::string_view bytes);
  multipart_event fail(int status, std::string detail);

  std::string delimiter_;  // CRLF "--" boundary: CR only at its front (bchars have none)
  form_limits limits_;
  state state_ = state::preamble;
  std::size_t matched_ = 2;  // the body may open with "--" boundary: as if after a CRLF
  std::string line_;         // the header line being read
  std::size_t header_bytes_ = 0;   // of the current part's header
  std::uint64_t part_bytes_ = 0;   // of the current part's content
  std::uint64_t total_bytes_ = 0;  // consumed from the body
  bool has_disposition_ = false;
  form_part part_;
  std::string_view data_;
  form_error error_;
};

}  // namespace waypoint::app
