// The one reader of a media type (RFC 9110 §8.3.1) and of the parameters that follow a value
// (§5.6.6), for every layer that looks at a Content-Type or at a field of the same shape:
// forms (the multipart boundary, a part's Content-Disposition), JSON bodies (application/json
// and +json, +cbor, +cose), compression and security_headers (the response's type).
//
//   media-type = type "/" subtype parameters
//   parameters = *( OWS ";" OWS [ parameter ] )
//   parameter  = token "=" ( token / quoted-string )
//
// Strict where parsers disagree, as Go's mime.ParseMediaType is: a parameter named twice
// (names compare without regard to case) is refused, so that no two readers of one request
// can take different boundaries or charsets from it, and so is a parameter that does not
// parse (no '=', a value that is neither a token nor a closed quoted-string), rather than
// everything after it being ignored. The result is views into the text: parsing allocates
// nothing until it fails or a parameter's value is unquoted.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace waypoint::app::detail {

// The most parameters a value may have. A media type has one or two (charset, boundary,
// profile); the bound keeps the check for repeated names, which compares each with those
// before it, from growing with the square of a client's field.
inline constexpr std::size_t max_media_parameters = 32;

// A value with its parameters: "form-data; name=a", "text/html; charset=utf-8".
struct parameterized {
  std::string_view value;       // before the first ';', without the whitespace around it
  std::string_view parameters;  // from the first ';' on (empty when none); checked

  // The value of parameter `name` (compared without regard to case), a quoted-string
  // unquoted (a backslash takes the byte after it); nullopt when absent.
  std::optional<std::string> parameter(std::string_view name) const;
  // Calls visit(name, unquoted value) for each parameter, in order.
  template <class Visit>
  void for_each_parameter(Visit&& visit) const;
};

// A media type: "application/vnd.api+json; charset=utf-8".
struct media_type : parameterized {
  std::string_view type;     // "application", as written: compare with iequals
  std::string_view subtype;  // "vnd.api+json"

  // Whether the type is `essence` ("multipart/form-data"), without regard to case.
  bool is(std::string_view essence) const noexcept;
  // "type/subtype" in lower case.
  std::string essence() const;
  // The structured syntax suffix (RFC 6838 §4.2.8): "json" of "vnd.api+json"; empty without
  // a '+'.
  std::string_view suffix() const noexcept;
};

// `text` (a field value) read as a media type, or nullopt with `why` (when given) set to the
// end of a sentence that names the text: "has no '/' between type and subtype", "names the
// parameter \"boundary\" twice".
std::optional<media_type> parse_media_type(std::string_view text, std::string* why = nullptr);

// `text` read as a token and its parameters (a Content-Disposition: "form-data; name=a"),
// or nullopt with `why` set as parse_media_type sets it.
std::optional<parameterized> parse_parameterized(std::string_view text, std::string* why = nullptr);

// --- what the template above needs -----------------------------------------------------

// One parameter as written: its name and its value, quotes and backslashes included.
struct raw_parameter {
  std::string_view name;
  std::string_view value;
};

// The parameter at the front of `rest` (which starts at a ';' or is empty), `rest` moved
// past it; nullopt at the end. `rest` must have been checked by the parse.
std::optional<raw_parameter> next_parameter(std::string_view& rest) noexcept;

// A parameter's value as it means: a quoted-string without its quotes and backslashes.
std::string unquoted(std::string_view value);

template <class Visit>
void parameterized::for_each_parameter(Visit&& visit) const {
  std::string_view rest = parameters;
  while (std::optional<raw_parameter> p = next_parameter(rest)) visit(p->name, unquoted(p->value));
}

}  // namespace waypoint::app::detail
