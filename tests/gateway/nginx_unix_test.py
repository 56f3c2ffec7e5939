#!/usr/bin/python3
"""Debian's nginx in front of the example gateway listening on a unix socket, as it is
deployed on one host (`proxy_pass http://unix:/path/gw.sock;`): plain requests (a GET, a
POST whose 256 KiB body nginx buffers to its temp file, then forwards with Content-Length),
a WebSocket upgrade (proxy_http_version 1.1 with Upgrade and Connection passed on) to the
gateway's echo route, python3-websockets as the client, and the gateway's access log naming
the peer of those requests as `unix:` and the pid of an nginx worker.

nginx runs as this user, not as a service: its own prefix, configuration, pid file, error
log and temp directories in a temporary directory, on a free loopback port, `daemon off` so
that the process started is the master, stopped by its PID.

usage: nginx_unix_test.py GATEWAY_BINARY      (run by ctest with Debian's /usr/bin/python3)

Exits 77 (skipped) without nginx or python3-websockets (scripts/install-deps load or ops),
unless WAYPOINT_REQUIRE_ALL is set.
"""
import asyncio
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gateway_test  # noqa: E402
from gateway_test import CheckFailed, Gateway, curl, expect, free_port, run_checks  # noqa: E402
from local_services import stop_process, wait_listening  # noqa: E402

try:
    import websockets
    import websockets.exceptions
    WEBSOCKET_ERRORS = (websockets.exceptions.WebSocketException,)
except ImportError:
    websockets = None
    WEBSOCKET_ERRORS = ()

RECEIVE_S = 5
# Past nginx's client_body_buffer_size (16 KiB on x86-64), so the body goes through its temp
# file before it is forwarded.
UPLOAD_BYTES = 256 * 1024

NGINX_CONF = """daemon off;
master_process on;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
{user}
events {{
    worker_connections 64;
}}
http {{
    access_log off;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    client_max_body_size 1m;
    # nginx's documented WebSocket proxying: Connection "upgrade" only when the client asked.
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://unix:{socket};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
        }}
    }}
}}
"""


def nginx_binary():
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    gateway_test.skip_unless_required("no nginx (scripts/install-deps load or ops: nginx-light)")


class NginxInFront:
    """The gateway on a unix socket (its access log kept) and nginx proxying to it."""

    def __init__(self, binary):
        nginx = nginx_binary()
        self.dir = tempfile.mkdtemp(prefix="gateway-nginx-")
        self.socket = os.path.join(self.dir, "gw.sock")
        self.gateway = Gateway(binary, "--unix", self.socket, quiet=False)
        self.port = free_port()
        # A master started as root runs its workers as `nobody`, who may not open the
        # gateway's 0660 socket; as anyone else the directive is ignored, so it is left out.
        user = "user root;" if os.geteuid() == 0 else ""
        config = os.path.join(self.dir, "nginx.conf")
        with open(config, "w") as f:
            f.write(NGINX_CONF.format(dir=self.dir, user=user, port=self.port, socket=self.socket))
        self.process = subprocess.Popen([nginx, "-p", self.dir, "-c", config, "-e", self.error_log()],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_listening(self.port, "nginx", self.process)
        except CheckFailed as e:
            self.stop()
            raise CheckFailed("%s: %s" % (e, self.errors()))
        self.base = "http://127.0.0.1:%d" % self.port

    def error_log(self):
        return os.path.join(self.dir, "error.log")

    def errors(self):
        try:
            with open(self.error_log()) as f:
                return f.read()[-600:]
        except OSError:
            return ""

    def worker_pids(self):
        """The master's children: the worker that connects to the gateway."""
        with open("/proc/%d/task/%d/children" % (self.process.pid, self.process.pid)) as f:
            return {int(p) for p in f.read().split()}

    def stop(self):
        """Stops nginx, then the gateway; returns the gateway's access log."""
        stop_process(self.process)
        self.gateway.stop()
        log = self.gateway.process.stderr.read()
        shutil.rmtree(self.dir, ignore_errors=True)
        return log


def check_plain_requests_pass_through_nginx_to_the_unix_socket(binary):
    front = NginxInFront(binary)
    try:
        r = gateway_test.get(front.base + "/v1/health")
        expect(r.status == 200, "GET /v1/health through nginx: 200, got %r" % r)
        r = gateway_test.get(front.base + "/v1/iam/users/42")
        expect(r.status == 200 and r.json()["values"] == {"userId": "42"},
               "GET with a parameter through nginx: the route's answer, got %r" % r)
        body = os.urandom(UPLOAD_BYTES)
        upload = os.path.join(front.dir, "upload.bin")
        with open(upload, "wb") as f:
            f.write(body)
        r = curl(["curl", "-i", "-X", "POST", "--data-binary", "@" + upload,
                  "-H", "Content-Type: application/octet-stream", front.base + "/v1/upload"])
        expect(r.status == 201, "POST of %d bytes through nginx: 201, got %r" % (len(body), r))
        answer = r.json()
        expect(answer == {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()},
               "the gateway got the body nginx buffered, byte for byte, got %r" % answer)
    finally:
        front.stop()


async def echo_through(url):
    # A text, a binary and a large message; the last is past one frame of nginx's buffer.
    async with websockets.connect(url, max_size=2 ** 20) as ws:
        for message in ["hello", b"\x00\x01\xff", "x" * 100_000]:
            await ws.send(message)
            got = await asyncio.wait_for(ws.recv(), RECEIVE_S)
            expect(got == message, "echo of a %d-byte %s message through nginx: got %d bytes"
                   % (len(message), type(message).__name__, len(got)))


def check_websocket_upgrade_passes_through_nginx_to_the_unix_socket(binary):
    if websockets is None:
        gateway_test.skip_unless_required("no python3-websockets (scripts/install-deps)")
    front = NginxInFront(binary)
    try:
        asyncio.run(echo_through("ws://127.0.0.1:%d/v1/echo" % front.port))
    finally:
        front.stop()


def check_access_log_names_the_nginx_worker_as_a_unix_peer(binary):
    front = NginxInFront(binary)
    try:
        for _ in range(3):
            r = gateway_test.get(front.base + "/v1/health")
            expect(r.status == 200, "GET /v1/health through nginx: 200, got %r" % r)
        workers = front.worker_pids()
    finally:
        log = front.stop()
    remotes = [json.loads(line).get("remote") for line in log.splitlines()
               if line.startswith("{") and '"/v1/health"' in line]
    expect(len(remotes) == 3, "three access log lines for /v1/health, got %r" % log[-600:])
    for remote in remotes:
        m = re.fullmatch(r"unix:(\d+)", remote or "")
        expect(m and int(m.group(1)) in workers,
               "the access log's peer is unix: and an nginx worker's pid %r, got %r"
               % (sorted(workers), remote))


CHECKS = [
    check_plain_requests_pass_through_nginx_to_the_unix_socket,
    check_websocket_upgrade_passes_through_nginx_to_the_unix_socket,
    check_access_log_names_the_nginx_worker_as_a_unix_peer,
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    if not shutil.which("curl"):
        sys.exit("nginx_unix_test: no curl on PATH (scripts/install-deps consumer installs it)")
    return run_checks("nginx_unix_test", CHECKS, sys.argv[1],
                      errors=(asyncio.TimeoutError,) + WEBSOCKET_ERRORS, skipped_code=77)


if __name__ == "__main__":
    sys.exit(main())
