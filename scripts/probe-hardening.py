#!/usr/bin/python3
"""Hardening probes against a running waypoint-gateway over raw loopback sockets.

usage: probe-hardening.py --port N --pid PID [--probes a,b,...] [--sigterm-test]

Prints one line per probe: name | sent | received | RSS before/after where relevant.
Every loop is bounded in count and time and every socket has a timeout; 127.0.0.1 only.
Probe n needs the gateway started under a small descriptor limit (ulimit -n 256); it is
skipped when /proc/PID/limits shows more than 1024. --sigterm-test instead opens one
half-finished request, sends SIGTERM, then a second SIGTERM after 1 s, and times the exit
(this ends the server). Exit status is always 0.
"""
import argparse
import os
import random
import re
import resource
import select
import signal
import socket
import sys
import time

HOST = "127.0.0.1"
ARGS = None


def status_kib(pid, key):
    """A /proc/PID/status memory line (VmRSS, VmHWM) in KiB; -1 when unreadable."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def rss_kib(pid):
    return status_kib(pid, "VmRSS")


def hwm_kib(pid):
    return status_kib(pid, "VmHWM")


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[11]) + int(rest[12])  # utime + stime (fields 14, 15)
    except (OSError, IndexError):
        return -1


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except OSError:
        return False


def connect(timeout=5.0):
    s = socket.create_connection((HOST, ARGS.port), timeout=timeout)
    s.settimeout(timeout)
    return s


def parse_head(data):
    """(status line, headers dict lower-cased, header length) or None if incomplete."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = data[:end].decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return lines[0], headers, end + 4


def read_response(s, timeout=5.0):
    """Reads one response: (status line or closed/timeout/reset, headers, body)."""
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        head = parse_head(data)
        if head:
            status, headers, hlen = head
            want = int(headers.get("content-length", "0") or 0)
            if len(data) - hlen >= want:
                return status, headers, data[hlen:hlen + want]
        left = deadline - time.monotonic()
        if left <= 0:
            return ("timeout" if not data else "timeout(partial:%r)" % data[:60]), {}, b""
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return ("reset" if not data else "reset(partial:%r)" % data[:60]), {}, b""
        except OSError as e:
            return "error:%s" % e, {}, b""
        if not chunk:
            if head:
                return head[0] + " (body cut)", head[1], data[head[2]:]
            return ("closed" if not data else "closed(partial:%r)" % data[:60]), {}, b""
        data += chunk


def stays_open(s, wait=1.0):
    """After a response: 'open' if nothing arrives for `wait` s, 'closed' on EOF."""
    s.settimeout(wait)
    try:
        d = s.recv(1)
        return "closed" if not d else "open(more bytes)"
    except socket.timeout:
        return "open"
    except OSError:
        return "closed(reset)"


def out(name, sent, received, extra=""):
    line = f"{name} | sent: {sent} | got: {received}"
    if extra:
        line += f" | {extra}"
    print(line, flush=True)


def rss_str(before, after):
    return f"RSS {before} -> {after} KiB (+{after - before}), VmHWM {hwm_kib(ARGS.pid)} KiB"


def simple(raw, timeout=5.0):
    s = connect()
    try:
        s.sendall(raw)
        return read_response(s, timeout)
    finally:
        s.close()


# ---------------------------------------------------------------------------------------
def endless(name, prefix, filler):
    before = rss_kib(ARGS.pid)
    s = connect()
    s.settimeout(5.0)
    sent = 0
    stop = "limit reached"
    block = filler * 65536
    start = time.monotonic()
    try:
        s.sendall(prefix)
        for _ in range(1600):  # 1600 * 64 KiB = 100 MiB
            if time.monotonic() - start > 20:
                stop = "20 s passed"
                break
            r, _, _ = select.select([s], [], [], 0)
            if r:
                stop = "server answered/closed"
                break
            s.sendall(block)
            sent += len(block)
    except socket.timeout:
        stop = "send blocked 5 s"
    except OSError as e:
        stop = f"send failed ({e.__class__.__name__})"
    elapsed = time.monotonic() - start
    status, _, body = read_response(s, 5.0)
    s.close()
    time.sleep(0.3)
    after = rss_kib(ARGS.pid)
    out(name, f"{prefix!r} + {sent} bytes of {filler!r} ({stop} after {elapsed:.1f} s)",
        status, rss_str(before, after))


def probe_a():
    endless("a chunk-ext-endless",
            b"POST /v1/iam/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=",
            b"a")


def probe_b():
    endless("b trailer-endless",
            b"POST /v1/iam/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: ",
            b"t")


def probe_c():
    s = connect()
    parts = [b"GET /v1/health HTTP/1.1\r\n", b"Host: x\r\n", b"\r\n"]
    for i, p in enumerate(parts):
        if i:
            time.sleep(0.2)
        s.sendall(p)
    status, _, body = read_response(s)
    s.close()
    out("c header-3-writes", " + ".join(repr(p) for p in parts) + " (0.2 s apart)",
        status, f"body {body[:60]!r}")


class Stream:
    """Counts complete responses in a byte stream."""

    def __init__(self):
        self.buf = b""
        self.count = 0
        self.statuses = {}

    def feed(self, data):
        self.buf += data
        while True:
            head = parse_head(self.buf)
            if not head:
                return
            status, headers, hlen = head
            want = int(headers.get("content-length", "0") or 0)
            if len(self.buf) - hlen < want:
                return
            self.buf = self.buf[hlen + want:]
            self.count += 1
            code = status.split(" ")[1] if " " in status else status
            self.statuses[code] = self.statuses.get(code, 0) + 1


def probe_d():
    n = 10000
    req = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    data = req * n
    rng = random.Random(20261201)
    before = rss_kib(ARGS.pid)
    s = connect()
    s.setblocking(False)
    st = Stream()
    pos = 0
    pieces = 0
    end = "all answered"
    start = time.monotonic()
    deadline = start + 30
    last_progress = start
    while st.count < n:
        now = time.monotonic()
        if now > deadline:
            end = "30 s passed"
            break
        if now - last_progress > 5:
            end = "timeout (5 s without bytes)"
            break
        want_w = [s] if pos < len(data) else []
        r, w, _ = select.select([s], want_w, [], 0.5)
        if w:
            size = rng.randint(1, 4096)
            try:
                k = s.send(data[pos:pos + size])
                pos += k
                pieces += 1
            except BlockingIOError:
                pass
            except OSError as e:
                end = f"send failed ({e.__class__.__name__})"
                break
        if r:
            try:
                chunk = s.recv(262144)
            except BlockingIOError:
                continue
            except OSError as e:
                end = f"recv failed ({e.__class__.__name__})"
                break
            if not chunk:
                end = "closed"
                break
            st.feed(chunk)
            last_progress = time.monotonic()
    s.close()
    after = rss_kib(ARGS.pid)
    out("d pipelining", f"{n} x {req!r} = {len(data)} bytes, {pos} sent in {pieces} random pieces (1..4096, seed 20261201)",
        f"{st.count} responses {st.statuses} ({end}, {time.monotonic() - start:.1f} s)",
        rss_str(before, after))


def probe_e():
    cookie = "; ".join(f"c{i:04d}=" + "v" * 40 for i in range(200))[:9000]
    raw = f"GET /v1/health HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\n\r\n".encode()
    cut = raw.find(b"Cookie: ") + 4500
    s = connect()
    s.sendall(raw[:cut])
    time.sleep(0.2)
    s.sendall(raw[cut:])
    status, _, _ = read_response(s)
    s.close()
    out("e cookie-9KB-2-writes", f"GET /v1/health with Cookie of {len(cookie)} bytes ({len(raw)} bytes total), cut at byte {cut}",
        status)


def probe_f():
    raw = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20480 + b"\r\n\r\n"
    status, _, body = simple(raw)
    out("f header-20KiB", f"GET /v1/health with X-Big of 20480 bytes ({len(raw)} bytes) in one write",
        status, f"body {body[:80]!r}")


def probe_g():
    body = b'{"sku":"KB-101","quantity":1e400}'
    raw = (b"POST /v1/commerce/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    status, _, rb = simple(raw)
    out("g orders-1e400", f"POST /v1/commerce/orders application/json {body!r}", status,
        f"body {rb[:200]!r}")


def probe_h():
    for target in (b"/v1/registry/%2e%2e/%2e%2e/etc/passwd", b"/v1/registry/../../etc/passwd",
                   b"/v1/cloud/storage/b/%2e%2e%2f%2e%2e%2fetc%2fpasswd"):
        status, _, rb = simple(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        out("h encoded-dots", f"GET {target.decode()}", status, f"body {rb[:200]!r}")


def answer_and_after(raw):
    """Sends `raw` in one write; the status, headers and whether the connection stays open."""
    s = connect()
    s.sendall(raw)
    status, headers, _ = read_response(s)
    conn = stays_open(s)
    s.close()
    return status, headers, conn


def probe_i():
    raw = (b"POST /v1/iam/users HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5\r\nhello\r\n0\r\n\r\n")
    status, headers, conn = answer_and_after(raw)
    out("i http10-chunked", repr(raw), status,
        f"Connection: {headers.get('connection', '-')}; afterwards the connection is {conn}")


def probe_j():
    for te in (b"gzip, chunked", b"identity, chunked"):
        raw = (b"POST /v1/iam/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te +
               b"\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        status, _, conn = answer_and_after(raw)
        out("j te-" + te.split(b",")[0].decode(), repr(raw), status, f"then {conn}")


def probe_k():
    raw = (b"POST /v1/iam/users HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 5\r\n\r\n"
           b"hello")
    status, _, conn = answer_and_after(raw)
    out("k expect-200-ok", repr(raw) + " (one write)", status, f"then {conn}")


def probe_l():
    raw = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n"
    s = connect()
    start = time.monotonic()
    s.sendall(raw)
    status, _, _ = read_response(s, 20.0)
    elapsed = time.monotonic() - start
    s.close()
    out("l header-unfinished", f"{raw!r} then silence (up to 20 s)", status, f"after {elapsed:.1f} s")


def probe_m():
    env = "?"
    try:
        with open(f"/proc/{ARGS.pid}/environ", "rb") as f:
            env = ",".join(v.decode() for v in f.read().split(b"\0")
                           if v.startswith((b"LC_ALL=", b"LANG=")))
    except OSError:
        pass
    status, headers, _ = simple(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    date = headers.get("date", "(none)")
    ok = re.fullmatch(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT", date)
    out("m date-locale", f"GET /v1/health (server env: {env or 'no LC_ALL/LANG'})", status,
        f"Date: {date} ({'IMF-fixdate' if ok else 'NOT IMF-fixdate'})")


def ready(socks, event, by_fd, wait_ms=200):
    """The sockets of `socks` ready for `event` within `wait_ms` (poll, not select: past fd 1024)."""
    poller = select.poll()
    for s in socks:
        poller.register(s, event)
    return [by_fd[fd] for fd, _ in poller.poll(wait_ms)]


def probe_n():
    limit = None
    try:
        with open(f"/proc/{ARGS.pid}/limits") as f:
            for line in f:
                if line.startswith("Max open files"):
                    limit = int(line.split()[3])
    except (OSError, ValueError):
        pass
    if limit is None or limit > 1024:
        out("n fd-exhaustion", "skipped", f"server soft RLIMIT_NOFILE {limit}; start it under ulimit -n 256")
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    except (ValueError, OSError):
        pass
    n = 2000
    req = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((HOST, ARGS.port))
        socks.append(s)
    # wait (bounded) for the connects to finish
    pending = set(socks)
    connected = set()
    failed = 0
    deadline = time.monotonic() + 5
    by_fd = {s.fileno(): s for s in socks}
    while pending and time.monotonic() < deadline:
        for s in ready(pending, select.POLLOUT, by_fd):
            pending.discard(s)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected.add(s)
            else:
                failed += 1
    for s in connected:
        try:
            s.send(req)
        except OSError:
            pass
    # CPU while the descriptors are exhausted (all 2,000 held open)
    t0 = cpu_ticks(ARGS.pid)
    time.sleep(2.0)
    t1 = cpu_ticks(ARGS.pid)
    tck = os.sysconf("SC_CLK_TCK")
    cpu_pct = 100.0 * (t1 - t0) / tck / 2.0
    # collect one response (or close) per socket, bounded by 10 s in all
    bufs = {s: b"" for s in connected}
    result = {}
    deadline = time.monotonic() + 10
    open_set = set(connected)
    while open_set and time.monotonic() < deadline:
        for s in ready(open_set, select.POLLIN, by_fd):
            try:
                d = s.recv(65536)
            except OSError:
                d = None
            if not d:
                result[s] = "closed" if d == b"" and not bufs[s] else ("reset" if d is None and not bufs[s] else "partial")
                open_set.discard(s)
                continue
            bufs[s] += d
            if parse_head(bufs[s]):
                result[s] = bufs[s].split(b" ", 2)[1].decode()
                open_set.discard(s)
    counts = {}
    for s in connected:
        k = result.get(s, "no answer in 10 s")
        counts[k] = counts.get(k, 0) + 1
    # during: a fresh connection while the 2,000 are still held
    try:
        st_during, _, _ = simple(req, 3.0)
    except OSError as e:
        st_during = f"connect failed ({e.__class__.__name__})"
    t2 = cpu_ticks(ARGS.pid)
    time.sleep(2.0)
    t3 = cpu_ticks(ARGS.pid)
    cpu2 = 100.0 * (t3 - t2) / tck / 2.0
    for s in socks:
        s.close()
    time.sleep(1.0)
    try:
        st_after, _, _ = simple(req, 3.0)
    except OSError as e:
        st_after = f"connect failed ({e.__class__.__name__})"
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    except (ValueError, OSError):
        pass
    out("n fd-exhaustion", f"{n} connects at once + {req!r} on each (server RLIMIT_NOFILE {limit})",
        f"connected {len(connected)}, connect failed {failed}, pending {len(pending)}; outcomes {counts}",
        f"server CPU {cpu_pct:.0f}% in first 2 s, {cpu2:.0f}% in next 2 s; fresh GET while held: {st_during}; "
        f"after close: {st_after}; alive {alive(ARGS.pid)}")


def sigterm_test():
    """Half-finished request, SIGTERM, 1 s, SIGTERM: time from the second signal to exit."""
    s = connect()
    s.sendall(b"POST /v1/iam/users HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf")
    h = connect()  # a second one with half a header
    h.sendall(b"GET /v1/health HTTP/1.1\r\nHo")
    time.sleep(0.3)
    os.kill(ARGS.pid, signal.SIGTERM)
    time.sleep(1.0)
    alive_after_first = alive(ARGS.pid)
    t = time.monotonic()
    os.kill(ARGS.pid, signal.SIGTERM)
    while alive(ARGS.pid) and time.monotonic() - t < 15:
        time.sleep(0.005)
    gone = not alive(ARGS.pid)
    dt = time.monotonic() - t
    st1, _, _ = read_response(s, 1.0)
    st2, _, _ = read_response(h, 1.0)
    s.close()
    h.close()
    out("sigterm-twice", "half body (4/100 bytes) + half header open; SIGTERM, 1 s, SIGTERM",
        f"alive 1 s after first: {alive_after_first}; exited {gone} {dt * 1000:.0f} ms after second",
        f"half-body conn got {st1}; half-header conn got {st2}")


PROBES = {"a": probe_a, "b": probe_b, "c": probe_c, "d": probe_d, "e": probe_e, "f": probe_f,
          "g": probe_g, "h": probe_h, "i": probe_i, "j": probe_j, "k": probe_k, "l": probe_l,
          "m": probe_m, "n": probe_n}


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--probes", default="abcdefghijklmn", help="letters, e.g. abc or a,b,c")
    p.add_argument("--sigterm-test", action="store_true")
    ARGS = p.parse_args()
    if ARGS.sigterm_test:
        try:
            sigterm_test()
        except Exception as e:  # noqa: BLE001 - report and exit 0
            out("sigterm-twice", "-", f"probe error {e!r}")
        return 0
    for letter in ARGS.probes.replace(",", ""):
        fn = PROBES.get(letter)
        if not fn:
            continue
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - one failed probe must not stop the others
            out(f"{letter} (error)", "-", repr(e))
    return 0


if __name__ == "__main__":
    try:
        main()
    finally:
        sys.exit(0)
