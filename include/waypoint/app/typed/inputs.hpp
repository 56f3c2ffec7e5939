// A typed route's input read from more than its body: members bound to path wildcards, query
// parameters, headers and cookies, and at most one to the body. The binding is declared once,
// on the input type, and the route reads, checks and documents from it:
//
//   struct order_page_query {
//     std::string org;
//     std::optional<std::string> cursor;
//     std::int32_t limit = 20;
//     std::optional<std::string> if_none_match;
//     static constexpr auto inputs = waypoint::app::inputs(
//         from::path("org", &order_page_query::org).describe("the organisation"),
//         from::query("cursor", &order_page_query::cursor),
//         from::query("limit", &order_page_query::limit).or_default()
//             .constraints(R"({"minimum":1,"maximum":100})"),
//         from::header("If-None-Match", &order_page_query::if_none_match));
//   };
//   app.get<order_page>("/v1/orgs/{org}/orders", [](context& ctx, order_page_query in) {...});
//
// (`from` is waypoint::app::from.) get and del take the input type from the handler's
// parameter; post, put and patch from their first template argument, as for a body.
//
// What a member's type says:
//   T                 required: absent is a 400 naming it ("missing query parameter \"limit\"")
//   T, .or_default()  optional: absent keeps the value the type's default constructor gives,
//                     which the document shows as the parameter's "default"
//   std::optional<T>  optional: absent leaves it empty
//   std::vector<T>    query and form: every value of a repeated key (?tag=a&tag=b), in order
// T is a string, a number, bool ("true"/"false") or an enum serialized with
// NLOHMANN_JSON_SERIALIZE_ENUM (its listed strings); a value that is not one is a 400 naming the
// parameter and what was expected. An integer beyond T's range (?cursor=-1 for a std::uint32_t)
// is a 422 with keyword "minimum" or "maximum": the document states T's range as those.
// `.constraints(schema)` is a JSON merge patch onto the parameter's JSON Schema, shown in the
// document and enforced: a value that breaks it is a 422 naming the parameter and the keyword (as
// typed_route_options::request_contract says). A header is the first field of its name; a cookie is
// read from the Cookie fields by cookies() (cookies.hpp: RFC 6265, the first pair of its name).
// from::body(&T::member) reads the body into that member with the typed routes' rules
// (json.hpp); an input type without one reads no body. A route that binds If-None-Match may
// answer 304: when the handler sets an ETag that the field names, the answer is 304 without
// a body (RFC 9110 13.1.2), and the document lists it.
//
// from::form(name, &T::member) binds a field of an HTML form: the body is
// application/x-www-form-urlencoded or multipart/form-data (another type is a 415), read whole
// (so the route must not stream its body) under form_limits' defaults (forms.hpp), with the
// same conversions, 400s and 422s as a query parameter. File parts are skipped: a route that
// takes files reads them with read_form or multipart_reader. The document shows the fields as
// the requestBody's schema, for both media types. An input type binds its body with
// from::body or from::form, not both.
//
// Query keys the input type does not bind are ignored, or refused with a 400 naming them when
// typed_route_options::unknown_query_parameters says refuse.
#pragma once

#include "waypoint/app/content/form_parser.hpp"
#include "waypoint/app/typed/schema.hpp"
#include "waypoint/detail/http_grammar.hpp"

#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace waypoint::app {

enum class input_source : std::uint8_t { path, query, header, cookie, body, form };

namespace detail {

// Non-template parts, compiled once (src/app/typed/inputs.cpp).

// "path", "query", "header", "cookie": the source as OpenAPI's "in" names it; "form" for a
// form field (in the document, a property of the requestBody).
std::string_view input_source_name(input_source source) noexcept;
// How an error names where an input is: "query parameter", "path value", "header", "cookie",
// "form field" (`in` as input_source_name gives it).
std::string_view input_where(std::string_view in) noexcept;
// How an error names an input: "query parameter \"limit\"", "header \"X-Tenant\"".
std::string input_named(std::string_view in, std::string_view name);
// The first value of the input `name` in `source`; nullopt when absent (a path wildcard is
// always present on a route that has it).
std::optional<std::string_view> input_text(context& ctx, input_source source,
                                           std::string_view name);
[[noreturn]] void throw_missing_input(input_source source, std::string_view name);
// For an integer input whose text did not convert: returns when the text is no integer
// (then the 400 of a value that does not convert), sets `negative_zero` for "-0" (zero,
// which an unsigned type's from_chars refuses), else throws the 422 of an integer beyond
// its type's range, which the document states as the schema's "minimum" and "maximum":
// `query parameter "cursor" is -1; the minimum is 0`, keyword "minimum" (`maximum` for one
// above).
void check_integer_range(input_source source, std::string_view name, std::string_view text,
                         std::string_view minimum, std::string_view maximum,
                         bool& negative_zero);
// The fields of the request's form, from its whole body (file parts skipped): 415 when the
// body is not a form, 400 malformed, 413 past form_limits' defaults (src/app/content/forms.cpp).
std::vector<form_field> buffered_form_fields(const context& ctx);
// The 400 for query keys outside `known`, when the application refuses them.
void check_query_keys(context& ctx, std::span<const std::string_view> known);
// The 422 for a parameter (route_doc::parameters[index]) whose value, as JSON, breaks its
// declared constraints. Compiled per nlohmann ABI (json_codec.ipp).
void check_parameter(context& ctx, std::size_t index, const nlohmann::json& value);

template <input_source Source, class T, class M>
struct input_binding {
  static constexpr input_source source = Source;
  std::string_view name;  // empty for the body
  M T::*member;
  std::string_view description{};
  std::string_view constraint_patch{};
  bool defaulted = false;

  // The parameter's description in the document.
  constexpr input_binding describe(std::string_view text) const {
    input_binding b = *this;
    b.description = text;
    return b;
  }
  // A JSON merge patch onto the parameter's schema: documented and enforced.
  constexpr input_binding constraints(std::string_view json_merge_patch) const {
    input_binding b = *this;
    b.constraint_patch = json_merge_patch;
    return b;
  }
  // Absent, the member keeps the value the input type's default constructor gives it.
  constexpr input_binding or_default() const {
    input_binding b = *this;
    b.defaulted = true;
    return b;
  }
};

template <class... Bindings>
struct input_list {
  std::tuple<Bindings...> bindings;
};

template <class M>
struct value_type_of {
  using type = typename M::value_type;
};
// The type of one value of a member: M itself, or what its optional or vector holds.
template <class M>
using input_element = typename std::conditional_t<is_optional<M>::value || is_vector<M>::value,
                                                  value_type_of<M>, std::type_identity<M>>::type;

// `text` converted to V; a 400 naming the input when it does not convert.
template <class V>
void parse_input(input_source source, std::string_view name, std::string_view text, V& out) {
  if constexpr (serialized_enum<V>) {
    const auto& values = enum_values<V>();
    for (const auto& v : values)
      if (v.is_string() && v.template get_ref<const std::string&>() == text) {
        v.get_to(out);
        return;
      }
    std::string expected = "one of";
    for (const auto& v : values) expected += (&v == &values.front() ? " " : ", ") + v.dump();
    throw_bad_value(input_where(input_source_name(source)), name, text, expected);
  } else {
    if (parse_text(text, out)) return;
    if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) {
      bool negative_zero = false;
      check_integer_range(source, name, text, std::to_string(std::numeric_limits<V>::min()),
                          std::to_string(std::numeric_limits<V>::max()), negative_zero);
      if (negative_zero) {
        out = 0;
        return;
      }
    }
    throw_bad_value(input_where(input_source_name(source)), name, text, expected_name<V>());
  }
}

// The JSON Schema text of one parameter value of type V.
template <class V>
std::string parameter_value_schema() {
  if constexpr (serialized_enum<V>)
    return dump_ordered(enum_schema<V>());
  else
    return scalar_schema<V>();
}

// Each value of `name` in order, from the query or the form.
template <input_source Source, class Visit>
void for_each_value(context& ctx, std::span<const form_field> form, std::string_view name,
                    Visit&& visit) {
  if constexpr (Source == input_source::form) {
    for (const form_field& f : form)
      if (f.name == name) visit(std::string_view(f.value));
  } else {
    for (const query_param& p : ctx.query())
      if (p.name == name) visit(p.value);
  }
}

// The first value of input `name`: for a form field, from `form`.
template <input_source Source>
std::optional<std::string_view> first_value(context& ctx, std::span<const form_field> form,
                                            std::string_view name) {
  if constexpr (Source == input_source::form) {
    for (const form_field& f : form)
      if (f.name == name) return f.value;
    return std::nullopt;
  } else {
    return input_text(ctx, Source, name);
  }
}

// Reads one binding into `into`; `index` is its place among the route's parameters; `form`
// the request's form fields, when the input type binds any.
template <input_source Source, class T, class M>
void read_binding(context& ctx, const input_binding<Source, T, M>& b, std::size_t index,
                  std::span<const form_field> form, T& into) {
  M& out = into.*(b.member);
  if constexpr (Source == input_source::body) {
    out = read_json<M>(ctx);
    return;
  } else {
    if constexpr (is_vector<M>::value) {
      out.clear();
      for_each_value<Source>(ctx, form, b.name, [&](std::string_view text) {
        typename M::value_type element{};
        parse_input(Source, b.name, text, element);
        out.push_back(std::move(element));
      });
      if (out.empty()) return;
    } else {
      std::optional<std::string_view> text = first_value<Source>(ctx, form, b.name);
      if (!text) {
        if constexpr (is_optional<M>::value) {
          out.reset();
        } else if (!b.defaulted) {
          throw_missing_input(Source, b.name);
        }
        return;
      }
      input_element<M> value{};
      parse_input(Source, b.name, *text, value);
      out = std::move(value);
    }
    if (!b.constraint_patch.empty()) check_parameter(ctx, index, write_value<nlohmann::json>(out));
  }
}

// The input type T read from the request: its parameters in declaration order, then its body.
template <declares_inputs T>
T read_inputs(context& ctx) {
  T in{};
  std::apply(
      [&](const auto&... b) {
        constexpr bool binds_form =
            ((std::remove_cvref_t<decltype(b)>::source == input_source::form) || ... || false);
        static_assert(!binds_form ||
                          ((std::remove_cvref_t<decltype(b)>::source != input_source::body) &&
                           ... && true),
                      "an input type binds its body with from::body or from::form, not both");
        std::vector<form_field> form;
        if constexpr (binds_form) form = buffered_form_fields(ctx);
        std::array<std::string_view, sizeof...(b)> known{};
        std::size_t count = 0;
        ((b.source == input_source::query ? void(known[count++] = b.name) : void()), ...);
        check_query_keys(ctx, std::span<const std::string_view>(known.data(), count));
        std::size_t index = 0;
        auto parameter = [&](const auto& binding) {
          if constexpr (std::remove_cvref_t<decltype(binding)>::source != input_source::body)
            read_binding(ctx, binding, index++, form, in);
        };
        auto body = [&](const auto& binding) {
          if constexpr (std::remove_cvref_t<decltype(binding)>::source == input_source::body)
            read_binding(ctx, binding, 0, form, in);
        };
        (parameter(b), ...);
        (body(b), ...);
      },
      T::inputs.bindings);
  hook::run_validate(in);
  return in;
}

// The route's parameters and body, for the document and the contract (schema.hpp's
// describe_typed calls it).
template <declares_inputs T>
void describe_inputs(route_doc& doc, std::vector<parameter_doc>& parameters) {
  static const T defaults{};
  auto one = [&](const auto& binding) {
    using B = std::remove_cvref_t<decltype(binding)>;
    using M = std::remove_cvref_t<decltype(defaults.*(binding.member))>;
    if constexpr (B::source == input_source::body) {
      doc.request_schema = &schema_text<M>;
      doc.request_is_document = is_json_document_v<M>;
    } else {
      parameter_doc p;
      p.in = std::string(input_source_name(B::source));
      p.name = std::string(binding.name);
      p.schema = parameter_value_schema<input_element<M>>();
      p.description = std::string(binding.description);
      p.constraints = std::string(binding.constraint_patch);
      p.repeated = is_vector<M>::value;
      p.required = B::source == input_source::path ||
                   !(binding.defaulted || is_optional<M>::value || is_vector<M>::value);
      if (binding.defaulted)
        p.default_value = write_value<nlohmann::json>(defaults.*(binding.member)).dump();
      if (B::source == input_source::header &&
          waypoint::detail::iequals(binding.name, "If-None-Match"))
        doc.conditional = true;
      parameters.push_back(std::move(p));
    }
  };
  std::apply([&](const auto&... b) { (one(b), ...); }, T::inputs.bindings);
}

}  // namespace detail

// The bindings of an input type (its static constexpr member `inputs`).
template <class... Bindings>
constexpr detail::input_list<Bindings...> inputs(Bindings... bindings) {
  return {{bindings...}};
}

// Where each member of an input type comes from.
namespace from {
template <class T, class M>
constexpr detail::input_binding<input_source::path, T, M> path(std::string_view wildcard, M T::*member) {
  static_assert(!detail::is_optional<M>::value && !detail::is_vector<M>::value,
                "a path wildcard always has one value");
  return {wildcard, member};
}
template <class T, class M>
constexpr detail::input_binding<input_source::query, T, M> query(std::string_view key, M T::*member) {
  return {key, member};
}
template <class T, class M>
constexpr detail::input_binding<input_source::header, T, M> header(std::string_view field, M T::*member) {
  static_assert(!detail::is_vector<M>::value, "a header binds its first field's value");
  return {field, member};
}
template <class T, class M>
constexpr detail::input_binding<input_source::cookie, T, M> cookie(std::string_view name, M T::*member) {
  static_assert(!detail::is_vector<M>::value, "a cookie binds one value");
  return {name, member};
}
template <class T, class M>
constexpr detail::input_binding<input_source::body, T, M> body(M T::*member) {
  return {{}, member};
}
template <class T, class M>
constexpr detail::input_binding<input_source::form, T, M> form(std::string_view field, M T::*member) {
  return {field, member};
}
}  // namespace from

}  // namespace waypoint::app
