// The form parsers (waypoint/app/content/form_parser.hpp): urlencoded bodies, header parameters,
// filenames, and the multipart push parser. Hand-written: Boost.Beast parses HTTP but not
// multipart, and the C multipart parsers in Debian (none packaged as a library we link)
// would not give the limits and problem details this needs.
#include "waypoint/app/content/form_parser.hpp"

#include "waypoint/detail/escape.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include "app/detail/media_type.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace waypoint::app {
namespace {

using waypoint::detail::iequals;
using waypoint::detail::is_ows;
using waypoint::detail::is_token_byte;
using waypoint::detail::trim;

// Appends `bytes` decoded as UTF-8 by the WHATWG Encoding standard's decoder: each maximal
// ill-formed subsequence becomes one U+FFFD (the Unicode recommended practice that browsers
// and Python's "replace" follow).
void append_utf8_replacing(std::string& out, std::string_view bytes) {
  constexpr std::string_view replacement = "\xEF\xBF\xBD";
  std::size_t i = 0;
  while (i < bytes.size()) {
    auto b = static_cast<unsigned char>(bytes[i]);
    std::size_t needed = 0;
    unsigned char lower = 0x80, upper = 0xBF;
    if (b < 0x80) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    if (b >= 0xC2 && b <= 0xDF) needed = 1;
    else if (b >= 0xE0 && b <= 0xEF) needed = 2, lower = b == 0xE0 ? 0xA0 : 0x80,
                                     upper = b == 0xED ? 0x9F : 0xBF;
    else if (b >= 0xF0 && b <= 0xF4) needed = 3, lower = b == 0xF0 ? 0x90 : 0x80,
                                     upper = b == 0xF4 ? 0x8F : 0xBF;
    std::size_t seen = 0;
    while (seen < needed && i + 1 + seen < bytes.size()) {
      auto c = static_cast<unsigned char>(bytes[i + 1 + seen]);
      if (c < lower || c > upper) break;
      lower = 0x80, upper = 0xBF;
      ++seen;
    }
    if (needed > 0 && seen == needed) {
      out.append(bytes.substr(i, needed + 1));
    } else {
      out.append(replacement);
    }
    i += 1 + seen;  // the byte that broke the sequence starts the next one
  }
}

// One urlencoded name or value: '+' a space, escapes decoded, then UTF-8 with replacement.
std::string form_decode(std::string_view raw) {
  std::string decoded(raw.size(), '\0');
  decoded.resize(waypoint::detail::percent_decode(raw, decoded.data(), /*plus_is_space=*/true));
  std::string out;
  out.reserve(decoded.size());
  append_utf8_replacing(out, decoded);
  return out;
}

// RFC 2046 §5.1.1's bcharsnospace; a space is a bchar too, but not the last one.
bool is_boundary_char(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

// RFC 5987's ext-value ("UTF-8''%e2%82%ac.txt"): the decoded text, when its charset is
// UTF-8 (the only one RFC 8187 requires; ISO-8859-1 is not worth the code).
std::optional<std::string> decode_ext_value(std::string_view ext) {
  std::size_t first = ext.find('\'');
  if (first == std::string_view::npos || !iequals(ext.substr(0, first), "UTF-8"))
    return std::nullopt;
  std::size_t second = ext.find('\'', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  std::string_view encoded = ext.substr(second + 1);
  std::string decoded(encoded.size(), '\0');
  decoded.resize(waypoint::detail::percent_decode(encoded, decoded.data()));
  std::string out;
  append_utf8_replacing(out, decoded);
  return out;
}

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, 64))
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  return out + (text.size() > 64 ? "...\"" : "\"");
}

}  // namespace

std::vector<form_field> parse_urlencoded(std::string_view body, const form_limits& limits,
                                         form_error& error) {
  std::vector<form_field> fields;
  std::size_t pos = 0;
  while (pos < body.size()) {
    std::size_t end = body.find('&', pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view piece = body.substr(pos, end - pos);
    pos = end + 1;
    if (piece.empty()) continue;
    if (fields.size() == limits.max_parts) {
      error = {413, "the form has more than " + std::to_string(limits.max_parts) + " fields"};
      return {};
    }
    if (piece.size() > limits.max_field_bytes) {
      error = {413, "a field of the form is longer than " +
                        std::to_string(limits.max_field_bytes) + " bytes"};
      return {};
    }
    std::size_t eq = piece.find('=');
    form_field f{form_decode(piece.substr(0, eq)), {}};
    if (eq != std::string_view::npos) f.value = form_decode(piece.substr(eq + 1));
    fields.push_back(std::move(f));
  }
  return fields;
}

std::optional<std::string> header_parameter(std::string_view value, std::string_view name) {
  std::optional<detail::parameterized> read = detail::parse_parameterized(value);
  if (!read)
    if (std::optional<detail::media_type> type = detail::parse_media_type(value)) read = *type;
  return read ? read->parameter(name) : std::nullopt;
}

bool is_media_type(std::string_view content_type, std::string_view media_type) noexcept {
  std::optional<detail::media_type> type = detail::parse_media_type(content_type);
  return type && type->is(media_type);
}

std::optional<std::string> multipart_boundary(std::string_view content_type, form_error& error) {
  std::string why;
  std::optional<detail::media_type> type = detail::parse_media_type(content_type, &why);
  if (!type) {
    error = {400, "the Content-Type " + quoted(content_type) + " " + why};
    return std::nullopt;
  }
  std::optional<std::string> boundary = type->parameter("boundary");
  if (!boundary || boundary->empty()) {
    error = {400, "multipart/form-data without a boundary parameter"};
    return std::nullopt;
  }
  bool valid = boundary->size() <= 70 && boundary->back() != ' ';
  for (char c : *boundary) valid = valid && is_boundary_char(c);
  if (!valid) {
    error = {400, "the boundary " + quoted(*boundary) +
                      " is not 1 to 70 of RFC 2046's boundary characters"};
    return std::nullopt;
  }
  return boundary;
}

std::string safe_filename(std::string_view client_name) {
  // Browsers on Windows once sent the whole path: keep only its last component.
  std::size_t slash = client_name.find_last_of("/\\");
  if (slash != std::string_view::npos) client_name.remove_prefix(slash + 1);
  std::string name;
  for (char c : client_name)
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) name += c;
  std::size_t first = name.find_first_not_of(". ");
  name.erase(0, first == std::string::npos ? name.size() : first);
  while (!name.empty() && (name.back() == '.' || name.back() == ' ')) name.pop_back();
  constexpr std::size_t max_bytes = 255;  // NAME_MAX of Linux's file systems
  if (name.size() > max_bytes) {
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
    name.resize(cut);
  }
  return name.empty() ? std::string("file") : name;
}

// --- the multipart parser -----------------------------------------------------------

multipart_parser::multipart_parser(std::string_view boundary, const form_limits& limits)
    : delimiter_("\r\n--" + std::string(boundary)), limits_(limits) {}

multipart_event multipart_parser::fail(int status, std::string detail) {
  state_ = state::failed;
  error_ = {status, std::move(detail)};
  return multipart_event::error;
}

multipart_event multipart_parser::finish() {
  if (state_ == state::failed) return multipart_event::error;
  if (state_ == state::epilogue) return multipart_event::done;
  return fail(400, "the body ends before the multipart body's final boundary");
}

multipart_event multipart_parser::next(std::string_view& input) {
  for (;;) {
    if (state_ == state::failed) return multipart_event::error;
    if (state_ == state::epilogue) {
      input = {};  // RFC 2046: the epilogue is to be ignored
      return multipart_event::need_more;
    }
    if (input.empty()) return multipart_event::need_more;
    if (total_bytes_ + input.size() > limits_.max_total_bytes)
      return fail(413, "the form is longer than " + std::to_string(limits_.max_total_bytes) +
                           " bytes");
    if (state_ == state::preamble || state_ == state::content) {
      std::size_t before = input.size();
      multipart_event e = scan(input);
      total_bytes_ += before - input.size();
      if (e != multipart_event::need_more) return e;
      continue;
    }
    char c = input.front();
    input.remove_prefix(1);
    ++total_bytes_;
    multipart_event e = state_ == state::header || state_ == state::header_lf
                            ? header_byte(c)
                            : after_delimiter(c);
    if (e != multipart_event::need_more) return e;
  }
}

// In the preamble or a part's content: up to the next delimiter, giving out what precedes
// it. The delimiter holds CR only at its front, so a partial match that fails can only
// start again at a later CR: no byte is examined more than twice, and at most the
// delimiter's length (74 bytes) is held back between calls.
multipart_event multipart_parser::scan(std::string_view& input) {
  std::string_view delimiter = delimiter_;
  if (matched_ > 0) {
    std::size_t n = std::min(input.size(), delimiter.size() - matched_);
    if (input.substr(0, n) == delimiter.substr(matched_, n)) {
      input.remove_prefix(n);
      matched_ += n;
      if (matched_ < delimiter.size()) return multipart_event::need_more;
    } else {
      // Not a delimiter: the bytes held back were content after all.
      std::size_t held = std::exchange(matched_, 0);
      return give_data(delimiter.substr(0, held));
    }
  } else {
    const void* found = ::memmem(input.data(), input.size(), delimiter.data(), delimiter.size());
    std::size_t at = found ? static_cast<const char*>(found) - input.data() : input.size();
    if (!found) {
      // Hold back a tail that may be the delimiter's beginning: only the last CR can start one.
      std::size_t from = input.size() > delimiter.size() ? input.size() - delimiter.size() : 0;
      std::size_t cr = input.substr(from).rfind('\r');
      if (cr != std::string_view::npos) {
        std::string_view tail = input.substr(from + cr);
        if (delimiter.substr(0, tail.size()) == tail) at = from + cr, matched_ = tail.size();
      }
    }
    std::string_view bytes = input.substr(0, at);
    input.remove_prefix(found ? at : input.size());
    if (!bytes.empty()) return give_data(bytes);
    if (!found) return multipart_event::need_more;
    input.remove_prefix(delimiter.size());
  }
  // A whole delimiter read.
  matched_ = 0;
  bool ends_part = state_ == state::content;
  state_ = state::after_boundary;
  return ends_part ? multipart_event::part_end : multipart_event::need_more;
}

multipart_event multipart_parser::give_data(std::string_view bytes) {
  if (state_ == state::preamble) return multipart_event::need_more;
  part_bytes_ += bytes.size();
  if (part_.is_file() && part_bytes_ > limits_.max_file_bytes)
    return fail(413, "the file " + quoted(part_.filename) + " is longer than " +
                         std::to_string(limits_.max_file_bytes) + " bytes");
  if (!part_.is_file() && part_bytes_ > limits_.max_field_bytes)
    return fail(413, "the field " + quoted(part_.name) + " is longer than " +
                         std::to_string(limits_.max_field_bytes) + " bytes");
  data_ = bytes;
  return multipart_event::data;
}

// After a delimiter: "--" ends the body; otherwise transport padding and CRLF, then a part.
multipart_event multipart_parser::after_delimiter(char c) {
  switch (state_) {
    case state::after_boundary:
      if (c == '-') return state_ = state::final_dash, multipart_event::need_more;
      [[fallthrough]];
    case state::padding:
      if (is_ows(c)) return state_ = state::padding, multipart_event::need_more;
      if (c == '\r') return state_ = state::boundary_lf, multipart_event::need_more;
      return fail(400, "a multipart boundary is followed by something other than CRLF or "
                       "\"--\" (line ends must be CRLF)");
    case state::final_dash:
      if (c != '-') return fail(400, "a multipart boundary is followed by a single '-'");
      state_ = state::epilogue;
      return multipart_event::done;
    case state::boundary_lf:
      if (c != '\n') return fail(400, "a CR without LF after a multipart boundary");
      if (part_.index == limits_.max_parts)
        return fail(413, "the form has more than " + std::to_string(limits_.max_parts) +
                             " parts");
      part_ = form_part{.index = part_.index + 1};
      line_.clear();
      header_bytes_ = part_bytes_ = 0;
      has_disposition_ = false;
      state_ = state::header;
      return multipart_event::need_more;
    default:
      return fail(500, "multipart parser state");  // unreachable: next() routes by state
  }
}

multipart_event multipart_parser::header_byte(char c) {
  if (++header_bytes_ > limits_.max_part_header_bytes)
    return fail(413, "the header of part " + std::to_string(part_.index) + " is longer than " +
                         std::to_string(limits_.max_part_header_bytes) + " bytes");
  if (state_ == state::header_lf) {
    if (c != '\n') return fail(400, "a CR without LF in the header of part " +
                                        std::to_string(part_.index));
    state_ = state::header;
    return end_header_line();
  }
  if (c == '\r') return state_ = state::header_lf, multipart_event::need_more;
  if (c == '\n')
    return fail(400, "a bare LF in the header of part " + std::to_string(part_.index) +
                         " (line ends must be CRLF)");
  line_ += c;
  return multipart_event::need_more;
}

multipart_event multipart_parser::end_header_line() {
  std::string_view line = line_;
  std::string where = " in the header of part " + std::to_string(part_.index);
  if (line.empty()) return end_header();
  if (is_ows(line.front())) return fail(400, "a folded header line" + where);
  std::size_t colon = line.find(':');
  std::string_view name = line.substr(0, colon);
  bool token = colon != std::string_view::npos && !name.empty();
  for (char c : name) token = token && is_token_byte(c);
  if (!token) return fail(400, "a header line without a field name" + where);
  std::string_view value = trim(line.substr(colon + 1));
  if (iequals(name, "Content-Disposition")) {
    if (has_disposition_) return fail(400, "two Content-Disposition fields" + where);
    has_disposition_ = true;
    std::string why;
    std::optional<detail::parameterized> disposition = detail::parse_parameterized(value, &why);
    if (!disposition) return fail(400, "a Content-Disposition that " + why + where);
    if (!iequals(disposition->value, "form-data"))
      return fail(400, "a Content-Disposition other than form-data" + where);
    bool extended = false;
    disposition->for_each_parameter([&](std::string_view n, std::string text) {
      if (iequals(n, "name")) part_.name = std::move(text);
      if (iequals(n, "filename") && !extended) part_.filename = std::move(text);
      if (iequals(n, "filename*"))
        if (auto decoded = decode_ext_value(text)) part_.filename = *decoded, extended = true;
    });
  } else if (iequals(name, "Content-Type")) {
    part_.content_type = std::string(value);
  }
  line_.clear();
  return multipart_event::need_more;
}

multipart_event multipart_parser::end_header() {
  if (!has_disposition_)
    return fail(400, "part " + std::to_string(part_.index) + " has no Content-Disposition");
  if (part_.name.empty())
    return fail(400, "part " + std::to_string(part_.index) + " has no name");
  if (part_.is_file()) part_.safe_filename = safe_filename(part_.filename);
  state_ = state::content;
  return multipart_event::part_begin;
}

}  // namespace waypoint::app
