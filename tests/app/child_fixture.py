#!/usr/bin/python3
"""A child service for child_service_test: HTTP/1.1 on the unix socket it is given, with the
behaviours the supervisor must handle (never ready, SIGTERM ignored, a failing start).

  child_fixture.py --unix PATH [--never-ready] [--ignore-term] [--mode-file FILE]

--mode-file: when FILE holds "broken", exit 3 at once (a reload to a bad build).
"""
import argparse
import json
import os
import signal
import socketserver
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--unix", required=True)
    parser.add_argument("--never-ready", action="store_true")
    parser.add_argument("--ignore-term", action="store_true")
    parser.add_argument("--mode-file")
    args = parser.parse_args()
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
