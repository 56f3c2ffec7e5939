#!/usr/bin/python3
"""The gateway's typed routes against Debian's python3-jsonschema (issue #27), over HTTP.

Starts the example gateway on loopback and reads its /openapi.json. For every operation the
document gives a JSON request body (whatever routes the gateway has: none is named here), it
generates documents from that schema, with "$ref"s resolved into the document's components,
then mutations that each break one keyword (tests/support/json_schema_documents.py, shared
with tests/app/schema_validator_differential.py, and leaving out what that module's doc
lists: formats are only ever valid, \\w-style classes see ASCII text, no huge integers).
Each document is sent to the route, with its path, query, header and cookie parameters
filled with values their schemas take, and the gateway's verdict is held to
Draft202012Validator's on the same schema (the operation's, with the components beside it,
as the server compiles it) and the same document:

  422                    refused: by the conversion, which runs first and enforces the C++
                         type's shape ("type", "required", integer ranges), by the contract
                         (the compiled schema), or by the route's validate hook; the
                         keyword it names is counted (every 422 of a conversion or a
                         contract names one since issue 44)
  any other answer       accepted: the handler ran (it may still say 404, 409 or 412)

except these, which are failures whatever jsonschema says: 400, 406, 413, 415 (the request
was not the well-formed one this test means to send), 405 (no route took it), 500 (the
handler failed, or its answer broke its own contract). A 2xx answer's body is also held to
the response schema the document gives for its status.

usage: contract_differential.py GATEWAY_BINARY
Run by ctest with /usr/bin/python3; a fixed seed, a few seconds.
"""
import http.client
import json
import os
import random
import re
import sys
import time
import urllib.parse

from jsonschema import Draft202012Validator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from gateway_test import Gateway  # noqa: E402
from json_schema_documents import instance, mutations  # noqa: E402

SEED = 27
# Documents generated per route, and how many of them are then mutated: a few hundred
# requests, under a second a route on a debug build.
DOCUMENTS = 100
MUTATED = 50
NESTED = 8                # mutations kept per nested value: every keyword of a member's schema
MAX_REQUESTS = 6000       # over all routes: the bound on the test's time as routes are added
REQUEST_TIMEOUT_S = 5
SHOWN = 20                # kinds of disagreement printed, with an example each
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
COOKIE_OCTETS = re.compile(r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*")
# The statuses that say the request never reached the question this test asks.
NOT_ASKED = {400: "the body or a parameter did not read", 405: "no route took the request",
             406: "Accept was refused", 413: "the body was too long",
             415: "the Content-Type was refused"}


class Route:
    """One typed operation: where it is and what its document says it reads and answers."""

    def __init__(self, path, method, operation, shared_parameters, components):
        self.path, self.method = path, method.upper()
        self.name = "%s %s" % (self.method, path)
        self.components = components
        content = operation["requestBody"]["content"]["application/json"]
        self.schema = content["schema"]
        self.validator = self._validator(self.schema)
        # Operation-level parameters replace path-level ones of the same name and place.
        merged = {(p["in"], p["name"]): p
                  for p in shared_parameters + operation.get("parameters", [])}
        self.parameters = list(merged.values())
        self.answers = {}
        for status, response in operation.get("responses", {}).items():
            schema = response.get("content", {}).get("application/json", {}).get("schema")
            if schema is not None and status.isdigit():
                self.answers[int(status)] = self._validator(schema)

    def _validator(self, schema):
        # The schema with the components beside it, where its "#/components/schemas/..." point:
        # the root the server compiles each route's schema against (src/app/typed/contract.cpp).
        root = {**schema, "components": {"schemas": self.components}} if isinstance(schema, dict) \
            else schema
        return Draft202012Validator(root)

    def target(self, rng):
        """The request's path with a query, and its headers, from the parameters' schemas."""
        path, query, headers, cookies = self.path, [], {}, []
        for p in self.parameters:
            if p["in"] != "path" and not p.get("required"):
                continue
            value = parameter_value(p.get("schema", {}), p["in"], rng, self.components)
            if p["in"] == "path":
                path = path.replace("{%s}" % p["name"], urllib.parse.quote(text_of(value), safe=""))
            elif p["in"] == "query":
                values = value if isinstance(value, list) else [value]
                query += [(p["name"], text_of(v)) for v in values]
            elif p["in"] == "header":
                headers[p["name"]] = ",".join(map(text_of, value)) if isinstance(value, list) \
                    else text_of(value)
            elif p["in"] == "cookie":
                cookies.append("%s=%s" % (p["name"], text_of(value)))
        if cookies:
            headers["Cookie"] = "; ".join(cookies)
        return path + ("?" + urllib.parse.urlencode(query) if query else ""), headers


def text_of(value):
    """A parameter's value as it is written in a URL or a header field."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return str(int(value))  # 1.0 is the integer 1, as a schema's "integer" reads it
    return value if isinstance(value, str) else json.dumps(value)


def parameter_value(schema, place, rng, components):
    """A value the parameter's schema takes and its place can carry as it is (a path
    segment: not empty, no '/'; a header field: printable ASCII; a cookie: RFC 6265's
    cookie-octets), by drawing until jsonschema agrees."""
    check = Draft202012Validator({**schema, "components": {"schemas": components}})
    drawn = None
    for _ in range(50):
        drawn = instance(schema, rng, components)
        texts = [text_of(v) for v in (drawn if isinstance(drawn, list) else [drawn])]
        fits = all(t and "/" not in t for t in texts) if place == "path" else \
            all(t.isascii() and t.isprintable() for t in texts) if place == "header" else \
            all(COOKIE_OCTETS.fullmatch(t) for t in texts) if place == "cookie" else True
        if drawn is not None and fits and check.is_valid(drawn):
            return drawn
    return drawn if drawn is not None else "1"


def typed_routes(document):
    """Every operation of the document with a JSON request body, in the document's order,
    and the names of the typed ones without (those that document a 2xx status: an untyped
    route answers "default")."""
    components = document.get("components", {}).get("schemas", {})
    routes, bodiless = [], []
    for path, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            if "application/json" in operation.get("requestBody", {}).get("content", {}):
                routes.append(Route(path, method, operation, item.get("parameters", []),
                                    components))
            elif any(s.isdigit() and 200 <= int(s) < 300 for s in operation.get("responses", {})):
                bodiless.append("%s %s" % (method.upper(), path))
    return routes, bodiless


class Client:
    """One keep-alive connection to the gateway, opened again when the server closes it."""

    def __init__(self, base):
        self.host, port = base[len("http://"):].rsplit(":", 1)
        self.port = int(port)
        self.conn = None

    def send(self, method, target, headers, body):
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port,
                                                       timeout=REQUEST_TIMEOUT_S)
            try:
                self.conn.request(method, target, body=body, headers=headers)
                res = self.conn.getresponse()
                data = res.read()
                if res.will_close:
                    self.close()
                return res.status, res.getheader("Content-Type") or "", data
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 2:
                    raise

    def close(self):
        if self.conn:
            self.conn.close()
            self.conn = None


def verdict(status, content_type, data):
    """("accepted" | "refused" | "failure", the keyword a 422 names, what the answer
    said)."""
    try:
        body = json.loads(data) if "json" in content_type else None
    except ValueError:
        body = None
    said = "%d %s" % (status, data[:300].decode("utf-8", "replace"))
    keyword = body.get("keyword") if isinstance(body, dict) else None
    if status == 422:
        return "refused", keyword, said
    if status in NOT_ASKED or status == 500:
        return "failure", None, "%s: %s" % (
            NOT_ASKED.get(status, "the handler failed, or its answer broke the contract"), said)
    return "accepted", None, said


def documents(route, rng):
    """The route's generated documents, then the mutations of the first MUTATED of them."""
    docs = [instance(route.schema, rng, route.components) for _ in range(DOCUMENTS)]
    for d in docs[:MUTATED]:
        docs.extend(mutations(route.schema, d, rng, route.components, NESTED))
    return docs


def check_route(route, client, rng, budget, report):
    """Sends the route's documents; appends (route, document, expected, ours, said) rows to
    report["disagree"] and report["failed"]. Returns how many requests it sent."""
    counts = {"valid": 0, "accepted": 0, "refused": 0, "failure": 0}
    keywords = {}
    sent = 0
    for doc in documents(route, rng)[:budget]:
        body = json.dumps(doc, ensure_ascii=False).encode()
        document = json.loads(body)  # what the server reads, so both judge the same numbers
        target, headers = route.target(rng)
        headers.update({"Content-Type": "application/json", "Accept": "application/json"})
        status, content_type, data = client.send(route.method, target, headers, body)
        sent += 1
        expected = route.validator.is_valid(document)
        ours, keyword, said = verdict(status, content_type, data)
        counts["valid"] += expected
        counts[ours] += 1
        if keyword:
            keywords[keyword] = keywords.get(keyword, 0) + 1
        row = (route.name, target, body.decode(), expected, ours, said)
        if ours == "failure":
            report["failed"].append(row)
        elif (ours == "accepted") != expected:
            report["disagree"].append(row)
        elif ours == "accepted" and 200 <= status < 300 and status in route.answers:
            answer = json.loads(data) if data else None
            errors = list(route.answers[status].iter_errors(answer))
            if errors:
                report["answers"].append(row[:3] + (status, errors[0].message, data[:300]))
    print("%s: %d documents; jsonschema: %d valid, %d invalid; ours: %d accepted, %d refused, "
          "%d failed" % (
              route.name, sent, counts["valid"], sent - counts["valid"], counts["accepted"],
              counts["refused"], counts["failure"]))
    print("  keywords the 422s name: " +
          (", ".join("%s %d" % kv for kv in sorted(keywords.items())) or "none"))
    return sent


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    started = time.monotonic()
    gateway = Gateway(sys.argv[1])
    try:
        client = Client(gateway.base)
        status, _, data = client.send("GET", "/openapi.json", {}, None)
        if status != 200:
            print("GET /openapi.json: 200, got %d %r" % (status, data[:200]))
            return 1
        routes, bodiless = typed_routes(json.loads(data))
        if not routes:
            print("the gateway's document lists no operation with a JSON request body")
            return 1
        if bodiless:
            print("typed routes without a request body, not exercised: " + ", ".join(bodiless))
        rng = random.Random(SEED)
        report = {"disagree": [], "failed": [], "answers": []}
        per_route = max(1, MAX_REQUESTS // len(routes))
        total = sum(check_route(r, client, rng, per_route, report) for r in routes)
        client.close()
    finally:
        code = gateway.stop()
    disagree, failed, answers = report["disagree"], report["failed"], report["answers"]
    print("%d typed routes, %d requests in %.1f s: %d disagree with jsonschema, %d not "
          "answered as this test asks, %d answers break their documented schema" % (
              len(routes), total, time.monotonic() - started, len(disagree), len(failed),
              len(answers)))
    # One line per kind: the same route, verdicts and answer (its values aside) several times.
    kinds = {}
    for row in disagree + failed:
        name, _, _, expected, ours, said = row
        kinds.setdefault((name, expected, ours, re.sub(r"-?\d[\d.e+]*", "N", said)), []).append(row)
    for rows in list(kinds.values())[:SHOWN]:
        name, target, body, expected, ours, said = rows[0]
        print("  %s, %d documents like (sent to %s)\n    jsonschema: %s; ours: %s (%s)\n"
              "    body: %s" % (name, len(rows), target, "valid" if expected else "invalid",
                                ours, said, body))
    for name, target, body, status, message, data in answers[:SHOWN]:
        print("  %s (sent to %s): the %d answer breaks its schema: %s\n    body: %s\n    "
              "answer: %r" % (name, target, status, message, body, data))
    if code != 0:
        print("the gateway did not stop with exit code 0 after SIGTERM: %r" % code)
    return 1 if disagree or failed or answers or code != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
