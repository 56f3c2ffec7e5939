#!/usr/bin/python3
"""The gateway serving its page and its documentation from a build whose source directory is
gone (issue #34): the binary is copied out of the checkout, then started in a mount namespace
where the whole checkout (sources and build tree, Swagger UI's copy in it included) is an
empty tmpfs, so any file it still read from disk would be missing. Real curl over loopback;
the expected bytes are read from the checkout before it is hidden, and the entity tags
computed again with python's hashlib.

usage: embedded_test.py GATEWAY_BINARY

Exits 77 (skipped) where a mount namespace cannot be made (not root, or a container that
forbids unshare).
"""
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway_test import ROOT, CheckFailed, Gateway, curl, expect, run_checks  # noqa: E402

WWW = os.path.join(ROOT, "examples", "www")
SKIPPED = 77


def read(path):
    with open(path, "rb") as f:
        return f.read()


def etag_of(data):
    return '"%s"' % hashlib.sha256(data).hexdigest()[:32]


def hiding_works():
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs tmpfs %s && test ! -e %s" %
                            (shlex.quote(ROOT), shlex.quote(os.path.join(WWW, "index.html")))],
                           capture_output=True)
    return probe.returncode == 0


class HiddenCheckout:
    """A copy of the gateway outside the checkout, and a launcher that hides the checkout
    before starting it (exits 3 if the checkout is still visible)."""

    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="waypoint-embedded-")
        expect(not self.dir.startswith(ROOT + "/"), "the temporary directory is in the checkout")
        self.binary = os.path.join(self.dir, "waypoint-gateway")
        shutil.copy2(binary, self.binary)
        self.launcher = os.path.join(self.dir, "hidden-gateway")
        with open(self.launcher, "w") as f:
            f.write("#!/bin/sh\nexec unshare -m --propagation private sh -c "
                    "'mount -t tmpfs tmpfs \"$0\" && test ! -e \"$0/examples\" || exit 3; "
                    "exec \"$@\"' %s %s \"$@\"\n" % (shlex.quote(ROOT), shlex.quote(self.binary)))
        os.chmod(self.launcher, 0o755)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def check_serves_www_and_docs_without_the_source(binary):
    """/, a precompressed sibling, a range and /docs/ with its files, from the binary alone."""
    swagger_dir = os.path.join(os.path.dirname(os.path.abspath(binary)), "swagger-ui")
    swagger = {name: read(os.path.join(swagger_dir, name))
               for name in ("swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png")
               if os.path.exists(os.path.join(swagger_dir, name))}
    index, css, css_gz = (read(os.path.join(WWW, n)) for n in ("index.html", "style.css",
                                                                "style.css.gz"))
    hidden = HiddenCheckout(binary)
    gateway = Gateway(hidden.launcher)
    try:
        page = curl(["curl", "-i", gateway.base + "/"])
        expect(page.status == 200 and page.body.encode() == index,
               "/ answered %d, not examples/www/index.html" % page.status)
        expect(page.header("etag") == etag_of(index),
               "/ has ETag %r, not the start of index.html's SHA-256 %r" %
               (page.header("etag"), etag_of(index)))
        expect(page.header("last-modified") is None, "an embedded file has a Last-Modified")
        again = curl(["curl", "-i", "-H", "If-None-Match: " + etag_of(index), gateway.base + "/"])
        expect(again.status == 304, "If-None-Match with the tag answered %d, not 304" % again.status)
        gz = subprocess.run(["curl", "-s", "-H", "Accept-Encoding: gzip", gateway.base + "/style.css"],
                            capture_output=True, check=True).stdout
        expect(gz == css_gz, "style.css for gzip is not style.css.gz's bytes")
        ranged = curl(["curl", "-i", "-r", "0-9", gateway.base + "/style.css"])
        expect(ranged.status == 206 and ranged.body.encode() == css[:10],
               "a range of style.css answered %d %r" % (ranged.status, ranged.body[:20]))
        docs = curl(["curl", "-i", gateway.base + "/docs/"])
        expect(docs.status == 200, "/docs/ answered %d" % docs.status)
        if len(swagger) == 3:
            expect('src="swagger-ui-bundle.js"' in docs.body,
                   "the build has Swagger UI, but /docs/ does not load it from the gateway")
            for name, data in swagger.items():
                got = subprocess.run(["curl", "-s", "-f", gateway.base + "/docs/" + name],
                                     capture_output=True, check=True).stdout
                expect(got == data, "/docs/%s is not the build's copy" % name)
        else:
            expect("cdn.jsdelivr.net" in docs.body and "integrity=" in docs.body,
                   "without Swagger UI in the build, /docs/ does not load it from the CDN with SRI")
    finally:
        code = gateway.stop()
        hidden.close()
    expect(code == 0, "the gateway exited %r on SIGTERM" % code)


CHECKS = [check_serves_www_and_docs_without_the_source]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    if not shutil.which("unshare") or not hiding_works():
        print("SKIP: no mount namespace here (unshare -m needs root)")
        return SKIPPED
    return run_checks("embedded_test", CHECKS, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
