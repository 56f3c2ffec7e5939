#!/usr/bin/env python3
"""Writes a deterministic, conflict-free route table of N routes (default 1000) for the
load test, used when bench/tables/ has no 1,000-route table. Each route lives under its
own two literal segments, so no two routes overlap; below them come static tails, one or
two parameters, or a rest wildcard, in a fixed rotation.

usage: generate_table.py [N] > TABLE
"""

import sys

AREAS = ["iam", "tracker", "commerce", "kms", "cloud", "registry", "o11y", "billing"]
TAILS = ["", "/{id}", "/{id}/items", "/{id}/items/{item}", "/stats/daily", "/{rest...}"]
METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE"]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print("# %d generated routes (bench/load/generate_table.py)" % n)
    for i in range(n):
        area = AREAS[i % len(AREAS)]
        tail = TAILS[(i // len(AREAS)) % len(TAILS)]
        method = METHODS[i % len(METHODS)]
        print("%s /v1/%s/r%d%s" % (method, area, i, tail))


if __name__ == "__main__":
    main()
