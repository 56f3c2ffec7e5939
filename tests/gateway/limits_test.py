#!/usr/bin/python3
"""What the gateway holds for a request besides its connection, each against a limit
(issue #29): the descriptor of a proxied request's upstream socket, of an upload's
temporary file and of a static file being sent (the server's descriptor budget,
--max-connections: 503 with Retry-After),
and the bytes of temporary disk that uploads fill together (--upload-disk-budget: 507 with
Retry-After). Real clients over loopback: curl for the refused and the later requests, a
tiny upstream that answers when told to, raw sockets for the requests held open.

usage: limits_test.py GATEWAY_BINARY

No check depends on timing: a held request is held by the test (the upstream answers when
told; an upload waits for its 100 Continue, sent once its disk is checked), and what is
taken or given back asynchronously (an upload's disk is the bytes the gateway has read) is
polled for, a bounded number of times.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_test import CheckFailed, Gateway, curl, expect, run_checks  # noqa: E402

WWW = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "examples", "www")
MAX_CONNECTIONS = 4
UPLOAD_BYTES = 600_000
DISK_BUDGET = 1_000_000  # one upload of UPLOAD_BYTES fits, two do not
POLLS = 100              # of the budget's return, 50 ms apart at most
HOLD_WAIT_S = 10         # the longest wait for a held request to arrive (a failure, not a bound)


class HeldUpstream:
    """Answers each request with 200 "ok" and Connection: close; a path holding "hold" is
    answered only after release()."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.arrived = threading.Event()
        self.released = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            if b"hold" in head.split(b"\r\n", 1)[0]:
                self.arrived.set()
                self.released.wait()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    def close(self):
        self.released.set()
        self.listener.close()


def port_of(base):
    return int(base.rsplit(":", 1)[1])


def keep_alive_get(sock, path):
    """A GET on an open connection; returns the status."""
    sock.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        expect(chunk, "the keep-alive connection closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1])


def start_held_upload(base, length, sent=1000):
    """An upload whose header is in and whose file the gateway holds, with `sent` bytes of
    its body sent: the test waits for the 100 Continue that the route's first read sends,
    after its checks. Its disk is what the gateway has read of those bytes."""
    sock = socket.create_connection(("127.0.0.1", port_of(base)))
    sock.settimeout(HOLD_WAIT_S)
    sock.sendall(b"POST /v1/upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                 b"Content-Length: %d\r\n\r\n" % length)
    interim = sock.recv(4096)
    expect(interim.startswith(b"HTTP/1.1 100"), "a held upload: 100 Continue, got %r" % interim[:200])
    sock.sendall(b"x" * sent)
    return sock


def declared_upload_status(base, length):
    """The status a declared upload of `length` gets before its body: 100 when it may send
    it (then it leaves, having sent nothing, so that it takes no disk from the others)."""
    with socket.create_connection(("127.0.0.1", port_of(base))) as sock:
        sock.settimeout(HOLD_WAIT_S)
        sock.sendall(b"POST /v1/upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                     b"Content-Length: %d\r\n\r\n" % length)
        return int(sock.recv(4096).split()[1])


def finish_upload(sock, length, sent=1000):
    sock.sendall(b"x" * (length - sent))
    data = b""
    while b"}" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    return data.decode(errors="replace")


def upload_file(size):
    f = tempfile.NamedTemporaryFile(prefix="limits-test-", delete=False)
    f.write(b"y" * size)
    f.close()
    return f.name


def curl_upload(base, path, *extra):
    return curl(["curl", "-i", "-X", "POST", "-T", path, base + "/v1/upload"] + list(extra))


def expect_refusal(r, status, words, what):
    expect(r.status == status, "%s: %d, got %r" % (what, status, r))
    expect(r.header("Retry-After") == "1", "%s: Retry-After: 1, got %r" % (what, r.header("Retry-After")))
    expect((r.header("Content-Type") or "").startswith("application/problem+json"),
           "%s: a problem document, got Content-Type %r" % (what, r.header("Content-Type")))
    detail = r.json().get("detail", "")
    expect(words in detail, "%s: the detail names %r, got %r" % (what, words, detail))


def descriptors_in_use(base):
    r = curl(["curl", "-i", base + "/metrics"])
    m = re.search(r"^waypoint_server_descriptors_in_use (\d+)$", r.body, re.M)
    expect(m, "/metrics has waypoint_server_descriptors_in_use")
    return int(m.group(1))


def poll(condition, what):
    for _ in range(POLLS):
        if condition():
            return
        time.sleep(0.05)
    raise CheckFailed(what)


def check_proxied_request_past_the_descriptor_budget_is_503_and_others_are_served(binary):
    upstream = HeldUpstream()
    g = Gateway(binary, "--max-connections", str(MAX_CONNECTIONS),
                "--upstream", "http://127.0.0.1:%d" % upstream.port)
    held = idle = None
    try:
        # One connection and its upstream socket: two of the four.
        held = subprocess.Popen(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                 "--max-time", "20", g.base + "/v1/proxy/hold"],
                                stdout=subprocess.PIPE, text=True)
        expect(upstream.arrived.wait(HOLD_WAIT_S), "the held request reached the upstream")
        idle = socket.create_connection(("127.0.0.1", port_of(g.base)))  # three
        expect(keep_alive_get(idle, "/v1/health") == 200, "a request on a connection within the budget")
        # The fourth connection is served, its upstream socket would be the fifth.
        r = curl(["curl", "-i", g.base + "/v1/proxy/quick"])
        expect_refusal(r, 503, "a connection to the upstream (a descriptor)",
                       "a proxied request past the descriptor budget")
        expect(keep_alive_get(idle, "/v1/health") == 200, "the server goes on serving the others")
        upstream.released.set()
        expect(held.communicate(timeout=20)[0] == "200", "the held request completes with 200")
        idle.close()
        idle = None
        # Everything given back: the /metrics request's own connection is all that is held.
        poll(lambda: descriptors_in_use(g.base) == 1, "the descriptor budget comes back")
        r = curl(["curl", "-i", g.base + "/v1/proxy/quick"])
        expect(r.status == 200 and r.body == "ok", "a proxied request once the budget is back: 200, got %r" % r)
    finally:
        if held and held.poll() is None:
            held.kill()
        if idle:
            idle.close()
        g.stop()
        upstream.close()


def check_upload_past_the_descriptor_budget_is_503_and_the_budget_comes_back(binary):
    g = Gateway(binary, "--max-connections", str(MAX_CONNECTIONS))
    sample = upload_file(1000)
    holder = idle = None
    try:
        holder = start_held_upload(g.base, UPLOAD_BYTES)  # its connection and its file: two
        idle = socket.create_connection(("127.0.0.1", port_of(g.base)))  # three
        expect(keep_alive_get(idle, "/v1/health") == 200, "a request on a connection within the budget")
        r = curl_upload(g.base, sample)  # the fourth connection; its file would be the fifth
        expect_refusal(r, 503, "the upload's temporary file (a descriptor)",
                       "an upload past the descriptor budget")
        expect(keep_alive_get(idle, "/v1/health") == 200, "the server goes on serving the others")
        answer = finish_upload(holder, UPLOAD_BYTES)
        holder = None
        expect('"bytes":%d' % UPLOAD_BYTES in answer, "the held upload completes, got %r" % answer[-300:])
        idle.close()
        idle = None
        poll(lambda: descriptors_in_use(g.base) == 1, "the descriptor budget comes back")
        r = curl_upload(g.base, sample)
        expect(r.status == 201, "an upload once the budget is back: 201, got %r" % r)
    finally:
        for s in (holder, idle):
            if s:
                s.close()
        os.unlink(sample)
        g.stop()


def check_static_file_past_the_descriptor_budget_is_503_and_the_budget_comes_back(binary):
    """From disk (--www): the open file is a descriptor of the budget. Compiled in (the
    default), the same file needs none and is answered while the budget is spent."""
    g = Gateway(binary, "--max-connections", str(MAX_CONNECTIONS), "--www", WWW)
    embedded = Gateway(binary, "--max-connections", str(MAX_CONNECTIONS))
    holder = idle = None
    try:
        holder = start_held_upload(g.base, UPLOAD_BYTES)  # its connection and its file: two
        idle = socket.create_connection(("127.0.0.1", port_of(g.base)))  # three
        expect(keep_alive_get(idle, "/v1/health") == 200, "a request on a connection within the budget")
        r = curl(["curl", "-i", g.base + "/style.css"])  # the fourth; the file would be the fifth
        expect_refusal(r, 503, "the file's descriptor (a descriptor)",
                       "a static file past the descriptor budget")
        held = start_held_upload(embedded.base, UPLOAD_BYTES)
        spare = socket.create_connection(("127.0.0.1", port_of(embedded.base)))
        try:
            expect(keep_alive_get(spare, "/v1/health") == 200, "a request within the budget")
            r = curl(["curl", "-i", embedded.base + "/style.css"])
            expect(r.status == 200, "a compiled-in file with the descriptor budget spent: 200, got %r" % r)
        finally:
            finish_upload(held, UPLOAD_BYTES)
            spare.close()
        finish_upload(holder, UPLOAD_BYTES)
        holder = None
        r = curl(["curl", "-i", g.base + "/style.css"])
        expect(r.status == 200 and r.body, "the file once the budget is back: 200, got %r" % r)
        idle.close()
        idle = None
        poll(lambda: descriptors_in_use(g.base) == 1,
             "the file's descriptor goes back once its body is out")
    finally:
        for s in (holder, idle):
            if s:
                s.close()
        g.stop()
        embedded.stop()


def check_uploads_past_the_disk_budget_are_507_while_the_first_completes(binary):
    g = Gateway(binary, "--upload-disk-budget", str(DISK_BUDGET))
    sample = upload_file(UPLOAD_BYTES)
    holder = None
    held = UPLOAD_BYTES - 1000
    try:
        holder = start_held_upload(g.base, UPLOAD_BYTES, sent=held)  # 599,000 of the 1,000,000
        # Once the gateway has read them, what is free (401,000) no longer fits a declared 600,000.
        poll(lambda: declared_upload_status(g.base, UPLOAD_BYTES) == 507,
             "a declared upload is refused once the held one's bytes are in")
        r = curl_upload(g.base, sample)  # declared: refused before its body is sent
        expect_refusal(r, 507, "temporary disk for uploads", "a declared upload past the disk budget")
        # Chunked (no length): counted as it arrives, refused once past the budget. The
        # answer comes while curl still sends; the connection closes after it.
        chunked = subprocess.run(
            ["curl", "-s", "-i", "--max-time", "20", "-X", "POST", "-T", "-",
             "-H", "Expect:", g.base + "/v1/upload"],
            input=b"z" * UPLOAD_BYTES, capture_output=True)
        out = chunked.stdout.decode(errors="replace")
        expect(re.match(r"HTTP/1.1 507", out), "a chunked upload past the disk budget: 507, got %r (curl exit %d)"
               % (out[:300], chunked.returncode))
        expect(re.search(r"(?im)^retry-after: 1\r?$", out), "the chunked 507 has Retry-After: 1")
        answer = finish_upload(holder, UPLOAD_BYTES, sent=held)
        holder = None
        expect('"bytes":%d' % UPLOAD_BYTES in answer, "the first upload completes, got %r" % answer[-300:])
        # A client that leaves mid-body gives its bytes back too.
        leaver = start_held_upload(g.base, UPLOAD_BYTES, sent=held)
        leaver.close()
        statuses = []

        def next_upload_fits():
            statuses.append(curl_upload(g.base, sample).status)
            return statuses[-1] == 201
        poll(next_upload_fits, "an upload fits once the others have ended, got %r" % statuses[-5:])
        expect(set(statuses) <= {201, 507}, "only 507 before the budget is back, got %r" % statuses)
    finally:
        if holder:
            holder.close()
        os.unlink(sample)
        g.stop()


def check_uploads_that_declare_much_and_send_little_hold_only_what_they_sent(binary):
    """Issue #44: two uploads that declared 1 GiB each and trickled held the whole 2 GiB
    budget, and every other upload got 507. Disk is reserved as bytes arrive: two uploads
    declaring half the budget each and sending 1,000 bytes leave room for a third."""
    g = Gateway(binary, "--upload-disk-budget", str(DISK_BUDGET))
    sample = upload_file(UPLOAD_BYTES)
    slow = []
    try:
        for _ in range(2):
            slow.append(start_held_upload(g.base, DISK_BUDGET // 2))
        r = curl_upload(g.base, sample)
        expect(r.status == 201 and '"bytes":%d' % UPLOAD_BYTES in r.body,
               "an upload beside two slow ones that declared the whole budget: 201, got %r" % r)
        for sock in slow:
            sock.close()
        slow = []
    finally:
        for sock in slow:
            sock.close()
        os.unlink(sample)
        g.stop()


CHECKS = [
    check_proxied_request_past_the_descriptor_budget_is_503_and_others_are_served,
    check_upload_past_the_descriptor_budget_is_503_and_the_budget_comes_back,
    check_static_file_past_the_descriptor_budget_is_503_and_the_budget_comes_back,
    check_uploads_past_the_disk_budget_are_507_while_the_first_completes,
    check_uploads_that_declare_much_and_send_little_hold_only_what_they_sent,
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    return run_checks("limits_test", CHECKS, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
