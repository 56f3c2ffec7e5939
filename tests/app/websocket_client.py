#!/usr/bin/python3
"""The client side of tests/app/websocket_server_test.cpp: Debian's python3-websockets (or
raw bytes on a plain socket, for what a conforming client never sends) against the test's
server. Usage: websocket_client.py PORT CASE. Exit 0 when the case holds; otherwise the
reason is printed. Exit 77 when the websockets module is missing."""

import asyncio
import os
import resource
import socket
import struct
import sys
import time

try:
    import websockets
except ImportError:
    print("python3-websockets is not installed")
    sys.exit(77)

PORT = int(sys.argv[1])
CASE = sys.argv[2]
BASE = f"ws://127.0.0.1:{PORT}"
# WAYPOINT_WS_CA names the CA of a TLS listener: the same cases then run over wss://, the
# websockets client verifying the server's certificate against it.
CA = os.environ.get("WAYPOINT_WS_CA")
if CA:
    import ssl

    BASE = f"wss://127.0.0.1:{PORT}"
    _verified = ssl.create_default_context(cafile=CA)
    _plain_connect = websockets.connect

    def _tls_connect(uri, **options):
        return _plain_connect(uri, ssl=_verified, **options)

    websockets.connect = _tls_connect
KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455's sample key


class Failure(Exception):
    pass


def expect(condition, why):
    if not condition:
        raise Failure(why)


def upgrade_request(path, extra=""):
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
            f"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
            f"Sec-WebSocket-Key: {KEY}\r\n{extra}\r\n").encode()


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head.decode("latin-1"), rest


def masked_frame(opcode, payload, fin=True):
    mask = b"\x01\x02\x03\x04"
    first = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        header = struct.pack("!BB", first, 0x80 | n)
    else:
        header = struct.pack("!BBH", first, 0x80 | 126, n)
    return header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def read_frame(sock, rest=b""):
    data = rest
    while len(data) < 2:
        data += sock.recv(4096)
    opcode, n = data[0] & 0x0F, data[1] & 0x7F
    offset = 2
    if n == 126:
        while len(data) < 4:
            data += sock.recv(4096)
        n, offset = struct.unpack("!H", data[2:4])[0], 4
    while len(data) < offset + n:
        data += sock.recv(4096)
    return opcode, data[offset:offset + n]


def close_code_of(payload):
    return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None


async def echo_text():
    async with websockets.connect(f"{BASE}/echo") as ws:
        for text in ["hello", "", "ünïcödé ✓", "x" * 70000]:
            await ws.send(text)
            got = await ws.recv()
            expect(got == text, f"text echo: sent {len(text)} chars, got {got!r:.40}")


def extension_of(ws):
    return ws.response_headers.get("Sec-WebSocket-Extensions", "")


async def deflate_negotiated():
    async with websockets.connect(f"{BASE}/deflate") as ws:  # the client offers deflate
        agreed = extension_of(ws)
        expect(agreed.startswith("permessage-deflate") and "server_max_window_bits=10" in agreed,
               f"the route's window agreed: {agreed!r}")
        text = '{"room":"lobby","from":"ada","text":"hello"}' * 20000  # 1 MB that repeats
        noise = os.urandom(300_000)
        for message in [text, noise, "", "ünïcödé ✓"]:
            await ws.send(message)
            got = await ws.recv()
            expect(got == message, f"deflated echo of {len(message)}: got {len(got)}")


async def deflate_inflated_past_the_limit():
    """2 MiB of zeros deflate to a few KiB: the route's 1 MiB limit holds for what the
    message inflates to, not what crossed the wire (1009)."""
    async with websockets.connect(f"{BASE}/deflate", max_size=None) as ws:
        expect(extension_of(ws).startswith("permessage-deflate"), "deflate agreed")
        try:
            await ws.send(b"\x00" * (2 * 1024 * 1024))
            await ws.recv()
        except websockets.ConnectionClosed:
            pass
        await ws.wait_closed()
        expect(ws.close_code == 1009, f"close code {ws.close_code}, expected 1009")


async def deflate_declined():
    async with websockets.connect(f"{BASE}/echo") as ws:
        expect(extension_of(ws) == "", f"no extension where the route has none: {extension_of(ws)!r}")
        await ws.send("plain")
        expect(await ws.recv() == "plain", "echo without deflate")


async def echo_binary():
    async with websockets.connect(f"{BASE}/echo") as ws:
        for data in [b"\x00\x01\x02\xff", bytes(range(256)) * 300]:
            await ws.send(data)
            got = await ws.recv()
            expect(got == data and isinstance(got, bytes), "binary echo differs")


async def fragmented():
    async with websockets.connect(f"{BASE}/echo") as ws:
        await ws.send(["frag", "mented ", "message"])
        got = await ws.recv()
        expect(got == "fragmented message", f"reassembled: {got!r}")
        await ws.send([b"\x01", b"\x02\x03"])
        got = await ws.recv()
        expect(got == b"\x01\x02\x03", f"reassembled binary: {got!r}")


async def too_big():
    async with websockets.connect(f"{BASE}/echo", max_size=None) as ws:
        try:
            await ws.send(b"\x00" * (16 * 1024 * 1024))
            await ws.recv()
        except websockets.ConnectionClosed:
            pass
        await ws.wait_closed()
        expect(ws.close_code == 1009, f"close code {ws.close_code}, expected 1009")


def invalid_frame():
    with socket.create_connection(("127.0.0.1", PORT), timeout=5) as sock:
        sock.sendall(upgrade_request("/echo"))
        head, rest = read_head(sock)
        expect(head.startswith("HTTP/1.1 101"), f"handshake: {head.splitlines()[0]}")
        sock.sendall(b"\x81\x05hello")  # unmasked: RFC 6455 §5.1 requires the server to fail
        opcode, payload = read_frame(sock, rest)
        expect(opcode == 0x8, f"opcode {opcode:#x}, expected a close frame")
        code = close_code_of(payload)
        expect(code == 1002, f"close code {code}, expected 1002")


def reserved_opcode():
    with socket.create_connection(("127.0.0.1", PORT), timeout=5) as sock:
        sock.sendall(upgrade_request("/echo"))
        head, rest = read_head(sock)
        expect(head.startswith("HTTP/1.1 101"), f"handshake: {head.splitlines()[0]}")
        sock.sendall(masked_frame(0x3, b"x"))  # opcode 3 is reserved
        opcode, payload = read_frame(sock, rest)
        code = close_code_of(payload)
        expect(opcode == 0x8 and code == 1002, f"opcode {opcode:#x} code {code}, expected 1002")


def split_upgrade():
    with socket.create_connection(("127.0.0.1", PORT), timeout=5) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for byte in upgrade_request("/echo"):
            sock.send(bytes([byte]))
            time.sleep(0.001)
        head, rest = read_head(sock)
        expect(head.startswith("HTTP/1.1 101"), f"handshake: {head.splitlines()[0]}")
        expect("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head, "Sec-WebSocket-Accept missing or wrong")
        sock.sendall(masked_frame(0x1, b"split"))
        opcode, payload = read_frame(sock, rest)
        expect(opcode == 0x1 and payload == b"split", f"echo: {opcode:#x} {payload!r}")


def early_frame():
    # A client that sends a frame with its upgrade request, not waiting for the 101.
    with socket.create_connection(("127.0.0.1", PORT), timeout=5) as sock:
        sock.sendall(upgrade_request("/echo") + masked_frame(0x1, b"early"))
        head, rest = read_head(sock)
        expect(head.startswith("HTTP/1.1 101"), f"handshake: {head.splitlines()[0]}")
        opcode, payload = read_frame(sock, rest)
        expect(opcode == 0x1 and payload == b"early", f"echo: {opcode:#x} {payload!r}")


async def ping_pong():
    async with websockets.connect(f"{BASE}/echo", ping_interval=None) as ws:
        for i in range(3):
            waiter = await ws.ping(f"p{i}".encode())
            await asyncio.wait_for(waiter, 5)
        await ws.send("still open")
        expect(await ws.recv() == "still open", "echo after pings")


async def drain():
    async with websockets.connect(f"{BASE}/echo") as ws:
        await ws.send("before")
        expect(await ws.recv() == "before", "echo before the drain")
        print("ready", flush=True)
        try:
            await asyncio.wait_for(ws.recv(), 10)
        except websockets.ConnectionClosed:
            pass
        expect(ws.close_code == 1001, f"close code {ws.close_code}, expected 1001")


async def unauthorized():
    try:
        async with websockets.connect(f"{BASE}/private/echo"):
            raise Failure("the upgrade without a token succeeded")
    except websockets.InvalidStatusCode as e:
        expect(e.status_code == 401, f"status {e.status_code}, expected 401")
    async with websockets.connect(f"{BASE}/private/echo",
                                  extra_headers={"Authorization": "Bearer ok"}) as ws:
        await ws.send("in")
        expect(await ws.recv() == "in", "echo with the token")


async def context_carried():
    async with websockets.connect(f"{BASE}/hello/ada",
                                  extra_headers={"X-Request-Id": "req-42"}) as ws:
        expect(ws.response_headers.get("X-Request-Id") == "req-42",
               f"101 X-Request-Id: {ws.response_headers.get('X-Request-Id')}")
        got = await ws.recv()
        expect(got == "hello ada, request req-42, user tester", f"greeting: {got!r}")


async def expect_closed_with(ws, code):
    try:
        await ws.recv()
    except websockets.ConnectionClosed:
        pass
    expect(ws.close_code == code, f"close code {ws.close_code}, expected {code}")


async def handler_throws():
    async with websockets.connect(f"{BASE}/throws") as ws:
        await expect_closed_with(ws, 1011)


async def handler_returns():
    async with websockets.connect(f"{BASE}/once") as ws:
        expect(await ws.recv() == "bye", "the one message")
        await expect_closed_with(ws, 1000)


async def many_sockets():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    count = 1000

    async def one(i):
        async with websockets.connect(f"{BASE}/echo", open_timeout=20, ping_interval=None) as ws:
            for j in range(3):
                text = f"socket {i} message {j}"
                await ws.send(text)
                got = await ws.recv()
                expect(got == text, f"socket {i}: {got!r}")

    results = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    expect(not failures, f"{len(failures)} of {count} sockets failed, first: {failures[:1]!r}")


async def raw_server_echo():
    async with websockets.connect(f"{BASE}/anything") as ws:
        await ws.send("raw")
        expect(await ws.recv() == "raw", "echo through exchange::upgrade")
        await ws.send(b"\x00")
        expect(await ws.recv() == b"\x00", "binary echo through exchange::upgrade")


def raw_server_refuses_what_cannot_upgrade():
    # exchange::upgrade() is false for a request with a body, and for a plain GET.
    for request in [upgrade_request("/x", "Content-Length: 5\r\n") + b"hello",
                    b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"]:
        with socket.create_connection(("127.0.0.1", PORT), timeout=5) as sock:
            sock.sendall(request)
            head, _ = read_head(sock)
            expect(head.startswith("HTTP/1.1 426"), f"{request[:30]!r}: {head.splitlines()[:1]}")


def read_response(sock):
    head, body = read_head(sock)
    length = 0
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            break
        body += chunk
    return head, body.decode("utf-8", "replace")


def bad_handshakes():
    # RFC 6455 §4.2.1 on the wire: a client that asks for a WebSocket with a broken handshake
    # learns why: 400 naming the defect, 426 with the version spoken for another version.
    start = ("GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
             "Upgrade: websocket\r\n")
    key, version = f"Sec-WebSocket-Key: {KEY}\r\n", "Sec-WebSocket-Version: 13\r\n"
    rows = [
        ("a short key", start + "Sec-WebSocket-Key: c2hvcnQ=\r\n" + version, "400",
         "Sec-WebSocket-Key"),
        ("a key of 24 characters that is not base64", start +
         "Sec-WebSocket-Key: ########################\r\n" + version, "400", "Sec-WebSocket-Key"),
        ("two keys", start + key + key + version, "400", "exactly one Sec-WebSocket-Key"),
        ("version 8", start + key + "Sec-WebSocket-Version: 8\r\n", "426",
         "Sec-WebSocket-Version"),
        ("two versions", start + key + version + version, "426", "Sec-WebSocket-Version"),
        ("no Connection: upgrade", start.replace("Connection: Upgrade", "Connection: close") +
         key + version, "400", "Connection"),
    ]
    for rule, request, status, named in rows:
        with socket.create_connection(("127.0.0.1", PORT), timeout=5) as sock:
            sock.sendall((request + "\r\n").encode())
            head, body = read_response(sock)
            expect(head.startswith(f"HTTP/1.1 {status}"), f"{rule}: {head.splitlines()[:1]}")
            expect(named in body, f"{rule}: the body does not name {named!r}: {body!r}")
            if status == "426":
                expect("Sec-WebSocket-Version: 13" in head, f"{rule}: no Sec-WebSocket-Version")


def wait_until_cut(sock, limit=15):
    # The kernel's view of the connection (TCP_INFO's first byte is the state): the server's
    # close shows without reading, whose window would let a stalled write go on.
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] != 1:  # ESTABLISHED
            return True
        time.sleep(0.02)
    return False


def too_many_fragments():
    # A message of 2,000 empty continuation frames: before #29 the server read on forever.
    with socket.create_connection(("127.0.0.1", PORT), timeout=10) as sock:
        sock.sendall(upgrade_request("/echo"))
        head, rest = read_head(sock)
        expect(head.startswith("HTTP/1.1 101"), f"handshake: {head.splitlines()[0]}")
        try:
            sock.sendall(masked_frame(0x1, b"a", fin=False) + masked_frame(0x0, b"", fin=False) * 2000)
        except OSError:
            pass  # closed while sending
        opcode, payload = read_frame(sock, rest)
        code = close_code_of(payload)
        expect(opcode == 0x8 and code == 1008, f"opcode {opcode:#x} code {code}, expected 1008")


async def fragment_limit():
    # /limited takes messages of up to 16 frames. websockets sends an iterable of n pieces
    # as n frames and an empty final one: 15 pieces are 16 frames, 16 are 17.
    async with websockets.connect(f"{BASE}/limited") as ws:
        await ws.send(["x"] * 15)
        got = await ws.recv()
        expect(got == "x" * 15, f"16 frames: {got!r}")
        try:
            await ws.send([b"y"] * 16)
        except websockets.ConnectionClosed:
            pass  # closed while the fragments went out
        await expect_closed_with(ws, 1008)


async def too_big_in_fragments():
    # max_message_bytes counts all the fragments: 32 of 64 KiB pass the frame limit, not 1 MiB.
    # The server's 1009 must arrive while this client is still sending the rest: the server
    # lingers (reads and drops) after its close frame, instead of closing with unread input,
    # which reset the connection before the frame was read (1006 here; issue 51).
    async with websockets.connect(f"{BASE}/echo") as ws:
        try:
            await ws.send([b"\x00" * 65536] * 32)
            await ws.recv()
        except websockets.ConnectionClosed:
            pass
        await ws.wait_closed()
        expect(ws.close_code == 1009, f"close code {ws.close_code}, expected 1009")


def stalled_sender(path):
    # Connects with a small receive buffer, and sends 16 KiB messages without reading until
    # the server stops taking them (its writes back are stalled) or is gone.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", PORT))
    sock.sendall(upgrade_request(path))
    head, _ = read_head(sock)
    expect(head.startswith("HTTP/1.1 101"), f"handshake: {head.splitlines()[0]}")
    sock.settimeout(1)
    frame = masked_frame(0x2, b"m" * 16384)
    sent = 0
    try:
        while sent < 10000:
            sock.sendall(frame)
            sent += 1
    except (socket.timeout, OSError):
        pass
    return sock, sent


def non_reader():
    # Before #29 a write stalled by a peer that does not read waited for ever (until Beast's
    # idle timeout, 60 s here); /limited's write timeout is 200 ms.
    sock, sent = stalled_sender("/limited")
    with sock:
        expect(wait_until_cut(sock), f"still open after {sent} messages sent and none read")


def flood():
    # /flood writes faster than this reads (never): the server refuses the write past its
    # queue's bound and cuts the connection.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    with sock:
        sock.connect(("127.0.0.1", PORT))
        sock.sendall(upgrade_request("/flood"))
        head, _ = read_head(sock)
        expect(head.startswith("HTTP/1.1 101"), f"handshake: {head.splitlines()[0]}")
        expect(wait_until_cut(sock), "still open")


CASES = {
    "too_many_fragments": too_many_fragments, "fragment_limit": fragment_limit,
    "too_big_in_fragments": too_big_in_fragments, "non_reader": non_reader, "flood": flood,
    "bad_handshakes": bad_handshakes,
    "raw_server_echo": raw_server_echo,
    "raw_server_refuses_what_cannot_upgrade": raw_server_refuses_what_cannot_upgrade,
    "echo_text": echo_text, "echo_binary": echo_binary, "fragmented": fragmented,
    "too_big": too_big, "invalid_frame": invalid_frame, "reserved_opcode": reserved_opcode,
    "split_upgrade": split_upgrade, "early_frame": early_frame, "ping_pong": ping_pong,
    "drain": drain, "unauthorized": unauthorized, "context_carried": context_carried,
    "handler_throws": handler_throws, "handler_returns": handler_returns,
    "many_sockets": many_sockets,
    "deflate_negotiated": deflate_negotiated, "deflate_declined": deflate_declined,
    "deflate_inflated_past_the_limit": deflate_inflated_past_the_limit,
}


def main():
    case = CASES[CASE]
    try:
        if asyncio.iscoroutinefunction(case):
            asyncio.run(case())
        else:
            case()
    except Failure as e:
        print(f"{CASE}: {e}")
        return 1
    except Exception as e:  # noqa: BLE001 - any error is the case failing
        print(f"{CASE}: {type(e).__name__}: {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
