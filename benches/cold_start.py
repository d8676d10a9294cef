#!/usr/bin/env python3
"""Cold start: exec of `kobana-finance-mcp serve` -> first answered tools/list.

Usage: cold_start.py BIN DATABASE_URL TOKEN [RUNS]
The database must already be migrated and seeded (a warm file cache, as on a reused
Lambda host or a developer machine). Each run starts a fresh process on a free loopback
port, polls the port every 0.2 ms, sends one 2026-07-28 tools/list as soon as it
connects, and records the time from exec to the complete answer. Prints JSON with the
median, p90, min and max in milliseconds. Stdlib only.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(token):
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    }).encode()
    head = (
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        f"Mcp-Method: tools/list\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    return head + body


def rss_kib(pid):
    """The process's resident set (VmRSS) and its peak (VmHWM), in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


def one_run(binary, database_url, token):
    port = free_port()
    env = dict(os.environ, KFIN_LOG="off", KFIN_PUBLIC_URL="http://127.0.0.1:8080")
    payload = request(token)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [binary, "serve", "--addr", f"127.0.0.1:{port}", "--database-url", database_url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    try:
        deadline = start + 10
        while True:
            if time.perf_counter() > deadline:
                raise RuntimeError("server did not answer within 10 s")
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            except OSError:
                time.sleep(0.0002)
                continue
            with sock:
                sock.sendall(payload)
                data = b""
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            elapsed = time.perf_counter() - start
            if not data.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"unexpected answer: {data[:200]!r}")
            return elapsed * 1000, rss_kib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main():
    binary, database_url, token = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    one_run(binary, database_url, token)  # page in the binary once
    runs_and_rss = [one_run(binary, database_url, token) for _ in range(runs)]
    samples = sorted(ms for ms, _ in runs_and_rss)
    print(json.dumps({
        "runs": runs,
        "median_ms": round(statistics.median(samples), 2),
        "p90_ms": round(samples[int(0.9 * (runs - 1))], 2),
        "min_ms": round(samples[0], 2),
        "max_ms": round(samples[-1], 2),
        "rss_after_first_answer_kib": int(statistics.median(rss for _, (rss, _) in runs_and_rss)),
        "rss_peak_kib": int(statistics.median(peak for _, (_, peak) in runs_and_rss)),
    }))


if __name__ == "__main__":
    main()
