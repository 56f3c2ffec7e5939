#!/usr/bin/python3
"""The typed routes' CBOR (src/app/typed/cbor_json.ipp) against Debian's python3-cbor2.

cbor_cli (argv[1]) runs waypoint's writer and strict reader on lines. With a fixed seed, this
driver generates a few thousand JSON documents (nested objects and arrays, keys of every
length class and script, integers at every head size and the +-2^63 edges, floats exact in
half, single or only double precision) and checks three things:

  write   waypoint's deterministic bytes == cbor2's canonical encoding (RFC 8949 §4.2.1: for
          text keys cbor2's length-first order and the bytewise order are the same order);
  read    cbor2's encodings of the documents, canonical and not (keys in insertion order, every
          float as a double), read back by waypoint to the same document;
  refuse  mutations of those encodings (bytes flipped, cut, inserted; heads widened or made
          indefinite; tags, duplicate and non-text keys, undefined, NaN, byte strings spliced
          in): waypoint refuses exactly where an independent strict walker below (the rules
          of cbor.hpp and cbor_json.ipp, written again) refuses, at the same byte; never
          accepts what cbor2 refuses; and what it accepts, cbor2 reads as the same document.

cbor2's own encoder and decoder are used in their pure-Python forms: 5.4.6's C extension
writes some floats exact in half precision as singles (65504.0 as fa477fe000, not f97bff),
and the pure decoder reads a claimed length of 2^63 without trying to allocate it.
Exits 77 (ctest's skip) when cbor2 is not installed. Run by ctest with /usr/bin/python3.
"""
import collections
import json
import math
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from missing_tool import exit_missing  # noqa: E402

try:
    try:  # cbor2 >= 5.5 names the pure-Python modules with an underscore
        from cbor2 import _decoder as pure_decoder
        from cbor2 import _encoder as pure_encoder
    except ImportError:
        from cbor2 import decoder as pure_decoder
        from cbor2 import encoder as pure_encoder
except ImportError:
    exit_missing("python3-cbor2 is not installed (scripts/install-deps installs it)")

SEED = 35
DOCUMENTS = 3000
MUTATIONS_PER_DOCUMENT = 3
MAX_DEPTH = 256

INT_EDGES = [0, 1, 23, 24, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63,
             2**64 - 1, -1, -24, -25, -256, -257, -65536, -65537, -2**32, -2**32 - 1,
             -2**63 + 1, -2**63]
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 1.5, 1.1, 65504.0, 65505.0, 65520.0, 100000.0,
               5.960464477539063e-8, 6.103515625e-05, 6.097555160522461e-05, 2.0**-24 * 1.5,
               2.0**-25, 3.4028234663852886e+38, 3.4028235677973366e+38, 1.401298464324817e-45,
               1.1754943508222875e-38, 1e300, -1e300, 5e-324, 1.7976931348623157e+308,
               2.0**63, -2.0**63, 2.0**64, 0.1, 1e-7]


# --- generating documents -----------------------------------------------------------------

def random_int(rng):
    if rng.random() < 0.3:
        return rng.choice(INT_EDGES)
    bits = rng.choice([4, 8, 16, 32, 63, 64])
    value = rng.getrandbits(bits)
    if rng.random() < 0.5:
        value = -1 - min(value, 2**63 - 1)
    return value


def finite(value):
    return not (math.isnan(value) or math.isinf(value))


def random_float(rng):
    kind = rng.random()
    if kind < 0.2:
        return rng.choice(FLOAT_EDGES)
    while True:
        if kind < 0.45:  # exact in half precision
            value = struct.unpack(">e", rng.getrandbits(16).to_bytes(2, "big"))[0]
        elif kind < 0.7:  # exact in single precision
            value = struct.unpack(">f", rng.getrandbits(32).to_bytes(4, "big"))[0]
        elif kind < 0.85:
            value = struct.unpack(">d", rng.getrandbits(64).to_bytes(8, "big"))[0]
        else:
            value = rng.uniform(-1000, 1000) * 10.0**rng.randint(-10, 10)
        if finite(value):
            return value


SCRIPTS = [(0x20, 0x7e), (0xa0, 0x2ff), (0x370, 0x3ff), (0x4e00, 0x9fff), (0xe000, 0xfffd),
           (0x1f300, 0x1f6ff), (0x10000, 0x10ffff)]


def random_text(rng, length=None):
    if length is None:
        length = rng.choice([0, 1, 2, 5, 22, 23, 24, 25, 30]) if rng.random() < 0.9 else \
            rng.choice([255, 256, 300])
    low, high = rng.choice(SCRIPTS)
    if rng.random() < 0.5:
        low, high = SCRIPTS[0]
    return "".join(chr(rng.randint(low, high)) for _ in range(length))


def random_document(rng, depth=0):
    roll = rng.random()
    if depth < 4 and roll < 0.3:
        size = rng.choice([0, 1, 2, 3, 5, 8, 24]) if depth < 2 else rng.choice([0, 1, 2])
        key_lengths = [0, 1, 1, 2, 3, 8, 23, 24]
        return {random_text(rng, rng.choice(key_lengths)): random_document(rng, depth + 1)
                for _ in range(size)}
    if depth < 4 and roll < 0.45:
        size = rng.choice([0, 1, 2, 4, 24, 25]) if depth < 2 else rng.choice([0, 1, 2])
        return [random_document(rng, depth + 1) for _ in range(size)]
    roll = rng.random()
    if roll < 0.35:
        return random_int(rng)
    if roll < 0.7:
        return random_float(rng)
    if roll < 0.85:
        return random_text(rng, rng.randint(0, 30))
    return rng.choice([True, False, None])


def same(a, b):
    """Equal as documents, kinds of number included (1 is not 1.0, -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack(">d", a) == struct.pack(">d", b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


# --- the strict rules, written again -----------------------------------------------------

class Refused(Exception):
    def __init__(self, offset, rule):
        super().__init__(rule)
        self.offset = offset


def strict_read(data, items=None):
    """The document `data` holds under cbor_json.ipp's rules, or Refused(offset, rule).
    `items`, when given, collects (start, end, major) of every item, keys included."""
    pos = 0

    def head():
        nonlocal pos
        start = pos
        if pos >= len(data):
            raise Refused(start, "truncated: an item expected")
        initial = data[pos]
        pos += 1
        major, additional = initial >> 5, initial & 31
        if additional == 31:
            raise Refused(start, "indefinite length or break")
        if 28 <= additional <= 30:
            raise Refused(start, "reserved additional information")
        if major == 7 and additional in (20, 21, 22):
            return start, major, {20: False, 21: True, 22: None}[additional]
        if major == 7 and additional in (25, 26, 27):
            size = {25: 2, 26: 4, 27: 8}[additional]
            if len(data) - pos < size:
                raise Refused(start, "truncated head")
            value = struct.unpack(">" + {2: "e", 4: "f", 8: "d"}[size], data[pos:pos + size])[0]
            pos += size
            if not finite(value):
                raise Refused(start, "NaN or infinity")
            return start, major, value
        if major == 7:
            raise Refused(start, "undefined or a simple value")
        argument = additional
        if additional >= 24:
            size = 1 << (additional - 24)
            if len(data) - pos < size:
                raise Refused(start, "truncated head")
            argument = int.from_bytes(data[pos:pos + size], "big")
            pos += size
            if argument < (24 if size == 1 else 1 << (4 * size)):
                raise Refused(start, "not in its shortest form")
        return start, major, argument

    def string(start, major, length):
        nonlocal pos
        if length > len(data) - pos:
            raise Refused(start, "string longer than the bytes left")
        content = data[pos:pos + length]
        pos += length
        if major == 2:
            raise Refused(start, "byte string")
        try:
            return content.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(start, "text string not valid UTF-8")

    def item(depth):
        start, major, argument = head()
        value = value_of(start, major, argument, depth)
        if items is not None:
            items.append((start, pos, major))
        return value

    def value_of(start, major, argument, depth):
        nonlocal pos
        if major == 7:
            return argument
        if major == 0:
            return argument
        if major == 1:
            if argument > 2**63 - 1:
                raise Refused(start, "integer below -2^63")
            return -1 - argument
        if major in (2, 3):
            return string(start, major, argument)
        if major == 6:
            raise Refused(start, "tag")
        if argument > (len(data) - pos) // (2 if major == 5 else 1):
            raise Refused(start, "count beyond the bytes left")
        if depth + 1 > MAX_DEPTH:
            raise Refused(start, "nested too deep")
        if major == 4:
            return [item(depth + 1) for _ in range(argument)]
        document = {}
        for _ in range(argument):
            key_start, key_major, key_argument = head()
            if key_major != 3:
                raise Refused(key_start, "map key not a text string")
            key = string(key_start, key_major, key_argument)
            if items is not None:
                items.append((key_start, pos, 3))
            if key in document:
                raise Refused(key_start, "duplicate map key")
            document[key] = item(depth + 1)
        return document

    document = item(0)
    if pos != len(data):
        raise Refused(pos, "bytes after the item")
    return document


# --- mutations of a valid encoding --------------------------------------------------------

def head_bytes(major, argument):
    if argument < 24:
        return [major << 5 | argument]
    for additional, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if argument < 1 << (8 * size):
            return [major << 5 | additional] + list(argument.to_bytes(size, "big"))
    raise ValueError(argument)


def widened_head(major, argument, rng):
    """The same argument in a longer head than it needs (non-shortest)."""
    choices = [(24, 1), (25, 2), (26, 4), (27, 8)]
    shortest = len(head_bytes(major, argument)) - 1
    wider = [(a, s) for a, s in choices if s > shortest]
    additional, size = rng.choice(wider)
    return bytes([major << 5 | additional]) + argument.to_bytes(size, "big")


# Items spliced in place of another: each breaks one rule, or (-2^63, an empty text) none.
SPLICES = [bytes.fromhex(h) for h in (
    "f7", "f0", "f8ff", "f97e00", "f97c00", "faff800000", "40", "420102", "c100", "c060",
    "3b8000000000000000", "3b7fffffffffffffff", "9fff", "bfff", "7fff", "ff", "1c", "62c080",
    "63eda080", "64f4908080", "6180", "7b8000000000000000", "9b7fffffffffffffff", "60")]


def mutate(data, rng):
    items = []
    strict_read(data, items)
    items.sort()
    kind = rng.randrange(9)
    if kind == 0 and data:  # a byte flipped
        at = rng.randrange(len(data))
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]
    if kind == 1 and data:  # cut short
        return data[:rng.randrange(len(data))]
    if kind == 2:  # a byte inserted
        at = rng.randrange(len(data) + 1)
        return data[:at] + bytes([rng.randrange(256)]) + data[at:]
    if kind == 3:  # trailing bytes
        return data + bytes([rng.randrange(256)])
    start, end, major = rng.choice(items)
    if kind == 4 and major <= 5 and head_size(data[start]) < 8:  # a head widened
        _, head_major, argument = head_of(data, start)
        size = head_size(data[start])
        return data[:start] + widened_head(head_major, argument, rng) + data[start + 1 + size:]
    if kind == 5 and major in (2, 3, 4, 5):  # made indefinite
        return data[:start] + bytes([major << 5 | 31]) + data[start + 1 + head_size(data[start]):]
    if kind == 6:  # another item spliced in place of this one
        return data[:start] + rng.choice(SPLICES) + data[end:]
    if kind == 7:  # a tag before it
        return data[:start] + rng.choice([b"\xc1", b"\xd8\x20", b"\xd8\x01"]) + data[start:]
    maps = [(s, e) for s, e, m in items if m == 5 and data[s] & 31 != 0]
    if maps:  # a map's first pair repeated: a duplicate key, or its key made non-text
        s, _ = rng.choice(maps)
        _, _, pairs = head_of(data, s)
        first = s + 1 + head_size(data[s])
        key_end = next(e for st, e, _ in items if st == first)
        value_end = next(e for st, e, _ in items if st == key_end)
        if rng.random() < 0.5:
            return data[:s] + bytes(head_bytes(5, pairs + 1)) + data[first:value_end] + \
                data[first:]
        return data[:first] + b"\x01" + data[key_end:]
    return data + b"\x00"


def head_size(initial):
    additional = initial & 31
    return 1 << (additional - 24) if 24 <= additional <= 27 else 0


def head_of(data, start):
    major, additional = data[start] >> 5, data[start] & 31
    size = head_size(data[start])
    argument = int.from_bytes(data[start + 1:start + 1 + size], "big") if size else additional
    return start, major, argument


# --- the comparisons ----------------------------------------------------------------------

def run_cli(cli, mode, lines):
    result = subprocess.run([cli, mode], input="\n".join(lines) + "\n", capture_output=True,
                            text=True, check=True)
    out = result.stdout.split("\n")[:-1]
    if len(out) != len(lines):
        raise SystemExit(f"cbor_cli {mode}: {len(out)} lines for {len(lines)}")
    return out


def main():
    cli = sys.argv[1]
    rng = random.Random(SEED)
    documents = [random_document(rng) for _ in range(DOCUMENTS)]
    documents += INT_EDGES + FLOAT_EDGES
    failures = []

    # write: waypoint's bytes == cbor2's canonical bytes.
    written = run_cli(cli, "write", [json.dumps(d, ensure_ascii=False) for d in documents])
    for document, hex_bytes in zip(documents, written):
        expected = pure_encoder.dumps(document, canonical=True).hex()
        if hex_bytes != expected:
            failures.append(f"write {json.dumps(document)[:200]}: waypoint {hex_bytes[:200]}, "
                            f"cbor2 {expected[:200]}")

    # read: cbor2's encodings read back to the same document.
    encodings = []
    for document in documents:
        encodings.append((document, pure_encoder.dumps(document, canonical=True)))
        encodings.append((document, pure_encoder.dumps(document)))  # unsorted, floats as doubles
    verdicts = run_cli(cli, "read", [data.hex() for _, data in encodings])
    for (document, data), verdict in zip(encodings, verdicts):
        if not verdict.startswith("ok ") or not same(json.loads(verdict[3:]), document):
            failures.append(f"read {data.hex()[:200]}: {verdict[:200]}")

    # refuse: mutations judged by the strict walker, cbor2 and waypoint.
    mutated = []
    for _, data in encodings[::2]:
        for _ in range(MUTATIONS_PER_DOCUMENT):
            mutated.append(mutate(data, rng))
    verdicts = run_cli(cli, "read", [data.hex() for data in mutated])
    counts = {"accepted": 0, "refused": 0, "cbor2 refused": 0}
    rules = collections.Counter()  # what the refusals were, to show every rule was reached
    for data, verdict in zip(mutated, verdicts):
        try:
            walked = ("ok", strict_read(data))
        except Refused as e:
            walked = ("refused", e.offset, str(e))
            rules[str(e)] += 1
        except RecursionError:
            walked = ("refused", None, "deep")
        try:
            theirs = ("ok", pure_decoder.loads(data))
        except Exception as e:  # cbor2 raises several classes for bad input
            theirs = ("refused", type(e).__name__)
        counts["cbor2 refused"] += theirs[0] == "refused"
        if verdict.startswith("ok "):
            counts["accepted"] += 1
            ours = json.loads(verdict[3:])
            if walked[0] != "ok":
                failures.append(f"refuse {data.hex()[:200]}: waypoint accepts, the strict rules "
                                f"refuse at {walked[1]} ({walked[2]})")
            elif theirs[0] != "ok" or not same(ours, theirs[1]) or not same(ours, walked[1]):
                failures.append(f"refuse {data.hex()[:200]}: waypoint {verdict[:200]}, "
                                f"cbor2 {theirs!r:.200}")
        else:
            counts["refused"] += 1
            offset = int(verdict.split(" ")[1])
            if walked[0] != "refused" or walked[1] != offset:
                failures.append(f"refuse {data.hex()[:200]}: waypoint {verdict[:200]}, the strict "
                                f"rules {walked!r:.200}")

    print(f"{len(documents)} documents written, {len(encodings)} encodings read, "
          f"{len(mutated)} mutations: {counts['accepted']} accepted, {counts['refused']} refused "
          f"({counts['cbor2 refused']} refused by cbor2 too)")
    print("refused for: " + ", ".join(f"{rule} {n}" for rule, n in rules.most_common()))
    if failures:
        print(f"{len(failures)} disagreements; the first:")
        for line in failures[:20]:
            print("  " + line)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
