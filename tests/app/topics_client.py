#!/usr/bin/python3
"""The client side of tests/app/topics_test.cpp, with Debian's python3-websockets. The test's
server joins each connection to the topics its path names (/topics/a,b, names taken
literally; /watch/a,b* where a name ending in '*' is a prefix) and publishes what a client
sends ("TOPIC PAYLOAD") to TOPIC, within the connection's publish rate; the test itself
publishes from a thread of its own.

    topics_client.py PORT CASE

fanout N T   N clients over T topics (client i in topic t{i % T}); prints "ready" once all are
             joined, then each must receive exactly its topic's messages "t{k}:{seq}", seq
             0, 1, 2... in order, until "t{k}:end"; prints "ok" and the count.
slow         one client in "slow" that never reads after joining, beside one in "slow" that
             reads everything: prints "ready"; the reader must get every message to "end"
             while the other is closed by the hub (its close code printed).
slow_drop    as slow, on a hub that drops the oldest: the stalled client stays connected and
             then reads a later part of the stream in order, to "end".
prefix       one client watching "room:*" and "room:a": a publish to room:a arrives once,
             one to room:b arrives, one to other:x does not.
literal      a client in "sec*" (a client's name, literal) hears nothing said in
             "secret-7f3a9c", and hears what is said in "sec*".
rate RATE BURST  a client sends BURST messages to its own topic at once and hears them all;
             then sends 3 * BURST more at once and is closed with 1008 naming RATE.
too_big N    two clients in "big" on a hub of N-byte queues (close policy): one sends a
             message of N + 1 bytes and is closed with 1009; the other is not closed, hears
             nothing of it, and hears the next message of N bytes.
bounds       65 topics, or a topic of 257 bytes, closed with 1008 naming the bound (the
             hub's defaults); 64 topics joined.
Exit 0 when the case holds; 77 without the websockets module.
"""
import asyncio
import resource
import sys

try:
    import websockets
except ImportError:
    print("python3-websockets is not installed")
    sys.exit(77)

PORT = int(sys.argv[1])
CASE = sys.argv[2]
BASE = f"ws://127.0.0.1:{PORT}/topics/"


class Failure(Exception):
    pass


def expect(condition, why):
    if not condition:
        raise Failure(why)


async def receive_topic(ws, topic):
    """Every message until "{topic}:end": each "{topic}:{n}" with n counting from 0."""
    seq = 0
    while True:
        message = await asyncio.wait_for(ws.recv(), 30)
        if message == f"{topic}:end":
            return seq
        label = message.split(" ", 1)[0]  # what follows a space is padding
        expect(label == f"{topic}:{seq}", f"a client of {topic} got {label[:40]!r}, "
                                          f"expected {topic}:{seq}")
        seq += 1


async def fanout(clients, topics):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, clients + 256)), hard))
    sockets = []
    for i in range(clients):
        sockets.append((await websockets.connect(BASE + f"t{i % topics}", max_queue=None),
                        f"t{i % topics}"))
    print("ready", flush=True)
    counts = await asyncio.gather(*(receive_topic(ws, topic) for ws, topic in sockets))
    for ws, _ in sockets:
        await ws.close()
    expect(len(set(counts)) == 1 and counts[0] > 0, f"message counts differ: {set(counts)}")
    print(f"ok: {clients} clients each got the {counts[0]} messages of its topic in order")


async def slow():
    stalled = await websockets.connect(BASE + "slow", max_queue=1, read_limit=1024,
                                       write_limit=1024)
    reader = await websockets.connect(BASE + "slow", max_queue=None)
    print("ready", flush=True)
    count = await receive_topic(reader, "slow")
    # The stalled client reads again: what the kernel held for it, then the end the hub
    # gave its connection, which it cannot have seen while it read nothing.
    got = 0
    try:
        while True:
            await asyncio.wait_for(stalled.recv(), 30)
            got += 1
    except websockets.exceptions.ConnectionClosed:
        pass
    except asyncio.TimeoutError:
        raise Failure("the client that stopped reading was never closed")
    expect(got < count, f"the stalled client got all {got} messages: it was never behind")
    await reader.close()
    print(f"ok: the reader got all {count}; the stalled client closed with {stalled.close_code}")


async def slow_drop():
    """As slow, on a hub that drops the oldest: the stalled client stays connected and, once
    it reads again, gets a later part of the stream, in order, to the end."""
    stalled = await websockets.connect(BASE + "slow", max_queue=1, read_limit=1024,
                                       write_limit=1024)
    reader = await websockets.connect(BASE + "slow", max_queue=None)
    print("ready", flush=True)
    count = await receive_topic(reader, "slow")
    seen = []
    while True:
        label = (await asyncio.wait_for(stalled.recv(), 30)).split(" ", 1)[0]
        if label == "slow:end":
            break
        seen.append(int(label.split(":")[1]))
    expect(seen == sorted(set(seen)), "what the stalled client got is in publish order")
    expect(len(seen) < count, f"the stalled client got all {len(seen)}: nothing was dropped")
    await stalled.close()
    await reader.close()
    print(f"ok: the reader got all {count}; the stalled client {len(seen)} of them, in order, "
          "and stayed connected")


async def prefix():
    ws = await websockets.connect(BASE.replace("/topics/", "/watch/") + "room:*,room:a",
                                  max_queue=None)
    await ws.send("room:a once")
    expect(await asyncio.wait_for(ws.recv(), 10) == "once", "room:a's message")
    await ws.send("other:x never")
    await ws.send("room:b twice")
    expect(await asyncio.wait_for(ws.recv(), 10) == "twice",
           "room:b's message, through the prefix (and no copy of room:a's, nor other:x's)")
    await ws.close()
    print("ok: one copy to a connection in both, prefixes match, others do not")


async def nothing_within(ws, seconds):
    try:
        return await asyncio.wait_for(ws.recv(), seconds)
    except asyncio.TimeoutError:
        return None


async def literal():
    star = await websockets.connect(BASE + "sec*", max_queue=None)
    secret = await websockets.connect(BASE + "secret-7f3a9c", max_queue=None)
    await secret.send("secret-7f3a9c hush")
    expect(await asyncio.wait_for(secret.recv(), 10) == "hush", "secret hears itself")
    got = await nothing_within(star, 0.5)
    expect(got is None, f"a client that named 'sec*' heard {got!r} said in secret-7f3a9c")
    await star.send("sec* mine")
    expect(await asyncio.wait_for(star.recv(), 10) == "mine", "'sec*' is a topic of its own")
    got = await nothing_within(secret, 0.3)
    expect(got is None, f"secret-7f3a9c heard {got!r} said in 'sec*'")
    await star.close()
    await secret.close()
    print("ok: a client's 'sec*' is the topic of that name, not every topic it starts")


async def rate(per_second, burst):
    ws = await websockets.connect(BASE + "mine", max_queue=None)
    for i in range(burst):
        await ws.send(f"mine {i}")
    for i in range(burst):
        got = await asyncio.wait_for(ws.recv(), 10)
        expect(got == str(i), f"within the burst, message {i} came back, got {got!r}")
    try:
        for i in range(3 * burst):
            await ws.send(f"mine more {i}")
        while True:
            await asyncio.wait_for(ws.recv(), 10)
    except websockets.exceptions.ConnectionClosed:
        pass
    except asyncio.TimeoutError:
        raise Failure("a client publishing past its rate was never closed")
    expect(ws.close_code == 1008 and f"faster than {per_second} messages a second" in ws.close_reason,
           f"1008 naming the rate, got {ws.close_code} {ws.close_reason!r}")
    print(f"ok: a burst of {burst} published; past the rate closed with 1008: {ws.close_reason}")


async def too_big(queue_bytes):
    sender = await websockets.connect(BASE + "big", max_queue=None, max_size=None)
    other = await websockets.connect(BASE + "big", max_queue=None, max_size=None)
    await sender.send("big " + "x" * (queue_bytes + 1))
    await asyncio.wait_for(sender.wait_closed(), 10)
    expect(sender.close_code == 1009 and "queue holds at most" in sender.close_reason,
           f"the sender of a message no queue holds gets 1009, got {sender.close_code} "
           f"{sender.close_reason!r}")
    fits = await websockets.connect(BASE + "big", max_queue=None, max_size=None)
    await fits.send("big " + "y" * queue_bytes)
    got = await asyncio.wait_for(other.recv(), 10)
    expect(got == "y" * queue_bytes, "the other client stays, and hears the next message whole "
                                     f"(got {len(got)} bytes starting {got[:10]!r})")
    await other.close()
    await fits.close()
    print("ok: a message larger than a queue: its sender closed with 1009, nobody else touched")


async def refused(path, reason):
    """The server closes a connection whose path names topics past the hub's bounds."""
    ws = await websockets.connect(BASE + path)
    await asyncio.wait_for(ws.wait_closed(), 10)
    expect(ws.close_code == 1008 and reason in ws.close_reason,
           f"{path[:40]}...: 1008 naming {reason!r}, got {ws.close_code} {ws.close_reason!r}")


async def bounds():
    await refused(",".join(f"t{i}" for i in range(65)), "at most 64 topics")
    await refused("x" * 257, "1 to 256 bytes")
    ws = await websockets.connect(BASE + ",".join(f"t{i}" for i in range(64)))
    await ws.send("t63 the 64th topic holds")
    expect(await asyncio.wait_for(ws.recv(), 10) == "the 64th topic holds", "64 topics joined")
    await ws.close()
    print("ok: 65 topics and a 257-byte name refused with 1008; 64 topics joined")


async def main():
    try:
        if CASE == "fanout":
            await fanout(int(sys.argv[3]), int(sys.argv[4]))
        elif CASE == "slow":
            await slow()
        elif CASE == "prefix":
            await prefix()
        elif CASE == "slow_drop":
            await slow_drop()
        elif CASE == "bounds":
            await bounds()
        elif CASE == "literal":
            await literal()
        elif CASE == "rate":
            await rate(int(sys.argv[3]), int(sys.argv[4]))
        elif CASE == "too_big":
            await too_big(int(sys.argv[3]))
        else:
            raise Failure(f"unknown case {CASE}")
    except (Failure, websockets.exceptions.WebSocketException, OSError,
            asyncio.TimeoutError) as e:
        print(f"FAILED {CASE}: {type(e).__name__}: {e}")
        return 1
    return 0


sys.exit(asyncio.run(main()))
