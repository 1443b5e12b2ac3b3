#!/usr/bin/env python3
# metrics_attack.py PORT ATTACK [N] [SECONDS] — bad HTTP clients against 127.0.0.1:PORT, for
# tests/e2e/metrics_clients.sh. Each attack is bounded in time and prints one line of what it
# saw ("ATTACK: ..."); the exit status is 0 unless the attack itself could not be made.
#   slowloris N SECONDS  N connections send a request's headers one byte every 0.5 s
#   flood N SECONDS      N connections opened at once (non-blocking) and held, then closed
#   garbage N            N connections each send 4 KiB of random bytes, a TLS hello, NULs
#   huge                 one request with a 1 MiB header: the answer's status line
#   slowread N SECONDS   N connections pipeline 2000 GET /metrics and never read the answers
#   get                  one well-formed GET /metrics: the status and the size of the body
#   hold KIND N SCRAPES  N connections held open (KIND slowloris: a header byte each every 0.5 s;
#                        idle: nothing sent), and while they are: SCRAPES GET /metrics, 0.5 s
#                        apart, each answered within 1 s or not: how many were
import os
import resource
import selectors
import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def connect_nonblocking(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect((HOST, port))
    except (BlockingIOError, InterruptedError):
        pass
    except OSError:
        s.close()
        return None
    return s


def raise_fd_limit(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, n + 256) if hard != resource.RLIM_INFINITY else n + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def closed_by_peer(s):
    try:
        return s.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def slowloris(port, n, seconds):
    raise_fd_limit(n)
    socks = [s for s in (connect_nonblocking(port) for _ in range(n)) if s]
    request = b"GET /metrics HTTP/1.1\r\nHost: gputop\r\nX-Slow: " + b"a" * 10000
    sent, closed, end = 0, 0, time.monotonic() + seconds
    while time.monotonic() < end and sent < len(request):
        for s in socks:
            try:
                s.send(request[sent:sent + 1])
            except OSError:
                pass
        sent += 1
        time.sleep(0.5)
    closed = sum(closed_by_peer(s) for s in socks)
    for s in socks:
        s.close()
    print(f"slowloris: {len(socks)} connections sent {sent} bytes each over {seconds} s; "
          f"{closed} closed by gputop")


def flood(port, n, seconds):
    raise_fd_limit(n)
    socks, failed = [], 0
    for _ in range(n):
        s = connect_nonblocking(port)
        if s:
            socks.append(s)
        else:
            failed += 1
    time.sleep(seconds)
    closed = sum(closed_by_peer(s) for s in socks)
    for s in socks:
        s.close()
    print(f"flood: {len(socks)} connections opened ({failed} refused at once), "
          f"{closed} closed by gputop within {seconds} s")


def garbage(port, n):
    """All N at once (connections gputop does not take yet wait in its queue); each answer
    (its status line) or the connection's end, within 5 s."""
    payloads = [os.urandom(4096),
                bytes.fromhex("160301012c0100012803035a") + os.urandom(300),  # a TLS ClientHello
                b"\x00" * 4096,
                b"GET /metrics HTTP/9.9\r\n\r\n",
                b"GET /../../etc/passwd\x00 HTTP/1.1\r\nHost: \xff\xfe\r\n\r\n"]
    raise_fd_limit(n)
    sel = selectors.DefaultSelector()
    for i in range(n):
        s = connect_nonblocking(port)
        if s:
            sel.register(s, selectors.EVENT_WRITE, payloads[i % len(payloads)])
    answers, end = {}, time.monotonic() + 5

    def note(key, what):
        answers[what] = answers.get(what, 0) + 1
        sel.unregister(key.fileobj)
        key.fileobj.close()

    while sel.get_map() and time.monotonic() < end:
        for key, events in sel.select(timeout=0.1):
            if key.data is not None:  # connected: send the payload once, then read
                try:
                    key.fileobj.send(key.data)
                    sel.modify(key.fileobj, selectors.EVENT_READ, None)
                except OSError as e:
                    note(key, type(e).__name__)
                continue
            try:
                note(key, key.fileobj.recv(64).split(b"\r\n")[0].decode("latin-1")[:12] or "closed")
            except OSError as e:
                note(key, type(e).__name__)
    for key in list(sel.get_map().values()):
        answers["no answer in 5 s"] = answers.get("no answer in 5 s", 0) + 1
        key.fileobj.close()
    print("garbage: " + ", ".join(f"{k!r} x{v}" for k, v in sorted(answers.items())))


def huge(port):
    with socket.create_connection((HOST, port), timeout=3) as s:
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: gputop\r\nX-Huge: " + b"h" * (1 << 20) +
                      b"\r\n\r\n")
        except OSError:
            pass  # gputop closed the connection while we sent: also a refusal
        try:
            first = s.recv(64).split(b"\r\n")[0].decode("latin-1")
        except OSError as e:
            first = type(e).__name__
    print(f"huge: {first or 'closed'}")


def slowread(port, n, seconds):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(5)
        s.connect((HOST, port))
        s.setblocking(False)
        socks.append(s)
    request = b"GET /metrics HTTP/1.1\r\nHost: gputop\r\n\r\n" * 2000
    sent = 0
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_WRITE, [0])
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.1):
            off = key.data
            try:
                k = key.fileobj.send(request[off[0]:off[0] + 65536])
                off[0] += k
                sent += k
            except OSError:
                sel.unregister(key.fileobj)
                continue
            if off[0] >= len(request):
                sel.unregister(key.fileobj)
    for s in socks:
        s.close()
    print(f"slowread: {n} connections sent {sent} bytes of requests and read nothing for {seconds} s")


def get(port):
    with socket.create_connection((HOST, port), timeout=10) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: gputop\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    print(f"get: {head.split(b' ')[1].decode()} {len(body)} bytes")


def get_within(port, limit):
    """One GET /metrics: 200 with a body, all of it within limit seconds."""
    end = time.monotonic() + limit
    try:
        with socket.create_connection((HOST, port), timeout=limit) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: gputop\r\nConnection: close\r\n\r\n")
            data = b""
            while time.monotonic() < end:
                s.settimeout(max(end - time.monotonic(), 0.001))
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            else:
                return False
    except OSError:
        return False
    return data.startswith(b"HTTP/1.1 200") and len(data.partition(b"\r\n\r\n")[2]) > 0


def hold(port, kind, n, scrapes):
    """N connections established (waited for: at most 30 s), kept open while SCRAPES scrapes
    are made."""
    raise_fd_limit(n + 64)
    socks = [s for s in (connect_nonblocking(port) for _ in range(n)) if s]
    pending, end = set(socks), time.monotonic() + 30
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_WRITE)
    while pending and time.monotonic() < end:
        for key, _ in sel.select(timeout=0.2):
            sel.unregister(key.fileobj)
            pending.discard(key.fileobj)
    established = len(socks) - len(pending)
    stop = threading.Event()

    def dribble():
        header = b"GET /metrics HTTP/1.1\r\nHost: gputop\r\nX-Slow: " + b"a" * 10000
        at = 0
        while not stop.wait(0.5) and at < len(header):
            for s in socks:
                try:
                    s.send(header[at:at + 1])
                except OSError:
                    pass
            at += 1

    t = threading.Thread(target=dribble)
    if kind == "slowloris":
        t.start()
    times = []
    for i in range(scrapes):
        t0 = time.monotonic()
        times.append((get_within(port, 1.0), time.monotonic() - t0))
        time.sleep(0.5)
    stop.set()
    if kind == "slowloris":
        t.join()
    closed = sum(closed_by_peer(s) for s in socks)
    for s in socks:
        s.close()
    answered = sum(1 for ok, _ in times if ok)
    print(f"hold {kind}: {established} of {n} connections established, {closed} closed by gputop; "
          f"{answered}/{scrapes} scrapes answered within 1 s (slowest {max(d for _, d in times):.3f} s)")


def main():
    port, attack = int(sys.argv[1]), sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 and attack != "hold" else 1
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 and attack != "hold" else 1.0
    {"slowloris": lambda: slowloris(port, n, seconds), "flood": lambda: flood(port, n, seconds),
     "garbage": lambda: garbage(port, n), "huge": lambda: huge(port),
     "slowread": lambda: slowread(port, n, seconds), "get": lambda: get(port),
     "hold": lambda: hold(port, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))}[attack]()


if __name__ == "__main__":
    main()
