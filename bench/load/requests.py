#!/usr/bin/python3
"""Writes one request per route of a route table, `METHOD PATH [HOST]` per line, for the
wrk script to pick from at random. Each path is one its pattern matches (wildcards filled
with deterministic sample values), so against the same table every request should be 2xx.

usage: requests.py TABLE > REQUESTS
"""

import sys


def sample_path(path, index):
    out = []
    for k, segment in enumerate(path.split("/")[1:]):
        if segment == "{$}":
            out.append("")
        elif segment.startswith("{") and segment.endswith("...}"):
            out.append("r%d/s%d" % (index, k))
        elif segment.startswith("{") and segment.endswith("}"):
            out.append("v%d-%d" % (index, k))
        else:
            out.append(segment)
    return "/" + "/".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    with open(sys.argv[1], encoding="utf-8") as table:
        for index, line in enumerate(table):
            pattern = line.strip()
            if not pattern or pattern.startswith("#"):
                continue
            parts = pattern.split(None, 1)
            method, rest = parts if len(parts) == 2 else ("GET", parts[0])
            slash = rest.find("/")
            host, path = rest[:slash], rest[slash:]
            print(" ".join(p for p in (method, sample_path(path, index), host) if p))


if __name__ == "__main__":
    main()
