#!/usr/bin/python3
"""waypoint's bearer_auth() against tokens an independent library makes: Debian's
python3-jwt (PyJWT) signs RS256, ES256, EdDSA and HS256 tokens with keys made by
python3-cryptography, and writes the JWK Set too (PyJWT's to_jwk). jwt_cli answers one
request per token, once with the keys as PEM and once from the JWK Set; every row's status
(200, 401, 403) and WWW-Authenticate error must be the one expected, both times.

The attacks PyJWT refuses to make (an HS256 token keyed with the RSA public key's PEM,
alg "none" under a real kid, changed bytes) are built here with hmac and base64.

    jwt_interop.py CLI        (app_jwt_interop_python; exits 77 without the modules)
"""
import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from missing_tool import exit_missing  # noqa: E402

try:
    import jwt
    from jwt.algorithms import ECAlgorithm, HMACAlgorithm, OKPAlgorithm, RSAAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
except ImportError as missing:
    exit_missing(f"jwt interop: {missing} (scripts/install-deps installs python3-jwt "
                 "and python3-cryptography)")

CLI = sys.argv[1]
NOW = int(time.time())
ISSUER = "https://issuer.example"
AUDIENCE = "orders"
SCOPE = "orders:read"
SECRET = os.urandom(32)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_pem(private):
    return private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


KEYS = {
    "rsa-1": ("RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048)),
    "ec-1": ("ES256", ec.generate_private_key(ec.SECP256R1())),
    "ed-1": ("EdDSA", ed25519.Ed25519PrivateKey.generate()),
}
OTHER_RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def claims(**changes):
    out = {"sub": "ada", "iss": ISSUER, "aud": AUDIENCE, "iat": NOW, "exp": NOW + 600,
           "scope": f"profile {SCOPE}"}
    out.update(changes)
    return {k: v for k, v in out.items() if v is not None}


def signed(kid, payload=None, key=None, alg=None):
    if kid == "hs-1":
        alg, key = "HS256", key or SECRET
    else:
        alg = alg or KEYS[kid][0]
        key = key or KEYS[kid][1]
    return jwt.encode(payload or claims(), key, algorithm=alg, headers={"kid": kid})


def hand_made(header, payload, mac_key=None):
    """A token built without PyJWT: header and payload as given, HMAC-SHA-256 over them with
    `mac_key`, or no signature at all."""
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(payload).encode())
    signature = hmac.new(mac_key, signing_input.encode(), hashlib.sha256).digest() if mac_key else b""
    return signing_input + "." + b64(signature)


def tampered(token):
    header, _, signature = token.split(".")
    return header + "." + b64(json.dumps(claims(sub="eve")).encode()) + "." + signature


ROWS = [
    # (rule, token, status, WWW-Authenticate error or None, body of a 200)
    ("AcceptsRS256", signed("rsa-1"), 200, None, "ada"),
    ("AcceptsES256", signed("ec-1"), 200, None, "ada"),
    ("AcceptsEdDSA", signed("ed-1"), 200, None, "ada"),
    ("AcceptsHS256", signed("hs-1"), 200, None, "ada"),
    ("AcceptsAudienceArray", signed("ec-1", claims(aud=["billing", AUDIENCE])), 200, None, "ada"),
    ("AcceptsScpArray", signed("rsa-1", claims(scope=None, scp=[SCOPE])), 200, None, "ada"),
    ("AcceptsExpiredWithinSkew", signed("ed-1", claims(exp=NOW - 30)), 200, None, "ada"),
    ("AcceptsNotBeforeWithinSkew", signed("rsa-1", claims(nbf=NOW + 30)), 200, None, "ada"),
    ("RefusesExpired", signed("rsa-1", claims(exp=NOW - 3600)), 401, "invalid_token", None),
    ("RefusesNotYetValid", signed("ec-1", claims(nbf=NOW + 3600)), 401, "invalid_token", None),
    ("RefusesWithoutExp", signed("hs-1", claims(exp=None)), 401, "invalid_token", None),
    ("RefusesDateAsString", signed("hs-1", claims(exp=str(NOW + 600))), 401, "invalid_token", None),
    ("RefusesWrongAudience", signed("rsa-1", claims(aud="billing")), 401, "invalid_token", None),
    ("RefusesWrongIssuer", signed("ed-1", claims(iss="https://evil.example")), 401,
     "invalid_token", None),
    ("RefusesAnotherKeyUnderTheSameKid", signed("rsa-1", key=OTHER_RSA), 401, "invalid_token", None),
    ("RefusesUnknownKid", jwt.encode(claims(), SECRET, algorithm="HS256", headers={"kid": "hs-2"}),
     401, "invalid_token", None),
    ("RefusesAlgNone", jwt.encode(claims(), None, algorithm="none", headers={"kid": "rsa-1"}),
     401, "invalid_token", None),
    ("RefusesHs256KeyedWithTheRsaPublicPem",
     hand_made({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, claims(),
               public_pem(KEYS["rsa-1"][1])), 401, "invalid_token", None),
    ("RefusesAnAlgOtherThanTheKeys", signed("ec-1", alg="ES384", key=ec.generate_private_key(
        ec.SECP384R1())), 401, "invalid_token", None),
    ("RefusesTamperedPayload", tampered(signed("ec-1")), 401, "invalid_token", None),
    ("RefusesPaddedBase64", signed("hs-1") + "=", 401, "invalid_token", None),
    ("RefusesBytesOutsideBase64url", "+" + signed("rsa-1")[1:], 401, "invalid_token",
     None),
    ("RefusesTwoParts", signed("ed-1").rsplit(".", 1)[0], 401, "invalid_token", None),
    ("RefusesCrit", jwt.encode(claims(), SECRET, algorithm="HS256",
                               headers={"kid": "hs-1", "crit": ["exp"]}), 401, "invalid_token", None),
    ("AsksForATokenWithoutOne", "-", 401, "", None),
    ("RefusesMissingScope", signed("ed-1", claims(scope="profile")), 403, "insufficient_scope",
     None),
]


def error_of(challenge):
    """The error parameter of a Bearer challenge; "" when it has none."""
    marker = 'error="'
    at = challenge.find(marker)
    return "" if at < 0 else challenge[at + len(marker):challenge.index('"', at + len(marker))]


def run(key_args):
    tokens = "".join(row[1] + "\n" for row in ROWS)
    args = [CLI, *key_args, "--issuer", ISSUER, "--audience", AUDIENCE, "--scope", SCOPE,
            "--now", str(NOW)]
    done = subprocess.run(args, input=tokens.encode(), capture_output=True, timeout=60)
    if done.returncode != 0:
        print(f"FAILED: jwt_cli exited {done.returncode}: {done.stderr.decode(errors='replace')}")
        return None
    return done.stdout.decode().splitlines()


def check(lines, how):
    failed = 0
    for (rule, _, status, error, body), line in zip(ROWS, lines):
        got_status, _, said = line.partition("\t")
        ok = int(got_status) == status and (
            said == body if status == 200 else
            said.startswith('Bearer realm="api"') and error_of(said) == error)
        if not ok:
            failed += 1
            print(f"FAILED ({how}) {rule}: expected {status} {error or body!r}, got {line!r}")
    if len(lines) != len(ROWS):
        failed += 1
        print(f"FAILED ({how}): {len(lines)} answers for {len(ROWS)} tokens")
    return failed


def signed_here_verify_there():
    """sign_jwt's tokens, verified by PyJWT with the same secret: each claims set comes back
    as it went in, and the header names the kid; with another secret PyJWT refuses them."""
    sets = [claims(), claims(scope=None, aud=None), {"sub": "zoë", "n": [1, 2.5, None]}]
    done = subprocess.run([CLI, "--sign", "hs-1", SECRET.hex()],
                          input="".join(json.dumps(c) + "\n" for c in sets).encode(),
                          capture_output=True, timeout=60)
    tokens = done.stdout.decode().split()
    if done.returncode != 0 or len(tokens) != len(sets):
        print(f"FAILED sign_jwt: exit {done.returncode}, {len(tokens)} tokens: {done.stderr!r}")
        return 1
    failed = 0
    for made, token in zip(sets, tokens):
        options = {"verify_aud": False, "verify_exp": False, "verify_iat": False}
        got = jwt.decode(token, SECRET, algorithms=["HS256"], options=options)
        kid = jwt.get_unverified_header(token).get("kid")
        try:
            jwt.decode(token, os.urandom(32), algorithms=["HS256"], options=options)
            forged = True
        except jwt.InvalidSignatureError:
            forged = False
        if got != made or kid != "hs-1" or forged:
            failed += 1
            print(f"FAILED sign_jwt: {made!r} came back {got!r}, kid {kid!r}, "
                  f"verified with another secret: {forged}")
    print(f"jwt interop: {len(sets) - failed} of {len(sets)} sign_jwt tokens verified by PyJWT")
    return failed


def main():
    signing_failed = signed_here_verify_there()
    with tempfile.TemporaryDirectory() as tmp:
        pem_args = []
        for kid, (alg, private) in KEYS.items():
            path = os.path.join(tmp, kid + ".pem")
            with open(path, "wb") as f:
                f.write(public_pem(private))
            pem_args += ["--pem", kid, alg, path]
        pem_args += ["--secret", "hs-1", SECRET.hex()]

        to_jwk = {"RS256": RSAAlgorithm, "ES256": ECAlgorithm, "EdDSA": OKPAlgorithm}
        jwks = {"keys": []}
        for kid, (alg, private) in KEYS.items():
            jwk = json.loads(to_jwk[alg].to_jwk(private.public_key()))
            jwks["keys"].append({**jwk, "kid": kid, "alg": alg, "use": "sig"})
        jwks["keys"].append({**json.loads(HMACAlgorithm.to_jwk(SECRET)), "kid": "hs-1"})
        jwks_path = os.path.join(tmp, "jwks.json")
        with open(jwks_path, "w") as f:
            json.dump(jwks, f)

        failed = 0
        for how, key_args in (("PEM", pem_args), ("JWKS", ["--jwks", jwks_path])):
            lines = run(key_args)
            failed += 1 if lines is None else check(lines, how)
    print(f"jwt interop: {2 * len(ROWS) - failed} of {2 * len(ROWS)} rows as expected")
    return 1 if failed or signing_failed else 0


if __name__ == "__main__":
    sys.exit(main())
