#!/usr/bin/python3
"""waypoint's COSE against an independent one: python3-cryptography's AEADs, HMAC and
signatures with COSE's structures built here with python3-cbor2 (RFC 9052 §4.4, §5.3, §6.3).
Python makes COSE_Encrypt0 (ChaCha20/Poly1305, A256GCM), COSE_Mac0 (HMAC 256/256) and
COSE_Sign1 (ES256, EdDSA) messages that cose_cli opens, and opens or verifies every message
cose_cli makes; a message changed by one byte must be refused (exit 41: 401).

    cose_interop.py CLI        (app_cose_interop_python; exits 77 without the modules)
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from missing_tool import exit_missing  # noqa: E402

try:
    import cbor2
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, hmac, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    from cryptography.hazmat.primitives.asymmetric.utils import (
        decode_dss_signature, encode_dss_signature)
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
except ImportError as missing:
    exit_missing(f"cose interop: {missing} (scripts/install-deps installs "
                 "python3-cryptography and python3-cbor2)")

CLI = sys.argv[1]
AEADS = {"chacha20_poly1305": (24, ChaCha20Poly1305), "a256gcm": (3, AESGCM)}
HMAC_256, ES256, EDDSA = 5, -7, -8
PAYLOADS = [b"", b'{"qty":3}', b"\xa1\x61q\x03", os.urandom(1000)]
AADS = [b"", b"POST /orders"]

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAILED: {what}")


def cli(command, alg, kid, key, data, aad=b""):
    args = [CLI, command, alg, kid, key] + ([aad.hex()] if aad else [])
    run = subprocess.run(args, input=data, capture_output=True, timeout=30)
    return run.returncode, run.stdout, run.stderr.decode(errors="replace")


def protected(alg):
    return cbor2.dumps({1: alg})


def to_be_protected(context, protected_bytes, aad, payload):
    return cbor2.dumps([context, protected_bytes, aad, payload])


def unpack(message, tag, alg, kid):
    """The message's parts, after checking the layout cose.hpp promises."""
    item = cbor2.loads(message)
    assert isinstance(item, cbor2.CBORTag) and item.tag == tag, f"tag {item!r}"
    parts = item.value
    assert cbor2.loads(parts[0]) == {1: alg}, "protected header"
    assert parts[1][4] == kid.encode(), "kid"
    return parts


def flipped(message, at):
    changed = bytearray(message)
    changed[at] ^= 1
    return bytes(changed)


def check_refused(alg, kid, key, message, aad, what):
    rc, _, err = cli("open", alg, kid, key, message, aad)
    check(rc == 41 and "401" in err, f"{what}: expected 401, got exit {rc}: {err}")


def encrypt0(name, alg, aead, key_hex):
    key = bytes.fromhex(key_hex)
    for payload in PAYLOADS:
        for aad in AADS:
            what = f"{name}, {len(payload)}-byte payload, {len(aad)}-byte aad"
            # Python makes, waypoint opens (tagged and untagged).
            iv = os.urandom(12)
            p = protected(alg)
            ct = aead(key).encrypt(iv, payload, cbor2.dumps(["Encrypt0", p, aad]))
            body = [p, {4: b"py", 5: iv}, ct]
            for message in (cbor2.dumps(cbor2.CBORTag(16, body)), cbor2.dumps(body)):
                rc, out, err = cli("open", name, "py", key_hex, message, aad)
                check(rc == 0 and out == payload, f"{what}: open Python's message: {err}")
            check_refused(name, "py", key_hex, flipped(message, len(message) - 1), aad,
                          f"{what}: Python's message with its tag changed")
            # waypoint makes, Python opens.
            rc, message, err = cli("protect", name, "wp", key_hex, payload, aad)
            check(rc == 0, f"{what}: protect: {err}")
            p, u, ct = unpack(message, 16, alg, "wp")
            check(len(u[5]) == 12, f"{what}: IV of 12 bytes")
            opened = aead(key).decrypt(u[5], ct, cbor2.dumps(["Encrypt0", p, aad]))
            check(opened == payload, f"{what}: Python opens waypoint's message")


def mac0(key_hex):
    key = bytes.fromhex(key_hex)

    def tag_of(p, aad, payload):
        h = hmac.HMAC(key, hashes.SHA256())
        h.update(to_be_protected("MAC0", p, aad, payload))
        return h.finalize()

    for payload in PAYLOADS:
        for aad in AADS:
            what = f"HMAC 256/256, {len(payload)}-byte payload, {len(aad)}-byte aad"
            p = protected(HMAC_256)
            message = cbor2.dumps(cbor2.CBORTag(17, [p, {4: b"py"}, payload, tag_of(p, aad, payload)]))
            rc, out, err = cli("open", "hmac_256", "py", key_hex, message, aad)
            check(rc == 0 and out == payload, f"{what}: open Python's message: {err}")
            check_refused("hmac_256", "py", key_hex, flipped(message, len(message) - 5), aad,
                          f"{what}: Python's message with its tag changed")
            rc, message, err = cli("protect", "hmac_256", "wp", key_hex, payload, aad)
            check(rc == 0, f"{what}: protect: {err}")
            p, _, body, tag = unpack(message, 17, HMAC_256, "wp")
            check(body == payload and tag == tag_of(p, aad, payload), f"{what}: Python checks the tag")


def sign1(name, alg, private_key, private_pem, public_pem):
    public_key = private_key.public_key()

    def python_sign(data):
        if alg == EDDSA:
            return private_key.sign(data)
        r, s = decode_dss_signature(private_key.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def python_verify(signature, data):
        try:
            if alg == EDDSA:
                public_key.verify(signature, data)
            else:
                r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
                public_key.verify(encode_dss_signature(r, s), data, ec.ECDSA(hashes.SHA256()))
            return True
        except InvalidSignature:
            return False

    for payload in PAYLOADS:
        for aad in AADS:
            what = f"{name}, {len(payload)}-byte payload, {len(aad)}-byte aad"
            p = protected(alg)
            signature = python_sign(to_be_protected("Signature1", p, aad, payload))
            message = cbor2.dumps(cbor2.CBORTag(18, [p, {4: b"py"}, payload, signature]))
            # The public key verifies what Python signed.
            rc, out, err = cli("open", name, "py", public_pem, message, aad)
            check(rc == 0 and out == payload, f"{what}: verify Python's signature: {err}")
            check_refused(name, "py", public_pem, flipped(message, len(message) - 1), aad,
                          f"{what}: Python's signature changed")
            rc, message, err = cli("protect", name, "wp", private_pem, payload, aad)
            check(rc == 0, f"{what}: sign: {err}")
            p, _, body, signature = unpack(message, 18, alg, "wp")
            check(len(signature) == 64, f"{what}: a 64-byte signature")
            check(body == payload and python_verify(signature, to_be_protected("Signature1", p, aad, payload)),
                  f"{what}: Python verifies waypoint's signature")
            check(not python_verify(signature, to_be_protected("Signature1", p, aad + b"x", payload)),
                  f"{what}: and not with another aad")


def write_pems(directory, name, key):
    paths = []
    for suffix, data in (
        ("key", key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())),
        ("pub", key.public_key().public_bytes(serialization.Encoding.PEM,
                                              serialization.PublicFormat.SubjectPublicKeyInfo)),
    ):
        path = os.path.join(directory, f"{name}.{suffix}.pem")
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    return paths


def main():
    for name, (alg, aead) in AEADS.items():
        encrypt0(name, alg, aead, os.urandom(32).hex())
    mac0(os.urandom(40).hex())
    with tempfile.TemporaryDirectory() as directory:
        p256 = ec.generate_private_key(ec.SECP256R1())
        sign1("es256", ES256, p256, *write_pems(directory, "p256", p256))
        edwards = ed25519.Ed25519PrivateKey.generate()
        sign1("eddsa", EDDSA, edwards, *write_pems(directory, "ed25519", edwards))
    print(f"cose interop (python3-cryptography, cbor2): {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
