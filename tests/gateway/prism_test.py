#!/usr/bin/python3
"""The gateway's traffic through Prism, a validating proxy, held to the gateway's own OpenAPI
document (issue #27): Prism (@stoplight/prism-cli, installed into build/node by
`scripts/install-deps openapi`) must report no request and no response violation.

gateway_test.py's checks are run again, each with every gateway it starts fronted by its own
`prism proxy` on loopback, started on the document the gateway serves at /openapi.json: the
checks' clients go to Prism, which validates each request, forwards it, then validates the
gateway's answer. Only checks whose traffic is the API's run so (LEFT_OUT says why each other
one is not). Prism runs without --errors, so every request reaches the gateway and the checks
keep their meaning. What Prism reports is read from its log: each "Violation:" line, under the
request it follows, and each request it could not pass on. Each fails the test, listed with
its request, unless (allowed_by_design) it is a request Prism finds invalid and the gateway
refuses (400, 422: the two agree; some checks send such requests on purpose) or one of the
things the gateway does that OpenAPI has no words for: a rest wildcard's value holding '/' or
nothing, HEAD, automatic OPTIONS, the document's own undocumented routes. Those are listed
as allowed. A check that fails through Prism fails the test too; where Prism itself changes
an answer (its client asks for gzip and decodes it), the rule is replaced by one that says
what comes through (RULES_THROUGH_PRISM).

usage: prism_test.py GATEWAY_BINARY
Exit 77 (ctest: skipped) when Prism is not installed. Every process is stopped by its PID.
"""
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import gateway_test  # noqa: E402
from missing_tool import exit_missing  # noqa: E402
from gateway_test import CheckFailed, expect  # noqa: E402

PRISM = os.path.join(gateway_test.ROOT, "build/node/node_modules/.bin/prism")
PRISM_START_TIMEOUT_S = 30  # node loads Prism's modules and the document: 1-2 s, more under load
PRISM_STOP_TIMEOUT_S = 5
LISTENING = re.compile(r"Prism is listening on (http://\S+)")
# Prism's log (signale's lines): a request, then what its validator found.
RECEIVED = re.compile(r"\[HTTP SERVER\] (\S+) (\S+) .*Request received")
VIOLATION = re.compile(r"\b(error|warning|info)\s+Violation: (\S*) (.*)$")
TERMINATED = re.compile(r"Request terminated with error: (.*)$")
ANSWERED = re.compile(r"The upstream call to \S+ has returned (\d+)")
# What the gateway answers a request that breaks the document: a request Prism finds invalid
# and the gateway refuses with one of these is the two agreeing (the checks send some).
REFUSALS = {400, 401, 422}  # 401: a request without the credentials the document requires
ROUTE_NOT_FOUND = "Selected route not found"
MISSING_PATH_VALUE = re.compile(r"Request path must have required property '([^']+)'")
# The routes serve_openapi adds and leaves out of the document (src/app/documents/openapi.cpp).
UNDOCUMENTED = re.compile(r"^/openapi\.json$|^/docs/")

# The checks whose traffic goes through Prism, by name; the others of gateway_test.CHECKS
# are left out for the reason given.
THROUGH_PRISM = [
    "check_every_printed_curl_line_answers_as_documented",
    "check_order_book_reads_its_inputs_pages_and_answers_304",
    "check_proxy_answers_with_the_upstream_gateways_answer",
    "check_proxy_to_a_closed_port_is_502_problem",
    "check_proxy_to_a_silent_upstream_is_504_after_the_timeout",
    "check_proxy_loop_through_itself_is_508",
    "check_event_interval_below_the_minimum_is_400_problem",
    "check_cors_leaves_the_operational_endpoints_alone",
    "check_sigterm_stops_the_gateway_with_exit_0",
]
LEFT_OUT = {
    "check_docs_page_without_local_files_loads_pinned_swagger_ui_with_integrity":
        "Prism follows the gateway's 302 to jsDelivr itself, so the check would ask the CDN",
    "check_printed_websocket_lines_echo_and_share_a_room": "Prism proxies no WebSocket upgrade",
    "check_printed_inspector_line_lists_the_tools":
        "its traffic is JSON-RPC to /mcp, which the document leaves out",
    "check_readiness_says_503_from_sigterm_until_the_listeners_close":
        "it checks that the gateway's port closes, and Prism's stays open",
    "check_access_log_and_metrics_count_the_requests_sent":
        "it counts the gateway's connections and log lines, which Prism and the document's "
        "download change",
    "check_replay_table_requests_are_2xx_from_the_route_they_name":
        "a --routes gateway serves no /openapi.json",
    "check_tls_line_answers_over_https_with_the_printed_certificate":
        "the printed line goes to the TLS port, not through Prism",
}



def precompressed_file_through_prism(argv, r):
    """Prism's client (node-fetch) asks for gzip and decodes it, so style.css.gz reaches
    curl as style.css without Content-Encoding."""
    expect(r.status == 200 and r.header("Content-Encoding") is None and
           r.header("Vary") == "Accept-Encoding",
           "precompressed file through Prism: 200, decoded, Vary kept, got %r" % r)
    with open(os.path.join(gateway_test.WWW, "style.css")) as f:
        expect(r.body == f.read(), "precompressed file through Prism: style.css, got %r" % r)


def byte_range_through_prism(argv, r):
    """For the same reason the range is one of style.css.gz, which node-fetch then decodes
    as far as 100 bytes of it go."""
    size = os.path.getsize(os.path.join(gateway_test.WWW, "style.css.gz"))
    expect(r.status == 206 and r.header("Content-Range") == "bytes 0-99/%d" % size,
           "byte range through Prism: 206, Content-Range bytes 0-99/%d, got %r" % (size, r))


def compressed_json_through_prism(argv, r):
    """Prism's client asks for a coding and decodes what compression() sends: curl gets the
    document decoded, without Content-Encoding."""
    expect(r.status == 200 and r.header("Content-Encoding") is None,
           "compressed JSON through Prism: 200, decoded, got %r" % r)
    expect("openapi" in r.json(), "compressed JSON through Prism: the OpenAPI document")


# The printed lines Prism cannot carry: it speaks HTTP/1.1 only, so the h2c line is left to
# gateway_test.py and http2_test.py, which send it to the gateway itself.
NOT_THROUGH_PRISM = ("h2c by prior knowledge",)

# The rules of gateway_test.CURL_LINE_RULES that Prism changes, by the comment they match.
RULES_THROUGH_PRISM = {"precompressed": precompressed_file_through_prism,
                       "a byte range": byte_range_through_prism,
                       "compressed JSON": compressed_json_through_prism}

# Every report Prism logged over the run: (check, request, report, why the document allows
# it or None).
reports = []
current_check = [""]


class Prism:
    """`prism proxy DOCUMENT UPSTREAM` on a free loopback port; `base` is its URL."""

    def __init__(self, document_path, upstream):
        self.process = subprocess.Popen(
            [PRISM, "proxy", document_path, upstream, "--host", "127.0.0.1",
             "--port", str(gateway_test.free_port()), "--cors", "false"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "FORCE_COLOR": "0", "NO_COLOR": "1"})
        self.log = []
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + PRISM_START_TIMEOUT_S
        self.base = None
        while self.base is None:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:  # Prism exited, or did not start in time
                self.stop()
                raise CheckFailed("prism did not start: %s" % "\n".join(self.log[-20:]))
            m = LISTENING.search(line)
            if m:
                self.base = m.group(1).rstrip("/")

    def _read(self):
        for line in self.process.stdout:
            self.log.append(line.rstrip("\n"))
            self.lines.put(line)
        self.lines.put(None)

    def stop(self):
        """SIGTERM to Prism's PID (SIGKILL if it lingers); then its log is complete."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=PRISM_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def reports(self):
        """(method, path, status, location, message) for each violation Prism logged and each
        request it could not pass on (location "prism"), under the request they follow;
        status is the gateway's answer (None before it)."""
        found, method, path, status = [], "?", "?", None
        for line in self.log:
            received, answered, violation, terminated = (
                RECEIVED.search(line), ANSWERED.search(line), VIOLATION.search(line),
                TERMINATED.search(line))
            if received:
                method, path, status = received.group(1), received.group(2), None
            elif answered:
                status = int(answered.group(1))
            elif violation:
                found.append((method, path, status, violation.group(2),
                              "%s: %s" % (violation.group(1), violation.group(3))))
            elif terminated:
                found.append((method, path, status, "prism", terminated.group(1)))
        return found


def operations(document):
    """(method, path regex, rest name) for each operation of the document. The regex matches
    the paths the operation's pattern serves: a path parameter is one segment; a subtree
    ("x-waypoint-match": "subtree": a rest wildcard, {path...} written {path}, or a trailing
    slash) puts what lies below its fixed part in the group "rest", and its rest name is the
    wildcard's ("" for a trailing slash; None for no subtree)."""
    found = []
    for key, item in document.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict):
                continue
            subtree = operation.get("x-waypoint-match") == "subtree"
            rest = re.search(r"\{([^}]+)\.\.\.\}$", operation.get("x-waypoint-pattern", ""))
            name = rest.group(1) if subtree and rest else "" if subtree else None
            regex = ""
            for part in re.split(r"(\{[^}]+\})", key):
                if name and part == "{%s}" % name:
                    regex += "(?P<rest>.*)"
                else:
                    regex += "[^/]+" if part.startswith("{") else re.escape(part)
            found.append((method, re.compile(regex + ("(?P<rest>.*)" if name == "" else "") + "$"),
                          name))
    return found


def allowed_by_design(method, path, status, location, message, document):
    """Why a report is what the document means to say, or None when it is a violation.

    A request that breaks the document and that the gateway refuses (400, 422) is the two
    agreeing. Beyond that, OpenAPI has no words for four things waypoint does: a path
    parameter that holds '/' or nothing (a rest wildcard: a path template's parameter is one
    non-empty segment), HEAD wherever GET is served (the document lists "get"), the OPTIONS
    answer every path gets, and routes an application leaves out of its document."""
    served = [(op_method, name, m) for op_method, regex, name in operations(document)
              for m in [regex.match(path)] if m]
    rests = [(m.group("rest"), name) for op_method, name, m in served
             if op_method == method and name is not None]
    if message == "warning: " + ROUTE_NOT_FOUND:
        if method == "options":
            return "automatic OPTIONS (204 and Allow), which the document does not list"
        if UNDOCUMENTED.search(path):
            return "the document and its page, undocumented on purpose (serve_openapi)"
        if method == "head" and any(op_method == "get" for op_method, _, _ in served):
            return "HEAD of a GET route, which the document leaves implied"
        exact = any(op_method == method and name is None for op_method, name, _ in served)
        if not exact and any("/" in rest for rest, _ in rests):
            return "a rest wildcard's value holding '/', which no path template can match"
    missing = MISSING_PATH_VALUE.search(message)
    if location == "request.path" and missing and (("", missing.group(1)) in rests):
        return "a rest wildcard's empty value, which Prism reads as a missing parameter"
    if location.startswith("request") and status in REFUSALS:
        return "the gateway refused the request too, with %d" % status
    return None


class PrismFronted(gateway_test.Gateway):
    """A gateway whose clients go through Prism: `base`, `printed` and `curl_lines` name
    Prism's URL; `direct` is the gateway's own."""

    def __init__(self, binary, *args, **kwargs):
        # What stop() reads, which a failed start calls.
        self.prism, self.work, self.document = None, None, {}
        super().__init__(binary, *args, **kwargs)
        self.work = tempfile.mkdtemp(prefix="gateway-prism-")
        try:
            document = os.path.join(self.work, "openapi.json")
            with urllib.request.urlopen(self.base + "/openapi.json", timeout=5) as r:
                text = r.read()
            self.document = json.loads(text)  # Prism's own error for a broken one is less clear
            with open(document, "wb") as f:
                f.write(text)
            self.prism = Prism(document, self.base)
        except BaseException:
            self.stop()
            raise
        self.direct = self.base
        self.base = self.prism.base
        self.printed = [line.replace(self.direct, self.base) for line in self.printed]
        self.curl_lines = [line.replace(self.direct, self.base) for line in self.curl_lines
                           if not any(text in line for text in NOT_THROUGH_PRISM)]

    def stop(self):
        if self.prism:
            self.prism.stop()
            for method, path, status, location, message in self.prism.reports():
                reports.append((current_check[0], "%s %s (%s)" % (method.upper(), path, status),
                                "%s %s" % (location, message),
                                allowed_by_design(method, path, status, location, message,
                                                  self.document)))
            self.prism = None
        if self.work:
            shutil.rmtree(self.work, ignore_errors=True)
            self.work = None
        return super().stop()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    if not os.access(PRISM, os.X_OK):
        exit_missing("prism_test: %s is missing (scripts/install-deps openapi installs it)"
                     % PRISM)
    by_name = {c.__name__: c for c in gateway_test.CHECKS}
    unknown = [n for n in by_name if n not in THROUGH_PRISM and n not in LEFT_OUT]
    if unknown:  # a new check of gateway_test.py: decide whether its traffic goes through
        print("prism_test: gateway_test.py has checks this test does not place: %s" % unknown)
        return 1
    gateway_test.Gateway = PrismFronted  # what every check starts its gateways with
    gateway_test.CURL_LINE_RULES = [(text, RULES_THROUGH_PRISM.get(text, rule))
                                    for text, rule in gateway_test.CURL_LINE_RULES
                                    if text not in NOT_THROUGH_PRISM]

    def through_prism(check):
        def run(binary):
            current_check[0] = check.__name__[len("check_"):]
            check(binary)
        run.__name__ = check.__name__
        return run
    failed = gateway_test.run_checks(
        "prism_test", [through_prism(by_name[n]) for n in THROUGH_PRISM], sys.argv[1])
    violations = [r for r in reports if r[3] is None]
    for check, request, report, why in reports:
        print("%s %s, %s: %s%s" % ("VIOLATION" if why is None else "allowed", check, request,
                                  report, "" if why is None else " (%s)" % why))
    print("prism_test: %d checks through Prism; it reported %d violations (and %d reports "
          "allowed, listed above)" % (len(THROUGH_PRISM), len(violations),
                                      len(reports) - len(violations)))
    return 1 if failed or violations else 0


if __name__ == "__main__":
    sys.exit(main())
