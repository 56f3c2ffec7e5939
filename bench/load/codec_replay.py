#!/usr/bin/python3
"""The mixed workload's write requests in another codec, for bench/load/mixed --codecs
(BENCHMARKS.md §19): every POST, PUT and PATCH line of bench/tables/mix1000.replay with its
JSON body re-encoded as CBOR (python3-cbor2, canonical) or as a COSE_Encrypt0 of that CBOR
(ChaCha20-Poly1305 from python3-cryptography, a fresh nonce per request), written as hex so
that replay.lua can hold binary bodies in a text table. The COSE key goes into a key file the
gateway reads with --cose-keys.

Independent of waypoint's own CBOR and COSE code on purpose: the bodies the server opens in
the benchmark are made by other implementations, as a client's would be.

usage: codec_replay.py REPLAY OUT_DIR   (writes writes-json.replay, writes-cbor.replay,
                                          writes-cose.replay and cose.keys in OUT_DIR)
"""
import json
import os
import sys

import cbor2
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

KEY_ID = b"bench-1"
KEY = bytes(range(32))  # a benchmark's key: fixed, so that runs are repeatable
CHACHA20_POLY1305 = 24  # IANA COSE algorithm
ENCRYPT0_TAG = 16
HEADER_ALG, HEADER_KID, HEADER_IV = 1, 4, 5


def encrypt0(payload):
    protected = cbor2.dumps({HEADER_ALG: CHACHA20_POLY1305})
    nonce = os.urandom(12)
    aad = cbor2.dumps(["Encrypt0", protected, b""])  # RFC 9052 §5.3's Enc_structure
    ciphertext = ChaCha20Poly1305(KEY).encrypt(nonce, payload, aad)
    message = [protected, {HEADER_KID: KEY_ID, HEADER_IV: nonce}, ciphertext]
    return cbor2.dumps(cbor2.CBORTag(ENCRYPT0_TAG, message), canonical=True)


def main(replay, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    outputs = {name: open(os.path.join(out_dir, "writes-%s.replay" % name), "w")
               for name in ("json", "cbor", "cose")}
    writes = 0
    for line in open(replay):
        if line.startswith("#"):
            continue
        method, target, route, body = line.rstrip("\n").split("\t")
        if method not in ("POST", "PUT", "PATCH"):
            continue
        cbor = cbor2.dumps(json.loads(body), canonical=True)
        prefix = "\t".join((method, target, route)) + "\t"
        outputs["json"].write(prefix + body.encode().hex() + "\n")
        outputs["cbor"].write(prefix + cbor.hex() + "\n")
        outputs["cose"].write(prefix + encrypt0(cbor).hex() + "\n")
        writes += 1
    for f in outputs.values():
        f.close()
    with open(os.path.join(out_dir, "cose.keys"), "w") as f:
        f.write("%s chacha20-poly1305 %s\n" % (KEY_ID.decode(), KEY.hex()))
    print("codec_replay: %d write requests in each of json, cbor, cose" % writes)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
