#!/usr/bin/env python3
"""Lambda-mode cold start under a stand-in of the Lambda Runtime API (2018-06-01).

Usage: lambda_cold.py BIN DATABASE_URL EVENT_FILE [RUNS]

Each run starts the binary with AWS_LAMBDA_RUNTIME_API pointing at a stand-in on a free
loopback port and records:
  * init: exec -> the first `GET /2018-06-01/runtime/invocation/next`;
  * first invocation: that request answered with EVENT_FILE -> the function's
    `POST /2018-06-01/runtime/invocation/{id}/response` (a POST to `/error` or
    `/init/error` fails the run).
The database must be migrated and seeded; the event's token is the fixture token, so
KFIN_JWT_SECRET is the fixture key — or, with BENCH_SECRET_ID set, the signing keys come
from that Secrets Manager secret (which must hold the fixture key), fetched at init as
in production, through the AWS environment of this process (AWS_ENDPOINT_URL, …). Also
records the function's resident set after its first answer (VmRSS, VmHWM). Sockets run with TCP_NODELAY (delayed ACKs would add
40 ms to each exchange). Prints JSON medians in milliseconds. Stdlib only.
"""
import http.server
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

from cold_start import rss_kib  # beside this script

FIXTURE_KEY = "kobana-finance-replay-fixtures"


class StandIn(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, event):
        super().__init__(("127.0.0.1", 0), Handler)
        self.event = event
        self.served = False
        self.first_next = None
        self.answered = None
        self.failure = None
        self.done = threading.Event()
        # Set when the run ends: until then a second poll is held (answering it, or
        # closing it, would end the function before its resident set is read).
        self.release = threading.Event()

    def handle_error(self, request, client_address):
        pass  # the function was stopped mid-poll: expected at the end of each run


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):
        pass

    def do_GET(self):
        server = self.server
        if not self.path.endswith("/runtime/invocation/next"):
            self.send_error(404)
            return
        if server.served:
            server.release.wait(30)  # a second poll: held, unanswered, until the run ends
            self.close_connection = True
            return
        server.served = True
        server.first_next = time.perf_counter()
        body = server.event
        self.send_response(200)
        for name, value in (
            ("Content-Type", "application/json"),
            ("Lambda-Runtime-Aws-Request-Id", "8476a536-e9f4-11e8-9739-2dfe598c3fcd"),
            ("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 30000)),
            ("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:kobana-finance-mcp"),
            ("Lambda-Runtime-Trace-Id", "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1"),
            ("Content-Length", str(len(body))),
        ):
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        payload = self.rfile.read(length)
        if self.path.endswith("/response"):
            server.answered = time.perf_counter()
            server.response = payload
        else:
            server.failure = f"{self.path}: {payload[:300]!r}"
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()
        server.done.set()


def one_run(binary, database_url, event):
    standin = StandIn(event)
    thread = threading.Thread(target=standin.serve_forever, daemon=True)
    thread.start()
    env = dict(os.environ, AWS_LAMBDA_RUNTIME_API=f"127.0.0.1:{standin.server_address[1]}",
               AWS_LAMBDA_FUNCTION_NAME="kobana-finance-mcp", AWS_LAMBDA_FUNCTION_MEMORY_SIZE="256",
               AWS_LAMBDA_FUNCTION_VERSION="$LATEST", AWS_LAMBDA_LOG_STREAM_NAME="bench", AWS_LAMBDA_LOG_GROUP_NAME="bench",
               KFIN_DATABASE_URL=database_url, KFIN_JWT_SECRET=FIXTURE_KEY, KFIN_LOG="off")
    for name in ("KFIN_PUBLIC_URL", "KFIN_AUTH_SERVER", "KFIN_ALLOWED_ORIGINS", "KFIN_SECRET_ID", "KFIN_DATABASE_SECRET_ID"):
        env.pop(name, None)
    if os.environ.get("BENCH_SECRET_ID"):
        env.pop("KFIN_JWT_SECRET")
        env["KFIN_SECRET_ID"] = os.environ["BENCH_SECRET_ID"]
    start = time.perf_counter()
    proc = subprocess.Popen([binary], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        if not standin.done.wait(30):
            raise RuntimeError("the function did not answer within 30 s")
        if standin.failure:
            raise RuntimeError(f"the function reported an error: {standin.failure}")
        answer = json.loads(standin.response)
        if answer.get("statusCode") != 200:
            raise RuntimeError(f"unexpected answer: {standin.response[:300]!r}")
        rss = rss_kib(proc.pid)
        return (standin.first_next - start) * 1000, (standin.answered - standin.first_next) * 1000, rss
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        standin.release.set()
        standin.shutdown()
        standin.server_close()


def main():
    binary, database_url, event_file = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    event = open(event_file, "rb").read()
    one_run(binary, database_url, event)  # page in the binary once
    samples = [one_run(binary, database_url, event) for _ in range(runs)]
    init = sorted(s[0] for s in samples)
    first = sorted(s[1] for s in samples)
    total = sorted(s[0] + s[1] for s in samples)
    print(json.dumps({
        "runs": runs,
        "init_median_ms": round(statistics.median(init), 2),
        "first_invocation_median_ms": round(statistics.median(first), 2),
        "total_median_ms": round(statistics.median(total), 2),
        "total_p90_ms": round(total[int(0.9 * (runs - 1))], 2),
        "rss_after_first_answer_kib": int(statistics.median(s[2][0] for s in samples)),
        "rss_peak_kib": int(statistics.median(s[2][1] for s in samples)),
    }))


if __name__ == "__main__":
    main()
