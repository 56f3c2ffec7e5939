#!/usr/bin/python3
"""The schema validator (src/app/typed/schema_validator.hpp) against Debian's python3-jsonschema.

Generates schema/document pairs with a fixed seed: for each schema, documents meant to satisfy
it, then mutations that each break one keyword (at the top or inside a nested value). Every
pair goes through schema_validator_cli (argv[1]) and through jsonschema's
Draft202012Validator; the test fails listing the first disagreements. The oracle is
jsonschema, so a generated document need not be what it was meant to be: both verdicts are
printed in the summary (how many valid, how many invalid) to show both sides were exercised.

The generator and mutator, and what they leave out (formats, \\w on non-ASCII text, huge
integers: where the two implementations differ on purpose), are in
tests/support/json_schema_documents.py.
Run by ctest with /usr/bin/python3.
"""
import json
import os
import random
import subprocess
import sys

from jsonschema import Draft202012Validator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from json_schema_documents import FLOAT_EDGES, INT_EDGES, instance, mutations, schema  # noqa: E402

SEED = 27
SCHEMAS = 600  # pairs: about 10 per schema


def main():
    cli = sys.argv[1]
    rng = random.Random(SEED)
    pairs = []
    for _ in range(SCHEMAS):
        defs = {}
        s = schema(rng, defs)
        if defs:
            s = {"$defs": defs, "allOf": [s]} if not isinstance(s, dict) else {"$defs": defs, **s}
        docs = [instance(s, rng, {}) for _ in range(3)]
        for d in docs[:1]:
            docs.extend(mutations(s, d, rng, {}))
        for d in docs:
            pairs.append({"schema": s, "document": d})
    # The edges every run checks, whatever the generator draws.
    for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        for v in INT_EDGES + FLOAT_EDGES:
            for d in INT_EDGES + FLOAT_EDGES:
                if rng.random() < 0.15:
                    pairs.append({"schema": {bound: v}, "document": d})
    lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs)
    result = subprocess.run([cli], input=lines.encode(), capture_output=True, check=True)
    verdicts = result.stdout.decode().splitlines()
    if len(verdicts) != len(pairs):
        print(f"the CLI answered {len(verdicts)} lines for {len(pairs)} pairs")
        return 1
    disagreements = []
    python_valid = 0
    for line, verdict in zip(lines.splitlines(), verdicts):
        pair = json.loads(line)  # what the CLI read, so both see the same numbers
        expected = Draft202012Validator(pair["schema"]).is_valid(pair["document"])
        python_valid += expected
        ours = verdict == "valid"
        if verdict.startswith("refused") or verdict.startswith("inconsistent") or ours != expected:
            disagreements.append((line, verdict, expected))
    print(f"{len(pairs)} pairs: python3-jsonschema says {python_valid} valid, "
          f"{len(pairs) - python_valid} invalid; {len(pairs) - len(disagreements)} agree, "
          f"{len(disagreements)} disagree")
    broken = {}
    for verdict in verdicts:
        if verdict.startswith("invalid"):
            keyword = verdict.split()[1]
            broken[keyword] = broken.get(keyword, 0) + 1
    print("keywords our violations name: " + ", ".join(f"{k} {n}" for k, n in sorted(broken.items())))
    for line, verdict, expected in disagreements[:20]:
        print(f"  jsonschema: {'valid' if expected else 'invalid'}; ours: {verdict}\n    {line}")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
