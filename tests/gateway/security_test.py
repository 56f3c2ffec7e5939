#!/usr/bin/python3
"""The gateway's sign-in routes (examples/security.hpp) through a real client's cookie jar,
python3-requests' Session: sign in, read, sign out; a wrong password and a tampered or
forged cookie are refused as if no cookie came; a burst of sign-ins past the rate limit gets
429 with a Retry-After that holds; a cross-site post is refused by the CSRF layer. Then two
gateways pointed at one redis-server (started here on a free loopback port, stopped by its
PID) share sessions and the sign-in limit. The printed curl lines are gateway_test.py's.

usage: security_test.py GATEWAY_BINARY      (run by ctest with Debian's /usr/bin/python3)
"""
import math
import os
import re
import sys
import time

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gateway_test  # noqa: E402
from gateway_test import CheckFailed, Gateway, expect  # noqa: E402
from local_services import RedisServer  # noqa: E402

# The sign-in limit examples/security.hpp sets: ten at once, then one a second.
BURST = 10
RATE_PER_S = 1.0
TIMEOUT_S = 5
COOKIE = "gateway-session"
PASSWORD = re.compile(r"-d password=([0-9a-f]+)\s")


def password_of(g):
    for line in g.curl_lines:
        m = PASSWORD.search(line)
        if m:
            return m.group(1)
    raise CheckFailed("the gateway printed no sign-in line with a password: %r" % g.curl_lines)


def sign_in(session, g, password=None):
    return session.post(g.base + "/v1/session", timeout=TIMEOUT_S,
                        data={"username": "ada", "password": password or password_of(g)})


def check_a_requests_session_signs_in_reads_and_signs_out(binary):
    g = Gateway(binary)
    try:
        s = requests.Session()
        wrong = sign_in(s, g, "not-the-password")
        expect(wrong.status_code == 401 and COOKIE not in s.cookies,
               "a wrong password: 401 and no cookie, got %d %r" % (wrong.status_code, s.cookies))
        first = sign_in(s, g)
        expect(first.status_code == 201 and COOKIE in s.cookies,
               "sign in: 201 and the cookie in the jar, got %d %r" % (first.status_code, s.cookies))
        before = s.cookies[COOKIE]
        read = s.get(g.base + "/v1/session", timeout=TIMEOUT_S)
        expect(read.status_code == 200 and read.json() == {"user": "ada"},
               "the jar's cookie reads the session: 200 {user: ada}, got %d %r"
               % (read.status_code, read.text))
        again = sign_in(s, g)
        expect(again.status_code == 201 and s.cookies[COOKIE] != before,
               "signing in again rotates the id (a fixed id is worth nothing after sign-in)")
        old = requests.get(g.base + "/v1/session", cookies={COOKIE: before}, timeout=TIMEOUT_S)
        expect(old.status_code == 401, "the id before rotation is forgotten: 401, got %d"
               % old.status_code)
        out = s.delete(g.base + "/v1/session", timeout=TIMEOUT_S)
        expect(out.status_code == 204 and COOKIE not in s.cookies,
               "sign out: 204 and the cookie deleted from the jar, got %d %r"
               % (out.status_code, s.cookies))
        gone = s.get(g.base + "/v1/session", timeout=TIMEOUT_S)
        expect(gone.status_code == 401, "after sign-out: 401, got %d" % gone.status_code)
    finally:
        g.stop()


def check_a_tampered_or_forged_cookie_is_treated_as_absent(binary):
    g = Gateway(binary)
    try:
        s = requests.Session()
        expect(sign_in(s, g).status_code == 201, "sign in")
        real = s.cookies[COOKIE]
        flipped = real[:-1] + ("A" if real[-1] != "A" else "B")
        for rule, value in [("one character changed", flipped),
                            ("a character added", real + "A"),
                            ("a prefix of the id", real[:20]),
                            ("not base64url", "%%%" + real[3:]),
                            ("empty", ""),
                            ("4 KiB of letters", "a" * 4000)]:
            r = requests.get(g.base + "/v1/session", cookies={COOKIE: value}, timeout=TIMEOUT_S)
            expect(r.status_code == 401, "a cookie with %s: 401 as without one, got %d %r"
                   % (rule, r.status_code, r.text[:200]))
        r = requests.get(g.base + "/v1/session", cookies={COOKIE: real}, timeout=TIMEOUT_S)
        expect(r.status_code == 200, "the real cookie still reads the session, got %d"
               % r.status_code)
    finally:
        g.stop()


def check_head_of_the_protected_routes_is_the_get_without_a_body(binary):
    g = Gateway(binary)
    try:
        token = requests.post(g.base + "/v1/auth/token", timeout=TIMEOUT_S,
                              data={"username": "ada", "password": password_of(g)}).json()
        bearer = {"Authorization": "Bearer " + token["access_token"]}
        s = requests.Session()
        expect(sign_in(s, g).status_code == 201, "sign in")
        cookie = {COOKIE: s.cookies[COOKIE]}
        for rule, path, headers, cookies, status in [
                ("a bearer token", "/v1/me", bearer, {}, 200),
                ("no bearer token", "/v1/me", {}, {}, 401),
                ("the session cookie", "/v1/session", {}, cookie, 200),
                ("no session cookie", "/v1/session", {}, {}, 401)]:
            get = requests.get(g.base + path, headers=headers, cookies=cookies, timeout=TIMEOUT_S)
            head = requests.head(g.base + path, headers=headers, cookies=cookies, timeout=TIMEOUT_S)
            expect(get.status_code == status and head.status_code == status and head.content == b""
                   and head.headers.get("Content-Length") == str(len(get.content))
                   and head.headers.get("WWW-Authenticate") == get.headers.get("WWW-Authenticate"),
                   "HEAD %s with %s: GET's %d, fields and length, no body; got GET %d %r, HEAD %d "
                   "%r %r" % (path, rule, status, get.status_code, dict(get.headers),
                              head.status_code, dict(head.headers), head.content[:80]))
    finally:
        g.stop()


def burst_until_refused(bases, tries):
    """Wrong-password sign-ins, round robin over `bases`, until one is 429: how many were
    let through (401), the 429, and the seconds the burst took."""
    started = time.monotonic()
    for i in range(tries):
        r = requests.post(bases[i % len(bases)] + "/v1/auth/token", timeout=TIMEOUT_S,
                          data={"username": "ada", "password": "guess-%d" % i})
        if r.status_code == 429:
            return i, r, time.monotonic() - started
        expect(r.status_code == 401, "a wrong password: 401, got %d %r" % (r.status_code, r.text))
    raise CheckFailed("%d sign-ins in a row and no 429" % tries)


def check_a_burst_past_the_sign_in_limit_gets_429_with_a_retry_after_that_holds(binary):
    g = Gateway(binary)
    try:
        allowed, refused, seconds = burst_until_refused([g.base], 3 * BURST)
        most = BURST + math.floor(seconds * RATE_PER_S) + 1
        expect(BURST <= allowed <= most, "the burst lets %d..%d through, got %d"
               % (BURST, most, allowed))
        retry = refused.headers.get("Retry-After", "")
        expect(retry.isdigit() and 1 <= int(retry) <= math.ceil(1 / RATE_PER_S),
               "429: Retry-After in whole seconds, at most the time one token takes, got %r"
               % retry)
        expect(refused.headers.get("RateLimit", "").startswith('"sign-in";r=0;') and
               refused.headers.get("Content-Type") == "application/problem+json",
               "429: RateLimit r=0 and a problem document, got %r" % dict(refused.headers))
        token = requests.post(g.base + "/v1/auth/token", timeout=TIMEOUT_S,
                              data={"username": "ada", "password": password_of(g)})
        expect(token.status_code == 429, "the right password is refused too while the bucket "
               "is empty, got %d" % token.status_code)
        time.sleep(int(retry))
        after = requests.post(g.base + "/v1/auth/token", timeout=TIMEOUT_S,
                              data={"username": "ada", "password": password_of(g)})
        expect(after.status_code == 201, "after Retry-After seconds the sign-in passes, got %d %r"
               % (after.status_code, after.text))
    finally:
        g.stop()


def check_a_cross_site_post_to_sign_in_is_403(binary):
    g = Gateway(binary)
    try:
        for rule, headers, status in [
                ("Sec-Fetch-Site: cross-site", {"Sec-Fetch-Site": "cross-site"}, 403),
                ("Sec-Fetch-Site: same-site (a sibling subdomain)", {"Sec-Fetch-Site": "same-site"}, 403),
                ("Origin of another site, no Fetch Metadata", {"Origin": "https://evil.example"}, 403),
                ("Sec-Fetch-Site: same-origin", {"Sec-Fetch-Site": "same-origin"}, 201),
                ("neither field (not a browser)", {}, 201)]:
            r = requests.post(g.base + "/v1/session", headers=headers, timeout=TIMEOUT_S,
                              data={"username": "ada", "password": password_of(g)})
            expect(r.status_code == status, "%s: %d, got %d %r" % (rule, status, r.status_code,
                                                                    r.text[:200]))
            if status == 403:
                expect(r.headers.get("Content-Type") == "application/problem+json" and
                       "Set-Cookie" not in r.headers,
                       "%s: a problem document and no session, got %r" % (rule, dict(r.headers)))
    finally:
        g.stop()


def check_two_gateways_share_sessions_and_the_sign_in_limit_through_redis(binary):
    redis = RedisServer()
    gateways = []
    try:
        address = "127.0.0.1:%d" % redis.port
        gateways = [Gateway(binary, "--redis", address), Gateway(binary, "--redis", address)]
        a, b = gateways
        s = requests.Session()
        expect(sign_in(s, a).status_code == 201, "sign in on the first gateway")
        read = s.get(b.base + "/v1/session", timeout=TIMEOUT_S)
        expect(read.status_code == 200 and read.json() == {"user": "ada"},
               "the second gateway reads the session the first made, got %d %r"
               % (read.status_code, read.text))
        expect(s.delete(b.base + "/v1/session", timeout=TIMEOUT_S).status_code == 204,
               "sign out on the second gateway")
        gone = s.get(a.base + "/v1/session", timeout=TIMEOUT_S)
        expect(gone.status_code == 401, "signed out on one, gone on the other: 401, got %d"
               % gone.status_code)

        allowed, refused, seconds = burst_until_refused([a.base, b.base], 4 * BURST)
        most = BURST + math.floor(seconds * RATE_PER_S) + 1
        expect(allowed <= most, "sign-ins alternating over two gateways share one bucket: at "
               "most %d let through (each on its own would let %d), got %d"
               % (most, 2 * BURST, allowed))
    finally:
        for g in gateways:
            g.stop()
        redis.stop()


CHECKS = [
    check_a_requests_session_signs_in_reads_and_signs_out,
    check_a_tampered_or_forged_cookie_is_treated_as_absent,
    check_head_of_the_protected_routes_is_the_get_without_a_body,
    check_a_burst_past_the_sign_in_limit_gets_429_with_a_retry_after_that_holds,
    check_a_cross_site_post_to_sign_in_is_403,
    check_two_gateways_share_sessions_and_the_sign_in_limit_through_redis,
]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    sys.exit(gateway_test.run_checks("security_test", CHECKS, sys.argv[1]))
