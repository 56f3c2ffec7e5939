#!/usr/bin/python3
"""A child service for child_service_test: HTTP/1.1 on the unix socket it is given, with the
behaviours the supervisor must handle (never ready, SIGTERM ignored, a failing start).

  child_fixture.py --unix PATH [--never-ready] [--ignore-term] [--mode-file FILE]
  child_fixture.py --unix PATH --planted LOG

--mode-file: when FILE holds "broken", exit 3 at once (a reload to a bad build).
--planted: another local user's listener at the child's socket (issue #44). A process
forked from this one binds PATH, becomes nobody (uid and gid 65534) and only then listens,
so that the kernel records nobody, and another pid than the child's, as the listener
(SO_PEERCRED); it appends every byte it receives to LOG. The child itself never listens.
"""
import argparse
import ctypes
import json
import os
import signal
import socket
import socketserver
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler


def plant(path, log):
    """--planted: the listener of another user at `path`; the child sleeps until killed."""
    if os.fork() != 0:
        while True:
            time.sleep(60)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the test's pipes are not this process's to hold open
        os.dup2(devnull, fd)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    open(log, "wb").close()
    os.chown(log, 65534, 65534)
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    # Dies with the child (the supervisor kills that one): set after setuid, which clears it.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    listener.listen(16)
    while True:
        conn, _ = listener.accept()
        with conn, open(log, "ab") as out:
            conn.settimeout(1)
            try:
                while True:
                    data = conn.recv(65536)
                    if not data:
                        break
                    out.write(data)
                    out.flush()
            except OSError:
                pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--unix", required=True)
    parser.add_argument("--never-ready", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--mode-file")
    parser.add_argument("--planted")
    args = parser.parse_args()
    if args.planted:
        plant(args.unix, args.planted)
    if args.mode_file and open(args.mode_file).read().strip() == "broken":
        sys.exit(3)
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):  # a unix peer has no address to log
            pass

        def answer(self, status, body, content_type="text/plain"):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def do_HEAD(self):
            self.do_GET()

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            if url.path == "/healthz":
                self.answer(503 if args.never_ready else 200, "ok\n")
            elif url.path == "/hello":
                self.answer(200, json.dumps({
                    "pid": os.getpid(), "target": self.path,
                    "via": self.headers.get("Via", ""),
                    "x_forwarded_for": self.headers.get("X-Forwarded-For", ""),
                    "request_id": self.headers.get("X-Request-Id", ""),
                }), "application/json")
            elif url.path == "/slow":
                time.sleep(int(query["ms"][0]) / 1000)
                self.answer(200, "slow from pid %d\n" % os.getpid())
            elif url.path == "/stream":
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for piece in (b"one\n", b"two\n", b"three\n"):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                    time.sleep(0.05)
                self.wfile.write(b"0\r\n\r\n")
            elif url.path == "/fds":
                fds = {}
                for fd in os.listdir("/proc/self/fd"):
                    try:
                        fds[fd] = os.readlink("/proc/self/fd/" + fd)
                    except OSError:
                        pass
                self.answer(200, json.dumps(fds), "application/json")
            else:
                self.answer(404, "no such path\n")

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            self.answer(200, self.rfile.read(length), "application/octet-stream")

    class Server(socketserver.ThreadingUnixStreamServer):
        daemon_threads = True

    with Server(args.unix, Handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
