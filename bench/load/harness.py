"""What the load drivers of bench/load share: starting a gateway on a free port, reading
its CPU time and peak memory from /proc, running wrk with one of the Lua scripts here and
reading the summary they print (summary.lua), and the median and spread of repetitions.

A gateway is started with --port 0 and its URL is read from the line it prints first
(`waypoint-gateway: N routes on http://ADDR:PORT`), so runs never race for a fixed port. The
peer servers of bench/load/peers print the same line under their own names, and start as a
gateway does; a command prefix (taskset) and extra environment (GOMAXPROCS) may be given.
"""
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

# How long a gateway may take to print its URL: a release build starts in milliseconds,
# but the machine these runs share may be busy compiling.
START_TIMEOUT_S = 20

NGINX = "/usr/sbin/nginx"

LISTENING = re.compile(r"^[\w.-]+: (\d+) routes on (http://\S+)")

# The lines of summary.lua, by field.
SUMMARY_FIELDS = {
    "requests": re.compile(r"^requests:\s+(\d+) in ([\d.]+) s"),
    "rps": re.compile(r"^requests/s:\s+([\d.]+)"),
    "p50_us": re.compile(r"^latency p50:\s+([\d.]+) us"),
    "p99_us": re.compile(r"^latency p99:\s+([\d.]+) us"),
    "socket_errors": re.compile(
        r"^socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)"),
    "non2xx": re.compile(r"^non-2xx:\s+(\d+)"),
}


def stop_process(process, timeout=30):
    """SIGTERM, a wait of up to `timeout` seconds, then SIGKILL."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Gateway:
    """A running gateway process: `url`, `routes`, and its CPU time and peak RSS."""

    def __init__(self, binary, args, log_path=os.devnull, prefix=(), env=None):
        self.binary = binary
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen(
            list(prefix) + [binary, "--address", "127.0.0.1", "--port", "0"] + args,
            stdout=subprocess.PIPE, stderr=self.log,
            env=dict(os.environ, **env) if env else None)
        self.url, self.routes = self._await_url()
        # The rest of stdout (the curl lines, at exit the request count) must be read, or a
        # full pipe would block the gateway.
        self.tail = []
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()

    def _await_url(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            line = self.process.stdout.readline().decode(errors="replace")
            if not line:
                break
            m = LISTENING.match(line)
            if m:
                return m.group(2), int(m.group(1))
        self.stop()
        raise RuntimeError("%s did not print its URL (see %s)" % (self.binary, self.log.name))

    def _read_rest(self):
        for line in self.process.stdout:
            self.tail.append(line.decode(errors="replace"))

    def cpu_seconds(self):
        """User + system time so far (fields 14 and 15 of /proc/PID/stat)."""
        return sum(cpu_times([self.process.pid]))

    def user_seconds(self):
        return cpu_times([self.process.pid])[0]

    def peak_rss_kib(self):
        with open("/proc/%d/status" % self.process.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return None

    def stop(self):
        """SIGTERM, then the exit code (the gateway stops gracefully on it)."""
        stop_process(self.process)
        self.log.close()
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """nginx-light answering one path with `return 200` of `body`, one worker; its CPU and
    peak RSS are the master's and the worker's together. `url` is its plaintext HTTP/1.1
    listener. With `h2` (a certificate and key): `h2c_url`, a listener speaking HTTP/2 by
    prior knowledge, and `h2_url`, one speaking it over TLS (ALPN h2)."""

    def __init__(self, path, body, work, prefix=(), h2=None):
        self.work = tempfile.mkdtemp(prefix="nginx-", dir=work)
        port = free_port()
        listens = "listen 127.0.0.1:%d;" % port
        if h2:
            h2c_port, h2_port = free_port(), free_port()
            listens += """
    listen 127.0.0.1:%d http2;
    listen 127.0.0.1:%d ssl http2;
    ssl_certificate %s;
    ssl_certificate_key %s;
    http2_max_concurrent_streams 100;""" % (h2c_port, h2_port, h2[0], h2[1])
            self.h2c_url = "http://127.0.0.1:%d" % h2c_port
            self.h2_url = "https://127.0.0.1:%d" % h2_port
        conf = os.path.join(self.work, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""daemon off;
master_process on;
worker_processes 1;
pid %(work)s/nginx.pid;
error_log %(work)s/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path %(work)s/body;
  proxy_temp_path %(work)s/proxy;
  fastcgi_temp_path %(work)s/fastcgi;
  uwsgi_temp_path %(work)s/uwsgi;
  scgi_temp_path %(work)s/scgi;
  server {
    %(listens)s
    location = %(path)s {
      default_type application/json;
      return 200 '%(body)s';
    }
  }
}
""" % {"work": self.work, "listens": listens, "path": path, "body": body.replace("\n", "\\n")})
        self.process = subprocess.Popen(list(prefix) + [NGINX, "-c", conf, "-p", self.work],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = "http://127.0.0.1:%d" % port
        self.routes = 1
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                if self.workers():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("nginx did not start (see %s/error.log)" % self.work)

    def workers(self):
        pid = self.process.pid
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                return [int(p) for p in f.read().split()]
        except OSError:
            return []

    def pids(self):
        return [self.process.pid] + self.workers()

    def cpu_seconds(self):
        return sum(cpu_times(self.pids()))

    def user_seconds(self):
        return cpu_times(self.pids())[0]

    def peak_rss_kib(self):
        total = 0
        for pid in self.pids():
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
        return total

    def stop(self):
        stop_process(self.process)
        shutil.rmtree(self.work, ignore_errors=True)
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def cpu_times(pids):
    """(user, system) seconds so far of the processes, summed (/proc/PID/stat 14 and 15)."""
    user = system = 0
    for pid in pids:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        user += int(fields[11])
        system += int(fields[12])
    return user / CLOCK_TICKS, system / CLOCK_TICKS


def supports(binary, flag):
    """Whether `binary --help` mentions `flag` (the pre-app gateway has no --quiet, say)."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    return flag in out


def wrk(url, script, script_args, connections, threads, seconds, prefix=()):
    """Runs wrk once (after `prefix`, a taskset say); returns (summary fields, its output)."""
    cmd = list(prefix) + ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds,
           "-s", os.path.join(HERE, script), url, "--"] + list(script_args)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return parse_summary(out), out


def parse_summary(text):
    fields = {}
    for line in text.splitlines():
        for key, pattern in SUMMARY_FIELDS.items():
            m = pattern.match(line)
            if not m:
                continue
            if key == "requests":
                fields["requests"], fields["seconds"] = int(m.group(1)), float(m.group(2))
            elif key == "socket_errors":
                fields[key] = dict(zip(("connect", "read", "write", "timeout"),
                                       (int(g) for g in m.groups())))
            else:
                fields[key] = float(m.group(1)) if "." in m.group(1) else int(m.group(1))
    missing = [k for k in SUMMARY_FIELDS if k not in fields and k != "requests"]
    if missing or "requests" not in fields:
        raise RuntimeError("wrk summary lacks %s:\n%s" % (missing or ["requests"], text))
    return fields


def measured_run(gateway, script, script_args, connections, threads, seconds, warm_up_s,
                 wrk_prefix=()):
    """A warm-up, then one measured wrk run; the gateway's CPU over the measured run only.
    `gateway` is anything with url, cpu_seconds() and peak_rss_kib() (bench/load/peers'
    nginx too)."""
    if warm_up_s:
        wrk(gateway.url, script, script_args, connections, threads, warm_up_s, wrk_prefix)
    user = getattr(gateway, "user_seconds", None)
    before, user_before = gateway.cpu_seconds(), user() if user else None
    fields, _ = wrk(gateway.url, script, script_args, connections, threads, seconds, wrk_prefix)
    fields["server_cpu_s"] = gateway.cpu_seconds() - before
    fields["cpu_us_per_request"] = (fields["server_cpu_s"] * 1e6 / fields["requests"]
                                    if fields["requests"] else None)
    if user:
        # The user-space share: what the server's own code costs, without the kernel's
        # socket work that every server pays alike.
        fields["server_user_s"] = user() - user_before
        fields["user_us_per_request"] = (fields["server_user_s"] * 1e6 / fields["requests"]
                                         if fields["requests"] else None)
    fields["peak_rss_kib"] = gateway.peak_rss_kib()
    return fields


def median_and_range(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def spread_percent(stats):
    """Half the range as a percentage of the median: the ± of the tables."""
    if not stats or not stats["median"]:
        return 0.0
    return 50.0 * (stats["max"] - stats["min"]) / stats["median"]


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def rotations(names, repetitions):
    """Repetition k runs the configurations rotated by k, so none is always first."""
    return [names[k % len(names):] + names[:k % len(names)] for k in range(repetitions)]
