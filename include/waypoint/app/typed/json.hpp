// Typed JSON routes and the decoding rules behind them. Include this header to register
// post<In, Out>, put, patch, get<Out> and del<Out> routes; conversions are nlohmann/json's
// to_json/from_json, found by argument-dependent lookup.
//
//   struct order_request { std::string sku; std::int64_t quantity = 0; };
//   WAYPOINT_JSON_OBJECT(order_request, sku, quantity)   // to_json/from_json with pointers
//   std::optional<std::string> validate(const order_request& o) {   // optional, by ADL
//     if (o.quantity < 1) return "quantity must be at least 1";
//     return std::nullopt;
//   }
//   app.post<order_request, order>("/orders", [](context& ctx, order_request in) {
//     return place(in);                                   // 201 application/json
//   });
//
// Answers are JSON, or CBOR (RFC 8949) when the request's Accept ranks application/cbor
// above application/json, with Vary: Accept; problem documents are always
// application/problem+json. With typed_route_options::cose_keys, a body may also be
// application/cose (waypoint/app/security/cose.hpp): its protection is checked before anything
// reads the CBOR inside, and the answer to it is protected with the keyring's current key, as is
// the answer to a request whose Accept ranks application/cose first.
//
// A request body goes through, in order (each failure is an application/problem+json
// document, thrown as an http_error so that middleware can observe it):
//   413  longer than typed_route_options::json_body_limit
//   415  Content-Type not application/json or application/<anything>+json, nor CBOR
//        (application/cbor, application/<anything>+cbor, RFC 8949), which is read into the
//        same document and then goes through the same steps, nor application/cose; 400
//        when the Content-Type does not parse as a media type (a parameter named twice,
//        one without a value: the detail says which)
//   503  application/cose, and the application holds no COSE keys
//   401  application/cose whose key id names no key, or whose protection does not verify
//        (with WWW-Authenticate: COSE); 400 when it is not a COSE message
//   400  not readable as JSON: a syntax error, invalid UTF-8, a number no double can hold
//        (1e400), nesting deeper than max_json_depth; "detail" names the byte position
//        ("malformed JSON at byte N: ...", N counting from 1 as nlohmann/json does)
//   400  not well-formed, strict CBOR: "malformed CBOR at byte N: <rule>", N the offset of
//        the item at fault counting from 0 (as a hex dump shows it), the rule in words
//        ("duplicate map key \"a\"", "integer not in its shortest form", "tag 1 (no JSON
//        value is tagged)"); docs/framework.md, "Deterministic CBOR", lists them
//   422  a member missing or of the wrong type; "pointer" names it (RFC 6901), and
//        "keyword" the keyword of the type's schema it broke ("required", "type",
//        "additionalProperties", "enum", "minimum"...), as for the contract's 422s
//   422  the validate() hook refused the value: its message, and a pointer (and keyword)
//        if it threw validation_error with one
// json_field() (used by WAYPOINT_JSON_OBJECT) reports exact pointers for nested members,
// and is strict where nlohmann/json is lenient, at every depth (vectors, std::array, sets,
// maps, optionals): an integer refuses 1.5 and values out of its type's range (and takes 2.0,
// as JSON Schema's "integer" does); a
// std::array<T, N> takes exactly N elements; a set refuses duplicates; an enum serialized
// with NLOHMANN_JSON_SERIALIZE_ENUM refuses a value it does not list (nlohmann/json would
// silently take the first enumerator). Unknown members are ignored unless the type is a
// WAYPOINT_JSON_STRICT_OBJECT or typed_route_options::unknown_json_members says refuse.
// Output keeps the members in declaration order. A from_json written with plain j.at(...)
// works too; its errors carry a pointer when nlohmann/json is built with JSON_DIAGNOSTICS=1,
// else only the message.
#pragma once

#include "waypoint/app/typed/codec.hpp"
#include "waypoint/app/typed/inputs.hpp"
#include "waypoint/app/typed/schema.hpp"
