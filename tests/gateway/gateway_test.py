#!/usr/bin/python3
"""The example gateway as a user meets it: started on a free port, every curl line it
prints run with the real curl and held to what the line documents, then the proxy route
against real upstreams (another gateway, a closed port, a server that never answers, the
gateway itself), its TLS listener (a certificate made by openssl, the printed curl line, and
plaintext on the TLS port) and a stop by SIGTERM. Also replays part of bench/tables/mix1000.replay,
so the load test's request table stays one the gateway answers 2xx from the route it names.

usage: gateway_test.py GATEWAY_BINARY

Each check is named for the rule it holds the gateway to; a failure says what was expected
and what came back, and the script exits non-zero after running every check.
"""
import base64
import hashlib
import http.client
import json
import os
import queue
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from missing_tool import every_tool_required  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIX_TABLE = os.path.join(ROOT, "bench/tables/mix1000.routes")
MIX_REPLAY = os.path.join(ROOT, "bench/tables/mix1000.replay")

# How long the printed block may take to arrive, and how long stdout must then stay quiet
# for the block to count as complete (the gateway prints it in one flush).
START_TIMEOUT_S = 10
QUIET_AFTER_BLOCK_S = 0.3
CURL_TIMEOUT_S = 5
UPSTREAM_TIMEOUT_MS = 300
# 504 must come after the upstream timeout and well before a client would give up.
TIMEOUT_ANSWER_WITHIN_S = 2.0
# One replayed request in REPLAY_STRIDE: 512 of the 4,096, a second or so on a debug build.
REPLAY_STRIDE = 8

LISTENING = re.compile(r"^waypoint-gateway: \d+ routes on (http://\S+)$")


class CheckFailed(Exception):
    pass


class Skipped(Exception):
    """A check whose client is not installed; under WAYPOINT_REQUIRE_ALL (scripts/test, which
    installs it) a failure instead."""


def skip_unless_required(reason):
    """Skips the check for `reason`, a missing tool, or fails it under WAYPOINT_REQUIRE_ALL
    (tests/support/missing_tool.py)."""
    if every_tool_required():
        raise CheckFailed(reason + ", and WAYPOINT_REQUIRE_ALL is set")
    raise Skipped(reason)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


class Gateway:
    """A gateway process on a free port; `base` and `curl_lines` are what it printed.
    prism_test.py runs checks again with this name bound to a subclass that puts Prism in
    front of the gateway: there `base` is Prism's URL, so a check sends every request to
    `base` and starts its gateways through this name."""

    def __init__(self, binary, *args, quiet=True, drain_grace_ms=0):
        flags = ["--port", "0", "--drain-grace", str(drain_grace_ms)] + (["--quiet"] if quiet else [])
        self.process = subprocess.Popen([binary] + flags + list(args),
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.printed = self._printed_block()
        bases = [m.group(1) for m in map(LISTENING.match, self.printed) if m]
        if not bases:
            self.stop()
            raise CheckFailed("gateway printed no 'waypoint-gateway: N routes on http://...' "
                              "line; it printed %r, stderr %r" % (self.printed, self._stderr()))
        self.base = bases[0]
        self.curl_lines = [l.strip() for l in self.printed if l.strip().startswith("curl ")]

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)  # end of output: the gateway exited

    def _printed_block(self):
        printed = []
        timeout = START_TIMEOUT_S
        try:
            while True:
                line = self.lines.get(timeout=timeout)
                if line is None:
                    break
                printed.append(line)
                timeout = QUIET_AFTER_BLOCK_S
        except queue.Empty:
            pass
        return printed

    def _stderr(self):
        return self.process.stderr.read() if self.process.poll() is not None else ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """SIGTERM; returns the exit code, or None if it did not stop in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None


class Response:
    def __init__(self, status, headers, body, seconds, version="1.1"):
        self.status, self.headers, self.body, self.seconds = status, headers, body, seconds
        self.version = version  # the protocol's, as curl's status line names it: "1.1", "2"

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            raise CheckFailed("expected a JSON body, got %r" % self.body)

    def __repr__(self):
        return "%d %r %r" % (self.status, self.headers, self.body[:200])


def curl(argv):
    """Runs curl (argv as printed, -i included) and parses the last response it shows."""
    expect(argv and argv[0] == "curl", "not a curl command: %r" % argv)
    started = time.monotonic()
    done = subprocess.run(argv[:1] + ["-s", "-S", "--max-time", str(CURL_TIMEOUT_S)] + argv[1:],
                          capture_output=True, text=True)
    seconds = time.monotonic() - started
    expect(done.returncode == 0, "curl %s failed (exit %d): %s" % (
        " ".join(argv[1:]), done.returncode, done.stderr.strip()))
    head, _, body = done.stdout.replace("\r\n", "\n").partition("\n\n")
    while re.match(r"HTTP/\S+ 1\d\d ", head):  # an interim response (100 Continue)
        head, _, body = body.partition("\n\n")
    lines = head.split("\n")
    m = re.match(r"HTTP/(\S+) (\d{3})", lines[0])
    expect(m, "curl printed no status line: %r" % done.stdout[:200])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Response(int(m.group(2)), headers, body, seconds, m.group(1))


def get(url, *curl_args):
    return curl(["curl", "-i", url] + list(curl_args))


def sent_header(argv, name):
    for i, a in enumerate(argv[:-1]):
        if a == "-H" and argv[i + 1].lower().startswith(name.lower() + ":"):
            return argv[i + 1].split(":", 1)[1].strip()
    return None


# --- the printed curl lines -------------------------------------------------------------
# Each printed line's comment says what it shows; a line is held to the rule its comment
# names. A line without a comment is a route example and must be answered 2xx by the route
# it was drawn from. A comment no rule knows fails: the test must learn every line.

def unix_socket_line(argv, r):
    """The same route over the unix socket as over TCP: the line names the socket curl
    connects to, and the answer is the route's."""
    expect("--unix-socket" in argv or "--abstract-unix-socket" in argv,
           "a unix socket line gives curl the socket, got %r" % argv)
    expect(r.status == 200 and r.json().get("route") == "GET /v1/health",
           "over the unix socket: 200 from GET /v1/health, got %r" % r)


def route_example(argv, r):
    expect(200 <= r.status < 300, "a route example answers 2xx, got %r" % r)
    expect("route" in r.json(), "a route example answers {\"route\", \"values\"}, got %r" % r)


def no_route(argv, r):
    expect(r.status == 404, "no route: 404, got %r" % r)


def automatic_options(argv, r):
    expect(r.status == 204, "automatic OPTIONS: 204, got %r" % r)
    allow = r.header("Allow") or ""
    expect("GET" in allow and "OPTIONS" in allow,
           "automatic OPTIONS: an Allow listing GET and OPTIONS, got Allow %r" % allow)


def request_id_kept(argv, r):
    sent = sent_header(argv, "X-Request-Id")
    expect(sent, "the request id line sends an X-Request-Id: %r" % argv)
    expect(200 <= r.status < 300, "request id line: 2xx, got %r" % r)
    expect(r.header("X-Request-Id") == sent,
           "X-Request-Id echoed as sent (%r), got %r" % (sent, r.header("X-Request-Id")))


def http2_line(argv, r):
    expect("--http2-prior-knowledge" in argv, "the HTTP/2 line asks for h2c: %r" % argv)
    expect(r.version == "2" and r.status == 200 and r.json().get("route") == "GET /v1/health",
           "the h2c line answers over HTTP/2, 200 from GET /v1/health, got HTTP/%s %r"
           % (r.version, r))


def cors_preflight(argv, r):
    expect(r.status == 204, "CORS preflight: 204, got %r" % r)
    expect(r.header("Access-Control-Allow-Origin"),
           "CORS preflight: Access-Control-Allow-Origin, got headers %r" % r.headers)


def typed_order(argv, r):
    expect(r.status == 201, "typed JSON route: 201 Created, got %r" % r)
    body = r.json()
    expect(body.get("id") and r.header("Location") == "/v1/commerce/orders/" + body["id"],
           "typed JSON route: an id and Location /v1/commerce/orders/<id>, got %r" % r)


def org_order_placed(argv, r):
    expect(r.status == 201, "the order book's write: 201 Created, got %r" % r)
    body = r.json()
    expect(body.get("org") == "acme" and body.get("id", "").startswith("acme-"),
           "the order book's write: the order with its org and id, got %r" % r)
    expect((r.header("Location") or "").startswith("/v1/orgs/acme/orders?cursor="),
           "the order book's write: Location to the page that starts with it, got %r" % r)
    over = curl(argv[:-1] + [argv[-1].replace('"quantity":2', '"quantity":5000')])
    expect(over.status == 422 and over.json().get("pointer") == "/quantity" and
           over.json().get("keyword") == "maximum",
           "quantity 5000, as the line suggests: 422 at /quantity, keyword maximum, got %r" % over)


def org_orders_page(argv, r):
    expect(r.status == 200 and isinstance(r.json().get("orders"), list),
           "the order book's page: 200 with orders, got %r" % r)
    etag = r.header("ETag")
    expect(etag, "the order book's page carries an ETag, got %r" % r)
    again = curl(argv + ["-H", "If-None-Match: " + etag])
    # Compared weakly (RFC 9110 §8.8.3.2): the 304 carries the tag its 200 would have, made
    # weak by compression() when the client (Prism's, here) takes a coding the 200 did not.
    weak = lambda tag: (tag or "").removeprefix("W/")
    expect(again.status == 304 and again.body == "" and weak(again.header("ETag")) == weak(etag),
           "If-None-Match with the page's ETag: 304, no body, the same ETag, got %r" % again)


def compressed_json(argv, r):
    expect("--compressed" in argv, "the compressed JSON line asks with --compressed: %r" % argv)
    coding = r.header("Content-Encoding")
    expect(r.status == 200 and coding in ("br", "zstd", "gzip"),
           "compressed JSON: 200 with Content-Encoding br, zstd or gzip, got %r (%r)" % (r, coding))
    expect("Accept-Encoding" in (r.header("Vary") or ""),
           "compressed JSON: Vary: Accept-Encoding, got %r" % r.header("Vary"))
    plain = curl([a for a in argv if a != "--compressed"])
    expect(plain.header("Content-Encoding") is None and plain.body == r.body,
           "without --compressed: identity, and the body curl decoded is that body")
    for name in ("br", "zstd", "gzip"):
        one = curl(argv + ["-H", "Accept-Encoding: " + name])
        expect(one.header("Content-Encoding") == name and one.body == r.body,
               "Accept-Encoding: %s alone: that coding, decoded to the same body, got %r" % (
                   name, one.header("Content-Encoding")))
    r.json()


def proxy_line(argv, r):
    expect(r.status == 200, "the proxy line: 200 from the upstream, got %r" % r)


WWW = os.path.join(ROOT, "examples/www")


def static_file(argv, r):
    expect(r.status == 200, "static file: 200, got %r" % r)
    expect(r.header("Content-Type") == "text/html; charset=utf-8",
           "static file: Content-Type text/html, got %r" % r.header("Content-Type"))
    with open(os.path.join(WWW, "index.html")) as f:
        expect(r.body == f.read(), "static file: examples/www/index.html as it is, got %r" % r)
    with open(os.path.join(WWW, "index.html"), "rb") as f:
        tag = '"%s"' % hashlib.sha256(f.read()).hexdigest()[:32]
    expect(r.header("ETag") == tag and not r.header("Last-Modified"),
           "static file, compiled in: ETag %s (its SHA-256) and no Last-Modified, got headers %r"
           % (tag, r.headers))
    for name, value in PAGE_SECURITY_HEADERS.items():
        expect(r.header(name) == value, "static file: the security headers layer's %s: %s, got "
               "headers %r" % (name, value, r.headers))


# What security_headers() puts on the gateway's pages by default (security_headers.hpp).
PAGE_SECURITY_HEADERS = {
    "Content-Security-Policy":
        "default-src 'self'; base-uri 'self'; frame-ancestors 'none'; object-src 'none'",
    "X-Content-Type-Options": "nosniff",
    "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def without(argv, option):
    """argv without `option` and the value after it."""
    at = argv.index(option)
    return argv[:at] + argv[at + 2:]


def bearer_token_issued(argv, r):
    expect(r.status == 201, "issues a bearer token: 201, got %r" % r)
    answer = r.json()
    expect(answer.get("token_type") == "Bearer" and answer.get("expires_in") == 3600 and
           answer.get("access_token", "").count(".") == 2,
           "issues a bearer token: a JWT, Bearer, 3600 s, got %r" % answer)
    expect('"sign-in";q=10;w=10' == r.header("RateLimit-Policy") and r.header("RateLimit"),
           "issues a bearer token: rate limited, with RateLimit-Policy \"sign-in\";q=10;w=10 and "
           "RateLimit, got %r" % r.headers)
    me = get(argv[2].replace("/v1/auth/token", "/v1/me"),
             "-H", "Authorization: Bearer " + answer["access_token"])
    expect(me.status == 200 and me.json().get("subject") == "ada",
           "issues a bearer token: /v1/me takes it, got %r" % me)


def bearer_protected(argv, r):
    expect(r.status == 200 and r.json() == {"subject": "ada", "scopes": ["profile"]},
           "protected by a bearer token: 200 {subject ada, scopes [profile]}, got %r" % r)
    anonymous = curl(without(argv, "-H"))
    expect(anonymous.status == 401 and
           (anonymous.header("WWW-Authenticate") or "").startswith('Bearer realm="waypoint-gateway"'),
           "protected by a bearer token: 401 with a Bearer challenge without it, got %r" % anonymous)
    forged = curl(argv[:-1] + [argv[-1][:-4] + ("AAAA" if not argv[-1].endswith("AAAA") else "BBBB")])
    expect(forged.status == 401 and "invalid_token" in (forged.header("WWW-Authenticate") or ""),
           "protected by a bearer token: a changed signature is 401 invalid_token, got %r" % forged)


def session_signed_in(argv, r):
    expect(r.status == 201 and r.json() == {"user": "ada"},
           "sign in: 201 {user: ada}, got %r" % r)
    cookie = r.header("Set-Cookie") or ""
    expect(cookie.startswith("gateway-session=") and "HttpOnly" in cookie and
           "SameSite=Lax" in cookie, "sign in: an HttpOnly, SameSite=Lax session cookie, got %r"
           % cookie)
    jar = argv[argv.index("-c") + 1]
    with open(jar) as f:
        expect("gateway-session" in f.read(), "sign in: curl's jar %s holds the cookie" % jar)


def session_read(argv, r):
    expect(r.status == 200 and r.json() == {"user": "ada"},
           "the session: 200 {user: ada} with the jar's cookie, got %r" % r)
    anonymous = curl(without(argv, "-b"))
    expect(anonymous.status == 401, "the session: 401 without the cookie, got %r" % anonymous)
    os.unlink(argv[argv.index("-b") + 1])


def precompressed_file(argv, r):
    expect(r.status == 200, "precompressed file: 200, got %r" % r)
    expect(r.header("Content-Encoding") == "gzip" and r.header("Vary") == "Accept-Encoding",
           "precompressed file: Content-Encoding gzip and Vary, got headers %r" % r.headers)
    with open(os.path.join(WWW, "style.css")) as f:
        expect(r.body == f.read(), "precompressed file: curl decodes style.css.gz to "
               "style.css, got %r" % r)


def byte_range(argv, r):
    expect(r.status == 206, "byte range: 206, got %r" % r)
    size = os.path.getsize(os.path.join(WWW, "style.css"))
    expect(r.header("Content-Range") == "bytes 0-99/%d" % size and len(r.body) == 100,
           "byte range: Content-Range bytes 0-99/%d and 100 bytes, got %r" % (size, r))


def streamed_upload(argv, r):
    expect(r.status == 201, "streamed upload: 201, got %r" % r)
    path = argv[argv.index("-T") + 1]
    with open(path, "rb") as f:
        data = f.read()
    expect(r.json() == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()},
           "streamed upload: the file's length and SHA-256, got %r" % r)


def form_upload(argv, r):
    """Each -F field answered in order: its name and, for a file, its basename, with the
    length and SHA-256 hashlib computes from what curl sent."""
    expect(r.status == 200, "multipart form upload: 200, got %r" % r)
    expected = []
    for i, arg in enumerate(argv):
        if arg != "-F":
            continue
        name, _, value = argv[i + 1].partition("=")
        part = {"name": name}
        if value.startswith("@"):
            with open(value[1:], "rb") as f:
                data = f.read()
            part.update(filename=os.path.basename(value[1:]), content_type="text/html")
        else:
            data = value.encode()
        part.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
        expected.append(part)
    expect(len(expected) >= 3 and r.json() == {"parts": expected},
           "multipart form upload: each part's name, filename, bytes and SHA-256 %r, got %r"
           % (expected, r))


def server_sent_events(argv, r):
    expect(r.status == 200 and r.header("Content-Type") == "text/event-stream",
           "server-sent events: 200 text/event-stream, got %r" % r)
    ticks = re.findall(r"^id: (\d+)$", r.body, re.M)
    expect(ticks == ["1", "2", "3"], "server-sent events: ticks 1, 2, 3 in order, got %r" % r)


def mounted_service(argv, r):
    expect(r.status == 200 and re.fullmatch(r"hello from pid \d+\n", r.body),
           "the mounted service: 200 'hello from pid N' from the child's process, got %r" % r)
    expect(r.header("X-Request-Id"), "the mounted service's answer carries the gateway's "
           "X-Request-Id, got headers %r" % r.headers)


def mounted_event_stream(argv, r):
    # Not "chunked" here: prism_test runs these lines through a proxy that passes a whole
    # body on (child_service_test checks the stream arrives chunk by chunk).
    expect(r.status == 200 and r.header("Content-Type") == "text/event-stream",
           "the mounted service's events: 200 text/event-stream, got %r" % r)
    ticks = re.findall(r"^id: (\d+)$", r.body, re.M)
    expect(ticks == ["1", "2", "3"], "the mounted service's events: ticks 1, 2, 3, got %r" % r)


# --- the documentation page -------------------------------------------------------------
# Without Swagger UI's files in the build (no `scripts/install-deps openapi`), /docs/ loads
# the swagger-ui-dist version tests/openapi/package-lock.json locks from jsDelivr; each file
# with the SHA-384 of that version's real file as its integrity attribute.

SWAGGER_UI_LOCK = os.path.join(ROOT, "tests/openapi/package-lock.json")
SWAGGER_UI_NPM = os.path.join(ROOT, "build/node/node_modules/swagger-ui-dist")
SWAGGER_UI_PIN = os.path.join(ROOT, "src/app/documents/swagger_ui_pin.hpp")
CDN = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@"
PAGE_ASSET = re.compile(r'<(?:script src|link rel="stylesheet" href)="([^"]+)"([^>]*)>')


def swagger_ui_version():
    with open(SWAGGER_UI_LOCK) as f:
        return json.load(f)["packages"]["node_modules/swagger-ui-dist"]["version"]


def pinned_integrity(name):
    """The file's SRI hash: from the real file when npm installed the locked version, else as
    scripts/pin-swagger-ui wrote it (from the npm tarball)."""
    try:
        with open(os.path.join(SWAGGER_UI_NPM, "package.json")) as f:
            installed = json.load(f)["version"]
    except OSError:
        installed = None
    if installed == swagger_ui_version():
        with open(os.path.join(SWAGGER_UI_NPM, name), "rb") as f:
            return "sha384-" + base64.b64encode(hashlib.sha384(f.read()).digest()).decode()
    with open(SWAGGER_UI_PIN) as f:
        m = re.search(r'\{"%s", "(sha384-[^"]+)"\}' % re.escape(name), f.read())
    expect(m, "%s pins no hash for %s" % (SWAGGER_UI_PIN, name))
    return m.group(1)


def documentation_page(argv, r):
    expect(r.status == 200 and r.header("Content-Type") == "text/html; charset=utf-8",
           "documentation page: 200 text/html, got %r" % r)
    page = next(a for a in argv if "/docs/" in a)
    assets = PAGE_ASSET.findall(r.body)
    expect(sorted(os.path.basename(url) for url, _ in assets) ==
           ["swagger-ui-bundle.js", "swagger-ui.css"],
           "documentation page: loads swagger-ui.css and swagger-ui-bundle.js, got %r" % assets)
    for url, attributes in assets:
        name = os.path.basename(url)
        if url.startswith("https://"):
            expect(url == CDN + swagger_ui_version() + "/" + name,
                   "documentation page: %s from %s%s/, got %s" % (name, CDN, swagger_ui_version(), url))
            integrity = re.search(r'integrity="([^"]+)"', attributes)
            expect(integrity and integrity.group(1) == pinned_integrity(name),
                   "documentation page: %s's integrity %s, got %r" % (name, pinned_integrity(name),
                                                                     attributes))
            expect('crossorigin="anonymous"' in attributes,
                   "documentation page: %s crossorigin=anonymous, got %r" % (name, attributes))
        expect(head(page + name).status in (200, 302),
               "documentation page: %s%s served or redirected to the CDN, never 503" % (page, name))
    favicon = head(page + "favicon-32x32.png")
    expect(favicon.status == 200 or (favicon.status == 302 and favicon.header("Location") ==
                                     CDN + swagger_ui_version() + "/favicon-32x32.png"),
           "documentation page: the icon, or a redirect to the pinned one, got %r" % favicon)


def head(url):
    """HEAD: the headers alone (a body such as a PNG is not text)."""
    return curl(["curl", "-I", url])


def check_docs_page_without_local_files_loads_pinned_swagger_ui_with_integrity(binary):
    g = Gateway(binary, "--swagger-ui-cdn")
    try:
        url = g.base + "/docs/"
        r = get(url)
        documentation_page(["curl", "-i", url], r)
        expect(CDN in r.body, "--swagger-ui-cdn: the page loads from %s, got %r" % (CDN, r.body))
    finally:
        g.stop()


CURL_LINE_RULES = [  # (comment contains, rule)
    ("# 404", no_route),
    ("automatic OPTIONS", automatic_options),
    ("request id kept", request_id_kept),
    ("h2c by prior knowledge", http2_line),
    ("CORS preflight", cors_preflight),
    ("typed JSON route", typed_order),
    ("constraints enforced", org_order_placed),
    ("typed path and query inputs", org_orders_page),
    ("a coroutine", proxy_line),
    ("compressed JSON", compressed_json),
    ("static file", static_file),
    ("precompressed", precompressed_file),
    ("a byte range", byte_range),
    ("streamed upload", streamed_upload),
    ("multipart form upload", form_upload),
    ("server-sent events", server_sent_events),
    ("documentation page", documentation_page),
    ("issues a bearer token", bearer_token_issued),
    ("protected by a bearer token", bearer_protected),
    ("sign in: a session cookie", session_signed_in),
    ("the session the cookie names", session_read),
    ("over a unix socket", unix_socket_line),
    ("a mounted service in its own process", mounted_service),
    ("the mounted service's event stream", mounted_event_stream),
]


def check_every_printed_curl_line_answers_as_documented(binary):
    import tempfile
    work = tempfile.mkdtemp(prefix="gateway-unix-")
    # --unix: the line it prints is one of the printed lines too.
    g = Gateway(binary, "--unix", os.path.join(work, "gateway.sock"))
    try:
        expect(len(g.curl_lines) >= 10, "the gateway prints a curl line per route kind and "
               "feature (10 or more), got %d: %r" % (len(g.curl_lines), g.curl_lines))
        seen = []
        for line in g.curl_lines:
            argv = shlex.split(line, comments=True)
            comment = line.partition("#")[2].strip() if " #" in line else ""
            rules = [rule for text, rule in CURL_LINE_RULES if text in line] if comment \
                else [route_example]
            expect(len(rules) == 1, "no rule knows the printed line %r" % line)
            base = "http://localhost" if "--unix-socket" in argv else g.base
            expect(any(a.startswith(base + "/") for a in argv),
                   "the line uses the printed base URL %s: %r" % (base, line))
            try:
                rules[0](argv, curl(argv))
            except CheckFailed as e:
                raise CheckFailed("%s\n    line: %s" % (e, line))
            seen.append(rules[0])
        missing = [rule.__name__ for _, rule in CURL_LINE_RULES if rule not in seen]
        expect(not missing, "lines for every feature; none printed for %s" % missing)
        expect(seen.count(route_example) >= 4, "a route example per kind (static, one "
               "wildcard, several, rest), got %d" % seen.count(route_example))
    finally:
        g.stop()
        shutil.rmtree(work, ignore_errors=True)


# --- the order book: typed inputs and constraints ----------------------------------------

def check_order_book_reads_its_inputs_pages_and_answers_304(binary):
    g = Gateway(binary)
    try:
        book = g.base + "/v1/orgs/tools-1/orders"
        json_type = ["-H", "Content-Type: application/json"]
        for sku in ["AB-1", "AB-2", "AB-3"]:
            r = curl(["curl", "-i", book] + json_type +
                     ["-d", json.dumps({"sku": sku, "quantity": 1, "email": "a@example.com"})])
            expect(r.status == 201, "placing %s: 201, got %r" % (sku, r))
        first = get(book + "?limit=2")
        expect([o["sku"] for o in first.json()["orders"]] == ["AB-1", "AB-2"] and
               first.json().get("next_cursor") == 2,
               "limit=2: the two oldest and next_cursor 2, got %r" % first)
        last = get(book + "?limit=2&cursor=2")
        expect([o["sku"] for o in last.json()["orders"]] == ["AB-3"] and
               last.json().get("next_cursor") is None,
               "cursor=2: the third and no next_cursor, got %r" % last)
        etag = first.header("ETag")
        expect(get(book + "?limit=2", "-H", "If-None-Match: " + etag).status == 304,
               "If-None-Match with the page's ETag: 304")
        head = curl(["curl", "-s", "-I", book + "?limit=2", "-H", "If-None-Match: " + etag])
        expect(head.status == 304, "HEAD with the page's ETag: 304, got %r" % head)
        curl(["curl", "-i", book] + json_type +
             ["-d", json.dumps({"sku": "AB-4", "quantity": 1, "email": "a@example.com"})])
        changed = get(book + "?limit=2", "-H", "If-None-Match: " + etag)
        expect(changed.status == 200 and changed.header("ETag") != etag,
               "after an order lands, the same If-None-Match gets 200 and a new ETag, got %r" % changed)
        for query, status, says in [("limit=500", 422, "maximum"), ("limit=0", 422, "minimum"),
                                    ("limit=two", 400, 'query parameter \\"limit\\" must be an integer'),
                                    ("cursor=-1", 422, 'query parameter \\"cursor\\" is -1; the minimum is 0')]:
            r = get(book + "?" + query)
            expect(r.status == status and says in r.body,
                   "?%s: %d saying %r, got %r" % (query, status, says, r))
        r = get(g.base + "/v1/orgs/Tools/orders")
        expect(r.status == 422 and r.json().get("keyword") == "pattern",
               "an org outside the path's pattern: 422, keyword pattern, got %r" % r)
        for body, pointer, keyword in [
                ({"sku": "ab", "quantity": 1, "email": "a@example.com"}, "/sku", "pattern"),
                ({"sku": "AB-1", "quantity": 1, "email": "nobody"}, "/email", "format"),
                ({"sku": "AB-1", "quantity": 1, "email": "a@example.com", "deliver_by": "2026-02-30"},
                 "/deliver_by", "format"),
                ({"sku": "AB-1", "quantity": 1, "email": "a@example.com", "note": "x" * 281},
                 "/note", "maxLength")]:
            r = curl(["curl", "-i", book] + json_type + ["-d", json.dumps(body)])
            expect(r.status == 422 and r.json().get("pointer") == pointer and
                   r.json().get("keyword") == keyword,
                   "%r: 422 at %s, keyword %s, got %r" % (body, pointer, keyword, r))
    finally:
        g.stop()


# --- the proxy route against real upstreams ---------------------------------------------

def check_proxy_answers_with_the_upstream_gateways_answer(binary):
    upstream = Gateway(binary)
    front = None
    try:
        front = Gateway(binary, "--upstream", upstream.base)
        direct = get(upstream.base + "/v1/iam/users/42")
        proxied = get(front.base + "/v1/proxy/v1/iam/users/42")
        expect(direct.status == 200 and direct.json()["route"] == "GET /v1/iam/users/{userId}",
               "the upstream's own answer is its echo route, got %r" % direct)
        expect(proxied.status == 200 and proxied.json() == direct.json(),
               "proxied: the upstream's 200 %r, got %r" % (direct.body, proxied))
    finally:
        if front:
            front.stop()
        upstream.stop()


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_proxy_to_a_closed_port_is_502_problem(binary):
    g = Gateway(binary, "--upstream", "http://127.0.0.1:%d" % closed_port())
    try:
        r = get(g.base + "/v1/proxy/v1/health")
        expect(r.status == 502, "an unreachable upstream: 502, got %r" % r)
        expect((r.header("Content-Type") or "").startswith("application/problem+json"),
               "502 as application/problem+json, got Content-Type %r" % r.header("Content-Type"))
        expect(r.json().get("status") == 502, "the problem document's status is 502: %r" % r)
    finally:
        g.stop()


class SilentServer:
    """Accepts connections, reads what comes and never answers."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.held = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self):
        self.listener.close()
        for c in self.held:
            c.close()


def check_proxy_to_a_silent_upstream_is_504_after_the_timeout(binary):
    silent = SilentServer()
    g = Gateway(binary, "--upstream", "http://127.0.0.1:%d" % silent.port,
                "--upstream-timeout", str(UPSTREAM_TIMEOUT_MS))
    try:
        r = get(g.base + "/v1/proxy/v1/health")
        expect(r.status == 504, "an upstream that never answers: 504, got %r" % r)
        expect((r.header("Content-Type") or "").startswith("application/problem+json"),
               "504 as application/problem+json, got Content-Type %r" % r.header("Content-Type"))
        expect(UPSTREAM_TIMEOUT_MS / 1000.0 * 0.9 <= r.seconds <= TIMEOUT_ANSWER_WITHIN_S,
               "504 after the %d ms timeout and within %.1f s, took %.2f s" % (
                   UPSTREAM_TIMEOUT_MS, TIMEOUT_ANSWER_WITHIN_S, r.seconds))
    finally:
        g.stop()
        silent.close()


def check_proxy_loop_through_itself_is_508(binary):
    g = Gateway(binary)  # the default upstream is the gateway itself
    try:
        looped = get(g.base + "/v1/proxy/v1/proxy/v1/health")
        expect(looped.status == 508, "proxying to itself twice: 508, got %r" % looped)
        marked = get(g.base + "/v1/proxy/v1/health", "-H", "Via: 1.1 waypoint-gateway")
        expect(marked.status == 508, "a request already carrying the gateway's Via: 508, "
               "got %r" % marked)
        # Connection names Via: the client's Via goes, the gateway's stays, so the second
        # hop still finds it (before: the gateway's own Via was stripped, and the loop
        # went one hop further, to 200).
        unnamed = get(g.base + "/v1/proxy/v1/proxy/v1/health", "-H", "Connection: via")
        expect(unnamed.status == 508, "proxying to itself twice with Connection: via: 508, "
               "got %r" % unnamed)
        once = get(g.base + "/v1/proxy/v1/health")
        expect(once.status == 200, "one hop through itself is no loop: 200, got %r" % once)
    finally:
        g.stop()


def check_event_interval_below_the_minimum_is_400_problem(binary):
    g = Gateway(binary)
    try:
        for interval in ("0", "99"):
            r = get(g.base + "/v1/events?count=3&interval_ms=" + interval)
            expect(r.status == 400 and "at least 100" in r.body,
                   "interval_ms=%s: 400 naming the minimum of 100, got %r" % (interval, r))
        r = get(g.base + "/v1/events?count=2&interval_ms=100", "-N")
        expect(r.status == 200 and r.body.count("event: tick") == 2,
               "interval_ms=100: two ticks, got %r" % r)
    finally:
        g.stop()


def check_cors_leaves_the_operational_endpoints_alone(binary):
    g = Gateway(binary)
    try:
        origin = "https://elsewhere.example"
        for path in ("/healthz", "/readyz", "/metrics"):
            r = get(g.base + path, "-H", "Origin: " + origin)
            expect(r.status == 200 and r.header("Access-Control-Allow-Origin") is None,
                   "%s from another origin: 200 without Access-Control-Allow-Origin, got %r"
                   % (path, r))
        r = get(g.base + "/v1/health", "-H", "Origin: " + origin)
        expect(r.header("Access-Control-Allow-Origin") == "*",
               "an API route from another origin: Access-Control-Allow-Origin *, got %r" % r)
    finally:
        g.stop()


def check_sigterm_stops_the_gateway_with_exit_0(binary):
    g = Gateway(binary)
    get(g.base + "/v1/health")
    code = g.stop()
    expect(code == 0, "exit code 0 after SIGTERM, got %r" % code)
    # Up to the reader thread's end-of-output mark: the process may exit before the thread
    # has queued its last lines (seen under load).
    rest = []
    try:
        for line in iter(lambda: g.lines.get(timeout=5), None):
            rest.append(line)
    except queue.Empty:
        pass
    expect(any("stopped after" in l for l in rest),
           "a 'stopped after N requests' line on the way out, got %r" % rest)


# --- TLS --------------------------------------------------------------------------------

def make_certificate(work):
    """A self-signed P-256 certificate for localhost and 127.0.0.1, made by openssl in
    `work`: (certificate path, key path)."""
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def check_tls_line_answers_over_https_with_the_printed_certificate(binary):
    import tempfile
    work = tempfile.mkdtemp(prefix="gateway-tls-")
    try:
        cert, key = make_certificate(work)
        g = Gateway(binary, "--tls-cert", cert, "--tls-key", key, "--tls-port", "0")
        try:
            lines = [l for l in g.curl_lines if "--cacert" in l]
            expect(len(lines) == 2 and "--http2" in lines[1],
                   "two curl lines over TLS, the second asking for HTTP/2, got %r" % g.curl_lines)
            # curl offers h2 by ALPN unasked, so both lines speak HTTP/2.
            for line in lines:
                r = curl(shlex.split(line, comments=True))
                expect(r.status == 200 and "route" in r.json() and r.version == "2",
                       "the TLS line answers 200 from its route over HTTP/2, got HTTP/%s %r"
                       % (r.version, r))
            https = [a for a in shlex.split(lines[0], comments=True) if a.startswith("https://")]
            plain = get(https[0].replace("https://", "http://"))
            expect(plain.status == 400 and "HTTPS" in plain.body,
                   "plaintext on the TLS port is a 400 saying HTTPS, got %r" % plain)
        finally:
            g.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- operations: health, readiness through a drain, the access log --------------------

def check_readiness_says_503_from_sigterm_until_the_listeners_close(binary):
    g = Gateway(binary, drain_grace_ms=1500)
    try:
        expect(any("/readyz" in l for l in g.printed), "the startup output names /readyz: %r"
               % g.printed)
        ready = get(g.base + "/readyz")
        expect(ready.status == 200 and ready.json() == {"status": "ready"},
               "readiness before the stop: 200, got %r" % ready)
        g.process.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        draining = get(g.base + "/readyz")
        expect(draining.status == 503 and draining.json() == {"status": "draining"},
               "readiness after SIGTERM, within the grace: 503, got %r" % draining)
        alive = get(g.base + "/healthz")
        expect(alive.status == 200, "liveness within the grace: 200, got %r" % alive)
        routed = get(g.base + "/v1/health")
        expect(routed.status == 200, "other routes within the grace: 200, got %r" % routed)
        code = g.process.wait(timeout=5)
        expect(code == 0, "exit code 0 after the drain, got %r" % code)
        refused = subprocess.run(["curl", "-s", "-o", "/dev/null", g.base + "/readyz"])
        expect(refused.returncode == 7, "after the drain the port is closed (curl exit 7), got %d"
               % refused.returncode)
    finally:
        g.stop()


def check_access_log_and_metrics_count_the_requests_sent(binary):
    g = Gateway(binary, quiet=False)
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    get(g.base + "/v1/iam/users/42?secret=1", "-H", "traceparent: " + parent, "-A", "check/1")
    # examples/www is served under GET /{path...}: an unknown path is that route's 404, and
    # only another method finds no route (405, an unrouted outcome).
    get(g.base + "/no/such/route")
    get(g.base + "/no/such/route", "-X", "DELETE")
    get(g.base + "/index.html")  # a file body, sent with sendfile
    scraped = get(g.base + "/metrics")
    g.stop()
    expect(scraped.status == 200 and scraped.header("content-type").startswith("text/plain"),
           "metrics: 200 text/plain, got %r" % scraped)
    for series in ['waypoint_http_requests_total{route="GET /v1/iam/users/{userId}",method="GET",'
                   'status="2xx"} 1',
                   'waypoint_http_requests_total{route="GET /{path...}",method="GET",status="4xx"} 1',
                   'waypoint_http_unrouted_requests_total{outcome="method_not_allowed"} 1',
                   'waypoint_server_connections_total 5']:
        expect(series in scraped.body.splitlines(), "metrics hold %r:\n%s" % (series, scraped.body))
    lines = [json.loads(l) for l in g.process.stderr.read().splitlines() if l.startswith("{")]
    expect(len(lines) == 5, "one line per request, got %r" % lines)
    first, second, third, fourth, _ = lines
    expect(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", first["time"]) is not None,
           "an RFC 3339 UTC time, got %r" % first["time"])
    expected = {"remote": "127.0.0.1", "method": "GET", "path": "/v1/iam/users/42",
                "protocol": "HTTP/1.1", "route": "GET /v1/iam/users/{userId}", "status": 200, "user_agent": "check/1",
                "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}
    for key, value in expected.items():
        expect(first.get(key) == value, "%s: %r, got %r" % (key, value, first))
    expect(first["bytes"] > 0 and first["duration_us"] >= 0 and len(first["request_id"]) == 16,
           "bytes, duration and request id: %r" % first)
    expect(second["status"] == 404 and second["route"] == "GET /{path...}" and
           len(second["trace_id"]) == 32,
           "the file server's 404 names its route and starts a trace: %r" % second)
    expect(third["status"] == 405 and third["route"] is None, "a 405 has no route: %r" % third)
    size = os.path.getsize(os.path.join(WWW, "index.html"))
    expect(fourth["status"] == 200 and fourth["bytes"] == size,
           "a file's line counts the file's %d bytes: %r" % (size, fourth))


# --- the load test's request table ------------------------------------------------------

def check_replay_table_requests_are_2xx_from_the_route_they_name(binary):
    g = Gateway(binary, "--routes", MIX_TABLE)
    try:
        host, port = g.base[len("http://"):].rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=CURL_TIMEOUT_S)
        checked = 0
        with open(MIX_REPLAY) as f:
            rows = [l.rstrip("\n").split("\t") for l in f if not l.startswith("#")]
        for method, target, route, body in rows[::REPLAY_STRIDE]:
            headers = {"Content-Type": "application/json"} if body else {}
            conn.request(method, target, body=body or None, headers=headers)
            res = conn.getresponse()
            data = res.read()
            expect(200 <= res.status < 300, "%s %s: 2xx, got %d %r" % (method, target,
                                                                       res.status, data[:200]))
            answered = json.loads(data).get("route")
            expect(answered == route, "%s %s: answered by %r, got %r" % (
                method, target, route, answered))
            checked += 1
        conn.close()
        expect(checked == len(rows[::REPLAY_STRIDE]) > 0, "replayed no requests")
    finally:
        g.stop()


# The printed `/usr/bin/python3 -m websockets URL` line (Debian's interpreter, which has
# the module the line needs, whatever python3 comes first on PATH) names the WebSocket route; a real client
# (Debian's python3-websockets, in Debian's interpreter when there is one) echoes through it.
WEBSOCKET_CLIENT = r'''
import asyncio, sys, websockets
async def main(url):
    async with websockets.connect(url) as ws:
        assert ws.response_headers.get("X-Request-Id"), "the 101 carries no X-Request-Id"
        for message in ["hello", b"\x00\x01\xff"]:
            await ws.send(message)
            got = await ws.recv()
            assert got == message, "echo of %r: %r" % (message, got)
asyncio.run(main(sys.argv[1]))
'''


# Two clients in the printed room: what each sends, both receive, in the order sent.
ROOM_CLIENT = r'''
import asyncio, sys, websockets
async def main(url):
    async with websockets.connect(url) as a, websockets.connect(url) as b:
        await asyncio.sleep(0.2)  # both joined before the first message
        await a.send("from a")
        await b.send("from b")
        for ws in (a, b):
            got = {await asyncio.wait_for(ws.recv(), 5) for _ in range(2)}
            assert got == {"from a", "from b"}, "the room delivered %r" % got
asyncio.run(main(sys.argv[1]))
'''


# The printed Phoenix Channels line, with the frames it says to send: two clients join
# room:lobby, one shouts, both hear it as a broadcast ([null, null, topic, event, payload]).
PHOENIX_CLIENT = r'''
import asyncio, json, sys, websockets
async def main(url):
    async with websockets.connect(url) as a, websockets.connect(url) as b:
        for ws in (a, b):
            await ws.send('["1","1","room:lobby","phx_join",{}]')
            got = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert got == ["1", "1", "room:lobby", "phx_reply",
                           {"status": "ok", "response": {}}], "join: %r" % got
        await a.send('["1","2","room:lobby","shout",{"body":"hi"}]')
        for ws in (a, b):
            got = [json.loads(await asyncio.wait_for(ws.recv(), 5)) for _ in range(2 if ws is a else 1)]
            assert [None, None, "room:lobby", "shout", {"body": "hi"}] in got, "room: %r" % got
asyncio.run(main(sys.argv[1]))
'''


def check_printed_websocket_lines_echo_and_share_a_room(binary):
    g = Gateway(binary)
    try:
        lines = [l for l in g.printed if l.strip().startswith("/usr/bin/python3 -m websockets ")]
        clients = [(line, WEBSOCKET_CLIENT if "# WebSocket echo" in line else
                    ROOM_CLIENT if "# a room" in line else
                    PHOENIX_CLIENT if "# Phoenix Channels" in line else None) for line in lines]
        expect(len(lines) == 3 and all(c for _, c in clients),
               "three printed WebSocket lines, the echo, a room and Phoenix Channels, got %r"
               % lines)
        python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
        for line, client in clients:
            url = line.split()[3].strip("'")  # quoted for the shell when it has a query
            r = subprocess.run([python, "-c", client, url], capture_output=True, text=True,
                               timeout=20)
            expect(r.returncode == 0, "WebSocket line %s failed (python3-websockets is "
                   "installed by scripts/install-deps): %s" % (line.strip(), r.stderr.strip()[-400:]))
        # The hubs' counts on /metrics: the room client's two messages, each to both of its
        # connections; the Phoenix client's one shout.
        body = get(g.base + "/metrics").body.splitlines()
        for series in ['waypoint_topic_published_total{hub="rooms"} 2',
                       'waypoint_topic_delivered_total{hub="rooms"} 4',
                       'waypoint_topic_dropped_total{hub="rooms"} 0',
                       'waypoint_topic_slow_consumer_closes_total{hub="rooms"} 0',
                       'waypoint_topic_published_total{hub="phoenix"} 1']:
            expect(series in body, "metrics hold %r:\n%s" % (series, "\n".join(
                l for l in body if l.startswith("waypoint_topic_"))))
    finally:
        g.stop()


# The printed `scripts/install-deps mcp && build/node-mcp/.../mcp-inspector --cli URL ...` line:
# the first command installs the npm group, the second, run as printed from the repository,
# lists the gateway's MCP tools (the npm inspector's CLI, which starts a second node process:
# both are in a session of their own, killed by its id past the timeout).
INSPECTOR_LINE = "scripts/install-deps mcp && "
INSPECTOR_TIMEOUT_S = 30


def check_printed_inspector_line_lists_the_tools(binary):
    g = Gateway(binary)
    try:
        lines = [l.strip() for l in g.printed if l.strip().startswith(INSPECTOR_LINE)]
        expect(len(lines) == 1, "one printed MCP inspector line, got %r" % lines)
        argv = shlex.split(lines[0][len(INSPECTOR_LINE):], comments=True)
        expect(g.base + "/mcp" in argv, "the line uses the printed base URL %s: %r"
               % (g.base, lines[0]))
        inspector = os.path.join(ROOT, argv[0])
        if not os.access(inspector, os.X_OK):
            skip_unless_required("%s is not installed (scripts/install-deps mcp installs it)" % argv[0])
        child = subprocess.Popen([inspector] + argv[1:], cwd=ROOT, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = child.communicate(timeout=INSPECTOR_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise
        expect(child.returncode == 0, "the inspector line failed (exit %d): %s"
               % (child.returncode, err.strip()[-400:]))
        names = sorted(tool["name"] for tool in json.loads(out)["tools"])
        expect(names == ["listOrgOrders", "placeOrder", "placeOrgOrder"],
               "the inspector lists the named typed routes, got %r" % names)
    finally:
        g.stop()


# prism_test.py places each of these: run again through Prism, or left out with a reason.
CHECKS = [
    check_printed_websocket_lines_echo_and_share_a_room,
    check_printed_inspector_line_lists_the_tools,
    check_every_printed_curl_line_answers_as_documented,
    check_order_book_reads_its_inputs_pages_and_answers_304,
    check_docs_page_without_local_files_loads_pinned_swagger_ui_with_integrity,
    check_proxy_answers_with_the_upstream_gateways_answer,
    check_proxy_to_a_closed_port_is_502_problem,
    check_proxy_to_a_silent_upstream_is_504_after_the_timeout,
    check_proxy_loop_through_itself_is_508,
    check_event_interval_below_the_minimum_is_400_problem,
    check_cors_leaves_the_operational_endpoints_alone,
    check_sigterm_stops_the_gateway_with_exit_0,
    check_readiness_says_503_from_sigterm_until_the_listeners_close,
    check_access_log_and_metrics_count_the_requests_sent,
    check_replay_table_requests_are_2xx_from_the_route_they_name,
    check_tls_line_answers_over_https_with_the_printed_certificate,
]


def run_checks(name, checks, binary, errors=(), skipped_code=0):
    """Runs every check against the gateway `binary`, printing PASS, SKIP or FAIL for each; 1 when
    any failed, else `skipped_code` when any was skipped (77: ctest's SKIP_RETURN_CODE, for a
    test whose checks all need a tool that may be absent). A check fails by raising; those
    errors, and `errors`, are reported, others propagate."""
    failed, skipped = [], []
    for check in checks:
        short = check.__name__[len("check_"):]
        started = time.monotonic()
        try:
            check(binary)
            print("PASS %s (%.1f s)" % (short, time.monotonic() - started), flush=True)
        except Skipped as e:
            skipped.append(short)
            print("SKIP %s: %s" % (short, e), flush=True)
        except (CheckFailed, OSError, ValueError, KeyError, subprocess.TimeoutExpired) + tuple(errors) as e:
            failed.append(short)
            print("FAIL %s: %s: %s" % (short, type(e).__name__, e), flush=True)
    if failed:
        print("%s: %d of %d checks failed" % (name, len(failed), len(checks)))
        return 1
    return skipped_code if skipped else 0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    if not shutil.which("curl"):
        sys.exit("gateway_test: no curl on PATH (scripts/install-deps consumer installs it)")
    return run_checks("gateway_test", CHECKS, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
