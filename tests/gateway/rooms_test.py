#!/usr/bin/python3
"""The gateway's rooms (/v1/rooms/{room}, examples/websocket_echo.hpp) across gateways: two
gateways started with --redis on one redis-server (started here on a free loopback port,
stopped by its PID), Debian's python3-websockets as the clients. What a client says in a
room on one gateway reaches the clients of that room on the other, in the order said, and
no other room; the same through HAProxy in front of both (the clients connect to HAProxy,
which says which gateway it chose); and with redis-server stopped, a room goes on within
each gateway, then spans both again once redis-server is back on its port. Then, on one
gateway, issue 44's findings: a room's name is literal (/v1/rooms/sec* hears nothing of
secret-7f3a9c), a message no member's queue could hold is refused to its sender with 1009
rather than lost for everyone, and a member publishing past its rate is closed with 1008.

usage: rooms_test.py GATEWAY_BINARY      (run by ctest with Debian's /usr/bin/python3)
"""
import asyncio
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gateway_test  # noqa: E402
from gateway_test import CheckFailed, Gateway, expect  # noqa: E402
from local_services import RedisServer, stop_process, wait_listening  # noqa: E402

try:
    import websockets
except ImportError:
    websockets = None

RECEIVE_S = 5
MESSAGES = 50


class HAProxy:
    """HAProxy in front of `bases`, round robin, telling each client (X-Served-By) which."""

    def __init__(self, bases):
        binary = shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.access("/usr/sbin/haproxy", os.X_OK) else None)
        if not binary:
            gateway_test.skip_unless_required("no haproxy (scripts/install-deps ops)")
        self.port = gateway_test.free_port()
        self.dir = tempfile.mkdtemp(prefix="rooms-haproxy-")
        servers = "\n".join("    server g%d %s" % (i, b[len("http://"):]) for i, b in enumerate(bases))
        config = os.path.join(self.dir, "haproxy.cfg")
        with open(config, "w") as f:
            f.write("""global
    maxconn 256
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    # An upgraded connection is a tunnel: idle rooms stay open this long.
    timeout tunnel 1h
frontend rooms_in
    bind 127.0.0.1:%d
    default_backend gateways
backend gateways
    balance roundrobin
    http-response set-header X-Served-By %%[srv_name]
%s
""" % (self.port, servers))
        self.process = subprocess.Popen([binary, "-db", "-f", config],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            wait_listening(self.port, "haproxy", self.process)
        except CheckFailed as e:
            raise CheckFailed("%s: %s" % (e, self.process.stderr.read()[-400:]))

    def stop(self):
        stop_process(self.process)
        shutil.rmtree(self.dir, ignore_errors=True)


def require_websockets():
    if websockets is None:
        gateway_test.skip_unless_required("no python3-websockets (scripts/install-deps)")


def room_url(base, room):
    return "ws" + base[len("http"):] + "/v1/rooms/" + room


JOINS = itertools.count(1)


async def joined(url):
    """A client in the room at `url`, once its own message has come back (it is subscribed).
    The message is the client's own ("joined 3"): another member's, published through Redis
    before this one subscribed, can arrive before or after it, and must not be taken for it
    (gateway_rooms_test failed once so, hearing a late 'joined' while Redis was down)."""
    ws = await websockets.connect(url, max_queue=None)
    mine = "joined %d" % next(JOINS)
    await ws.send(mine)
    await skip_until(ws, mine)
    return ws


async def skip_until(ws, wanted):
    """Reads until `wanted` (what arrives before it: others' 'joined')."""
    while True:
        try:
            got = await asyncio.wait_for(ws.recv(), RECEIVE_S)
        except asyncio.TimeoutError:
            raise CheckFailed("%r never arrived within %d s" % (wanted, RECEIVE_S))
        if got == wanted:
            return


async def nothing_within(ws, seconds):
    try:
        got = await asyncio.wait_for(ws.recv(), seconds)
        return got
    except asyncio.TimeoutError:
        return None


async def said_on_one_heard_on_both(speaker, listener, other_room):
    """The speaker says MESSAGES lines; speaker and listener hear them all, in order."""
    for i in range(MESSAGES):
        await speaker.send("line %d" % i)
    await skip_until(listener, "line 0")
    await skip_until(speaker, "line 0")
    for ws, who in ((speaker, "the speaker"), (listener, "the other gateway's listener")):
        for i in range(1, MESSAGES):
            got = await asyncio.wait_for(ws.recv(), RECEIVE_S)
            expect(got == "line %d" % i, "%s heard %r, expected 'line %d'" % (who, got, i))
    await listener.send("reply")
    await skip_until(speaker, "reply")
    got = await nothing_within(other_room, 0.3)
    expect(got is None, "a client of another room heard %r" % got)


async def two_rooms(url_speaker, url_listener, url_other):
    speaker = await joined(url_speaker)
    listener = await joined(url_listener)
    other = await joined(url_other)
    try:
        await said_on_one_heard_on_both(speaker, listener, other)
    finally:
        for ws in (speaker, listener, other):
            await ws.close()


def check_a_room_spans_two_gateways_sharing_redis(binary):
    require_websockets()
    redis = RedisServer()
    gateways = []
    try:
        address = "127.0.0.1:%d" % redis.port
        gateways = [Gateway(binary, "--redis", address), Gateway(binary, "--redis", address)]
        a, b = gateways
        asyncio.run(two_rooms(room_url(a.base, "lobby"), room_url(b.base, "lobby"),
                              room_url(b.base, "other")))
    finally:
        for g in gateways:
            g.stop()
        redis.stop()


async def through_haproxy(url):
    """Clients through HAProxy until one is on each gateway; then the room spans them."""
    on = {}
    extra = []
    for _ in range(6):
        ws = await joined(url)
        served_by = ws.response_headers.get("X-Served-By")
        expect(served_by, "HAProxy names the gateway (X-Served-By)")
        if served_by in on:
            extra.append(ws)
        else:
            on[served_by] = ws
        if len(on) == 2:
            break
    expect(len(on) == 2, "round robin put clients on both gateways, got %r" % list(on))
    other = await joined(url.rsplit("/", 1)[0] + "/other")
    try:
        speaker, listener = on.values()
        await said_on_one_heard_on_both(speaker, listener, other)
    finally:
        for ws in list(on.values()) + extra + [other]:
            await ws.close()


def check_a_room_spans_two_gateways_behind_haproxy(binary):
    require_websockets()
    redis = RedisServer()
    gateways = []
    proxy = None
    try:
        address = "127.0.0.1:%d" % redis.port
        gateways = [Gateway(binary, "--redis", address), Gateway(binary, "--redis", address)]
        proxy = HAProxy([g.base for g in gateways])
        asyncio.run(through_haproxy("ws://127.0.0.1:%d/v1/rooms/lobby" % proxy.port))
    finally:
        if proxy:
            proxy.stop()
        for g in gateways:
            g.stop()
        redis.stop()


async def redis_stopped_and_started(a_url, b_url, servers):
    """`servers`: the redis-server, and the one started again is appended for the caller to stop."""
    a = await joined(a_url)
    b = await joined(b_url)
    try:
        # What a's gateway published before (a's join) reaches b before this does: one
        # publisher and one subscriber connection, in order. So nothing of a's is still on
        # its way to b when Redis stops.
        await a.send("both here")
        await skip_until(b, "both here")
        redis = servers[0]
        redis.stop()
        await a.send("while down")
        await skip_until(a, "while down")  # a room goes on within its gateway
        got = await nothing_within(b, 0.5)
        expect(got is None, "the other gateway heard %r with redis-server down" % got)
        servers.append(RedisServer(redis.port))
        deadline = time.monotonic() + 15
        heard = None
        while heard is None and time.monotonic() < deadline:
            await a.send("back")
            heard = await nothing_within(b, 0.2)
        expect(heard == "back", "the room spans both gateways again, heard %r" % heard)
    finally:
        await a.close()
        await b.close()


def check_rooms_go_on_within_a_gateway_while_redis_is_down_and_span_both_again_after(binary):
    require_websockets()
    servers = [RedisServer()]
    gateways = []
    try:
        address = "127.0.0.1:%d" % servers[0].port
        gateways = [Gateway(binary, "--redis", address), Gateway(binary, "--redis", address)]
        a, b = gateways
        asyncio.run(redis_stopped_and_started(room_url(a.base, "lobby"),
                                              room_url(b.base, "lobby"), servers))
        for g in gateways:
            expect(g.stop() == 0, "a gateway whose Redis came and went stops cleanly")
        gateways = []
    finally:
        for g in gateways:
            g.stop()
        for redis in servers:
            redis.stop()


async def a_star_room_is_that_room_alone(base):
    star = await joined(room_url(base, "sec*"))
    secret = await joined(room_url(base, "secret-7f3a9c"))
    try:
        await secret.send("the secret")
        await skip_until(secret, "the secret")
        got = await nothing_within(star, 0.5)
        expect(got is None, "/v1/rooms/sec* heard %r, said in /v1/rooms/secret-7f3a9c" % got)
        await star.send("in sec*")
        await skip_until(star, "in sec*")
        got = await nothing_within(secret, 0.3)
        expect(got is None, "secret-7f3a9c heard %r, said in sec*" % got)
    finally:
        await star.close()
        await secret.close()


def check_a_room_named_with_a_star_hears_no_other_room(binary):
    require_websockets()
    gateway = Gateway(binary)
    try:
        asyncio.run(a_star_room_is_that_room_alone(gateway.base))
    finally:
        gateway.stop()


QUEUE_BYTES = 256 * 1024  # examples/websocket_echo.hpp, room_queue_bytes


async def too_big_refused_to_its_sender(base):
    sender = await websockets.connect(room_url(base, "big"), max_queue=None, max_size=None)
    other = await joined(room_url(base, "big"))
    try:
        await sender.send("x" * (QUEUE_BYTES + 1))
        await asyncio.wait_for(sender.wait_closed(), RECEIVE_S)
        expect(sender.close_code == 1009,
               "the sender of a message past a member's queue gets 1009, got %r %r"
               % (sender.close_code, sender.close_reason))
        fits = await websockets.connect(room_url(base, "big"), max_queue=None, max_size=None)
        await fits.send("y" * QUEUE_BYTES)
        got = await asyncio.wait_for(other.recv(), RECEIVE_S)
        expect(got == "y" * QUEUE_BYTES, "a member hears a message of a queue's size whole, "
                                         "and nothing of the larger one (got %d bytes)" % len(got))
        await fits.close()
    finally:
        await sender.close()
        await other.close()


def check_a_message_larger_than_a_members_queue_is_refused_with_1009(binary):
    require_websockets()
    gateway = Gateway(binary)
    try:
        asyncio.run(too_big_refused_to_its_sender(gateway.base))
    finally:
        gateway.stop()


async def past_the_rate_closed(base):
    ws = await websockets.connect(room_url(base, "flood"), max_queue=None)
    try:
        for i in range(300):  # the rooms' default rate: 20 a second, bursts of 100
            await ws.send("flood %d" % i)
        try:
            while True:
                await asyncio.wait_for(ws.recv(), RECEIVE_S)
        except websockets.exceptions.ConnectionClosed:
            pass
        except asyncio.TimeoutError:
            raise CheckFailed("a member publishing 300 messages at once was never closed")
        expect(ws.close_code == 1008 and "faster than 20 messages a second" in ws.close_reason,
               "1008 naming the rate, got %r %r" % (ws.close_code, ws.close_reason))
    finally:
        await ws.close()


def check_a_member_publishing_past_its_rate_is_closed_with_1008(binary):
    require_websockets()
    gateway = Gateway(binary)
    try:
        asyncio.run(past_the_rate_closed(gateway.base))
    finally:
        gateway.stop()


CHECKS = [
    check_a_room_spans_two_gateways_sharing_redis,
    check_a_room_spans_two_gateways_behind_haproxy,
    check_rooms_go_on_within_a_gateway_while_redis_is_down_and_span_both_again_after,
    check_a_room_named_with_a_star_hears_no_other_room,
    check_a_message_larger_than_a_members_queue_is_refused_with_1009,
    check_a_member_publishing_past_its_rate_is_closed_with_1008,
]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    sys.exit(gateway_test.run_checks("rooms_test", CHECKS, sys.argv[1]))
