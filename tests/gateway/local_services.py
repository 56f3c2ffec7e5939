"""Local services the gateway's tests start on loopback and stop by their PID: a wait for a
port to listen, a stop by SIGTERM (SIGKILL past 30 s: bench/load/harness.py's), and
redis-server."""
import os
import shutil
import socket
import subprocess
import sys
import time

import gateway_test
from gateway_test import CheckFailed

sys.path.insert(0, os.path.join(gateway_test.ROOT, "bench", "load"))
from harness import stop_process  # noqa: E402,F401  (SIGTERM, then SIGKILL; for the tests too)


def wait_listening(port, what, process):
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CheckFailed("%s exited with %d before listening" % (what, process.returncode))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise CheckFailed("%s did not listen on %d" % (what, port))




class RedisServer:
    """redis-server on a loopback port (a free one, or the one a stopped server had)."""

    def __init__(self, port=None):
        binary = shutil.which("redis-server")
        if not binary:
            gateway_test.skip_unless_required("no redis-server (scripts/install-deps redis)")
        self.port = port or gateway_test.free_port()
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--logfile", "/dev/null"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(self.port, "redis-server", self.process)

    def stop(self):
        stop_process(self.process)
