#!/usr/bin/env python3
"""Long streams through keypool-server: what holding many open costs.

A slow upstream (this script, asyncio) answers every chat completion with an SSE stream of one
event a second, until the client goes away. keypool-server (release build, the ledger on, request
log lines off) relays them; this script is their client too. It opens STREAMS (1 000) streams
at once, in two steps (a tenth first), and reports:

- keypool-server's RSS idle (after a few streams, none open) and with every stream open, and
  what each open stream adds: (open - idle) / streams;
- its CPU per relayed event (the time its threads ran, from their schedstat, over the events the
  clients received) with a tenth of the streams open, then with all of them over WINDOWS windows of
  WINDOW seconds: flat if holding more, or holding them longer, costs nothing per event.

A benchmark, not a test: `python3 tests/bench/local-api/long_streams.py` after
`cargo build --release -p keypool-server` (KEYPOOL_SERVER=PATH for another binary).
"""

import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time

STREAMS = int(os.environ.get("STREAMS", "1000"))
WINDOW = float(os.environ.get("WINDOW", "15"))
WINDOWS = int(os.environ.get("WINDOWS", "3"))
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SERVER = os.environ.get("KEYPOOL_SERVER") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "keypool-server"
)

CHUNK = (
    'data: {"id":"chatcmpl-slow","object":"chat.completion.chunk","created":0,"model":"slow-model",'
    '"choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}]}\n\n'
).encode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ns(pid):
    """The time `pid`'s threads have run, in ns (schedstat: /proc/<pid>/stat counts 10 ms ticks,
    too coarse for a thousand events a second)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass  # a thread that ended meanwhile
    return total


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def upstream(reader, writer):
    """The slow provider: every request on this connection gets a stream of an event a second."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            while True:
                writer.write(b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK))
                await writer.drain()
                await asyncio.sleep(1)
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        pass  # the relay went away (or this script ends)
    finally:
        writer.close()


class Client:
    """One stream through keypool-server, counting the events it receives."""

    def __init__(self):
        self.events = 0
        self.first = asyncio.get_running_loop().create_future()
        self.task = None
        self.writer = None

    async def run(self, port, token, n):
        reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        body = json.dumps(
            {"model": "slow-model", "stream": True, "messages": [{"role": "user", "content": f"stream {n}"}]}
        ).encode()
        self.writer.write(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer %s\r\n"
            b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (token.encode(), len(body), body)
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"stream {n}: {head[:200]!r}")
        last = b""
        while True:
            data = await reader.read(65536)
            if not data:
                return
            seen = last + data
            self.events += seen.count(b"\n\n") - last.count(b"\n\n")
            last = data[-1:]
            if self.events and not self.first.done():
                self.first.set_result(None)

    def start(self, port, token, n):
        self.task = asyncio.ensure_future(self.run(port, token, n))

    def close(self):
        if self.writer:
            self.writer.close()
        self.task.cancel()


async def open_streams(clients, count, port, token):
    start = len(clients)
    for n in range(start, start + count):
        client = Client()
        client.start(port, token, n)
        clients.append(client)
        if n % 50 == 49:
            await asyncio.sleep(0.05)  # in small bursts, not one wall of connects
    await asyncio.wait_for(asyncio.gather(*(c.first for c in clients)), timeout=120)
    failed = [c.task for c in clients if c.task.done() and c.task.exception()]
    if failed:
        raise failed[0].exception()


async def window(pid, clients, seconds):
    """µs of keypool-server's CPU per event received, over `seconds`."""
    events, ns = sum(c.events for c in clients), cpu_ns(pid)
    await asyncio.sleep(seconds)
    events, ns = sum(c.events for c in clients) - events, cpu_ns(pid) - ns
    return ns / 1e3 / max(events, 1), events


async def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * STREAMS + 256)), hard))
    upstream_port, port = free_port(), free_port()
    slow = await asyncio.start_server(upstream, "127.0.0.1", upstream_port, backlog=4096)
    work = tempfile.mkdtemp(prefix="keypool-long-streams-")
    os.mkdir(os.path.join(work, "data"), 0o700)
    with open(os.path.join(work, "keypool.toml"), "w") as f:
        f.write(
            f'[[providers]]\nname = "slow"\nkind = "openai"\nbase_url = "http://127.0.0.1:{upstream_port}/v1"\n'
            f'models = ["slow-model"]\n[[providers.keys]]\nkey = "k1"\n[[providers.keys]]\nkey = "k2"\n'
            f'[[providers.keys]]\nkey = "k3"\n'
        )
    server = subprocess.Popen(
        [SERVER, "serve", "--data-dir", os.path.join(work, "data"), "--listen", f"127.0.0.1:{port}",
         "--config", os.path.join(work, "keypool.toml"), "--token-file", os.path.join(work, "token")],
        env={**os.environ, "RUST_LOG": "warn"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4 * STREAMS + 256), hard)),
    )
    clients = []
    try:
        for _ in range(200):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                    break
            except OSError:
                await asyncio.sleep(0.05)
        with open(os.path.join(work, "token")) as f:
            token = f.read().strip()
        # Warm-up: a few streams opened and closed, so what the first ones build is in the idle figure.
        await open_streams(clients, 10, port, token)
        for c in clients:
            c.close()
        clients.clear()
        await asyncio.sleep(2)
        idle = rss_kib(server.pid)

        tenth = max(STREAMS // 10, 1)
        await open_streams(clients, tenth, port, token)
        await asyncio.sleep(2)
        few, few_events = await window(server.pid, clients, WINDOW)
        await open_streams(clients, STREAMS - tenth, port, token)
        await asyncio.sleep(2)
        full = rss_kib(server.pid)
        windows = [await window(server.pid, clients, WINDOW) for _ in range(WINDOWS)]
        held = rss_kib(server.pid)
        open_now = sum(1 for c in clients if not c.task.done())

        print()
        print(f"Long streams through keypool-server: {STREAMS} open at once, an event a second each; "
              f"{os.cpu_count()} cores; {time.strftime('%Y-%m-%d', time.gmtime())}")
        print()
        print("| what | figure |")
        print("|---|---|")
        print(f"| RSS idle (10 streams served, none open) | {idle / 1024:.1f} MiB |")
        print(f"| RSS with {open_now} streams open | {full / 1024:.1f} MiB, {held / 1024:.1f} MiB "
              f"{WINDOW * WINDOWS:.0f} s later |")
        print(f"| added per open stream | {(full - idle) / STREAMS:.1f} KiB |")
        print(f"| CPU per event, {tenth} streams open ({few_events} events in {WINDOW:.0f} s) | {few:.1f} µs |")
        for i, (per_event, events) in enumerate(windows):
            print(f"| CPU per event, {STREAMS} open, window {i + 1} ({events} events in {WINDOW:.0f} s) "
                  f"| {per_event:.1f} µs |")
        per_stream = (full - idle) / STREAMS
        sys.path.insert(0, os.path.dirname(__file__))
        rows = [
            {"what": f"keypool-server RSS added per open stream ({STREAMS} open)", "figure": f"{per_stream:.1f} KiB",
             "goal": "≤ 64 KiB", "met": per_stream <= 64},
            {"what": f"keypool-server CPU per event, {STREAMS} streams ÷ {tenth}",
             "figure": f"{max(w for w, _ in windows) / few:.2f}×", "goal": "flat (≤ 1.25×)",
             "met": max(w for w, _ in windows) / few <= 1.25},
        ]
        subprocess.run(["node", os.path.join(ROOT, "tests", "bench", "summary.mjs"), "add", json.dumps(rows)],
                       check=False)
    finally:
        for c in clients:
            c.close()
        # The relay sees its clients gone at its next event, and lets the upstream go.
        await asyncio.sleep(2)
        server.terminate()
        server.wait(timeout=40)
        slow.close()


if __name__ == "__main__":
    asyncio.run(main())
