#!/usr/bin/python3
"""The example gateway over HTTP/2 (issue #46), with clients the project did not write: every
printed curl line run again over h2c and held to the answer it gets over HTTP/1.1; h2 over
TLS by ALPN; python3-h2 for multiplexed streams, RFC 9113 §8's request rules and the
limits; raw frames (hyperframe, hpack) for the floods a hostile client sends; nghttp for the
GOAWAY of a drain; h2load for many streams at once.

usage: http2_test.py GATEWAY_BINARY

Each check is named for the rule it holds the server to. No check depends on timing: a
flood is sent whole and the server's answer (its GOAWAY, or the close) is read to the end
of the stream, within a bound that only a broken server reaches.
"""
import os
import random
import re
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_test import (CheckFailed, Gateway, curl, expect, make_certificate,  # noqa: E402
                          run_checks)

import h2.config  # noqa: E402
import h2.connection  # noqa: E402
import h2.events  # noqa: E402
from h2.errors import ErrorCodes  # noqa: E402
from h2.settings import SettingCodes  # noqa: E402
from hpack import Decoder, Encoder  # noqa: E402
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame,  # noqa: E402
                              HeadersFrame, PingFrame, RstStreamFrame, SettingsFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
READ_TIMEOUT_S = 10
ENHANCE_YOUR_CALM = 0xB
# What the gateway may hold at its peak after a flood: a debug build starts at about 19 MiB,
# is under 20 MiB after the floods here (a control-frame flood of 17 MB each way, 3,000
# streams reset) and about 30 MiB after 100 bodies held at their budget (without the budget
# those alone would be 100 MB).
MAX_RSS_KIB = 64 * 1024
# Lines whose answer depends on more than the request (a mounted service's process), or
# that stream for seconds: run over h2c once, not compared.
NOT_COMPARED = ("a mounted service", "the mounted service's event stream")


def port_of(base):
    return int(base.rsplit(":", 1)[1])


# --- clients ---------------------------------------------------------------------------

class Client:
    """python3-h2 over a socket: requests on streams of one connection."""

    def __init__(self, port, settings=None, validate=True, tls_context=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT_S)
        if tls_context:
            self.sock = tls_context.wrap_socket(self.sock, server_hostname="localhost")
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                           validate_outbound_headers=validate,
                                           normalize_outbound_headers=validate)
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        if settings:
            self.conn.update_settings(settings)
        self.flush()
        self.authority = "127.0.0.1:%d" % port
        self.responses = {}  # stream id -> {"status", "headers", "body", "ended", "reset"}
        self.goaway = None

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, method, path, headers=(), body=None, end_stream=True):
        sid = self.conn.get_next_available_stream_id()
        fields = [(":method", method), (":path", path), (":scheme", "http"),
                  (":authority", self.authority)] + list(headers)
        self.conn.send_headers(sid, fields, end_stream=end_stream and body is None)
        self.flush()
        self.responses[sid] = {"status": None, "headers": {}, "body": b"", "ended": False,
                               "reset": None}
        if body is not None:
            self.send_body(sid, body, end_stream)
        return sid

    def send_body(self, sid, body, end_stream):
        """As the server's windows allow: it credits a streamed body as its handler reads."""
        view = memoryview(body)
        while True:
            room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
            if room == 0 and len(view) > 0:
                before = self.conn.local_flow_control_window(sid)
                self.pump(lambda: self.responses[sid]["ended"] or
                          self.conn.local_flow_control_window(sid) > before)
                if self.responses[sid]["ended"]:
                    return
                continue
            piece, view = view[:room], view[room:]
            last = len(view) == 0
            self.conn.send_data(sid, piece.tobytes(), end_stream=end_stream and last)
            self.flush()
            if last:
                return

    def pump(self, done):
        """Reads and handles events until done() is true or the connection ends."""
        while not done():
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                raise CheckFailed("no answer within %d s" % READ_TIMEOUT_S)
            if not data:
                return False
            for event in self.conn.receive_data(data):
                self.handle(event)
            self.flush()
        return True

    def handle(self, event):
        r = self.responses.get(getattr(event, "stream_id", None))
        if isinstance(event, h2.events.ResponseReceived) and r is not None:
            r["headers"] = dict(event.headers)
            r["status"] = int(r["headers"][":status"])
        elif isinstance(event, h2.events.DataReceived) and r is not None:
            r["body"] += event.data
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded) and r is not None:
            r["ended"] = True
        elif isinstance(event, h2.events.StreamReset) and r is not None:
            r["reset"] = event.error_code
            r["ended"] = True
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = event

    def wait(self, *sids):
        self.pump(lambda: all(self.responses[s]["ended"] for s in sids))
        return [self.responses[s] for s in sids]

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Raw:
    """Frames as a hostile client writes them: no flow control, no checks, no reading until
    asked. `rcvbuf`: a small receive buffer, so that what the server writes backs up."""

    def __init__(self, port, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(READ_TIMEOUT_S)
        self.sock.connect(("127.0.0.1", port))
        self.sock.sendall(PREFACE + SettingsFrame(0).serialize())
        self.encoder = Encoder()
        self.authority = "127.0.0.1:%d" % port

    def block(self, method, path, extra=()):
        return self.encoder.encode([(":method", method), (":path", path), (":scheme", "http"),
                                    (":authority", self.authority)] + list(extra))

    def headers(self, sid, method, path, extra=(), end_stream=True):
        """A request's whole header block in one HEADERS frame."""
        h = HeadersFrame(sid, self.block(method, path, extra))
        h.flags.add("END_HEADERS")
        if end_stream:
            h.flags.add("END_STREAM")
        return h

    def send(self, *frames):
        self.send_bytes(b"".join(f.serialize() for f in frames))

    def send_bytes(self, data):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server has closed: what it said is still to be read
        except socket.timeout:
            raise CheckFailed("the server neither read nor closed within %d s" % READ_TIMEOUT_S)

    def frames_until_close(self):
        return frames_until_close(self.sock)

    def close(self):
        self.sock.close()


def parse_frames(data):
    """The whole frames at the start of `data`."""
    frames, view = [], memoryview(data)
    while len(view) >= 9:
        frame, length = Frame.parse_frame_header(view[:9])
        if len(view) < 9 + length:
            break
        frame.parse_body(view[9:9 + length])
        frames.append(frame)
        view = view[9 + length:]
    return frames


def frames_until_close(sock):
    """Every frame the server sends on `sock` until it closes the connection."""
    data = b""
    try:
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    except socket.timeout:
        raise CheckFailed("the server did not close the connection within %d s" % READ_TIMEOUT_S)
    return parse_frames(data)


def goaway_of(frames):
    away = [f for f in frames if isinstance(f, GoAwayFrame)]
    return away[-1] if away else None


def expect_served(port, what):
    with Client(port) as c:
        [r] = c.wait(c.request("GET", "/v1/health"))
        expect(r["status"] == 200, "after %s, a new connection is served: got %r" % (what, r))


def expect_bounded(g, what):
    """After a flood: the gateway's peak memory stays small, and once its client has gone
    it spends no CPU (nothing spins on what the flood left)."""
    with open("/proc/%d/status" % g.process.pid) as f:
        peak = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    expect(peak < MAX_RSS_KIB, "%s: the gateway's peak RSS stays under %d MiB, got %d KiB"
           % (what, MAX_RSS_KIB // 1024, peak))

    def cpu():
        with open("/proc/%d/stat" % g.process.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    before = cpu()
    time.sleep(1)
    expect(cpu() - before < 0.1, "%s: an idle gateway spends no CPU, got %.2f s in 1 s"
           % (what, cpu() - before))


def expect_flood_ends_connection(port, raw, what, code=None, goaway=True, counted=True):
    """The server ends the connection (with GOAWAY, `code` if given, unless `goaway` is
    false: a client that reads nothing cannot be told), serves the next one and, when
    `counted`, counts a flood on /metrics."""
    frames = raw.frames_until_close()
    raw.close()
    away = goaway_of(frames)
    if goaway:
        expect(away is not None, "%s: the server says GOAWAY before it closes; it sent %r"
               % (what, [type(f).__name__ for f in frames[-5:]]))
    if away is not None and code is not None:
        expect(away.error_code == code, "%s: GOAWAY with error %d, got %d"
               % (what, code, away.error_code))
    expect_served(port, what)
    if not counted:
        return
    body = curl(["curl", "-i", "http://127.0.0.1:%d/metrics" % port]).body
    m = re.search(r'^waypoint_server_http2_total\{event="flood"\} (\d+)$', body, re.M)
    expect(m and int(m.group(1)) >= 1, "%s: /metrics counts the flood, got %s"
           % (what, m.group(0) if m else "no such series"))


# --- the gateway's own answers, over both protocols ----------------------------------

def check_printed_curl_lines_answer_alike_over_http11_and_h2c(binary):
    with Gateway(binary) as g:
        lines = [l for l in g.curl_lines if "--unix-socket" not in l]
        expect(len(lines) >= 10, "the gateway prints its curl lines: %r" % g.curl_lines)
        for line in lines:
            argv = [a for a in shlex.split(line, comments=True) if a != "--http2-prior-knowledge"]
            h2c = curl(argv[:1] + ["--http2-prior-knowledge"] + argv[1:])
            expect(h2c.version == "2", "HTTP/2 for %s, got HTTP/%s" % (line, h2c.version))
            if any(text in line for text in NOT_COMPARED):
                expect(h2c.status == 200, "%s: 200 over h2c, got %r" % (line, h2c))
                continue
            h1 = curl(argv[:1] + ["--http1.1"] + argv[1:])
            expect(h1.version == "1.1", "HTTP/1.1 for %s, got HTTP/%s" % (line, h1.version))
            expect(h1.status == h2c.status and
                   h1.header("Content-Type") == h2c.header("Content-Type"),
                   "%s: the same status and type over both, got HTTP/1.1 %r and HTTP/2 %r"
                   % (line, h1, h2c))
            if h1.header("Content-Length") and h1.header("Content-Encoding") is None:
                expect(h1.header("Content-Length") == h2c.header("Content-Length"),
                       "%s: the same length over both, got %s and %s" % (
                           line, h1.header("Content-Length"), h2c.header("Content-Length")))


def check_tls_listener_selects_h2_by_alpn_and_still_serves_http11(binary):
    work = tempfile.mkdtemp(prefix="gateway-h2-tls-")
    try:
        cert, key = make_certificate(work)
        with Gateway(binary, "--tls-cert", cert, "--tls-key", key, "--tls-port", "0") as g:
            [line] = [l for l in g.curl_lines if "--http2 " in l]
            argv = shlex.split(line, comments=True)
            url = [a for a in argv if a.startswith("https://")][0]
            r = curl(argv)
            expect(r.version == "2" and r.status == 200, "the printed h2 line: HTTP/2 200, got "
                   "HTTP/%s %r" % (r.version, r))
            r = curl(["curl", "-i", "--http1.1", "--cacert", cert, url])
            expect(r.version == "1.1" and r.status == 200,
                   "a client offering only http/1.1 gets it: got HTTP/%s %r" % (r.version, r))
            context = ssl.create_default_context(cafile=cert)
            context.set_alpn_protocols(["h2", "http/1.1"])
            with Client(port_of(url.rsplit("/v1/", 1)[0]), tls_context=context) as c:
                expect(c.sock.selected_alpn_protocol() == "h2",
                       "ALPN selects h2, got %r" % c.sock.selected_alpn_protocol())
                sids = [c.request("GET", "/v1/health") for _ in range(20)]
                expect(all(r["status"] == 200 for r in c.wait(*sids)),
                       "20 streams over TLS answered 200")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_streams_of_one_connection_are_answered_each(binary):
    with Gateway(binary) as g:
        with Client(port_of(g.base)) as c:
            paths = ["/v1/health", "/no/such/route", "/v1/iam/users/42", "/style.css"] * 25
            sids = [c.request("GET", p) for p in paths]
            got = c.wait(*sids)
            want = {"/v1/health": 200, "/no/such/route": 404, "/v1/iam/users/42": 200,
                    "/style.css": 200}
            for p, r in zip(paths, got):
                expect(r["status"] == want[p] and r["reset"] is None,
                       "%s on its own stream: %d, got %r" % (p, want[p], r))
            head = c.wait(c.request("HEAD", "/style.css"))[0]
            get = got[3]
            expect(head["status"] == 200 and head["body"] == b"" and
                   head["headers"].get("content-length") == str(len(get["body"])),
                   "HEAD: the GET's length and no body, got %r" % head)


def check_access_log_and_metrics_name_the_protocol(binary):
    with Gateway(binary, quiet=False) as g:
        with Client(port_of(g.base)) as c:
            sids = [c.request("GET", "/v1/health") for _ in range(3)]
            c.wait(*sids)
            [metrics] = c.wait(c.request("GET", "/metrics"))
        h1 = curl(["curl", "-i", "--http1.1", g.base + "/v1/health"])
        expect(h1.status == 200, "HTTP/1.1 beside: 200, got %r" % h1)
        body = metrics["body"].decode()
        for series, least in [('waypoint_server_http2_total{event="connection"}', 1),
                              ('waypoint_server_http2_total{event="stream"}', 4)]:
            m = re.search(re.escape(series) + r" (\d+)", body)
            expect(m and int(m.group(1)) >= least, "/metrics counts %s, at least %d: %s" % (
                series, least, m.group(0) if m else "absent"))
    lines = [l for l in g.process.stderr.read().splitlines() if l.startswith("{")]
    protocols = [re.search(r'"protocol":"([^"]+)"', l).group(1) for l in lines]
    expect(protocols == ["HTTP/2"] * 4 + ["HTTP/1.1"],
           "the access log names each request's protocol, got %r" % protocols)


# --- the same bytes however they arrive --------------------------------------------------

def h2c_conversation():
    """A client's whole h2c conversation as bytes: the preface, SETTINGS, and four requests
    (a GET, a GET with no route, a streamed upload in two DATA frames, a HEAD of a file)."""
    enc = Encoder()

    def headers(sid, method, path, end):
        h = HeadersFrame(sid, enc.encode([(":method", method), (":path", path),
                                          (":scheme", "http"), (":authority", "t")]))
        h.flags.add("END_HEADERS")
        if end:
            h.flags.add("END_STREAM")
        return h.serialize()
    last = DataFrame(5, b" world")
    last.flags.add("END_STREAM")
    return (PREFACE + SettingsFrame(0).serialize() + headers(1, "GET", "/v1/health", True) +
            headers(3, "GET", "/no/such/route", True) + headers(5, "POST", "/v1/upload", False) +
            DataFrame(5, b"hello").serialize() + last.serialize() +
            headers(7, "HEAD", "/style.css", True))


def h2c_answers(data):
    """Stream id -> (status, body) for the streams ended in the server's bytes."""
    dec, got, ended = Decoder(), {}, set()
    for f in parse_frames(data):
        if isinstance(f, HeadersFrame):
            got[f.stream_id] = (dict(dec.decode(f.data))[":status"], b"")
        elif isinstance(f, DataFrame) and f.stream_id in got:
            status, body = got[f.stream_id]
            got[f.stream_id] = (status, body + f.data)
        if "END_STREAM" in f.flags:
            ended.add(f.stream_id)
    return {sid: got[sid] for sid in ended if sid in got}


def http1_answers(data):
    """(status, body) of each response in HTTP/1.1 bytes whose bodies have a Content-Length."""
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head).group(1))
        out.append((head.split(b" ", 2)[1].decode(), rest[:length]))
        data = rest[length:]
    return out


def deliver(port, data, pieces, done):
    """Sends `data` cut into `pieces` (sizes), a pause after each so that the server reads
    them apart, and reads until done(bytes) or the server closes."""
    got = b""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT_S) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        at = 0
        for n in pieces:
            s.sendall(data[at:at + n])
            at += n
            time.sleep(0.001)
        s.settimeout(READ_TIMEOUT_S)
        while not done(got):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    return got


def cuttings(size):
    """Whole, one byte at a time, and five random cuttings (seeded: a failure reproduces)."""
    yield "whole", [size]
    yield "one byte at a time", [1] * size
    for seed in range(5):
        r, pieces, left = random.Random(seed), [], size
        while left:
            pieces.append(min(left, r.randint(1, 40)))
            left -= pieces[-1]
        yield "random pieces (seed %d)" % seed, pieces


def check_requests_get_the_same_answers_however_their_bytes_are_cut(binary):
    with Gateway(binary) as g:
        port = port_of(g.base)
        h2 = h2c_conversation()
        answers = {}
        for name, pieces in cuttings(len(h2)):
            got = h2c_answers(deliver(port, h2, pieces,
                                      lambda b: len(h2c_answers(b)) == 4))
            answers.setdefault("h2c", got)
            expect(got == answers["h2c"] and len(got) == 4,
                   "h2c, %s: the same four answers as sent whole, got %r, whole gave %r"
                   % (name, got, answers["h2c"]))
        statuses = {sid: a[0] for sid, a in answers["h2c"].items()}
        expect(statuses == {1: "200", 3: "404", 5: "201", 7: "200"} and
               b'"bytes":11' in answers["h2c"][5][1] and answers["h2c"][7][1] == b"",
               "h2c: 200, 404, the upload's 201 for its 11 bytes, HEAD's 200 without a body; "
               "got %r" % answers["h2c"])
        # HTTP/1.1 on the same port, pipelined, with requests whose first byte ("P") is also
        # the preface's: the listener waits for more before it decides, then serves HTTP/1.1.
        h1 = (b"POST /v1/upload HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world"
              b"GET /v1/health HTTP/1.1\r\nHost: t\r\n\r\n"
              b"PUT /v1/health HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"
              b"GET /v1/health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        for name, pieces in cuttings(len(h1)):
            got = http1_answers(deliver(port, h1, pieces, lambda b: False))
            answers.setdefault("http/1.1", got)
            expect(got == answers["http/1.1"],
                   "HTTP/1.1, %s: the same answers as sent whole, got %r, whole gave %r"
                   % (name, got, answers["http/1.1"]))
        expect([a[0] for a in answers["http/1.1"]] == ["201", "200", "405", "200"],
               "HTTP/1.1 pipelined on the HTTP/2 listener: 201, 200, 405, 200, got %r"
               % answers["http/1.1"])


def check_head_answers_every_kind_without_a_body(binary):
    with Gateway(binary) as g, Client(port_of(g.base)) as c:
        for path in ["/v1/health", "/no/such/route", "/style.css", "/v1/events?count=1"]:
            [get, head] = c.wait(c.request("GET", path), c.request("HEAD", path))
            expect(head["status"] == get["status"] and head["body"] == b"" and
                   head["reset"] is None and
                   head["headers"].get("content-length") == get["headers"].get("content-length"),
                   "HEAD %s: GET's status (%s) and length (%s), no body, ended cleanly; got %r"
                   % (path, get["status"], get["headers"].get("content-length"), head))


# --- RFC 9113 §8: the request's rules ------------------------------------------------

def check_cookie_crumbs_are_joined_into_one_field(binary):
    g = Gateway(binary)
    work = tempfile.mkdtemp(prefix="gateway-h2-cookie-")
    try:
        jar = os.path.join(work, "jar")
        [line] = [l for l in g.curl_lines if "sign in: a session cookie" in l]
        argv = [jar if a.endswith(".cookies") else a for a in shlex.split(line, comments=True)]
        signed_in = curl(argv)
        expect(signed_in.status == 201, "signed in over HTTP/1.1: got %r" % signed_in)
        cookies = [l.split("\t") for l in open(jar) if l.strip() and not l.startswith("# ")]
        session = ["%s=%s" % (f[5], f[6].strip()) for f in cookies if len(f) >= 7]
        expect(session, "the jar holds the session cookie: %r" % open(jar).read())
        with Client(port_of(g.base)) as c:
            crumbs = [("cookie", "theme=dark")] + [("cookie", s) for s in session]
            [joined, alone] = c.wait(c.request("GET", "/v1/session", crumbs),
                                     c.request("GET", "/v1/session", crumbs[:1]))
            expect(joined["status"] == 200, "the session cookie in a second crumb is read: "
                   "200, got %r" % joined)
            expect(alone["status"] != 200, "without it, no session: got %r" % alone)
    finally:
        g.stop()
        shutil.rmtree(work, ignore_errors=True)


def check_request_rules_answer_the_stream_and_keep_the_connection(binary):
    with Gateway(binary) as g:
        with Client(port_of(g.base), validate=False) as c:
            other_host = c.request("GET", "/v1/health", [("host", "elsewhere.example")])
            too_large = c.request("GET", "/v1/health", [("x-big", "a" * 20000)])
            connection = c.request("GET", "/v1/health", [("connection", "keep-alive")])
            [r1, r2, r3] = c.wait(other_host, too_large, connection)
            expect(r1["status"] == 400 and b"authority" in r1["body"],
                   "a Host naming another authority than :authority: 400, got %r" % r1)
            expect(r2["status"] == 431, "a header list past max_header_bytes: 431, got %r" % r2)
            expect(r3["reset"] == ErrorCodes.PROTOCOL_ERROR,
                   "a connection-specific field: the stream reset (PROTOCOL_ERROR), got %r" % r3)
            [ok] = c.wait(c.request("GET", "/v1/health"))
            expect(ok["status"] == 200, "the connection goes on serving: got %r" % ok)
        with Client(port_of(g.base), validate=False) as c:
            sid = c.conn.get_next_available_stream_id()
            c.conn.send_headers(sid, [(":method", "GET"), (":scheme", "http"),
                                      (":authority", c.authority), (":bogus", "x")],
                                end_stream=True)
            c.flush()
            c.responses[sid] = {"status": None, "headers": {}, "body": b"", "ended": False,
                                "reset": None}
            [r] = c.wait(sid)
            expect(r["reset"] == ErrorCodes.PROTOCOL_ERROR and r["status"] is None,
                   "an unknown pseudo-header and no :path: the stream reset, got %r" % r)


def check_body_length_must_match_content_length(binary):
    with Gateway(binary) as g:
        with Client(port_of(g.base), validate=False) as c:
            sid = c.request("POST", "/v1/upload", [("content-length", "10")], body=b"abc")
            [r] = c.wait(sid)
            expect(r["reset"] == ErrorCodes.PROTOCOL_ERROR,
                   "DATA shorter than Content-Length: the stream reset, got %r" % r)
            big = os.urandom(1 << 20)
            [r] = c.wait(c.request("POST", "/v1/upload", body=big))
            expect(r["status"] == 201 and b'"bytes":1048576' in r["body"],
                   "a 1 MiB streamed upload past the stream window is read whole: got %r" % r)


def check_early_answer_refuses_the_rest_of_the_request(binary):
    with Gateway(binary) as g:
        raw = Raw(port_of(g.base))
        raw.send(raw.headers(1, "POST", "/v1/upload", [("content-length", "2000000000")],
                             end_stream=False), DataFrame(1, b"x" * 1000))
        frames, data = [], b""
        while not any(isinstance(f, RstStreamFrame) for f in frames):
            chunk = raw.sock.recv(65536)
            expect(chunk, "the connection stays open after the early answer")
            data += chunk
            frames = parse_frames(data)
        heads = [f for f in frames if isinstance(f, HeadersFrame) and f.stream_id == 1]
        decoded = dict(Decoder().decode(heads[0].data)) if heads else {}
        reset = [f for f in frames if isinstance(f, RstStreamFrame)][0]
        expect(decoded.get(":status") == "413", "a body declared past the limit: 413, got %r"
               % decoded)
        expect(reset.stream_id == 1 and reset.error_code == ErrorCodes.NO_ERROR,
               "then the rest of the request is refused: RST_STREAM NO_ERROR, got %r" % reset)
        raw.close()
        expect_served(port_of(g.base), "an early answer")


def check_clients_gone_mid_stream_leave_no_connection_behind(binary):
    with Gateway(binary) as g:
        port = port_of(g.base)
        for _ in range(5):
            c = Client(port)
            events = c.request("GET", "/v1/events?count=30")
            c.request("POST", "/v1/upload", end_stream=False)
            c.pump(lambda: c.responses[events]["body"])
            c.close()  # with an event stream and an upload in flight
        for _ in range(100):
            body = curl(["curl", "-i", g.base + "/metrics"]).body
            m = re.search(r"^waypoint_server_connections_open (\d+)$", body, re.M)
            if m and m.group(1) == "1":  # the scrape's own
                break
            time.sleep(0.05)
        expect(m and m.group(1) == "1", "the gone clients' connections are let go: open "
               "connections %s" % (m.group(1) if m else "absent"))


def check_bodies_read_whole_share_a_budget_per_connection(binary):
    # 100 streams to a route that reads its body whole (up to max_body_bytes, 1 MiB), each
    # sending 1,000,000 bytes and never ending: without the budget the gateway would hold
    # 100 MB for one connection; with it, the connection's window stops being credited
    # once the other streams hold max_buffered_body_bytes (8 MiB).
    budget, window, body = 8 << 20, 1 << 20, 1_000_000
    with Gateway(binary) as g, Client(port_of(g.base)) as c:
        sids = [c.request("POST", "/v1/commerce/orders", [("content-type", "application/json")],
                          end_stream=False) for _ in range(100)]
        left = {sid: body for sid in sids}
        sent = 0
        c.sock.settimeout(1)
        while True:
            progressed = False
            for sid in sids:
                room = min(c.conn.local_flow_control_window(sid), c.conn.max_outbound_frame_size,
                           left[sid])
                if room > 0 and not c.responses[sid]["ended"]:
                    c.conn.send_data(sid, b" " * room)
                    left[sid] -= room
                    sent += room
                    progressed = True
            c.flush()
            if not progressed:
                try:  # a second without credit: the server holds what it has
                    data = c.sock.recv(65536)
                except socket.timeout:
                    break
                if not data:
                    break
                for event in c.conn.receive_data(data):
                    c.handle(event)
                c.flush()
        expect(sent <= budget + body + 2 * window,
               "the connection's whole bodies stop at the budget: %d bytes taken, at most %d"
               % (sent, budget + body + 2 * window))
        expect(sent >= budget, "up to the budget they are taken: %d bytes" % sent)
        expect_bounded(g, "100 bodies held at their budget")


# --- flow control: a closed window holds the response, not the server ---------------

def check_closed_window_holds_the_response_and_other_clients_are_served(binary):
    with Gateway(binary) as g:
        port = port_of(g.base)
        with Client(port, settings={SettingCodes.INITIAL_WINDOW_SIZE: 0}) as c:
            sid = c.request("GET", "/openapi.json")
            c.pump(lambda: c.responses[sid]["status"] is not None)
            r = c.responses[sid]
            expect(r["status"] == 200 and r["body"] == b"" and not r["ended"],
                   "with a closed window the head arrives and no body: got %r" % r)
            expect_served(port, "a stalled stream on another connection")
            length = int(r["headers"]["content-length"])
            c.conn.increment_flow_control_window(length, stream_id=sid)
            c.flush()
            [r] = c.wait(sid)
            expect(len(r["body"]) == length, "once the window opens, the whole body (%d "
                   "bytes) arrives, got %d" % (length, len(r["body"])))


def check_timeouts_end_what_stalls(binary):
    # --timeout 1000: the idle, header, body and write timeouts at 1 s each.
    with Gateway(binary, "--timeout", "1000") as g:
        port = port_of(g.base)
        with Client(port) as c:
            c.wait(c.request("GET", "/v1/health"))
            c.pump(lambda: c.goaway is not None)
            expect(c.goaway is not None and c.goaway.error_code == ErrorCodes.NO_ERROR,
                   "an idle connection ends with GOAWAY NO_ERROR, got %r" % c.goaway)
        raw = Raw(port)
        raw.send(HeadersFrame(1, raw.block("GET", "/v1/health")[:3]))  # no END_HEADERS
        expect_flood_ends_connection(port, raw, "a header block left unfinished",
                                     ENHANCE_YOUR_CALM, counted=False)
        with Client(port) as c:
            sid = c.request("POST", "/v1/commerce/orders",
                            [("content-type", "application/json")], body=b'{"sku":',
                            end_stream=False)
            [r] = c.wait(sid)
            expect(r["status"] == 408, "a body that stops arriving: 408, got %r" % r)
        with Client(port, settings={SettingCodes.INITIAL_WINDOW_SIZE: 0}) as c:
            [r] = c.wait(c.request("GET", "/openapi.json"))
            expect(r["status"] == 200 and r["reset"] == ErrorCodes.CANCEL,
                   "a response the client's window holds past write_timeout is reset "
                   "(CANCEL), got %r" % r)


# --- hostile clients ---------------------------------------------------------------------

def check_rapid_reset_ends_the_connection(binary):
    with Gateway(binary) as g:
        raw = Raw(port_of(g.base))
        frames = []
        for i in range(3000):
            sid = 1 + 2 * i
            frames += [raw.headers(sid, "GET", "/v1/health"),
                       RstStreamFrame(sid, error_code=ErrorCodes.CANCEL)]
        raw.send(*frames)
        expect_flood_ends_connection(port_of(g.base), raw, "3,000 streams opened and reset")
        expect_bounded(g, "3,000 streams opened and reset")


def check_continuation_flood_ends_the_connection(binary):
    with Gateway(binary) as g:
        raw = Raw(port_of(g.base))
        block = raw.block("GET", "/v1/health", [("x-pad-%d" % i, "v") for i in range(200)])
        h = HeadersFrame(1, block[:1])
        rest = [ContinuationFrame(1, block[i:i + 1]) for i in range(1, len(block))]
        raw.send(h, *rest)
        expect_flood_ends_connection(port_of(g.base), raw,
                                     "%d CONTINUATION frames" % len(rest))


def check_control_frame_floods_end_the_connection(binary):
    with Gateway(binary) as g:
        for kind, frame in [("PING", PingFrame(0, b"12345678")), ("SETTINGS", SettingsFrame(0))]:
            raw = Raw(port_of(g.base), rcvbuf=4096)
            # More acknowledgements than the kernel's socket buffers hold, so that they
            # back up in the server.
            raw.send_bytes(frame.serialize() * 1_000_000)
            what = "1,000,000 %s frames, their acknowledgements unread" % kind
            expect_flood_ends_connection(port_of(g.base), raw, what, goaway=False)
            expect_bounded(g, what)


def check_empty_frame_flood_ends_the_connection(binary):
    with Gateway(binary) as g:
        raw = Raw(port_of(g.base))
        raw.send(raw.headers(1, "POST", "/v1/upload", end_stream=False),
                 *[DataFrame(1, b"") for _ in range(5000)])
        expect_flood_ends_connection(port_of(g.base), raw, "5,000 empty DATA frames",
                                     ENHANCE_YOUR_CALM)


def check_frames_that_make_the_server_reset_end_the_connection(binary):
    with Gateway(binary) as g:
        raw = Raw(port_of(g.base))
        # Each a request the server must reset (PROTOCOL_ERROR).
        raw.send(*[raw.headers(1 + 2 * i, "GET", "/v1/health", [("connection", "close")])
                   for i in range(3000)])
        expect_flood_ends_connection(port_of(g.base), raw,
                                     "3,000 streams each with a connection-specific field",
                                     ENHANCE_YOUR_CALM)


def check_streams_past_the_concurrency_limit_end_the_connection(binary):
    with Gateway(binary) as g:
        port = port_of(g.base)
        c = Client(port)
        try:
            open_ = [c.request("POST", "/v1/upload", end_stream=False) for _ in range(100)]
            # h2 keeps to the server's SETTINGS; the 101st is sent as a raw frame. Past a
            # limit the client has acknowledged, nghttp2 ends the connection (RFC 9113
            # §5.1.2 allows that or REFUSED_STREAM).
            c.pump(lambda: c.conn.remote_settings.max_concurrent_streams == 100)
            h = HeadersFrame(open_[-1] + 2, c.conn.encoder.encode(
                [(":method", "GET"), (":path", "/v1/health"), (":scheme", "http"),
                 (":authority", c.authority)]))
            h.flags.add("END_HEADERS")
            h.flags.add("END_STREAM")
            c.sock.sendall(h.serialize())
            away = goaway_of(frames_until_close(c.sock))
            expect(away is not None and away.error_code == ErrorCodes.PROTOCOL_ERROR,
                   "the 101st stream: GOAWAY PROTOCOL_ERROR, got %r" % away)
        finally:
            c.close()  # 100 uploads abandoned mid-body
        expect_served(port, "100 uploads abandoned with their connection")


# --- the drain, and load ----------------------------------------------------------------

def check_drain_says_goaway_and_finishes_the_streams_in_flight(binary):
    if not shutil.which("nghttp"):
        raise CheckFailed("no nghttp (Debian: nghttp2-client; scripts/install-deps installs it)")
    with Gateway(binary) as g:
        # identity: a gzip-coded event stream cannot end cleanly once writes are refused
        # (its coder's last bytes are a write too), so the drain cuts it, as over HTTP/1.1.
        client = subprocess.Popen(["nghttp", "-nv", "-H", "accept-encoding: identity",
                                   g.base + "/v1/events?count=30"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = ""
        for line in client.stdout:
            seen += line
            if "recv DATA frame" in line:
                break
        g.process.send_signal(signal.SIGTERM)
        rest, _ = client.communicate(timeout=20)
        seen += rest
        expect(re.search(r"recv GOAWAY frame.*\n.*error_code=NO_ERROR", seen),
               "a GOAWAY (NO_ERROR) at the drain; nghttp showed:\n%s" % seen[-1500:])
        after = seen.split("recv GOAWAY", 1)[-1]
        expect("; END_STREAM" in after and "RST_STREAM" not in after,
               "after the GOAWAY the event stream ends cleanly (END_STREAM, no reset); nghttp "
               "showed:\n%s" % seen[-1500:])
        expect(client.returncode == 0, "nghttp exits 0, got %d" % client.returncode)
        expect(g.process.wait(timeout=15) == 0, "the gateway exits 0 after the drain")


def check_h2load_many_streams_without_errors(binary):
    if not shutil.which("h2load"):
        raise CheckFailed("no h2load (Debian: nghttp2-client; scripts/install-deps installs it)")
    g = Gateway(binary)
    work = tempfile.mkdtemp(prefix="gateway-h2load-")
    try:
        upload = os.path.join(work, "upload")
        with open(upload, "wb") as f:
            f.write(os.urandom(100_000))
        for args, n in [([g.base + "/v1/health"], 200_000),
                        (["-d", upload, g.base + "/v1/upload"], 2_000),
                        ([g.base + "/v1/events?count=1"], 200)]:
            run = subprocess.run(["h2load", "-n", str(n), "-c", "16", "-m", "32"] + args,
                                 capture_output=True, text=True, timeout=300)
            out = run.stdout
            m = re.search(r"requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, "
                          r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
            expect(run.returncode == 0 and m, "h2load ran: %s %s" % (out[-800:], run.stderr))
            expect(m.group(2) == str(n) and m.group(3) == "0" and m.group(4) == "0",
                   "h2load %s: %d succeeded, none failed or errored: %s" % (args[-1], n, m.group(0)))
            expect(re.search(r"status codes: %d 2xx" % n, out), "every answer 2xx: %s" % out[-600:])
    finally:
        g.stop()
        shutil.rmtree(work, ignore_errors=True)


CHECKS = [
    check_printed_curl_lines_answer_alike_over_http11_and_h2c,
    check_tls_listener_selects_h2_by_alpn_and_still_serves_http11,
    check_streams_of_one_connection_are_answered_each,
    check_requests_get_the_same_answers_however_their_bytes_are_cut,
    check_head_answers_every_kind_without_a_body,
    check_access_log_and_metrics_name_the_protocol,
    check_cookie_crumbs_are_joined_into_one_field,
    check_request_rules_answer_the_stream_and_keep_the_connection,
    check_body_length_must_match_content_length,
    check_early_answer_refuses_the_rest_of_the_request,
    check_clients_gone_mid_stream_leave_no_connection_behind,
    check_bodies_read_whole_share_a_budget_per_connection,
    check_closed_window_holds_the_response_and_other_clients_are_served,
    check_timeouts_end_what_stalls,
    check_rapid_reset_ends_the_connection,
    check_continuation_flood_ends_the_connection,
    check_control_frame_floods_end_the_connection,
    check_empty_frame_flood_ends_the_connection,
    check_frames_that_make_the_server_reset_end_the_connection,
    check_streams_past_the_concurrency_limit_end_the_connection,
    check_drain_says_goaway_and_finishes_the_streams_in_flight,
    check_h2load_many_streams_without_errors,
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    only = os.environ.get("HTTP2_CHECKS")  # a comma-separated subset, for a developer
    checks = [c for c in CHECKS if not only or c.__name__[len("check_"):] in only.split(",")]
    return run_checks("http2_test", checks, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
