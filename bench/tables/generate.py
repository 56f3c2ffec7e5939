#!/usr/bin/python3
"""Writes the routing benchmark's route tables and request lists into this directory.

Every table is a plain route file in the waypoint-route format (one pattern per line,
`[METHOD ][HOST]/PATH`, `#` comments); every request list has one request per line,
`NAME METHOD TARGET [HOST]`, followed by `# expect: OUTCOME` where OUTCOME is
`match PATTERN`, `404`, `405 ALLOW` or `redirect LOCATION`. The benchmark binaries
register each table in waypoint at startup and refuse to run when a table conflicts
or a request's outcome differs from its expectation, so a generator mistake fails loudly.

The output depends only on this file: the random streams are seeded per table and no
set or hash order is ever iterated, so running it again rewrites identical bytes
(`bench/tables/generate.py --check` verifies that without writing).
"""

import argparse
import io
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# --- gateway ---------------------------------------------------------------------------
# A hand-written cloud gateway: deep static literals, one to four parameters, greedy rest
# wildcards, and the places where a rest wildcard must lose to a literal or a parameter.

# The example gateway's own table (examples/gateway-routes.txt, which the gateway embeds),
# plus a root route so the table has a `root` shape; its header comment is dropped.
GATEWAY_SOURCE = os.path.join(HERE, "..", "..", "examples", "gateway-routes.txt")


def gateway_table():
    with open(GATEWAY_SOURCE, encoding="utf-8") as f:
        lines = f.read().splitlines()
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "# root\nGET /{$}\n" + "\n".join(lines) + "\n"


GATEWAY = gateway_table()

# (name, method, target, expectation). The names are the request shapes the benchmark
# tables report; each shape that a table allows appears once.
GATEWAY_REQUESTS = [
    ("static_shallow", "GET", "/v1/health", "match GET /v1/health"),
    ("static_deep", "GET", "/v1/iam/oauth/userinfo", "match GET /v1/iam/oauth/userinfo"),
    ("param", "GET", "/v1/tracker/8812", "match GET /v1/tracker/{id}"),
    ("param_mid", "GET", "/v1/iam/organizations/acme/members",
     "match GET /v1/iam/organizations/{orgId}/members"),
    ("multi_param", "GET", "/v1/commerce/orders/1001/items/7",
     "match GET /v1/commerce/orders/{orderId}/items/{itemId}"),
    ("multi_param_deep", "POST", "/v1/cloud/projects/p-9/zones/eu-west1-b/instances/vm-17/start",
     "match POST /v1/cloud/projects/{project}/zones/{zone}/instances/{instance}/start"),
    ("rest_wildcard", "GET", "/v1/registry/library/nginx/manifests/1.25",
     "match GET /v1/registry/{path...}"),
    ("static_beats_wildcard", "GET", "/v1/registry/images", "match GET /v1/registry/images"),
    ("param_beats_wildcard", "GET", "/v1/registry/images/nginx/tags",
     "match GET /v1/registry/images/{name}/tags"),
    ("static_beats_param", "GET", "/v1/tracker/events", "match GET /v1/tracker/events"),
    ("root", "GET", "/", "match GET /{$}"),
    ("head_implied", "HEAD", "/v1/health", "match GET /v1/health"),
    ("miss", "GET", "/v2/health", "404"),
    ("miss_deep", "GET", "/v1/commerce/orders/1001/refunds", "404"),
    ("method_not_allowed", "DELETE", "/v1/health", "405 GET, HEAD"),
    ("redirect_slash", "GET", "/v1/docs", "redirect /v1/docs/"),
    ("redirect_clean", "GET", "/v1//health", "redirect /v1/health"),
]

# --- rest200 -------------------------------------------------------------------------
# Twenty resources, each with collection, item, nested and action shapes over GET, POST,
# PUT and DELETE: ten routes a resource, two hundred in all.

REST_RESOURCES = [
    ("users", "sessions", "suspend"), ("teams", "members", "archive"),
    ("projects", "milestones", "archive"), ("issues", "comments", "close"),
    ("orders", "lines", "cancel"), ("invoices", "payments", "void"),
    ("products", "variants", "publish"), ("carts", "items", "checkout"),
    ("shipments", "parcels", "dispatch"), ("customers", "addresses", "merge"),
    ("accounts", "transactions", "freeze"), ("devices", "sensors", "reboot"),
    ("alerts", "notes", "acknowledge"), ("reports", "sections", "render"),
    ("documents", "revisions", "sign"), ("channels", "messages", "mute"),
    ("events", "attendees", "cancel"), ("tickets", "replies", "escalate"),
    ("repos", "branches", "fork"), ("jobs", "runs", "retry"),
]


def rest200():
    routes = []
    for res, child, action in REST_RESOURCES:
        item = "/api/%s/{%sId}" % (res, singular(res))
        nested = "%s/%s" % (item, child)
        routes += [
            "GET /api/%s" % res,
            "POST /api/%s" % res,
            "GET " + item,
            "PUT " + item,
            "DELETE " + item,
            "GET " + nested,
            "POST " + nested,
            "GET %s/{%sId}" % (nested, singular(child)),
            "DELETE %s/{%sId}" % (nested, singular(child)),
            "POST %s/%s" % (item, action),
        ]
    requests = [
        ("static", "GET", "/api/users", "match GET /api/users"),
        ("static_last", "GET", "/api/jobs", "match GET /api/jobs"),
        ("param", "GET", "/api/orders/5531", "match GET /api/orders/{orderId}"),
        ("nested", "GET", "/api/issues/77/comments", "match GET /api/issues/{issueId}/comments"),
        ("multi_param", "DELETE", "/api/repos/waypoint/branches/main",
         "match DELETE /api/repos/{repoId}/branches/{branchId}"),
        ("action", "POST", "/api/devices/d-4/reboot", "match POST /api/devices/{deviceId}/reboot"),
        ("head_implied", "HEAD", "/api/users/31", "match GET /api/users/{userId}"),
        ("miss", "GET", "/api/nothing", "404"),
        ("miss_deep", "GET", "/api/orders/5531/lines/2/history", "404"),
        ("method_not_allowed", "PATCH", "/api/users/31", "405 DELETE, GET, HEAD, PUT"),
        ("redirect_clean", "GET", "/api//users", "redirect /api/users"),
    ]
    return routes, requests


def singular(word):
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


# --- mix1000 and unique10k ----------------------------------------------------------
# A mixed table modelled on a large application: 45% static, 25% item (one id), 15% item
# plus action, 5% nested (two ids), 5% constrained-looking parameters (dates, versions:
# plain wildcards here, since waypoint has no constraints), 5% rest wildcards; methods
# 65% GET, 20% POST, 8% PUT, 5% PATCH, 2% DELETE.
#
# Conflict freedom by construction, under a resource prefix P = /AREA/RESOURCE:
#   static       P, P/WORD, P/WORD/WORD    literals only: a subset of anything they overlap
#   item         P/{id}                    depth 1
#   action       P/{id}/ACTION             depth 2, a distinct literal per action
#   nested       P/{id}/CHILD/{childId}    depth 3, one name per (resource, child)
#   constrained  P/HEAD/{a}/{b}/{c}        depth 4, a distinct literal head per family
#   rest         /assets/AREA/RESOURCE/{path...}, outside every P
# Paths of equal depth with wildcards differ in a literal at the same position, so they
# are disjoint; different depths are disjoint; literal-only paths are most specific.

SHAPES = [("static", 45), ("item", 25), ("action", 15), ("nested", 5), ("constrained", 5),
          ("rest", 5)]
METHODS = [("GET", 65), ("POST", 20), ("PUT", 8), ("PATCH", 5), ("DELETE", 2)]

AREAS = ["api", "admin", "billing", "catalog", "crm", "hr", "inventory", "ledger", "media",
         "ops", "partners", "portal", "search", "support", "telemetry", "wiki"]
NOUNS = ["accounts", "agents", "alerts", "assets", "audits", "batches", "bills", "boards",
         "bookings", "brands", "budgets", "builds", "campaigns", "cases", "charges",
         "checks", "claims", "clusters", "comments", "contacts", "contracts", "coupons",
         "credits", "deals", "deliveries", "deploys", "devices", "disputes", "domains",
         "drafts", "emails", "employees", "entries", "exports", "feeds", "files",
         "forecasts", "forms", "grants", "groups", "imports", "incidents", "insights",
         "keys", "labels", "leads", "leases", "licenses", "lists", "locations", "logs",
         "macros", "meetings", "members", "metrics", "notes", "offers", "orders",
         "pages", "payouts", "plans", "policies", "posts", "prices", "profiles",
         "queues", "quotes", "rates", "receipts", "refunds", "regions", "releases",
         "requests", "returns", "reviews", "roles", "rules", "runs", "schedules",
         "scores", "segments", "sellers", "shifts", "sites", "skus", "slots", "snapshots",
         "sources", "stores", "streams", "surveys", "tags", "tasks", "taxes", "teams",
         "templates", "tenants", "tickets", "topics", "transfers", "trips", "units",
         "uploads", "users", "vendors", "visits", "volumes", "vouchers", "webhooks",
         "workflows", "zones"]
WORDS = ["summary", "stats", "export", "search", "recent", "count", "settings", "schema",
         "health", "trending", "archived", "pending", "daily", "weekly", "monthly", "csv",
         "json", "latest", "defaults", "overview"]
ACTIONS = ["approve", "archive", "assign", "cancel", "clone", "close", "confirm", "disable",
           "enable", "lock", "merge", "publish", "refresh", "reject", "reopen", "restore",
           "retry", "send", "submit", "sync", "unlock", "verify"]
CHILDREN = ["comments", "events", "history", "items", "links", "members", "notes",
            "versions", "attachments", "owners"]
CONSTRAINED = [("by-date", ["year", "month", "day"]), ("by-version", ["major", "minor", "patch"]),
               ("by-range", ["from", "to", "step"]), ("by-geo", ["lat", "lon", "zoom"])]


def quota(table, total):
    """Splits `total` by the percentages of `table`, largest remainders first."""
    exact = [(name, total * pct / 100.0) for name, pct in table]
    counts = [(name, int(x)) for name, x in exact]
    short = total - sum(c for _, c in counts)
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i][1] - counts[i][1]), i))
    counts = [list(c) for c in counts]
    for i in order[:short]:
        counts[i][1] += 1
    return [(n, c) for n, c in counts]


def spread(table, total, rng):
    """`total` labels in the proportions of `table`, in a seeded random order."""
    labels = []
    for name, count in quota(table, total):
        labels += [name] * count
    rng.shuffle(labels)
    return labels


class MixedTable:
    """Draws routes of the mixed shapes, never the same (method, path) twice.

    With unique_paths, never the same path twice either, whatever the method: then every
    route is its own pattern, as a 10,000-route stress table should be.
    """

    def __init__(self, rng, prefixes, unique_paths):
        self.rng = rng
        self.prefixes = prefixes
        self.unique_paths = unique_paths
        self.taken = {}  # path -> list of methods, insertion-ordered
        self.child_names = {}

    def candidate(self, shape):
        rng = self.rng
        area, res = rng.choice(self.prefixes)
        p = "/%s/%s" % (area, res)
        if shape == "static":
            depth = rng.choice([0, 1, 1, 2])
            words = rng.sample(WORDS, depth)
            return "/".join([p] + words)
        if shape == "item":
            return "%s/{%sId}" % (p, singular(res))
        if shape == "action":
            return "%s/{%sId}/%s" % (p, singular(res), rng.choice(ACTIONS))
        if shape == "nested":
            child = rng.choice(CHILDREN)
            child_id = singular(child) + "Id"
            if child_id == singular(res) + "Id":
                child_id = "sub" + child_id[0].upper() + child_id[1:]
            return "%s/{%sId}/%s/{%s}" % (p, singular(res), child, child_id)
        if shape == "constrained":
            head, names = rng.choice(CONSTRAINED)
            return "%s/%s/%s" % (p, head, "/".join("{%s}" % n for n in names))
        if shape == "rest":
            return "/assets/%s/%s/{path...}" % (area, res)
        raise ValueError(shape)

    def draw(self, shape, method):
        for _ in range(10000):
            path = self.candidate(shape)
            methods = self.taken.get(path, [])
            if method in methods or (self.unique_paths and methods):
                continue
            self.taken.setdefault(path, []).append(method)
            return "%s %s" % (method, path)
        raise RuntimeError("no free %s route for %s: widen the vocabulary" % (shape, method))


def prefixes_of(versions):
    """Resource prefixes /AREA/NOUN, and /AREA/vK/NOUN for each K in `versions`.

    A versioned prefix has "vK" where an unversioned one has a noun, so patterns under
    the two are disjoint at that segment.
    """
    out = [(a, n) for a in AREAS for n in NOUNS]
    for k in versions:
        out += [("%s/v%d" % (a, k), n) for a in AREAS for n in NOUNS]
    return out


def mixed(seed, total, prefix_count, versions=(), unique_paths=False, taken_paths=()):
    rng = random.Random(seed)
    prefixes = rng.sample(prefixes_of(versions), prefix_count)
    table = MixedTable(rng, prefixes, unique_paths)
    for path in taken_paths:
        table.taken[path] = ["*"]
    shapes = spread(SHAPES, total, rng)
    methods = spread(METHODS, total, rng)
    return [(shape, table.draw(shape, method)) for shape, method in zip(shapes, methods)]


def example_value(name):
    # Values start with a digit: no literal in these tables does, so a value never turns
    # a request into a hit on some more specific literal route.
    return "%d%s" % (len(name) + 3, name.lower()[:3])


def request_for(route):
    """A request that `route` (the pattern text) matches, with its expectation."""
    method, path = route.split(" ", 1)
    parts = []
    for seg in path.split("/")[1:]:
        if seg.endswith("...}"):
            parts.append("2024/q3/report.pdf")
        elif seg.startswith("{"):
            parts.append(example_value(seg[1:-1]))
        else:
            parts.append(seg)
    return method, "/" + "/".join(parts), "match " + route


def first_of(routes, shape, method=None):
    for s, r in routes:
        if s == shape and (method is None or r.startswith(method + " ")):
            return r
    raise RuntimeError("no %s route" % shape)


def representative_requests(routes):
    """One request per shape, plus a miss, a 405 and redirects."""
    requests = []
    for name, shape in [("static", "static"), ("param", "item"), ("action", "action"),
                        ("multi_param", "nested"), ("constrained", "constrained"),
                        ("rest_wildcard", "rest")]:
        method, target, expect = request_for(first_of(routes, shape, "GET" if shape != "action" else None))
        requests.append((name, method, target, expect))
    paths = {}
    for _, r in routes:
        m, p = r.split(" ", 1)
        paths.setdefault(p, []).append(m)
    # A 405: a GET-only item route asked for with DELETE.
    for _, r in routes:
        m, p = r.split(" ", 1)
        if "{" in p and not p.endswith("...}") and paths[p] == ["GET"]:
            _, target, _ = request_for(r)
            requests.append(("method_not_allowed", "DELETE", target, "405 GET, HEAD"))
            break
    requests.append(("miss", "GET", "/nowhere/at/all", "404"))
    item = first_of(routes, "item", "GET")
    _, target, _ = request_for(item)
    requests.append(("miss_deep", "GET", target + "/no-such-action/x/y/z/w", "404"))
    rest = first_of(routes, "rest")
    rest_path = rest.split(" ", 1)[1][: -len("{path...}")]
    requests.append(("redirect_slash", rest.split(" ")[0], rest_path[:-1], "redirect " + rest_path))
    static = first_of(routes, "static", "GET").split(" ", 1)[1]
    requests.append(("redirect_clean", "GET", "/" + static, "redirect " + static))
    return requests


# --- growth: the first routes of unique10k --------------------------------------------
# unique10k starts with a fixed set of routes that the growth requests hit, followed by
# 9,990 random ones; any prefix of the file is a table, so the benchmark cuts 10, 100,
# 1,000 and 10,000 routes from it and asks the same requests of each. The request values
# start with a digit and no literal does, so a route further down the file can never
# become the winner for them: each request has the same outcome at every size.

GROWTH_HEAD = [
    "GET /crm/deals",
    "GET /crm/deals/summary/weekly",
    "GET /crm/deals/{dealId}",
    "POST /crm/deals/{dealId}/approve",
    "GET /crm/deals/{dealId}/notes/{noteId}",
    "GET /crm/deals/by-date/{year}/{month}/{day}",
    "GET /assets/crm/deals/{path...}",
    "PUT /ops/clusters/{clusterId}",
    "GET /ops/clusters/recent",
    "DELETE /ops/clusters/{clusterId}/versions/{versionId}",
]

GROWTH_REQUESTS = [
    ("static", "GET", "/crm/deals", "match GET /crm/deals"),
    ("static_deep", "GET", "/crm/deals/summary/weekly", "match GET /crm/deals/summary/weekly"),
    ("param", "GET", "/crm/deals/9deal", "match GET /crm/deals/{dealId}"),
    ("action", "POST", "/crm/deals/9deal/approve", "match POST /crm/deals/{dealId}/approve"),
    ("multi_param", "GET", "/crm/deals/9deal/notes/7note",
     "match GET /crm/deals/{dealId}/notes/{noteId}"),
    ("constrained", "GET", "/crm/deals/by-date/2024/06/30",
     "match GET /crm/deals/by-date/{year}/{month}/{day}"),
    ("rest_wildcard", "GET", "/assets/crm/deals/2024/q3/report.pdf",
     "match GET /assets/crm/deals/{path...}"),
    ("miss", "GET", "/nowhere/at/all", "404"),
    ("miss_deep", "GET", "/crm/deals/9deal/notes/7note/extra", "404"),
    ("method_not_allowed", "GET", "/ops/clusters/9clu", "405 PUT"),
    ("redirect_slash", "GET", "/assets/crm/deals", "redirect /assets/crm/deals/"),
]


def unique10k():
    head = [("fixed", r) for r in GROWTH_HEAD]
    head_paths = [r.split(" ", 1)[1] for _, r in head]
    body = mixed(seed=10000, total=10000 - len(head), prefix_count=len(prefixes_of((1, 2, 3))),
                 versions=(1, 2, 3), unique_paths=True, taken_paths=head_paths)
    return head + body


# --- mix1000.replay: the mixed-application workload (BENCHMARKS.md §11) -----------------
# A fixed sequence of requests against mix1000.routes for a whole-HTTP load test, replayed
# in order by bench/load/replay.lua: methods in the proportions of METHODS, each method's
# requests spread over the route shapes as that method's routes are, 70% of the requests
# of every (method, shape) cell on the first fifth of the cell's routes (in table order),
# 20% with a query string, and every POST, PUT and PATCH carrying the 8-field JSON record
# of examples/records.hpp. Each line names the route that must answer it.

REPLAY_TOTAL = 4096
REPLAY_QUERY = [("query", 20), ("plain", 80)]
REPLAY_LOCALITY = [("hot", 70), ("cold", 30)]
REPLAY_HOT_FRACTION = 0.2  # the first fifth of each cell is its hot set
WRITE_METHODS = ("POST", "PUT", "PATCH")
REGIONS = ["eu-west", "eu-central", "us-east", "us-west", "ap-south"]
TAGS = ["mobile", "web", "beta", "vip", "bulk", "retry", "sandbox"]


def replay_value(name, rng):
    """A value for wildcard `name` that starts with a digit (so no literal can win) and
    looks like what the constrained-looking families hold: dates, versions, ranges, places."""
    if name == "year":
        return str(rng.randrange(2019, 2027))
    if name in ("month", "day"):
        return "%02d" % rng.randrange(1, 13 if name == "month" else 29)
    if name in ("lat", "lon"):
        return "%d.%04d" % (rng.randrange(0, 90), rng.randrange(10000))
    if name in ("major", "minor", "patch", "zoom", "step"):
        return str(rng.randrange(0, 20))
    return str(rng.randrange(1, 1000000))


def replay_target(route, rng):
    path = route.split(" ", 1)[1]
    parts = []
    for seg in path.split("/")[1:]:
        if seg.endswith("...}"):
            parts.append("%d/q%d/report-%d.pdf" % (rng.randrange(2019, 2027), rng.randrange(1, 5),
                                                   rng.randrange(1000)))
        elif seg.startswith("{"):
            parts.append(replay_value(seg[1:-1], rng))
        else:
            parts.append(seg)
    return "/" + "/".join(parts)


def replay_body(rng):
    """An 8-field record (examples/records.hpp) that passes its validate()."""
    n = rng.randrange(100000)
    note = None if rng.random() < 0.5 else "note %d" % rng.randrange(1000)
    record = [("name", "user-%d" % n), ("email", "user-%d@example.com" % n),
              ("quantity", rng.randrange(0, 50)), ("active", rng.random() < 0.5),
              ("score", rng.randrange(0, 1000) / 100.0),
              ("tags", rng.sample(TAGS, rng.randrange(0, 4))),
              ("region", rng.choice(REGIONS)), ("note", note)]
    return json.dumps(dict(record), separators=(",", ":"))


def replay_cells(routes):
    """{(method, shape): [route, ...]} in table order, the keys in first-seen order."""
    cells = {}
    for shape, route in routes:
        cells.setdefault((route.split(" ", 1)[0], shape), []).append(route)
    return cells


def mix1000_replay(routes):
    """REPLAY_TOTAL (method, target, route, body) rows against `routes` (mix1000's)."""
    rng = random.Random(4096)
    cells = replay_cells(routes)
    rows = []
    for method, count in quota(METHODS, REPLAY_TOTAL):
        own = [(key, len(rs)) for key, rs in cells.items() if key[0] == method]
        size = sum(n for _, n in own)
        for key, cell_count in quota([(k, 100.0 * n / size) for k, n in own], count):
            cell = cells[key]
            hot = max(1, int(round(len(cell) * REPLAY_HOT_FRACTION)))
            for locality in spread(REPLAY_LOCALITY, cell_count, rng):
                if hot == len(cell):
                    locality = "hot"  # a cell of one to two routes has no cold part
                pool = cell[:hot] if locality == "hot" else cell[hot:]
                rows.append((key[1], locality, rng.choice(pool)))
    rng.shuffle(rows)
    out = []
    for (shape, locality, route), query in zip(rows, spread(REPLAY_QUERY, len(rows), rng)):
        method = route.split(" ", 1)[0]
        target = replay_target(route, rng)
        if query == "query":
            target += "?page=%d&limit=%d" % (rng.randrange(1, 50), rng.choice([10, 25, 100]))
        body = replay_body(rng) if method in WRITE_METHODS else ""
        out.append((shape, locality, method, target, route, body))
    return out


def replay_text(title, rows):
    out = io.StringIO()
    out.write("# %s\n" % title)
    out.write("# METHOD<TAB>TARGET<TAB>ROUTE THAT ANSWERS<TAB>JSON BODY (writes only)\n")
    out.write("# Generated by bench/tables/generate.py; do not edit.\n")
    def share(label, pick):
        counts = {}
        for row in rows:
            counts[pick(row)] = counts.get(pick(row), 0) + 1
        return "# %s: %s\n" % (label, ", ".join("%s %d" % kv for kv in counts.items()))
    out.write(share("methods", lambda r: r[2]))
    out.write(share("shapes", lambda r: r[0]))
    out.write(share("locality", lambda r: r[1]))
    out.write(share("query strings", lambda r: "yes" if "?" in r[3] else "no"))
    for _, _, method, target, route, body in rows:
        out.write("%s\t%s\t%s\t%s\n" % (method, target, route, body))
    return out.getvalue()


# --- output ---------------------------------------------------------------------------

def routes_text(title, lines):
    out = io.StringIO()
    out.write("# %s\n# Generated by bench/tables/generate.py; do not edit.\n" % title)
    for line in lines:
        out.write(line + "\n")
    return out.getvalue()


def requests_text(title, requests):
    out = io.StringIO()
    out.write("# %s\n# NAME METHOD TARGET [HOST]  # expect: OUTCOME\n" % title)
    out.write("# Generated by bench/tables/generate.py; do not edit.\n")
    width = max(len("%s %s %s" % r[:3]) for r in requests)
    for name, method, target, expect in requests:
        fields = "%s %s %s" % (name, method, target)
        out.write("%s  # expect: %s\n" % (fields.ljust(width), expect))
    return out.getvalue()


def gateway_lines():
    return [l for l in GATEWAY.splitlines()]


def outputs():
    files = {}
    files["gateway.routes"] = ("# gateway: a ~70-route cloud API gateway, all under /v1/ but the root\n"
                               "# Generated by bench/tables/generate.py; do not edit.\n"
                               + "\n".join(gateway_lines()) + "\n")
    files["gateway.requests"] = requests_text("gateway: one request per shape", GATEWAY_REQUESTS)

    routes, requests = rest200()
    files["rest200.routes"] = routes_text("rest200: 20 resources x collection/item/nested/action", routes)
    files["rest200.requests"] = requests_text("rest200: one request per shape", requests)

    mix = mixed(seed=1000, total=1000, prefix_count=220, unique_paths=False)
    files["mix1000.routes"] = routes_text(
        "mix1000: 45% static, 25% id, 15% id+action, 5% nested, 5% constrained, 5% rest;\n"
        "# methods 65% GET, 20% POST, 8% PUT, 5% PATCH, 2% DELETE", [r for _, r in mix])
    files["mix1000.requests"] = requests_text("mix1000: one request per shape",
                                              representative_requests(mix))
    files["mix1000.replay"] = replay_text(
        "mix1000.replay: %d requests replayed in order against mix1000.routes (BENCHMARKS.md §11)"
        % REPLAY_TOTAL, mix1000_replay(mix))

    big = unique10k()
    files["unique10k.routes"] = routes_text(
        "unique10k: 10,000 routes, no two with the same path; the first 10 are the growth\n"
        "# targets, and every prefix of this file is itself a conflict-free table",
        [r for _, r in big])
    files["unique10k.requests"] = requests_text("unique10k: one request per shape",
                                                representative_requests(big))
    files["growth.requests"] = requests_text(
        "growth: requests whose outcome is the same against the first 10, 100, 1,000 and\n"
        "# 10,000 routes of unique10k.routes", GROWTH_REQUESTS)
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing them")
    args = parser.parse_args()
    stale = []
    for name, text in outputs().items():
        path = os.path.join(HERE, name)
        data = text.encode()
        if args.check:
            with open(path, "rb") as f:
                if f.read() != data:
                    stale.append(name)
            continue
        with open(path, "wb") as f:
            f.write(data)
    if stale:
        print("generate.py: stale: %s (run bench/tables/generate.py)" % ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
