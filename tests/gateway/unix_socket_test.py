#!/usr/bin/python3
"""The example gateway on a unix socket and under socket activation, as an operator meets
them: curl --unix-socket (GET and HEAD), a WebSocket echo through the socket, the access
log naming the peer by its pid, a second
gateway refused the live socket, a gateway killed with SIGKILL whose stale file the next one
reclaims, the file removed at SIGTERM, and systemd-socket-activate (Debian's systemd
package) starting the gateway with --listen-fd on a TCP address and a unix path.

usage: unix_socket_test.py GATEWAY_BINARY

Exits 77 (skipped) when systemd-socket-activate is missing unless WAYPOINT_REQUIRE_ALL is set, after the other
checks passed.
"""
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gateway_test  # noqa: E402
from gateway_test import CheckFailed, Gateway, curl, expect, free_port, run_checks  # noqa: E402

START_TIMEOUT_S = 10


def unix_curl(path, url, *args):
    return curl(["curl", "-i", "--unix-socket", path, url] + list(args))


class Scratch:
    """A directory for socket files, removed with its contents."""

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="gateway-unix-")
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)


def check_curl_over_the_unix_socket_gets_the_route_and_head_its_length(binary):
    with Scratch() as d:
        path = d.path("gw.sock")
        g = Gateway(binary, "--unix", path)
        try:
            expect(stat.S_ISSOCK(os.lstat(path).st_mode), "--unix makes a socket at %s" % path)
            expect(stat.S_IMODE(os.lstat(path).st_mode) == 0o660,
                   "the socket file is 0660, got %o" % stat.S_IMODE(os.lstat(path).st_mode))
            lines = [l for l in g.curl_lines if "--unix-socket" in l]
            expect(len(lines) == 1 and path in lines[0],
                   "one printed curl line over %s, got %r" % (path, g.curl_lines))
            r = unix_curl(path, "http://localhost/v1/iam/users/42")
            expect(r.status == 200 and r.json()["values"] == {"userId": "42"},
                   "GET over the unix socket: the route's answer, got %r" % r)
            head = curl(["curl", "-I", "--unix-socket", path, "http://localhost/v1/iam/users/42"])
            expect(head.status == 200 and head.body == "" and
                   head.header("Content-Length") == r.header("Content-Length"),
                   "HEAD over the unix socket: the GET's length, no body, got %r" % head)
        finally:
            g.stop()
        expect(not os.path.lexists(path), "SIGTERM removes the socket file %s" % path)


def check_access_log_names_a_unix_peer_by_its_pid(binary):
    with Scratch() as d:
        path = d.path("log.sock")
        g = Gateway(binary, "--unix", path, quiet=False)
        try:
            # A client whose pid is known: this process.
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(5)
                s.connect(path)
                s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                reply = b""
                while chunk := s.recv(4096):
                    reply += chunk
            expect(reply.startswith(b"HTTP/1.1 200"), "GET over the socket: 200, got %r" % reply[:80])
        finally:
            g.stop()
        log = g.process.stderr.read()
        expect('"remote":"unix:%d"' % os.getpid() in log,
               "the access log names the peer unix:%d, got %r" % (os.getpid(), log[-600:]))


# The printed WebSocket route's echo, over the unix socket (python3-websockets' unix_connect).
UNIX_WEBSOCKET_CLIENT = r'''
import asyncio, sys, websockets
async def main(path, url):
    async with websockets.unix_connect(path, url) as ws:
        for message in ["hello", b"\x00\x01\xff"]:
            await ws.send(message)
            got = await ws.recv()
            assert got == message, "echo of %r: %r" % (message, got)
asyncio.run(main(sys.argv[1], sys.argv[2]))
'''


def check_websocket_echoes_over_the_unix_socket(binary):
    with Scratch() as d:
        path = d.path("ws.sock")
        g = Gateway(binary, "--unix", path)
        try:
            lines = [l.split() for l in g.printed
                     if l.strip().startswith("/usr/bin/python3 -m websockets ") and "# WebSocket echo" in l]
            expect(len(lines) == 1, "one printed WebSocket echo line, got %r" % lines)
            # The same route, reached through the socket: only the host part changes.
            url = re.sub(r"^ws://[^/]+", "ws://localhost", lines[0][3])
            r = subprocess.run(["/usr/bin/python3", "-c", UNIX_WEBSOCKET_CLIENT, path, url],
                               capture_output=True, text=True, timeout=20)
            expect(r.returncode == 0, "WebSocket echo over %s (%s) failed: %s"
                   % (path, url, r.stderr.strip()[-400:]))
        finally:
            g.stop()


def start_raw(binary, *args):
    """The gateway, not waited for (it may fail to start): its process."""
    return subprocess.Popen([binary, "--port", "0", "--quiet"] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def check_second_gateway_is_refused_the_live_socket_naming_it(binary):
    with Scratch() as d:
        path = d.path("live.sock")
        g = Gateway(binary, "--unix", path)
        try:
            second = start_raw(binary, "--unix", path)
            try:
                _, err = second.communicate(timeout=START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                second.kill()
                second.wait()
                raise CheckFailed("the second gateway started on a live socket")
            expect(second.returncode != 0 and path in err and "a server is listening" in err,
                   "the second gateway exits non-zero naming %s, got %d %r"
                   % (path, second.returncode, err))
            r = unix_curl(path, "http://localhost/v1/health")
            expect(r.status == 200, "the first gateway still answers on its socket, got %r" % r)
        finally:
            g.stop()


def check_restart_after_sigkill_reclaims_the_stale_file(binary):
    with Scratch() as d:
        path = d.path("stale.sock")
        g = Gateway(binary, "--unix", path)
        g.process.kill()
        g.process.wait()
        expect(os.path.lexists(path), "SIGKILL leaves the file behind (what is being tested)")
        again = Gateway(binary, "--unix", path)
        try:
            r = unix_curl(path, "http://localhost/v1/health")
            expect(r.status == 200, "the restarted gateway answers on the reclaimed socket, got %r" % r)
        finally:
            again.stop()


def read_until(stream, pattern, count, timeout):
    """Lines of `stream` until `count` match `pattern` (or the time runs out)."""
    deadline = time.monotonic() + timeout
    seen, matched = [], 0
    os.set_blocking(stream.fileno(), False)
    while matched < count and time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            time.sleep(0.05)
            continue
        seen.append(line.rstrip("\n"))
        matched += bool(re.search(pattern, line))
    return seen, matched >= count


def check_systemd_socket_activate_starts_the_gateway_on_its_sockets(binary):
    tool = shutil.which("systemd-socket-activate")
    if not tool:
        gateway_test.skip_unless_required("systemd-socket-activate is missing (Debian's systemd package)")
    with Scratch() as d:
        path = d.path("activated.sock")
        port = free_port()
        # systemd-socket-activate listens, then starts the program at the first connection,
        # which waits in the backlog meanwhile: the first curl is what starts the gateway.
        p = subprocess.Popen([tool, "-l", "127.0.0.1:%d" % port, "-l", path,
                              "--fdname=http:local", binary, "--listen-fd", "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            said, ready = read_until(p.stderr, r"^Listening on ", 2, START_TIMEOUT_S)
            expect(ready, "systemd-socket-activate listens on both, got %r" % said)
            r = gateway_test.get("http://127.0.0.1:%d/v1/health" % port)
            expect(r.status == 200, "the first request starts the gateway and is answered, got %r" % r)
            printed, _ = read_until(p.stdout, r"routes on unix:", 1, START_TIMEOUT_S)
            expect(any("routes on http://127.0.0.1:%d" % port in l for l in printed) and
                   any("routes on unix:" + path in l for l in printed),
                   "the gateway serves the inherited sockets, got %r" % printed)
            r = unix_curl(path, "http://localhost/v1/health")
            expect(r.status == 200, "and answers on the inherited unix socket, got %r" % r)
            p.send_signal(signal.SIGTERM)
            expect(p.wait(timeout=10) == 0, "SIGTERM stops it with exit 0")
            expect(os.path.lexists(path), "an inherited socket's file is systemd's: left in place")
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()


def check_listen_fd_without_sockets_is_an_error(binary):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LISTEN_")}
    done = subprocess.run([binary, "--listen-fd", "--quiet"], capture_output=True, text=True,
                          env=env, timeout=START_TIMEOUT_S)
    expect(done.returncode == 2 and "LISTEN_FDS" in done.stderr,
           "--listen-fd with nothing passed: exit 2 naming LISTEN_FDS, got %d %r"
           % (done.returncode, done.stderr))


CHECKS = [
    check_curl_over_the_unix_socket_gets_the_route_and_head_its_length,
    check_access_log_names_a_unix_peer_by_its_pid,
    check_websocket_echoes_over_the_unix_socket,
    check_second_gateway_is_refused_the_live_socket_naming_it,
    check_restart_after_sigkill_reclaims_the_stale_file,
    check_listen_fd_without_sockets_is_an_error,
    check_systemd_socket_activate_starts_the_gateway_on_its_sockets,
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    if not shutil.which("curl"):
        sys.exit("unix_socket_test: no curl on PATH (scripts/install-deps consumer installs it)")
    return run_checks("unix_socket_test", CHECKS, sys.argv[1], skipped_code=77)


if __name__ == "__main__":
    sys.exit(main())
