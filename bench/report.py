#!/usr/bin/python3
"""Turns a bench/run results directory into BENCHMARKS.md's generated sections and plots.

Inputs: match.json, scale.json, app.json (Google Benchmark), agreement.md, env.txt and
load/c<connections>-run<i>.txt (bench/load/run's text output, one file per wrk run).

Every section between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` in the
output file is replaced; the text around them is left alone, so the prose that explains
the method is written by hand and the numbers can never drift from the data. A section
the results cannot fill (a suite that was not run) says so instead of keeping old numbers.

Numbers: the median over repetitions of each benchmark's CPU time (registration: the
thread CPU time the suite measures itself); the spread is half the min-max range of the
repetitions, relative to the median. allocs are exact counts.

    bench/report.py --results build/bench/results --output BENCHMARKS.md --plots bench/plots
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

ROUTERS = ["waypoint", "reference", "r3", "restinio"]
ROUTER_TITLES = {"waypoint": "waypoint", "reference": "reference", "r3": "R3",
                 "restinio": "RESTinio"}
SIZES = [10, 100, 1000, 10000]

# A miss and the hit that walks the same path up to where the miss fails: the fair pair
# for "a miss costs no more than a hit".
MISS_PAIRS = [("miss", "static_shallow", "gateway"), ("miss_deep", "multi_param", "gateway"),
              ("miss", "static", "mix1000"), ("miss_deep", "param", "mix1000"),
              ("miss", "static", "growth"), ("miss_deep", "multi_param", "growth")]
GROWTH_LIMIT = 1.5
TAX_LIMIT_NS = 50.0
# Server CPU per keep-alive request of a lean Beast server on this machine class: the bar
# the gateway's whole-HTTP cost is held to.
SERVER_CPU_LIMIT_US = 13.0
THROUGHPUT_CONNECTIONS = 32
REGISTRATION_LIMIT = 1.5
HERE = os.path.dirname(os.path.abspath(__file__))


# --- loading ---------------------------------------------------------------------------

class Result:
    """One benchmark's repetitions."""

    def __init__(self, name):
        self.name = name
        self.times = []  # ns per iteration, one per repetition
        self.counters = {}
        self.label = ""
        self.error = ""

    @property
    def median(self):
        return statistics.median(self.times) if self.times else None

    @property
    def spread(self):
        """Half the min-max range over the median, as a fraction."""
        if len(self.times) < 2 or not self.median:
            return 0.0
        return (max(self.times) - min(self.times)) / 2 / self.median


UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def load_results(path):
    results = {}
    if not os.path.exists(path):
        return results, {}
    with open(path) as f:
        data = json.load(f)
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        name = b["run_name"].replace("/manual_time", "")
        r = results.setdefault(name, Result(name))
        if b.get("error_occurred"):
            r.error = b.get("error_message", "error")
            continue
        scale = UNIT_NS[b.get("time_unit", "ns")]
        manual = b["run_name"].endswith("/manual_time")
        r.times.append((b["real_time"] if manual else b["cpu_time"]) * scale)
        for key in ("allocs", "allocs_per_route", "requests", "routes", "allocs/op"):
            if key in b:
                r.counters[key] = b[key]
        r.label = b.get("label", "") or r.label
    return results, data.get("context", {})


LOAD_FIELDS = [
    ("requests", re.compile(r"^requests:\s+(\d+) in ([\d.]+) s")),
    ("rps", re.compile(r"^requests/s:\s+([\d.]+)")),
    ("p50", re.compile(r"^latency p50:\s+([\d.]+) us")),
    ("p99", re.compile(r"^latency p99:\s+([\d.]+) us")),
    ("errors", re.compile(r"^socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")),
    ("non2xx", re.compile(r"^non-2xx:\s+(\d+)")),
    ("cpu", re.compile(r"^server CPU:\s+([\d.]+) s, ([\d.]+) us per request")),
    ("load", re.compile(r"^load:\s+(.*)")),
    ("table", re.compile(r"^table:\s+(.*)")),
]


def load_http(directory):
    """{connections: [run, ...]} from bench/load/run outputs; a run is a dict of its fields,
    or {"file": name, "incomplete": True} when the output lacks a line (a failed run)."""
    runs = {}
    if not os.path.isdir(directory):
        return runs
    def order(name):
        m = re.match(r"c(\d+)-run(\d+)\.txt$", name)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    for name in sorted(os.listdir(directory), key=order):
        m = re.match(r"c(\d+)-run(\d+)\.txt$", name)
        if not m:
            continue
        run = {"file": name}
        with open(os.path.join(directory, name)) as f:
            for line in f:
                for key, pattern in LOAD_FIELDS:
                    hit = pattern.match(line)
                    if hit:
                        run[key] = hit.groups()
        run["incomplete"] = not all(k in run for k, _ in LOAD_FIELDS)
        runs.setdefault(int(m.group(1)), []).append(run)
    return runs


def load_go(paths):
    """bench/go's JSON lines, keyed by (kind, table, request, router). bench/run writes one
    file before and one after the C++ suites; a benchmark in both gets the mean of the two
    medians and the range of both."""
    seen = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for raw in f:
                if raw.strip():
                    d = json.loads(raw)
                    seen.setdefault((d["kind"], d["table"], d.get("request", ""), d["router"]), []).append(d)
    lines = {}
    for key, ds in seen.items():
        d = dict(ds[0])
        timed = [x for x in ds if "ns" in x]
        if timed:
            d["ns"] = statistics.mean(x["ns"] for x in timed)
            d["ns_min"] = min(x["ns_min"] for x in timed)
            d["ns_max"] = max(x["ns_max"] for x in timed)
            d["allocs"] = max(x.get("allocs", 0) for x in timed)
            d["passes"] = len(timed)
        lines[key] = d
    return lines


def load_env(path):
    env = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    return env


def scan_limit():
    """detail::literal_scan_limit, read from the core header."""
    path = os.path.join(HERE, "..", "include", "waypoint", "detail", "router_tree.hpp")
    try:
        with open(path) as f:
            m = re.search(r"literal_scan_limit\s*=\s*(\d+)", f.read())
        return int(m.group(1)) if m else None
    except OSError:
        return None


def request_names(path):
    names = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    names.append(line.split()[0])
    return names


AGREEMENT_LINE = re.compile(r"\*\*(\w+)\*\*: refused (\d+) of (\d+) routes(?: \(the whole table\))?; disagrees on (\d+) "
                            r"of (\d+) requests(?: \((.*)\))?\.")


def load_agreement(path):
    """{table: {router: (refused, routes, disagree, requests, kinds, file_order_text)}}."""
    out = {}
    if not os.path.exists(path):
        return out
    table = None
    last = None
    with open(path) as f:
        for line in f:
            m = re.match(r"### ([\w\[\]]+): (\d+) routes", line)
            if m:
                table = m.group(1)
                out[table] = {}
                continue
            m = AGREEMENT_LINE.match(line)
            if m and table:
                last = m.group(1)
                out[table][last] = [int(m.group(2)), int(m.group(3)), int(m.group(4)),
                                    int(m.group(5)), m.group(6) or "", ""]
                continue
            if line.startswith("Given the routes in table order") and table and last:
                out[table][last][5] = line.strip()
    return out


# --- formatting --------------------------------------------------------------------------

def ns(value):
    if value is None:
        return "—"
    if value < 0:
        return "−" + ns(-value)
    if value < 10:
        return "%.2f" % value
    if value < 100:
        return "%.1f" % value
    return "{:,.0f}".format(value)


def duration(seconds_ns):
    """A duration given in ns, in the unit that reads best."""
    v = seconds_ns
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if v >= scale:
            return "%.3g %s" % (v / scale, unit)
    return "%.3g ns" % v


def pct(fraction):
    return "±%.0f%%" % (fraction * 100) if fraction >= 0.005 else "±0%"


def allocs(value):
    if value is None:
        return "—"
    if abs(value - round(value)) < 1e-9:
        return "%d" % round(value)
    return "%.2f" % value


def cell(r, with_spread=True):
    if r is None:
        return "—"
    if r.error:
        return "refused¹"
    text = ns(r.median)
    if with_spread:
        text += " " + pct(r.spread)
    if r.label.startswith("disagrees"):
        text += " ²"
    return text


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


FOOTNOTES = ("¹ the router refused the table (see §6).  "
             "² the router answers this request differently from waypoint (see §6); its time "
             "is that of its own answer.")


# --- sections ------------------------------------------------------------------------------

class Report:
    def __init__(self, results_dir):
        self.dir = results_dir
        self.match, self.match_context = load_results(os.path.join(results_dir, "match.json"))
        self.scale, self.scale_context = load_results(os.path.join(results_dir, "scale.json"))
        self.env = load_env(os.path.join(results_dir, "env.txt"))
        self.agreement = load_agreement(os.path.join(results_dir, "agreement.md"))
        self.app, self.app_context = load_results(os.path.join(results_dir, "app.json"))
        self.http = load_http(os.path.join(results_dir, "load"))
        self.go = load_go([os.path.join(results_dir, f) for f in ("go.jsonl", "go-before.jsonl",
                                                                   "go-after.jsonl")])
        self.all = dict(self.match)
        self.all.update(self.scale)
        self.all.update(self.app)
        self.routers = [r for r in ROUTERS if any(n.endswith("/" + r) for n in self.all)]

    def get(self, name):
        return self.all.get(name)

    def requests_of(self, prefix):
        """Request names of `prefix`/REQUEST/..., in the order of their requests file."""
        seen = []
        for name in self.all:
            if name.startswith(prefix + "/"):
                req = name[len(prefix) + 1:].split("/")[0]
                if req not in seen:
                    seen.append(req)
        stem = prefix.split("/")[-1]
        order = request_names(os.path.join(HERE, "tables", stem + ".requests"))
        return [r for r in order if r in seen] + [r for r in seen if r not in order]

    # environment and noise
    def environment(self):
        e = self.env
        ctx = self.match_context or self.scale_context
        rows = [
            ("date (UTC)", e.get("date", "?")),
            ("CPU", "%s, %s logical CPUs%s" % (e.get("cpu_model", "?"), e.get("cpu_count", "?"),
                                               ", %d MHz" % ctx["mhz_per_cpu"] if ctx.get("mhz_per_cpu") else "")),
            ("kernel", e.get("kernel", "?")),
            ("compiler", e.get("compiler", "?")),
            ("build", "%s, flags `%s`" % (e.get("build_type", "?"), e.get("cxx_flags", "").strip())),
            ("Boost", e.get("boost", "?")),
            ("Google Benchmark", "%s (Debian's build reports itself as %s)" % (
                e.get("pkg_libbenchmark-dev", "?"), ctx.get("library_build_type", "?"))),
            ("R3", e.get("pkg_libr3-dev", "?")),
            ("RESTinio", e.get("pkg_librestinio-dev", "?")),
            ("source", "commit %s, %s uncommitted files" % (e.get("commit", "?"), e.get("dirty_files", "?"))),
            ("repetitions", "%s per benchmark, randomly interleaved, min time %s s each" % (
                e.get("repetitions", "?"), e.get("min_time", "?"))),
            ("load average (1, 5, 15 min)", "%s before, %s after the microbenchmarks%s" % (
                e.get("load_before", "?"), e.get("load_after", "?"),
                ", %s after the load test" % e["load_after_http"] if "load_after_http" in e else "")),
            ("load test (§9)", "wrk %s, %s wrk thread, %s server thread, loopback; wrk and the "
             "server share the %s CPUs" % (e.get("wrk", "?"), e.get("load_wrk_threads", "?"),
                                           e.get("load_server_threads", "?"), e.get("cpu_count", "?"))),
            ("wall time of the run", "%s s" % e.get("run_seconds", "?")),
        ]
        return table(["", ""], rows)

    def noise(self):
        spreads = sorted(r.spread for r in self.all.values() if len(r.times) > 1)
        if not spreads:
            return "Only one repetition was run, so no spread can be stated."
        def q(p):
            return spreads[min(len(spreads) - 1, int(p * len(spreads)))]
        worst = max((r for r in self.all.values() if len(r.times) > 1), key=lambda r: r.spread)
        wp = sorted(r.spread for n, r in self.all.items() if n.endswith("/waypoint") and len(r.times) > 1)
        text = ("Spread (half the min-max range of the repetitions, over the median) across all %d "
                "benchmarks: median %s, 90th percentile %s, worst %s (`%s`)." % (
                    len(spreads), pct(q(0.5)), pct(q(0.9)), pct(worst.spread), worst.name))
        if wp:
            text += " For waypoint's benchmarks alone: median %s, 90th percentile %s." % (
                pct(wp[len(wp) // 2]), pct(wp[min(len(wp) - 1, int(0.9 * len(wp)))]))
        text += (" Differences smaller than the spread of the two rows compared are not results.")
        return text

    # per-shape tables
    def shapes(self, table_name):
        reqs = self.requests_of("match/" + table_name)
        if not reqs:
            return "Not run."
        header = ["request"]
        for r in self.routers:
            header += ["%s ns" % ROUTER_TITLES[r], "allocs"]
        if "reference" in self.routers:
            header.append("reference ÷ waypoint")
        rows = []
        for req in reqs:
            row = [req]
            for router in self.routers:
                res = self.get("match/%s/%s/%s" % (table_name, req, router))
                row += [cell(res), allocs(res.counters.get("allocs")) if res and not res.error else "—"]
            if "reference" in self.routers:
                row.append(self.ratio("match/%s/%s/reference" % (table_name, req),
                                      "match/%s/%s/waypoint" % (table_name, req)))
            rows.append(row)
        return table(header, rows) + "\n\n" + FOOTNOTES

    def ratio(self, a, b):
        ra, rb = self.get(a), self.get(b)
        if not ra or not rb or ra.error or rb.error or not ra.median or not rb.median:
            return "—"
        return "%.1f×" % (ra.median / rb.median)

    def sweep(self):
        rows = []
        for name in ("gateway", "rest200", "mix1000", "unique10k"):
            first = self.get("sweep/%s/waypoint" % name)
            if not first:
                continue
            n = first.counters.get("requests", 1)
            row = [name, "%d" % n]
            for router in self.routers:
                res = self.get("sweep/%s/%s" % (name, router))
                if not res or res.error:
                    row += ["refused¹" if res else "—", "—"]
                    continue
                per = res.median / n
                text = "%s %s" % (ns(per), pct(res.spread))
                if res.label.startswith("disagrees"):
                    text += " ²"
                row += [text, allocs(res.counters.get("allocs"))]
            rows.append(row)
        if not rows:
            return "Not run."
        header = ["table", "requests"]
        for r in self.routers:
            header += ["%s ns/request" % ROUTER_TITLES[r], "allocs/request"]
        return table(header, rows) + "\n\n" + FOOTNOTES

    # growth
    def growth_ratio(self, req, router):
        lo = self.get("growth/%s/10/%s" % (req, router))
        hi = self.get("growth/%s/10000/%s" % (req, router))
        if not lo or not hi or lo.error or hi.error:
            return None
        return hi.median / lo.median

    def growth_table(self, router):
        reqs = self.requests_of("growth")
        if not reqs:
            return "Not run."
        rows = []
        for req in reqs:
            row = [req]
            for n in SIZES:
                row.append(cell(self.get("growth/%s/%d/%s" % (req, n, router))))
            ratio = self.growth_ratio(req, router)
            row.append("%.2f×" % ratio if ratio else "—")
            res = self.get("growth/%s/10000/%s" % (req, router))
            row.append(allocs(res.counters.get("allocs")) if res and not res.error else "—")
            rows.append(row)
        return table(["request", "10 routes", "100", "1,000", "10,000", "10,000 ÷ 10", "allocs"], rows)

    def growth(self):
        if not self.requests_of("growth"):
            return "Not run."
        parts = ["**waypoint**, ns per match:\n\n" + self.growth_table("waypoint")]
        summary = []
        for router in self.routers:
            ratios = [self.growth_ratio(q, router) for q in self.requests_of("growth")]
            ratios = [r for r in ratios if r]
            if ratios:
                summary.append([ROUTER_TITLES[router], "%.2f×" % min(ratios),
                                "%.2f×" % statistics.median(ratios), "%.2f×" % max(ratios)])
        parts.append("Cost at 10,000 routes over cost at 10, per request, by router:\n\n" +
                     table(["router", "least", "median", "most"], summary))
        for router in self.routers[1:]:
            parts.append("**%s**, ns per match:\n\n%s" % (ROUTER_TITLES[router], self.growth_table(router)))
        return "\n\n".join(parts) + "\n\n" + FOOTNOTES

    # misses
    def miss_rows(self):
        rows = []
        for miss, hit, where in MISS_PAIRS:
            if where == "growth":
                for n in SIZES:
                    rows.append(("growth, %d routes" % n, miss, hit,
                                 self.get("growth/%s/%d/waypoint" % (miss, n)),
                                 self.get("growth/%s/%d/waypoint" % (hit, n))))
            else:
                rows.append((where, miss, hit, self.get("match/%s/%s/waypoint" % (where, miss)),
                             self.get("match/%s/%s/waypoint" % (where, hit))))
        return [r for r in rows if r[3] and r[4] and r[3].median and r[4].median]

    def misses(self):
        rows = []
        for where, miss, hit, m, h in self.miss_rows():
            ratio = m.median / h.median
            rows.append([where, "%s: %s %s" % (miss, ns(m.median), pct(m.spread)),
                         "%s: %s %s" % (hit, ns(h.median), pct(h.spread)), "%.2f×" % ratio])
        if not rows:
            return "Not run."
        return table(["table", "miss (waypoint ns)", "hit on the same path (ns)", "miss ÷ hit"], rows)

    # literal index
    def literal(self):
        sizes = []
        for name in self.all:
            m = re.match(r"literal/(\d+)/", name)
            if m and int(m.group(1)) not in sizes:
                sizes.append(int(m.group(1)))
        if not sizes:
            return "Not run."
        limit = scan_limit()
        rows = []
        for n in sorted(sizes):
            hit, miss = self.get("literal/%d/hit" % n), self.get("literal/%d/miss" % n)
            rows.append(["%d" % n, "scan" if limit and n <= limit else "hash index",
                         cell(hit), cell(miss)])
        return table(["children", "lookup", "hit (last child) ns", "miss ns"], rows)

    # registration
    def registration(self):
        rows = []
        for n in SIZES:
            row = ["{:,}".format(n)]
            for router in self.routers:
                res = self.get("register/%d/%s" % (n, router))
                if not res:
                    row += ["—", "—", "—"]
                elif res.error:
                    row += ["refused¹", "—", "—"]
                else:
                    row += ["%s %s" % (duration(res.median), pct(res.spread)),
                            "%.2f µs" % (res.median / n / 1e3),
                            "%.1f" % res.counters.get("allocs_per_route", float("nan"))]
            rows.append(row)
        if not any(self.get("register/%d/waypoint" % n) for n in SIZES):
            return "Not run."
        header = ["routes"]
        for r in self.routers:
            header += ["%s total" % ROUTER_TITLES[r], "per route", "allocs/route"]
        return table(header, rows) + "\n\n" + FOOTNOTES.split("  ")[0]

    def per_route(self, router, n):
        res = self.get("register/%d/%s" % (n, router))
        if not res or res.error or not res.median:
            return None
        return res.median / n

    # agreement
    def agreement_summary(self):
        if not self.agreement:
            return "Not run."
        rows = []
        for tname, routers in self.agreement.items():
            for router, (refused, routes, differ, requests, kinds, file_order) in routers.items():
                rows.append([tname, ROUTER_TITLES.get(router, router), "%d of %d" % (refused, routes),
                             "%d of %d" % (differ, requests), kinds or "—"])
        notes = []
        for tname, routers in self.agreement.items():
            for router, v in routers.items():
                if v[5]:
                    notes.append("- %s, %s: %s" % (tname, ROUTER_TITLES.get(router, router),
                                                   v[5].replace("Given the routes in table order instead of precedence order, it",
                                                                "in table order it")))
        text = table(["table", "router", "routes refused", "requests answered differently", "how"], rows)
        if notes:
            text += ("\n\nThe same peers given the routes in the table's own order rather than "
                     "waypoint's precedence order:\n\n" + "\n".join(notes))
        return text

    @staticmethod
    def noisy_verdict(pairs, limit=1.0):
        """pairs: (what, a, b); the claim is a <= limit * b for each. A pair that breaks it
        by less than the two spreads together is reported as within noise."""
        beyond, within = [], []
        for what, a, b in pairs:
            ratio = a.median / b.median
            if ratio <= limit:
                continue
            (within if ratio / limit - 1 <= a.spread + b.spread else beyond).append("%s %.2f×" % (what, ratio))
        if beyond:
            text = "**false**: " + ", ".join(beyond)
            if within:
                text += "; within noise: " + ", ".join(within)
            return text
        if within:
            return "**true within noise**: " + ", ".join(within)
        return "**true**"

    def hit_requests(self, names):
        return [q for q in names if not q.startswith(("miss", "method_not_allowed", "redirect", "head"))]

    def miss_vs_median_hit(self):
        """(what, miss result, pseudo-result for the median hit) per table and size."""
        out = []
        places = [("gateway", "match/gateway/%s/waypoint"), ("mix1000", "match/mix1000/%s/waypoint")]
        places += [("growth, %d routes" % n, "growth/%%s/%d/waypoint" % n) for n in SIZES]
        for where, fmt in places:
            prefix = fmt.split("/%s")[0]
            names = self.requests_of(prefix)
            hits = [self.get(fmt % q) for q in self.hit_requests(names)]
            hits = [h for h in hits if h and h.median]
            if not hits:
                continue
            median_hit = sorted(hits, key=lambda h: h.median)[len(hits) // 2]
            for miss in ("miss", "miss_deep"):
                m = self.get(fmt % miss)
                if m and m.median:
                    hit_name = median_hit.name.split("/")[1 if where.startswith("growth") else 2]
                    out.append(("%s %s (vs %s)" % (where, miss, hit_name), m, median_hit))
        return out

    # framework tax (§8)
    def app_pair(self, route):
        raw, app = self.get("BM_RawDispatch/%s" % route), self.get("BM_AppDispatch/%s" % route)
        if not raw or not app or not raw.median or not app.median:
            return None
        return raw, app

    @staticmethod
    def op_allocs(r):
        return r.counters.get("allocs/op") if r else None

    @staticmethod
    def tax_of(raw, app):
        """(tax ns, its noise in ns: the two rows' half-ranges added)."""
        return app.median - raw.median, app.spread * app.median + raw.spread * raw.median

    def tax(self):
        rows, sentences = [], []
        for route in ("static", "param"):
            pair = self.app_pair(route)
            if not pair:
                continue
            raw, app = pair
            tax, noise = self.tax_of(raw, app)
            ra, aa = self.op_allocs(raw), self.op_allocs(app)
            rows.append([route, cell(raw), allocs(ra), cell(app), allocs(aa),
                         "%s ± %s" % (ns(tax), ns(noise)),
                         allocs(aa - ra) if ra is not None and aa is not None else "—"])
            sentences.append("a %s route %s ns (%.0f%% of the raw dispatch's %s ns)" % (
                route, ns(tax), 100 * tax / raw.median, ns(raw.median)))
        if not rows:
            return "Not run."
        text = table(["route", "raw dispatch ns", "allocs/op", "waypoint::app ns", "allocs/op",
                      "tax ns (app − raw)", "tax allocs/op"], rows)
        return text + ("\n\nThe tax is the difference of the two medians, ± the two half-ranges "
                       "added: waypoint::app adds to " + " and to ".join(sentences) + ".")

    def chain(self):
        depths = sorted(int(n.split("/")[1]) for n in self.app if n.startswith("BM_ChainDepth/"))
        if not depths:
            return "Not run."
        base = self.get("BM_ChainDepth/%d" % depths[0])
        rows = []
        for d in depths:
            r = self.get("BM_ChainDepth/%d" % d)
            extra = r.median - base.median if r.median and base.median else None
            rows.append([str(d), cell(r), allocs(self.op_allocs(r)),
                         ns(extra) if d != depths[0] else "—",
                         ns(extra / (d - depths[0])) if d != depths[0] and extra is not None else "—"])
        text = table(["middleware layers", "ns per request", "allocs/op", "ns over %d layers" % depths[0],
                      "ns per layer"], rows)
        deepest = self.get("BM_ChainDepth/%d" % depths[-1])
        if deepest and deepest.median and base.median and depths[-1] != depths[0]:
            extra, noise = self.tax_of(base, deepest)
            text += ("\n\nEach layer is a pass-through `use([](context&, next inner) { inner(); })` "
                     "on the param route; %d layers add %s ns in all (± %s ns from the two rows' "
                     "spreads), %s ns per layer." % (
                         depths[-1], ns(extra), ns(noise), ns(extra / (depths[-1] - depths[0]))))
            if abs(extra) <= noise:
                text += (" That is inside the noise: this run cannot tell a chain of %d layers "
                         "from none, and the smaller differences in the table, negative ones "
                         "included, are noise as well." % depths[-1])
        return text

    def typed(self):
        names = [("typed `post<create_session, session>`", "BM_TypedPost"),
                 ("hand-written decode + encode (untyped route)", "BM_HandWrittenPost"),
                 ("ruler: one nlohmann encode of the 5-field response", "BM_Ruler_EncodeSession")]
        hand = self.get("BM_HandWrittenPost")
        rows = []
        for title, name in names:
            r = self.get(name)
            if not r:
                continue
            rows.append([title, cell(r), allocs(self.op_allocs(r)),
                         "%.2f×" % (r.median / hand.median) if hand and hand.median and r.median else "—"])
        if not rows:
            return "Not run."
        text = table(["request", "ns per request", "allocs/op", "÷ hand-written"], rows)
        typed, ruler = self.get("BM_TypedPost"), self.get("BM_Ruler_EncodeSession")
        if typed and hand and ruler and typed.median and hand.median and ruler.median:
            text += ("\n\nBoth rows are a whole POST through waypoint::app (route, decode of the "
                     "8-field body, handler, encode, response); the typed route costs %.2f× the "
                     "hand-written one and %s allocations against %s. The ruler says what one JSON "
                     "encode costs on its own: the typed request is %.1f rulers." % (
                         typed.median / hand.median, allocs(self.op_allocs(typed)),
                         allocs(self.op_allocs(hand)), typed.median / ruler.median))
        return text

    # whole HTTP (§9)
    @staticmethod
    def median_spread(values):
        if not values:
            return None, 0.0
        m = statistics.median(values)
        return m, ((max(values) - min(values)) / 2 / m if m and len(values) > 1 else 0.0)

    def http_summary(self, connections):
        runs = [r for r in self.http.get(connections, []) if not r["incomplete"]]
        if not runs:
            return None
        def col(key, i=0):
            return [float(r[key][i]) for r in runs]
        return {
            "runs": len(runs), "failed": len(self.http.get(connections, [])) - len(runs),
            "rps": self.median_spread(col("rps")), "p50": self.median_spread(col("p50")),
            "p99": self.median_spread(col("p99")), "p99_max": max(col("p99")),
            "errors": sum(sum(int(x) for x in r["errors"]) for r in runs),
            "non2xx": sum(int(r["non2xx"][0]) for r in runs),
            "cpu": self.median_spread(col("cpu", 1)),
            "requests": sum(int(r["requests"][0]) for r in runs),
        }

    def http_section(self):
        if not self.http:
            return "Not run."
        rows = []
        for c in sorted(self.http, reverse=True):
            s = self.http_summary(c)
            if not s:
                rows.append([str(c), "0 of %d" % len(self.http[c])] + ["failed"] * 6)
                continue
            rows.append([str(c), "%d" % s["runs"],
                         "{:,.0f} {}".format(s["rps"][0], pct(s["rps"][1])),
                         "%.0f %s" % (s["p50"][0], pct(s["p50"][1])),
                         "%.0f %s (worst %.0f)" % (s["p99"][0], pct(s["p99"][1]), s["p99_max"]),
                         "%d" % s["errors"], "%d" % s["non2xx"],
                         "%.1f %s" % (s["cpu"][0], pct(s["cpu"][1]))])
        text = table(["connections", "runs", "requests/s", "p50 µs", "p99 µs", "socket errors",
                      "non-2xx", "server CPU µs/request"], rows)
        detail = []
        for c in sorted(self.http, reverse=True):
            for r in self.http[c]:
                if r["incomplete"]:
                    detail.append([r["file"], str(c)] + ["incomplete output"] + ["—"] * 6)
                    continue
                detail.append([r["file"], str(c), "{:,} in {} s".format(int(r["requests"][0]), r["requests"][1]),
                               "{:,.0f}".format(float(r["rps"][0])), r["p50"][0], r["p99"][0],
                               "%d" % sum(int(x) for x in r["errors"]), r["non2xx"][0],
                               "%s s, %s µs/request" % r["cpu"]])
        text += "\n\nEvery run:\n\n" + table(["run", "connections", "requests", "requests/s", "p50 µs",
                                                "p99 µs", "socket errors", "non-2xx", "server CPU"], detail)
        loads = sorted({r["load"][0] for runs in self.http.values() for r in runs if not r["incomplete"]})
        tables = sorted({r["table"][0] for runs in self.http.values() for r in runs if not r["incomplete"]})
        if loads:
            text += "\n\nWorkload: %s; %s." % (", ".join(tables), "; ".join("`%s`" % l for l in loads))
        main = self.http_summary(THROUGHPUT_CONNECTIONS)
        if main:
            text += (" With %d connections the gateway serves %s requests/s on one server thread, "
                     "at %.1f µs of server CPU (user + system) per request." % (
                         THROUGHPUT_CONNECTIONS, "{:,.0f}".format(main["rps"][0]), main["cpu"][0]))
        if main:
            busy = [float(r["cpu"][0]) / float(r["requests"][1])
                    for r in self.http.get(THROUGHPUT_CONNECTIONS, []) if not r["incomplete"]]
            share = statistics.median(busy)
            text += (" The server process was busy %.0f%% of the wall time (median over runs), %s" % (
                100 * share,
                "so requests/s is close to what one server thread can do while wrk takes the other "
                "CPU." if share >= 0.85 else
                "so the server was not the bottleneck: requests/s here is bounded by wrk, which "
                "shares the two CPUs with it."))
        one = self.http_summary(1)
        if one:
            text += (" With one connection each request waits for the previous response, so the "
                     "server wakes up for every request instead of finding several ready at once: "
                     "its CPU per request (%.1f µs) measures that, and its latency is the "
                     "round-trip time of an idle server." % one["cpu"][0])
        return text

    def app_verdicts(self):
        rows = []
        pair = self.app_pair("static")
        if pair:
            raw, app = pair
            tax, noise = self.tax_of(raw, app)
            extra = (self.op_allocs(app) or 0) - (self.op_allocs(raw) or 0)
            detail = "%s ± %s ns, %s allocs/op over raw dispatch" % (ns(tax), ns(noise), allocs(extra))
            if extra != 0:
                verdict = "**false**: " + detail
            elif tax <= TAX_LIMIT_NS:
                verdict = "**true**: " + detail
            elif tax - TAX_LIMIT_NS <= noise:
                verdict = "**true within noise**: " + detail
            else:
                verdict = "**false**: " + detail
            rows.append(["framework tax for a static route is under %.0f ns and 0 allocations"
                         % TAX_LIMIT_NS, verdict, "§8a"])
        depths = sorted(int(n.split("/")[1]) for n in self.app if n.startswith("BM_ChainDepth/"))
        if len(depths) > 1:
            counts = [(d, self.op_allocs(self.get("BM_ChainDepth/%d" % d))) for d in depths]
            known = [c for _, c in counts if c is not None]
            same = len(known) == len(counts) and max(known) - min(known) < 1e-6
            listing = ", ".join("%d layers: %s" % (d, allocs(c)) for d, c in counts)
            rows.append(["allocations per request do not depend on chain depth",
                         ("**true**: " if same else "**false**: ") + listing, "§8b"])
        typed, hand = self.get("BM_TypedPost"), self.get("BM_HandWrittenPost")
        if typed and hand and typed.median and hand.median:
            time_verdict = self.noisy_verdict([("time", typed, hand)])
            ta, ha = self.op_allocs(typed), self.op_allocs(hand)
            detail = "%.2f× the time, %s allocs/op against %s" % (typed.median / hand.median,
                                                                 allocs(ta), allocs(ha))
            if ta is not None and ha is not None and ta > ha:
                verdict = "**false**: " + detail
            elif time_verdict.startswith("**true**"):
                verdict = "**true**: " + detail
            elif time_verdict.startswith("**true within noise"):
                verdict = "**true within noise**: " + detail
            else:
                verdict = "**false**: " + detail
            rows.append(["typed post<In,Out> costs no more than hand-written decode+encode",
                         verdict, "§8c"])
        return rows

    def http_verdicts(self):
        rows = []
        main = self.http_summary(THROUGHPUT_CONNECTIONS)
        if main:
            cpu, spread = main["cpu"]
            detail = "%.1f µs %s (median of %d runs, %d connections)" % (
                cpu, pct(spread), main["runs"], THROUGHPUT_CONNECTIONS)
            one = self.http_summary(1)
            if one:
                detail += "; with 1 connection %.1f µs" % one["cpu"][0]
            if cpu <= SERVER_CPU_LIMIT_US:
                verdict = "**true**: " + detail
            elif cpu * (1 - spread) <= SERVER_CPU_LIMIT_US:
                verdict = "**true within noise**: " + detail
            else:
                verdict = "**false**: " + detail
            rows.append(["server CPU per keep-alive request is at or under %.0f µs (the lean Beast "
                         "figure on this machine class)" % SERVER_CPU_LIMIT_US, verdict, "§9"])
        summaries = [(c, self.http_summary(c)) for c in sorted(self.http)]
        summaries = [(c, s) for c, s in summaries if s]
        if summaries:
            errors = sum(s["errors"] for _, s in summaries)
            non2xx = sum(s["non2xx"] for _, s in summaries)
            failed = sum(s["failed"] for _, s in summaries)
            total = sum(s["requests"] for _, s in summaries)
            ok = errors == 0 and non2xx == 0 and failed == 0
            rows.append(["under load the gateway answers every request 2xx, with no socket errors",
                         ("**true**" if ok else "**false**") + ": %d socket errors, %d non-2xx, %d "
                         "failed runs over %s requests" % (errors, non2xx, failed, "{:,}".format(total)),
                         "§9"])
        return rows

    # verdicts
    def verdicts(self):
        rows = []
        # zero allocations
        wp = [r for n, r in self.all.items() if n.endswith("/waypoint") and
              (n.startswith("match/") or n.startswith("growth/") or n.startswith("sweep/")) and not r.error]
        if wp:
            bad = [r.name for r in wp if r.counters.get("allocs", 0) != 0]
            rows.append(["waypoint allocates nothing per match, on every shape and table size",
                         "**true**" if not bad else "**false**: " + ", ".join(bad[:5]),
                         "§1, §2, §3, §4 (allocs columns)"])
        # the Go peers: issue 19's target for parameter routes, and registration
        for shape in ("one parameter", "two or more parameters"):
            ratios = [(m / g, n) for sh, n, m, g, _ in self.go_pairs("gin") if sh == shape]
            if ratios:
                worst = max(ratios)
                over = [n for r, n in sorted(ratios, reverse=True) if r > 0.5]
                rows.append(["%s routes take at most 0.5× gin's time" % shape,
                             "**true** (worst %.2f×, %s)" % worst if not over else
                             "**false**: %d of %d above, worst %.2f× (%s)" % (len(over), len(ratios), worst[0], worst[1]),
                             "lead table, §10"])
        mine = self.get("register/10000/waypoint")
        if mine and mine.median:
            slower = []
            for peer in ("gin", "httprouter", "echo", "chi"):
                line = self.go.get(("register", "unique10k", "", peer))
                if line and line["ns"] < mine.median / 10000:
                    slower.append(peer)
            if any(self.go.get(("register", "unique10k", "", p)) for p in ("gin", "httprouter", "echo", "chi")):
                rows.append(["registration per route is cheaper than every Go tree router's (unique10k)",
                             "**true**" if not slower else "**false**: " + ", ".join(slower) + " cheaper",
                             "lead table, §10"])
        # misses
        miss_rows = self.miss_rows()
        if miss_rows:
            rows.append(["a miss costs no more than a hit on the same path",
                         self.noisy_verdict([("%s %s" % (w, m), mi, h) for w, m, _, mi, h in miss_rows]),
                         "§4b"])
            median_rows = self.miss_vs_median_hit()
            if median_rows:
                rows.append(["a miss costs no more than the median hit of its table",
                             self.noisy_verdict(median_rows), "§4b"])
        # growth
        growth_pairs = []
        for q in self.requests_of("growth"):
            lo, hi = self.get("growth/%s/10/waypoint" % q), self.get("growth/%s/10000/waypoint" % q)
            if lo and hi and lo.median and hi.median:
                growth_pairs.append((q, hi, lo))
        if growth_pairs:
            worst = max(growth_pairs, key=lambda p: p[1].median / p[2].median)
            rows.append(["a request's cost grows ≤ %.1f× from 10 to 10,000 routes" % GROWTH_LIMIT,
                         self.noisy_verdict(growth_pairs, GROWTH_LIMIT) +
                         " (largest: %s, %.2f×)" % (worst[0], worst[1].median / worst[2].median), "§4"])
        # faster than the reference
        if "reference" in self.routers:
            pairs = []
            for n in self.all:
                if (n.startswith("match/") or n.startswith("growth/")) and n.endswith("/waypoint"):
                    ref = self.get(n[: -len("waypoint")] + "reference")
                    me = self.get(n)
                    if ref and me and ref.median and me.median:
                        pairs.append((n[: -len("/waypoint")], ref.median / me.median))
            if pairs:
                slower = [p for p in pairs if p[1] < 1]
                least = min(pairs, key=lambda p: p[1])
                verdict = ("**true**: %.1f× to %.0f×" % (least[1], max(p[1] for p in pairs))
                           if not slower else "**false**: " + ", ".join("%s %.2f×" % p for p in slower))
                rows.append(["faster than the reference matcher on every shape and size", verdict,
                             "§1, §2, §4"])
        # peers
        for peer in ("r3", "restinio"):
            if peer not in self.routers:
                continue
            pairs = []
            for n in self.all:
                if (n.startswith("match/") or n.startswith("growth/")) and n.endswith("/waypoint"):
                    other = self.get(n[: -len("waypoint")] + peer)
                    me = self.get(n)
                    if other and me and other.median and me.median and not other.label:
                        pairs.append((n[: -len("/waypoint")], other.median / me.median))
            if pairs:
                slower = [p for p in pairs if p[1] < 1]
                verdict = ("**true** (%.1f× to %.0f×)" % (min(p[1] for p in pairs), max(p[1] for p in pairs))
                           if not slower else "**false** on %d of %d: %s" % (
                               len(slower), len(pairs), ", ".join("%s %.2f×" % p for p in slower[:6])))
                rows.append(["faster than %s on every request both answer alike" % ROUTER_TITLES[peer],
                             verdict, "§1, §2, §4"])
        # registration
        a, b = self.get("register/100/waypoint"), self.get("register/10000/waypoint")
        if a and b and a.median and b.median and not a.error and not b.error:
            per_a, per_b = a.median / 100, b.median / 10000
            pseudo_a = Result(a.name)
            pseudo_a.times = [t * 100 for t in a.times]  # per route of 10,000 routes, for the ratio
            rows.append(["registration cost per route is flat (≤ %.1f×) from 100 to 10,000 routes"
                         % REGISTRATION_LIMIT,
                         self.noisy_verdict([("per route", b, pseudo_a)], REGISTRATION_LIMIT) +
                         ": %.2f µs → %.2f µs per route (%.2f×)" % (per_a / 1e3, per_b / 1e3, per_b / per_a),
                         "§5"])
        # reference agreement
        if self.agreement:
            bad = sum(v["reference"][2] + v["reference"][0] for v in self.agreement.values()
                      if "reference" in v)
            rows.append(["waypoint and the reference matcher agree on every listed and sweep request",
                         "**true**" if bad == 0 else "**false**: %d differences" % bad, "§6"])
        rows += self.app_verdicts()
        rows += self.http_verdicts()
        self.verdict_rows = rows
        if not rows:
            return "Not run."
        return table(["claim", "verdict", "evidence"], rows)

    # the findings that do not flatter waypoint, read off the data
    def unflattering(self):
        items = []
        for claim, verdict, where in self.verdict_rows:
            if "**true**" not in verdict or "within noise" in verdict:
                items.append("- *%s*: %s (%s)." % (claim, verdict.replace("**", ""), where))
        close = []
        for peer in ("r3", "restinio"):
            for n in self.all:
                if (n.startswith("match/") or n.startswith("growth/")) and n.endswith("/waypoint"):
                    me, other = self.get(n), self.get(n[: -len("waypoint")] + peer)
                    if me and other and me.median and other.median and not other.label:
                        ratio = other.median / me.median
                        if ratio < 1.5:
                            close.append((ratio, n[: -len("/waypoint")], peer, me, other))
        close.sort()
        if close:
            items.append("- Rows where a peer that answers alike is less than 1.5× slower than waypoint: " +
                         ", ".join("`%s` (%s %s ns vs %s ns, %.2f×)" % (n, ROUTER_TITLES[p], ns(o.median),
                                                                      ns(m.median), r)
                                   for r, n, p, m, o in close[:8]) +
                         (", and %d more" % (len(close) - 8) if len(close) > 8 else "") + ".")
        faster = []
        for n in SIZES:
            me = self.get("register/%d/waypoint" % n)
            for other in self.routers[1:]:
                o = self.get("register/%d/%s" % (n, other))
                if me and o and me.median and o.median and not o.error and o.median < me.median:
                    faster.append("%s at %s routes (%s against waypoint's %s)" % (
                        ROUTER_TITLES[other], "{:,}".format(n), duration(o.median), duration(me.median)))
        if faster:
            items.append("- Registration is slower than another router's for: " + "; ".join(faster) + " (§5).")
        slower_match = []
        for n in self.all:
            if (n.startswith("match/") or n.startswith("growth/") or n.startswith("sweep/")) and n.endswith("/waypoint"):
                me = self.get(n)
                for other in self.routers[1:]:
                    o = self.get(n[: -len("waypoint")] + other)
                    if me and o and me.median and o.median and not o.label and o.median < me.median:
                        slower_match.append("`%s` (%s %s ns vs %s ns)" % (n[: -len("/waypoint")], ROUTER_TITLES[other],
                                                                         ns(o.median), ns(me.median)))
        if slower_match:
            items.append("- Requests another router answers alike, faster: " + ", ".join(slower_match) + ".")
        lit = [(self.get("literal/%d/hit" % n), self.get("literal/%d/miss" % n)) for n in (1, 8, 9, 128)]
        if all(h and m and h.median and m.median for h, m in lit):
            (h1, m1), (h8, m8), (h9, m9), (h128, m128) = lit
            items.append("- A literal lookup in a node that has outgrown the scan costs %s ns (hit, 9 "
                         "children) against %s ns for a scan of one child, and a miss in a 128-child node "
                         "%s ns against %s ns for a hit (§4c): this is what a shallow literal path pays as "
                         "the table grows." % (ns(h9.median), ns(h1.median), ns(m128.median), ns(h128.median)))
        one = self.http_summary(1)
        if one and one["cpu"][0] > SERVER_CPU_LIMIT_US:
            items.append("- With one keep-alive connection the server spends %.1f µs of CPU per request, "
                         "%.1f× the %.0f µs bar that the %d-connection runs are held to (§9)." % (
                             one["cpu"][0], one["cpu"][0] / SERVER_CPU_LIMIT_US, SERVER_CPU_LIMIT_US,
                             THROUGHPUT_CONNECTIONS))
        raw_param = self.app_pair("param")
        if raw_param:
            raw, app = raw_param
            match = self.get("match/gateway/param/waypoint")
            if match and match.median:
                items.append("- Raw dispatch through Beast messages costs %s ns for a param route, "
                             "against %s ns for the router's match of a param route in the gateway "
                             "table (§1): roughly %.0f%% of an in-process request is outside the "
                             "match (request head, response, handler call), before waypoint::app "
                             "adds its %s ns (§8a)." % (
                                 ns(raw.median), ns(match.median),
                                 100 * max(0.0, raw.median - match.median) / raw.median,
                                 ns(app.median - raw.median)))
        if not items:
            return "Nothing in this run."
        return "\n".join(items)

    def sections(self):
        self.verdict_rows = []
        verdict = self.verdicts()
        return {
            "verdict": verdict,
            "unflattering": self.unflattering(),
            "environment": self.environment(),
            "noise": self.noise(),
            "shapes-gateway": self.shapes("gateway"),
            "shapes-mix1000": self.shapes("mix1000"),
            "sweep": self.sweep(),
            "growth": self.growth(),
            "misses": self.misses(),
            "literal": self.literal(),
            "registration": self.registration(),
            "agreement": self.agreement_summary(),
            "tax": self.tax(),
            "chain": self.chain(),
            "typed": self.typed(),
            "http": self.http_section(),
            "go-ratios": self.go_ratios(),
            "go-absolute": self.go_absolute(),
        }

    # --- the Go peers (bench/go) ----------------------------------------------------------
    GO_ROUTERS = ["gin", "httprouter", "echo", "chi", "servemux"]
    GO_TABLES = ["gateway", "mix1000", "github", "parse", "gplus", "static"]

    @staticmethod
    def shape_of(request):
        """The shape a request name stands for in the lead table, or None."""
        if request.startswith("multi_param") or request in ("constrained", "param_mid", "action",
                                                            "param_deep"):
            return "two or more parameters" if request.startswith("multi") or request == "constrained" else "one parameter"
        if request.startswith("param") and request != "param_beats_wildcard":
            return "one parameter"
        if request.startswith("static") or request == "root":
            return "static"
        if request.startswith("miss") or request == "method_not_allowed":
            return "miss / 405"
        return None

    def go_pairs(self, peer):
        """(shape, table/request, waypoint ns, peer ns, peer allocs) for every request both time."""
        rows = []
        for (kind, table, req, router), line in self.go.items():
            if kind != "match" or router != peer or "ns" not in line or line.get("note"):
                continue
            mine = self.get("match/%s/%s/waypoint" % (table, req))
            shape = self.shape_of(req)
            if mine and mine.median and shape:
                rows.append((shape, table + "/" + req, mine.median, line["ns"], line.get("allocs", 0)))
        return rows

    def go_ratios(self):
        if not self.go:
            return "_No Go results in this run (bench/go/run did not run)._"
        shapes = ["static", "one parameter", "two or more parameters", "miss / 405"]
        out = ["| shape | waypoint ÷ gin: median (range) | waypoint ÷ httprouter: median (range) | requests |",
               "|---|---:|---:|---|"]
        for shape in shapes:
            cells = []
            names = set()
            for peer in ("gin", "httprouter"):
                ratios = [(m / g, n) for sh, n, m, g, _ in self.go_pairs(peer) if sh == shape]
                names.update(n for _, n in ratios)
                if not ratios:
                    cells.append("—")
                    continue
                lo, hi = min(r for r, _ in ratios), max(r for r, _ in ratios)
                mid = statistics.median(r for r, _ in ratios)
                worst = max(ratios)[1]
                cells.append("**%.2f** (%.2f–%.2f, worst %s)" % (mid, lo, hi, worst)
                             if len(ratios) > 1 else "**%.2f**" % lo)
            out.append("| %s | %s | %s | %d |" % (shape, cells[0], cells[1], len(names)))
        for table in ("github", "gateway", "mix1000", "unique10k"):
            cells = []
            mine = None
            if table == "unique10k":
                mine = self.get("register/10000/waypoint")
            for peer in ("gin", "httprouter"):
                line = self.go.get(("register", table, "", peer))
                if not line or not mine or not mine.median:
                    cells.append("—")
                    continue
                per_route = mine.median / 10000
                cells.append("%.2f%s" % (per_route / line["ns"], " ¹" if line.get("note") else ""))
            if mine:
                out.append("| registration, %s | %s | %s | 10,000 routes |" % (table, cells[0], cells[1]))
        out.append("")
        out.append("A ratio below 1 is waypoint faster. Match: waypoint's `match` against the Go router's "
                   "whole `ServeHTTP` with a discarding writer; requests a router cannot express or "
                   "answers differently are left out of its ratios (see below). ¹ the Go router left "
                   "some routes of the table out (refused or inexpressible), so it registered fewer.")
        return "\n".join(out)

    def go_absolute(self):
        if not self.go:
            return "_No Go results in this run._"
        out = ["| table/request | waypoint ns | " + " | ".join("%s ns (allocs)" % r for r in self.GO_ROUTERS) + " |",
               "|---|---:|" + "---:|" * len(self.GO_ROUTERS)]
        for table in self.GO_TABLES:
            for req in request_names(os.path.join(HERE, "tables", table + ".requests")):
                mine = self.get("match/%s/%s/waypoint" % (table, req))
                cells = [cell(mine) if mine else "—"]
                for router in self.GO_ROUTERS:
                    line = self.go.get(("match", table, req, router))
                    if not line:
                        cells.append("—")
                    elif "ns" not in line:
                        cells.append(line.get("note", "—").split(":")[0])
                    else:
                        spread = (line["ns_max"] - line["ns_min"]) / 2 / line["ns"] if line["ns"] else 0
                        mark = " ²" if line.get("note") else ""
                        cells.append("%s ±%d%% (%s)%s" % (ns(line["ns"]), round(100 * spread),
                                                          allocs(line.get("allocs", 0)), mark))
                out.append("| %s/%s | %s |" % (table, req, " | ".join(cells)))
        out.append("")
        out.append("² the router answers the request unlike its expectation (HEAD from GET, a "
                   "redirect it does not make): its time is that of its own answer.")
        reg = ["", "| registration (ns per route) | waypoint | " + " | ".join(self.GO_ROUTERS[:4]) + " |",
               "|---|---:|" + "---:|" * 4]
        for table in ("github", "gateway", "mix1000", "unique10k"):
            mine = self.get("register/10000/waypoint") if table == "unique10k" else None
            cells = [ns(mine.median / 10000) if mine and mine.median else "—"]
            for router in self.GO_ROUTERS[:4]:
                line = self.go.get(("register", table, "", router))
                cells.append("—" if not line else "%s (%s allocs)%s" % (
                    ns(line["ns"]), allocs(line.get("allocs", 0)), " ¹" if line.get("note") else ""))
            reg.append("| %s | %s |" % (table, " | ".join(cells)))
        return "\n".join(out + reg)

    # plots
    def plot(self, plots_dir):
        os.makedirs(plots_dir, exist_ok=True)
        data_dir = os.path.join(self.dir, "plot-data")
        os.makedirs(data_dir, exist_ok=True)
        reqs = self.requests_of("growth")
        with open(os.path.join(data_dir, "growth.dat"), "w") as f:
            f.write("# routes " + " ".join(self.routers) + "  (geometric mean ns over: %s)\n" % ",".join(reqs))
            for n in SIZES:
                cols = []
                for router in self.routers:
                    vals = [self.get("growth/%s/%d/%s" % (q, n, router)) for q in reqs]
                    vals = [v.median for v in vals if v and v.median]
                    cols.append("%.3f" % math.exp(sum(map(math.log, vals)) / len(vals))
                                if len(vals) == len(reqs) else "NaN")
                f.write("%d %s\n" % (n, " ".join(cols)))
        with open(os.path.join(data_dir, "growth-waypoint.dat"), "w") as f:
            f.write("# routes " + " ".join(reqs) + "\n")
            for n in SIZES:
                vals = [self.get("growth/%s/%d/waypoint" % (q, n)) for q in reqs]
                f.write("%d %s\n" % (n, " ".join("%.3f" % v.median if v and v.median else "NaN" for v in vals)))
        with open(os.path.join(data_dir, "registration.dat"), "w") as f:
            f.write("# routes " + " ".join(self.routers) + " (ms)\n")
            for n in SIZES:
                vals = [self.get("register/%d/%s" % (n, r)) for r in self.routers]
                f.write("%d %s\n" % (n, " ".join("%.6f" % (v.median / 1e6) if v and v.median else "NaN" for v in vals)))
        if not shutil.which("gnuplot"):
            print("report.py: gnuplot not found; plots not drawn", file=sys.stderr)
            return
        titles = " ".join(ROUTER_TITLES[r] for r in self.routers)
        subprocess.run(["gnuplot", "-e", "data='%s'; out='%s'; routers='%s'; requests='%s'" % (
            data_dir, plots_dir, titles, " ".join(reqs)), os.path.join(HERE, "plot.gp")], check=True)


def fill(text, sections):
    for name, body in sections.items():
        pattern = re.compile(r"(<!-- generated:%s -->\n).*?(<!-- /generated:%s -->)" % (
            re.escape(name), re.escape(name)), re.S)
        if not pattern.search(text):
            print("report.py: no generated:%s section in the output file" % name, file=sys.stderr)
            continue
        text = pattern.sub(lambda m: m.group(1) + body.rstrip() + "\n" + m.group(2), text)
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", required=True, help="a bench/run results directory")
    parser.add_argument("--output", required=True,
                        help="the Markdown file to fill (created from BENCHMARKS.md if missing)")
    parser.add_argument("--plots", help="directory for the PNG plots")
    parser.add_argument("--agreement-copy", help="also copy agreement.md here")
    args = parser.parse_args()

    report = Report(args.results)
    if not os.path.exists(args.output):
        shutil.copy(os.path.join(HERE, "..", "BENCHMARKS.md"), args.output)
    with open(args.output) as f:
        text = f.read()
    text = fill(text, report.sections())
    with open(args.output, "w") as f:
        f.write(text)
    if args.plots:
        report.plot(args.plots)
    if args.agreement_copy:
        src = os.path.join(args.results, "agreement.md")
        with open(src) as f:
            body = f.read()
        with open(args.agreement_copy, "w") as f:
            f.write("# Agreement report\n\nGenerated by `bench/run` (`waypoint_bench_agreement --rows 0`): "
                    "every route a router refused and every request it answers differently from "
                    "waypoint. See BENCHMARKS.md §6.\n" + body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
