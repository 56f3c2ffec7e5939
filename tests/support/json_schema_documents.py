"""Documents for a JSON Schema, and documents that break it, for the differential tests that hold
waypoint to Debian's python3-jsonschema (Draft202012Validator):
tests/app/schema_validator_differential.py (random schemas through schema_validator_cli) and
tests/gateway/contract_differential.py (the gateway's typed routes, over HTTP).

- schema(rng, defs): a random schema of the keywords waypoint enforces;
- instance(s, rng, defs): a document meant to satisfy s (best effort: the oracle decides);
- mutations(s, doc, rng, defs, nested=2): documents that each break one keyword of s, at the
  top or in one nested value (up to `nested` of each nested value's).

defs maps a name to the schema a "$ref" names by its last segment ("#/$defs/d0",
"#/components/schemas/order"). Everything is drawn from rng, so a seed fixes the cases.

Left out, because the two implementations differ on purpose or Python's differs from ECMA-262:
- "format": jsonschema 4.10's FormatChecker checks "email" as `"@" in s`, "date" with Python
  3.11's date.fromisoformat (which takes "20240101" and "2024-W01-1"), "uuid" with uuid.UUID
  (braces and "urn:uuid:" prefixes pass when dashes sit at 8, 13, 18, 23), and skips
  "date-time" and "uri" without the rfc3339-validator and rfc3987 modules (not installed by
  python3-jsonschema). The suite's format files test ours instead. The random schemas hold
  no "format"; a given schema's formatted string is drawn from FORMAT_EXAMPLES, which every
  checker takes, and no mutation breaks a format alone. (The oracle is run without a
  FormatChecker, so it reads "format" as an annotation.)
- \\w, \\s, \\d on non-ASCII text: Python's are Unicode-aware, ECMA's (and ours) ASCII (\\s has its
  own Unicode list). Patterns here use explicit classes, and \\d only against ASCII text; a
  given schema whose pattern has such a class sees ASCII strings only.
- integers outside [-2^63, 2^64-1]: Python keeps them exact, nlohmann/json reads them as doubles.
- multipleOf above 2^53 on a float document: Python rounds the divisor to a double, ours is exact.
"""
import math
import re

INT_EDGES = [0, 1, -1, 2, 7, 100, 2**31 - 1, -2**31, 2**53, 2**53 + 1, 2**63 - 1, -2**63,
             2**63, 2**64 - 1]
FLOAT_EDGES = [0.0, 1.0, -1.0, 0.5, 2.5, 1e308, -1e308, 1e-300, 9.223372036854775807e18,
               1.8446744073709552e19, 100.0, 0.1]
STRINGS = ["", "a", "ab", "abc", "é", "😀", "a😀", "😀😀😀", "x y", "ABC", "zzzz", "123",
           "é😀é", "\u00e9\u0301", "tab\there"]
# Patterns both dialects read alike on the generated strings (see the module doc).
PATTERNS = ["^[a-z]+$", "^a*b?$", "ab|cd", "^(?:x|yz){2,3}$", "[0-9]{3}", "^.{2}$", "😀+",
            "^[^a-c]*$", "^\\d+$", "(a*)*b", "^$", "^[a-zé]{1,3}$", "c$", "^(a|b)+c?$"]
SCALARS = [None, True, False, 0, 1, 1.0, -1, 2.5, "a", "b", "", "😀", 2**63 - 1, 2**64 - 1]
# Strings every checker takes for the formats waypoint enforces. A string with a "format" is
# always drawn from these and never mutated for its format alone (see the module doc).
FORMAT_EXAMPLES = {
    "date-time": ["2024-02-29T12:00:00Z", "1999-12-31T23:59:59.25+01:00"],
    "date": ["2024-02-29", "1999-12-31"],
    "email": ["a@example.com", "first.last@sub.example.org"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000"],
    "uri": ["https://example.com/a?b=c#d", "urn:isbn:0451450523"],
}
# A pattern with a class whose meaning on non-ASCII text differs (see the module doc) sees
# ASCII strings only.
UNICODE_AWARE_CLASS = re.compile(r"\\[wWsSdDbB]")


def resolve(ref, defs):
    """The schema "$ref" names: defs[its last segment], unescaped as a JSON Pointer's."""
    return defs[ref.split("/")[-1].replace("~1", "/").replace("~0", "~")]


def ascii_only(s):
    return isinstance(s, dict) and bool(UNICODE_AWARE_CLASS.search(s.get("pattern", "")))


def number(rng):
    return rng.choice(INT_EDGES + FLOAT_EDGES)


def leaf_schema(rng):
    kind = rng.randrange(7)
    if kind == 0:
        s = {"type": rng.choice(["integer", "number"])}
        for k in rng.sample(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"], rng.randrange(3)):
            s[k] = number(rng)
        if rng.random() < 0.3:
            s["multipleOf"] = rng.choice([1, 2, 3, 7, 0.5, 0.25, 0.1, 1.5, 2**20])
        return s
    if kind == 1:
        s = {"type": "string"}
        if rng.random() < 0.5:
            s["minLength"] = rng.randrange(4)
        if rng.random() < 0.5:
            s["maxLength"] = rng.randrange(1, 5)
        if rng.random() < 0.5:
            s["pattern"] = rng.choice(PATTERNS)
        return s
    if kind == 2:
        return {"enum": rng.sample(SCALARS + [[1, 2], {"a": 1}], rng.randrange(1, 5))}
    if kind == 3:
        return {"const": rng.choice(SCALARS + [[1, 1.0], {"a": [1]}])}
    if kind == 4:
        types = rng.sample(["null", "boolean", "object", "array", "number", "string", "integer"], rng.randrange(1, 3))
        return {"type": types if len(types) > 1 else types[0]}
    if kind == 5:
        return rng.choice([True, False, {}])
    return {"type": "boolean"}


def schema(rng, defs, depth=0):
    """A schema; the definitions its $refs name are added to defs (the root's $defs)."""
    if depth >= 3 or rng.random() < 0.35:
        return leaf_schema(rng)
    kind = rng.randrange(6)
    if kind == 0:
        s = {"type": "array"}
        if rng.random() < 0.4:
            s["prefixItems"] = [schema(rng, defs, depth + 1) for _ in range(rng.randrange(1, 3))]
        if rng.random() < 0.8:
            s["items"] = schema(rng, defs, depth + 1)
        if rng.random() < 0.4:
            s["minItems"] = rng.randrange(3)
        if rng.random() < 0.4:
            s["maxItems"] = rng.randrange(1, 5)
        if rng.random() < 0.4:
            s["uniqueItems"] = True
        return s
    if kind == 1:
        names = rng.sample(["a", "b", "c~", "d/e", "é"], rng.randrange(1, 4))
        s = {"type": "object", "properties": {n: schema(rng, defs, depth + 1) for n in names}}
        if rng.random() < 0.6:
            s["required"] = rng.sample(names, rng.randrange(1, len(names) + 1))
        r = rng.random()
        if r < 0.3:
            s["additionalProperties"] = False
        elif r < 0.5:
            s["additionalProperties"] = schema(rng, defs, depth + 1)
        return s
    if kind == 2:
        word = rng.choice(["anyOf", "oneOf", "allOf"])
        return {word: [schema(rng, defs, depth + 1) for _ in range(rng.randrange(1, 4))]}
    if kind == 3:
        return {"not": schema(rng, defs, depth + 1)}
    name = f"d{len(defs)}"
    defs[name] = {}
    if kind == 4:
        defs[name] = schema(rng, defs, depth + 1)
        return {"$ref": f"#/$defs/{name}"}
    # A recursive tree through $defs.
    defs[name] = {"type": "object", "required": ["v"],
                  "properties": {"v": leaf_schema(rng),
                                 "kids": {"type": "array", "items": {"$ref": f"#/$defs/{name}"}}}}
    return {"$ref": f"#/$defs/{name}"}


def instance(s, rng, defs, depth=0):
    """A document meant to satisfy s (best effort: the oracle decides)."""
    if s is True or s == {}:
        return rng.choice(SCALARS)
    if s is False:
        return None
    defs = {**defs, **s.get("$defs", {})}
    if "$ref" in s:
        return instance(resolve(s["$ref"], defs), rng, defs, depth + 1) if depth < 6 else {"v": 0}
    if "const" in s:
        return s["const"]
    if "enum" in s:
        return rng.choice(s["enum"])
    for word in ("anyOf", "oneOf", "allOf"):
        if word in s:
            return instance(rng.choice(s[word]) if word != "allOf" else s[word][0], rng, defs, depth + 1)
    if "not" in s:
        return rng.choice(SCALARS)
    t = s.get("type")
    if isinstance(t, list):
        t = rng.choice(t)
    if t in ("integer", "number"):
        lo = max([s[k] for k in ("minimum", "exclusiveMinimum") if k in s], default=None)
        hi = min([s[k] for k in ("maximum", "exclusiveMaximum") if k in s], default=None)
        candidates = [v for v in INT_EDGES + (FLOAT_EDGES if t == "number" else [1.0, 100.0])
                      if (lo is None or v > lo or (v == lo and "minimum" in s))
                      and (hi is None or v < hi or (v == hi and "maximum" in s))]
        if "multipleOf" in s:
            candidates = [v for v in candidates if v % s["multipleOf"] == 0] or [0]
        return rng.choice(candidates or [0])
    if t == "string":
        if s.get("format") in FORMAT_EXAMPLES:
            return rng.choice(FORMAT_EXAMPLES[s["format"]])
        lo, hi = s.get("minLength", 0), s.get("maxLength", 10)
        pool = [x for x in STRINGS + ["aab", "xyz", "123", "ab", "abc", "😀😀", "acd"] if lo <= len(x) <= hi]
        if ascii_only(s):
            pool = [x for x in pool if x.isascii()]
        if "pattern" in s:  # strings that match, when there are any
            pool = [x for x in pool if re.search(s["pattern"], x)] or \
                [x for x in s.get("examples", []) if isinstance(x, str)] or pool
        return rng.choice(pool or ["a" * lo])
    if t == "boolean":
        return rng.random() < 0.5
    if t == "null":
        return None
    if t == "array" or "items" in s or "prefixItems" in s:
        n = rng.randrange(s.get("minItems", 0), max(s.get("minItems", 0), s.get("maxItems", 3)) + 1)
        items = []
        for k in range(n):
            sub = s["prefixItems"][k] if k < len(s.get("prefixItems", [])) else s.get("items", True)
            items.append(instance(sub, rng, defs, depth + 1))
        return items
    if t == "object" or "properties" in s:
        props = s.get("properties", {})
        doc = {}
        for name, sub in props.items():
            if name in s.get("required", []) or rng.random() < 0.5:
                doc[name] = instance(sub, rng, defs, depth + 1)
        if depth < 2 and "v" in props:
            doc["kids"] = [instance(s, rng, defs, depth + 1)] if rng.random() < 0.5 else []
        return doc
    return rng.choice(SCALARS)


def mutations(s, doc, rng, defs, nested=2):
    """Documents that break one keyword of s, at the top or in one nested value."""
    out = []
    if not isinstance(s, dict):
        return [rng.choice(SCALARS)]
    defs = {**defs, **s.get("$defs", {})}
    if "$ref" in s:
        return mutations(resolve(s["$ref"], defs), doc, rng, defs, nested)
    t = s.get("type")
    wrong = {"integer": "1", "number": "x", "string": 5, "array": {}, "object": [], "boolean": 0, "null": 0}
    if isinstance(t, str):
        out.append(wrong[t])
        if t == "integer":
            out.append(1.5)
    elif isinstance(t, list):  # a value of the first type the list leaves out
        samples = {"string": "s", "number": 2.5, "integer": 3, "object": {}, "array": [],
                   "null": None, "boolean": True}
        out.extend([v for k, v in samples.items()
                    if k not in t and not (k == "integer" and "number" in t)][:1])
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        for k, delta in (("minimum", -1), ("exclusiveMinimum", 0), ("maximum", 1), ("exclusiveMaximum", 0)):
            if k in s:
                v = s[k]
                m = v + delta if isinstance(v, int) else v + delta * max(1.0, abs(v) * 1e-15)
                if isinstance(m, int) and not -2**63 <= m < 2**64:  # the next double instead
                    m = math.nextafter(float(v), math.copysign(math.inf, delta))
                out.append(m)
        if "multipleOf" in s:
            out.append(doc + (1 if isinstance(s["multipleOf"], int) and s["multipleOf"] > 1 else 0.3))
    if isinstance(doc, str):
        unit = "x" if ascii_only(s) else "😀"  # a code point in 4 UTF-8 bytes, where it can
        if "minLength" in s and s["minLength"] > 0:
            out.append(unit * (s["minLength"] - 1))
        if "maxLength" in s:
            out.append(unit * (s["maxLength"] + 1))
        if "pattern" in s:
            out.append(doc + "!")
            out.append("!" + doc)
    if "enum" in s:
        out.append("not listed")
    if "const" in s:
        out.append([s["const"]])
    if isinstance(doc, list):
        if "maxItems" in s:
            out.append(doc + [1] * (s["maxItems"] + 1 - len(doc)))
        if "minItems" in s and s["minItems"] > 0:
            out.append(doc[: s["minItems"] - 1])
        if "uniqueItems" in s and doc:
            first = doc[0]
            out.append(doc + [float(first) if isinstance(first, int) and not isinstance(first, bool) and abs(first) < 2**53 else first])
        for k, item in enumerate(doc):
            sub = s["prefixItems"][k] if k < len(s.get("prefixItems", [])) else s.get("items", True)
            for m in mutations(sub, item, rng, defs, nested)[:nested]:
                out.append(doc[:k] + [m] + doc[k + 1:])
    if isinstance(doc, dict):
        for name in s.get("required", []):
            out.append({k: v for k, v in doc.items() if k != name})
        if "additionalProperties" in s:
            out.append({**doc, "zz": rng.choice(SCALARS)})
        for name, sub in s.get("properties", {}).items():
            if name in doc:
                for m in mutations(sub, doc[name], rng, defs, nested)[:nested]:
                    out.append({**doc, name: m})
    for word in ("anyOf", "oneOf", "allOf"):
        for sub in s.get(word, []):
            out.extend(mutations(sub, doc, rng, defs, nested)[:nested])
    if "not" in s:
        out.append(instance(s["not"], rng, defs))
    return out
