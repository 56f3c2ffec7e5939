#!/usr/bin/python3
"""The gateway's mounted child service (waypoint::app::mount, examples/child.hpp) end to end:
waypoint-example-child run by the gateway in its own process and reached through /v1/child,
as an operator meets it. Lazy start (no child in the process table until the first request),
HEAD, a 200 KB POST byte for byte and the gateway's X-Request-Id, a server-sent event stream
passed on event by event, a WebSocket echo relayed, curl --unix-socket through the gateway's
own unix listener, a child killed with SIGKILL under load (503 problem documents with
Retry-After, then a new process), 20 reloads (SIGHUP) under wrk with no failed request, flat
RSS, one child and one socket file left, the idle stop, and SIGTERM taking the child along.

Each gateway listens on a free loopback port and a unix socket in a temporary directory,
with XDG_RUNTIME_DIR pointed at a directory of its own, where its child's sockets go. Every
process the test starts (gateways, wrk) is stopped by its PID; a child the gateway left
behind is killed by its PID too, and the check fails.

usage: child_service_test.py GATEWAY_BINARY     (waypoint-example-child beside it)

Exits 77 (skipped) when wrk or python3-websockets is missing unless WAYPOINT_REQUIRE_ALL is set (scripts/install-deps
load / ops), after the other checks passed.
"""
import asyncio
import http.client
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gateway_test  # noqa: E402
from gateway_test import CheckFailed, curl, expect, run_checks  # noqa: E402

try:
    import websockets
    import websockets.exceptions
except ImportError:
    websockets = None

PREFIX = "/v1/child"
START_TIMEOUT_S = 10
HTTP_TIMEOUT_S = 5
# /proc/PID/stat's comm: the executable's name cut to 15 bytes (TASK_COMM_LEN - 1).
CHILD_COMM = "waypoint-example-child"[:15]
HELLO = re.compile(r"^hello from pid (\d+)\n$")
# How long a child may take to go after it was told to (a reload's drain, an idle stop).
CHILD_EXIT_S = 5
# After a SIGKILL: back to 200 from a new process within this (restart_delay is 100 ms).
RECOVERY_S = 3.0
RELOADS = 20
# wrk runs from before the first reload to after the last; a debug build answers thousands.
WRK_MIN_REQUESTS = 200
# The gateway's RSS may grow this much from reload 5 to reload 20: a process (its upstream
# pool, its supervisor's state) must not be kept per reload.
RSS_GROWTH_BOUND_KIB = 8 * 1024


def sanitized(binary):
    """Whether `binary` is built with AddressSanitizer, whose quarantine holds freed memory
    (256 MiB by default): there RSS says nothing about what is kept per reload, and
    LeakSanitizer checks for leaks at exit instead."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()
IDLE_STOP_MS = 1000
# After the idle period, the supervisor checks every idle_stop/4 and the child drains.
IDLE_GONE_S = 3.0


def stat_of(pid):
    """(comm, state, ppid) from /proc/PID/stat, or None when the process is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # comm is in parentheses and may hold spaces or ')': the fields after the last ')'.
    comm = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    return comm, fields[0], int(fields[1])


def children_of(parent):
    """The pids of waypoint-example-child processes whose parent is `parent` (zombies
    included: a child exited but not reaped is still the gateway's)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        s = stat_of(int(entry))
        if s and s[2] == parent and s[0] == CHILD_COMM:
            found.append(int(entry))
    return sorted(found)


def is_live_child(pid):
    s = stat_of(pid)
    return s is not None and s[0] == CHILD_COMM and s[1] != "Z"


def wait_until(condition, timeout, step=0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(step)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise CheckFailed("no VmRSS in /proc/%d/status" % pid)


class Scratch:
    """A temporary directory: the gateway's unix socket, and its XDG_RUNTIME_DIR."""

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="gateway-child-")
        self.runtime = os.path.join(self.dir, "run")
        os.mkdir(self.runtime, 0o700)
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)


class ChildGateway:
    """The gateway on a free port and a unix socket, its stdout and stderr read as they come
    (the child's supervisor logs to stderr, and an unread pipe would block it)."""

    def __init__(self, binary, scratch, idle_stop_ms=600_000):
        self.unix_path = os.path.join(scratch.dir, "gw.sock")
        self.runtime = scratch.runtime
        env = dict(os.environ, XDG_RUNTIME_DIR=scratch.runtime)
        self.process = subprocess.Popen(
            [binary, "--port", "0", "--quiet", "--drain-grace", "0", "--unix", self.unix_path,
             "--child-idle-stop", str(idle_stop_ms)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.pid = self.process.pid
        self.seen_children = set()
        self._lock = threading.Condition()
        self.out, self.err = [], []
        self._readers = [threading.Thread(target=self._read, args=(s, l), daemon=True)
                         for s, l in ((self.process.stdout, self.out), (self.process.stderr, self.err))]
        for t in self._readers:
            t.start()
        listening = self.wait_for(self.out, re.compile(r"^waypoint-gateway: \d+ routes on (http://\S+)$"),
                                  START_TIMEOUT_S)
        if not listening:
            self.stop()
            raise CheckFailed("the gateway printed no 'routes on http://...' line; stdout %r, stderr %r"
                              % (self.out[:5], self.err[-5:]))
        self.base = listening.group(1)
        m = re.match(r"http://([^:/]+):(\d+)", self.base)
        self.host, self.port = m.group(1), int(m.group(2))

    def _read(self, stream, lines):
        for line in stream:
            with self._lock:
                lines.append(line.rstrip("\n"))
                m = re.search(r"child example: started pid (\d+)", line)
                if m:
                    self.seen_children.add(int(m.group(1)))
                self._lock.notify_all()

    def wait_for(self, lines, pattern, timeout, after=0):
        """The first match of `pattern` among lines[after:], waiting up to `timeout`."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for line in lines[after:]:
                    m = pattern.search(line)
                    if m:
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._lock.wait(left)

    def log_count(self):
        with self._lock:
            return len(self.err)

    def log_tail(self, n=8):
        with self._lock:
            return self.err[-n:]

    def connection(self):
        return http.client.HTTPConnection(self.host, self.port, timeout=HTTP_TIMEOUT_S)

    def request(self, method, path, body=None, headers=None, conn=None):
        """(status, headers, body bytes) of one request, on `conn` or a connection of its own."""
        own = conn is None
        conn = conn or self.connection()
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, r.headers, r.read()
        finally:
            if own:
                conn.close()

    def hello_pid(self, conn=None):
        """GET /v1/child/hello: must be 200 naming a pid; the pid."""
        status, headers, body = self.request("GET", PREFIX + "/hello", conn=conn)
        m = HELLO.match(body.decode(errors="replace"))
        expect(status == 200 and m, "GET %s/hello: 200 'hello from pid N', got %d %r (log %r)"
               % (PREFIX, status, body[:200], self.log_tail()))
        return int(m.group(1))

    def children(self):
        found = children_of(self.pid)
        self.seen_children.update(found)
        return found

    def stop(self):
        """SIGTERM, by PID; the exit code (None when it had to be killed). Any child left
        behind is killed by its PID."""
        code = None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                code = self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        else:
            code = self.process.returncode
        for t in self._readers:
            t.join(timeout=2)
        self.leftovers = [pid for pid in sorted(self.seen_children) if is_live_child(pid)]
        for pid in self.leftovers:
            os.kill(pid, signal.SIGKILL)
        return code


def gateway(binary, scratch, **kwargs):
    """A context manager: the gateway, stopped at the end whatever happened; a check that
    passed fails when a child outlived the gateway."""
    class Running:
        def __enter__(self):
            self.g = ChildGateway(binary, scratch, **kwargs)
            return self.g

        def __exit__(self, kind, *exc):
            self.g.stop()
            if kind is None:
                expect(not self.g.leftovers, "the children of gateway pid %d exit with it; left behind %r"
                       % (self.g.pid, self.g.leftovers))
    return Running()


# --- the checks ---------------------------------------------------------------------------

def check_lazy_child_is_absent_until_the_first_request(binary):
    with Scratch() as d, gateway(binary, d) as g:
        time.sleep(0.5)  # time enough for an eager start to show
        expect(g.children() == [], "before any request, no child of gateway pid %d; found %r"
               % (g.pid, g.children()))
        expect(os.listdir(g.runtime) == [], "no child socket before the first request, found %r"
               % os.listdir(g.runtime))
        pid = g.hello_pid()
        expect(g.children() == [pid], "after the first request, one child of the gateway: the pid the "
               "answer names (%d); found %r" % (pid, g.children()))
        expect(re.search(r"child example: started pid %d on %s/" % (pid, re.escape(g.runtime)),
                         "\n".join(g.err)),
               "the gateway logs 'started pid %d on %s/...', got %r" % (pid, g.runtime, g.log_tail()))


def check_head_has_gets_headers_and_post_echoes_200_kb_with_request_id(binary):
    with Scratch() as d, gateway(binary, d) as g:
        conn = g.connection()
        try:
            get_status, get_headers, get_body = g.request("GET", PREFIX + "/hello", conn=conn)
            # HEAD then GET on one keep-alive connection: a body after HEAD's head would be
            # read as the next response's status line.
            head_status, head_headers, head_body = g.request("HEAD", PREFIX + "/hello", conn=conn)
            again = g.hello_pid(conn=conn)
        finally:
            conn.close()
        expect(get_status == 200 and head_status == 200, "GET and HEAD: 200, got %d, %d"
               % (get_status, head_status))
        expect(head_body == b"", "HEAD: no body, got %r" % head_body[:100])
        expect(head_headers.get("Content-Length") == get_headers.get("Content-Length") == str(len(get_body)),
               "HEAD's Content-Length is GET's (%r, a body of %d), got %r"
               % (get_headers.get("Content-Length"), len(get_body), head_headers.get("Content-Length")))
        expect(head_headers.get("Content-Type") == get_headers.get("Content-Type"),
               "HEAD's Content-Type is GET's (%r), got %r"
               % (get_headers.get("Content-Type"), head_headers.get("Content-Type")))
        expect(get_body.decode() == "hello from pid %d\n" % again,
               "the same process answers on the kept-alive connection: %r, then pid %d" % (get_body, again))

        payload = os.urandom(200 * 1024)
        status, headers, body = g.request("POST", PREFIX + "/echo", body=payload,
                                          headers={"Content-Type": "application/octet-stream"})
        expect(status == 200, "POST %s/echo of 200 KB: 200, got %d %r" % (PREFIX, status, body[:200]))
        if body != payload:
            differs = next((i for i, (a, b) in enumerate(zip(body, payload)) if a != b), None)
            raise CheckFailed("the echo is the body byte for byte: sent %d bytes, got %d%s"
                              % (len(payload), len(body),
                                 "" if differs is None else ", first difference at byte %d" % differs))
        ids = headers.get_all("X-Request-Id") or []
        expect(len(ids) == 1 and ids[0], "one X-Request-Id, the gateway's, on the forwarded answer; got %r" % ids)


def read_chunked_stream(host, port, path, timeout):
    """A raw GET: (head, [(seconds since the request, bytes)]), up to the last chunk."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        started = time.monotonic()
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n"
                   "Connection: close\r\n\r\n" % (path, host, port)).encode())
        received, arrivals = b"", []
        while not received.endswith(b"\r\n0\r\n\r\n"):
            piece = s.recv(65536)
            if not piece:
                break
            received += piece
            arrivals.append((time.monotonic() - started, received))
    head, _, _ = received.partition(b"\r\n\r\n")
    return head.decode(errors="replace"), arrivals


def dechunk(data):
    body = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return body
        body, data = body + data[:size], data[size + 2:]


def check_event_stream_is_passed_on_event_by_event_chunked(binary):
    count, interval_ms = 3, 300
    with Scratch() as d, gateway(binary, d) as g:
        g.hello_pid()  # started: the stream's timing is the child's, not its start
        head, arrivals = read_chunked_stream(
            g.host, g.port, "%s/events?count=%d&interval_ms=%d" % (PREFIX, count, interval_ms), 10)
        expect(head.startswith("HTTP/1.1 200"), "GET %s/events: 200, got %r" % (PREFIX, head))
        fields = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip()
                  for l in head.split("\r\n")[1:]}
        expect(fields.get("transfer-encoding") == "chunked" and "content-length" not in fields,
               "the stream is chunked, with no Content-Length; head %r" % head)
        expect(fields.get("content-type", "").startswith("text/event-stream"),
               "Content-Type text/event-stream, got %r" % fields.get("content-type"))
        expect(arrivals and arrivals[-1][1].endswith(b"\r\n0\r\n\r\n"), "the stream ends with the last "
               "chunk; got %r" % (arrivals[-1][1][-200:] if arrivals else b""))
        first_event = next((t for t, so_far in arrivals if b"data:" in so_far.partition(b"\r\n\r\n")[2]), None)
        ended = arrivals[-1][0]
        # The child waits interval_ms between events: buffered, all would arrive at the end.
        expect(first_event is not None and ended - first_event >= (count - 1) * interval_ms / 1000 * 0.75,
               "the first event arrives %d ms or more before the end (streamed, not buffered); "
               "it came at %s s, the end at %.3f s"
               % ((count - 1) * interval_ms * 0.75, first_event, ended))
        body = dechunk(arrivals[-1][1].partition(b"\r\n\r\n")[2]).decode()
        ticks = re.findall(r'^data: \{"tick":(\d+)\}$', body, re.M)
        expect(ticks == [str(i) for i in range(1, count + 1)], "events tick 1..%d, got %r" % (count, body))


async def websocket_echo(url):
    async with websockets.connect(url, open_timeout=HTTP_TIMEOUT_S, close_timeout=HTTP_TIMEOUT_S) as ws:
        for message in ["hello through the mount", bytes(range(256)) * 40]:
            await ws.send(message)
            got = await asyncio.wait_for(ws.recv(), HTTP_TIMEOUT_S)
            if got != message:
                raise CheckFailed("WebSocket echo of a %s message of %d: got a %s one of %d"
                                  % (type(message).__name__, len(message), type(got).__name__, len(got)))
        await ws.close()
        return ws.close_code, ws.close_reason


def check_websocket_through_the_mount_echoes_and_closes_cleanly(binary):
    if websockets is None:
        gateway_test.skip_unless_required("python3-websockets is missing (scripts/install-deps ops)")
    with Scratch() as d, gateway(binary, d) as g:
        url = "ws://%s:%d%s/ws" % (g.host, g.port, PREFIX)
        try:
            code, reason = asyncio.run(websocket_echo(url))
        except (websockets.exceptions.WebSocketException, asyncio.TimeoutError) as e:
            raise CheckFailed("WebSocket to %s: %s: %s (log %r)" % (url, type(e).__name__, e, g.log_tail()))
        expect(code == 1000, "the client's close is answered 1000 (normal), got %r %r" % (code, reason))
        # Twice more: a relayed connection that did not end would hold the child's thread.
        for _ in range(2):
            code, _ = asyncio.run(websocket_echo(url))
            expect(code == 1000, "another WebSocket closes with 1000, got %r" % code)
        g.hello_pid()


def check_curl_over_the_gateways_unix_socket_reaches_the_child(binary):
    with Scratch() as d, gateway(binary, d) as g:
        r = curl(["curl", "-i", "--unix-socket", g.unix_path, "http://localhost%s/hello" % PREFIX])
        m = HELLO.match(r.body)
        expect(r.status == 200 and m, "curl --unix-socket %s .../v1/child/hello: 200 'hello from pid N', "
               "got %r" % (g.unix_path, r))
        expect(g.children() == [int(m.group(1))], "the pid named is the gateway's child: %s, children %r"
               % (m.group(1), g.children()))


class Load:
    """Threads looping GET /v1/child/hello on kept-alive connections, recording every answer
    (status, Content-Type, Retry-After, body) or the connection's error, and when."""

    def __init__(self, g, threads=4):
        self.g, self.stop_flag, self.answers, self.lock = g, threading.Event(), [], threading.Lock()
        self.threads = [threading.Thread(target=self._loop, daemon=True) for _ in range(threads)]
        for t in self.threads:
            t.start()

    def _loop(self):
        conn = self.g.connection()
        while not self.stop_flag.is_set():
            try:
                conn.request("GET", PREFIX + "/hello")
                r = conn.getresponse()
                answer = (time.monotonic(), r.status, r.headers.get("Content-Type"),
                          r.headers.get("Retry-After"), r.read().decode(errors="replace"))
                if r.will_close:
                    conn.close()
            except (OSError, http.client.HTTPException) as e:
                answer = (time.monotonic(), "error", type(e).__name__, str(e), "")
                conn.close()
            with self.lock:
                self.answers.append(answer)
        conn.close()

    def since(self, t):
        with self.lock:
            return [a for a in self.answers if a[0] >= t]

    def stop(self):
        self.stop_flag.set()
        for t in self.threads:
            t.join(timeout=HTTP_TIMEOUT_S + 1)


def check_child_killed_under_load_is_503_problem_then_a_new_process(binary):
    with Scratch() as d, gateway(binary, d) as g:
        old = g.hello_pid()
        load = Load(g)
        try:
            time.sleep(0.3)
            killed_at = time.monotonic()
            os.kill(old, signal.SIGKILL)
            recovered = wait_until(
                lambda: next((a for a in load.since(killed_at)
                              if a[1] == 200 and a[4] != "hello from pid %d\n" % old), None), RECOVERY_S + 2)
            time.sleep(0.2)  # answers of the new process on every thread
        finally:
            load.stop()
        answers = load.since(0)
        expect(len(answers) > 50, "the load made requests: %d answers" % len(answers))
        odd = [a for a in answers if a[1] not in (200, 503)]
        expect(not odd, "every answer is 200 or 503; %d of %d are not, first %r (log %r)"
               % (len(odd), len(answers), odd[:3], g.log_tail()))
        unavailable = [a for a in answers if a[1] == 503]
        expect(unavailable, "some answers are 503 while the child restarts; of %d after the kill none was "
               "(log %r)" % (len(load.since(killed_at)), g.log_tail()))
        bad = [a for a in unavailable if a[2] != "application/problem+json" or not (a[3] or "").isdigit()]
        expect(not bad, "a 503 is a problem document (application/problem+json) with Retry-After seconds; "
               "%d are not, first %r" % (len(bad), bad[:2]))
        expect(recovered, "200 from a new process within %.0f s of the kill; the last answers %r (log %r)"
               % (RECOVERY_S, answers[-3:], g.log_tail()))
        took = recovered[0] - killed_at
        expect(took <= RECOVERY_S, "200 again within %.1f s of the kill, took %.2f s" % (RECOVERY_S, took))
        new = int(HELLO.match(recovered[4]).group(1))
        expect(g.children() == [new], "the new pid %d is the gateway's one child; children %r"
               % (new, g.children()))
        print("  kill -9 under load: %d answers, %d of them 503, 200 again from pid %d after %.2f s"
              % (len(answers), len(unavailable), new, took))


def wrk_report_counts(text):
    """Socket errors and non-2xx/3xx answers from wrk's report (lines absent when zero)."""
    requests = re.search(r"(\d+) requests in ", text)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return (int(requests.group(1)) if requests else None,
            sum(map(int, errors.groups())) if errors else 0,
            int(non_2xx.group(1)) if non_2xx else 0)


def check_twenty_reloads_under_wrk_fail_no_request_and_leave_one_child(binary):
    wrk = shutil.which("wrk")
    if not wrk:
        gateway_test.skip_unless_required("wrk is missing (Debian's wrk; scripts/install-deps load)")
    with Scratch() as d, gateway(binary, d) as g:
        first = g.hello_pid()
        # wrk stops at SIGINT and prints its report then; the duration is a backstop.
        load = subprocess.Popen([wrk, "-t1", "-c8", "-d120s", "--timeout", "5s", g.base + PREFIX + "/hello"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(0.5)
            serving, rss = first, {}
            reloaded = re.compile(r"child example: reloaded: pid (\d+) serves, pid (\d+) drains")
            for n in range(1, RELOADS + 1):
                mark = g.log_count()
                os.kill(g.pid, signal.SIGHUP)
                m = g.wait_for(g.err, reloaded, START_TIMEOUT_S, after=mark)
                expect(m, "reload %d: the gateway logs 'reloaded: pid N serves, pid %d drains' within %d s; "
                       "log %r" % (n, serving, START_TIMEOUT_S, g.log_tail()))
                expect(int(m.group(2)) == serving, "reload %d drains pid %d, the one serving; log %r"
                       % (n, serving, m.group(0)))
                serving = int(m.group(1))
                expect(g.hello_pid() == serving, "after reload %d, %s/hello names the new pid %d"
                       % (n, PREFIX, serving))
                if n in (5, RELOADS):
                    rss[n] = rss_kib(g.pid)
            if load.poll() is not None:
                raise CheckFailed("wrk ran through the reloads; it exited %r: %r"
                                  % (load.returncode, load.communicate()))
        finally:
            if load.poll() is None:
                load.send_signal(signal.SIGINT)
            try:
                report, wrk_err = load.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                load.kill()
                report, wrk_err = load.communicate()
        requests, socket_errors, non_2xx = wrk_report_counts(report)
        expect(requests and requests >= WRK_MIN_REQUESTS, "wrk reports %d requests or more; it printed %r %r"
               % (WRK_MIN_REQUESTS, report, wrk_err))
        expect(socket_errors == 0 and non_2xx == 0,
               "%d reloads under wrk: 0 socket errors and 0 non-2xx answers, got %d and %d of %d; report %r"
               % (RELOADS, socket_errors, non_2xx, requests, report))
        if not sanitized(binary):
            growth = rss[RELOADS] - rss[5]
            expect(growth < RSS_GROWTH_BOUND_KIB, "the gateway's RSS grows under %d KiB from reload 5 "
                   "to %d: %d KiB then %d KiB" % (RSS_GROWTH_BOUND_KIB, RELOADS, rss[5], rss[RELOADS]))
        left = wait_until(lambda: g.children() == [serving], CHILD_EXIT_S)
        expect(left, "after %d reloads exactly one child remains, pid %d; found %r (log %r)"
               % (RELOADS, serving, g.children(), g.log_tail()))
        # The sockets are in the service's own directory (mode 0700), not in the runtime
        # directory where another user could take their names (issue #44).
        dirs = sorted(os.listdir(g.runtime))
        expect(len(dirs) == 1 and re.match(r"^waypoint-example-\w{6}$", dirs[0]),
               "one directory of the service's in %s; found %r" % (g.runtime, dirs))
        private = os.path.join(g.runtime, dirs[0])
        mode = os.lstat(private).st_mode
        expect(stat.S_ISDIR(mode) and stat.S_IMODE(mode) == 0o700,
               "%s is a directory of mode 0700, got %o" % (private, mode))
        files = sorted(os.listdir(private))
        expect(len(files) == 1 and re.match(r"^\d+\.sock$", files[0]),
               "one socket file left in %s, the serving child's; found %r" % (private, files))
        r = curl(["curl", "-i", "--unix-socket", os.path.join(private, files[0]), "http://localhost/hello"])
        expect(r.body == "hello from pid %d\n" % serving, "the socket left is pid %d's, got %r" % (serving, r))
        print("  %d reloads under wrk: %d requests, 0 failed; RSS %d KiB after reload 5, %d KiB after %d"
              % (RELOADS, requests, rss[5], rss[RELOADS], RELOADS))


def check_idle_child_stops_and_the_next_request_starts_another(binary):
    with Scratch() as d, gateway(binary, d, idle_stop_ms=IDLE_STOP_MS) as g:
        first = g.hello_pid()
        last_request = time.monotonic()
        gone = wait_until(lambda: g.children() == [], IDLE_STOP_MS / 1000 + IDLE_GONE_S)
        expect(gone, "with --child-idle-stop %d the child pid %d is gone within %.1f s of the last request; "
               "children %r (log %r)" % (IDLE_STOP_MS, first, IDLE_STOP_MS / 1000 + IDLE_GONE_S,
                                         g.children(), g.log_tail()))
        idle_for = time.monotonic() - last_request
        expect(idle_for >= IDLE_STOP_MS / 1000, "the child stays %d ms after the last request, gone after %.2f s"
               % (IDLE_STOP_MS, idle_for))
        expect(any("idle for %d ms: stopping pid %d" % (IDLE_STOP_MS, first) in l for l in g.log_tail(20)),
               "the gateway logs 'idle for %d ms: stopping pid %d'; log %r" % (IDLE_STOP_MS, first, g.log_tail()))
        # Removed once the supervisor has reaped the child, a moment after it is gone.
        expect(wait_until(lambda: os.listdir(g.runtime) == [], IDLE_GONE_S),
               "the idle child's socket file and directory are removed; found %r" % os.listdir(g.runtime))
        second = g.hello_pid()
        expect(second != first and g.children() == [second],
               "the next request starts a new child (not pid %d): pid %d, children %r"
               % (first, second, g.children()))


def check_sigterm_stops_the_child_and_the_gateway_exits_0(binary):
    with Scratch() as d:
        g = ChildGateway(binary, d)
        try:
            pid = g.hello_pid()
            expect(g.children() == [pid], "a running child before SIGTERM, got %r" % g.children())
        finally:
            code = g.stop()
        expect(code == 0, "SIGTERM: the gateway exits 0, got %r (log %r)" % (code, g.log_tail()))
        expect(not g.leftovers and not is_live_child(pid),
               "the child pid %d exits with the gateway; left behind %r" % (pid, g.leftovers))
        expect(os.listdir(d.runtime) == [], "no socket file left in %s, found %r"
               % (d.runtime, os.listdir(d.runtime)))


CHECKS = [
    check_lazy_child_is_absent_until_the_first_request,
    check_head_has_gets_headers_and_post_echoes_200_kb_with_request_id,
    check_event_stream_is_passed_on_event_by_event_chunked,
    check_websocket_through_the_mount_echoes_and_closes_cleanly,
    check_curl_over_the_gateways_unix_socket_reaches_the_child,
    check_child_killed_under_load_is_503_problem_then_a_new_process,
    check_twenty_reloads_under_wrk_fail_no_request_and_leave_one_child,
    check_idle_child_stops_and_the_next_request_starts_another,
    check_sigterm_stops_the_child_and_the_gateway_exits_0,
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    if not shutil.which("curl"):
        sys.exit("child_service_test: no curl on PATH (scripts/install-deps consumer installs it)")
    child = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "waypoint-example-child")
    if not os.access(child, os.X_OK):
        sys.exit("child_service_test: %s is missing (the gateway target builds it)" % child)
    return run_checks("child_service_test", CHECKS, sys.argv[1],
                      errors=(http.client.HTTPException,), skipped_code=77)


if __name__ == "__main__":
    sys.exit(main())
